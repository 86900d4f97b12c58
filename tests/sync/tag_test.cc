// The integrity tag (codec/FORMAT.md "Integrity tag"): the sender's tag, from
// the undo, equals the receiver's, from its state before, whenever the two
// states agree; and it is the defined bytes.

#include "sync/tag.h"

#include <openssl/sha.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <memory>
#include <string>

#include "sync/snapshot.h"
#include "tests/sync/editor.h"

namespace aweft::sync::testing {
namespace {

TEST_CASE("a tag is the first 8 bytes of SHA-256 over the prior commit", "[sync][tag]") {
  Id one;
  one.bytes[11] = 1;
  Document doc(one, Kind::kObject);
  Commit add{{{codec::DeltaType::kAdd, doc.root().id(), {Kind::kObject, "k"}, Value(5.0)}}, {}};
  // The prior commit: remove "k" (it was empty), as FORMAT.md spells it.
  const std::string prior = std::string("\x81\x81\x83\x02\x4c", 5) + std::string(11, '\0') +
                            std::string("\x01\x82\x00\x61\x6b", 5);
  unsigned char hash[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(prior.data()), prior.size(), hash);
  const std::string expected(reinterpret_cast<const char*>(hash), 8);
  CHECK(TagBefore(doc, add) == expected);
  // After it lands the prior differs, and so does the tag.
  REQUIRE(doc.Apply(add));
  CHECK(TagBefore(doc, add) != expected);
}

TEST_CASE("the sender's tag from the undo equals the receiver's from its state", "[sync][tag]") {
  uint64_t seed = 1;
  if (const char* fixed = std::getenv("AWEFT_SEED")) seed = std::stoull(fixed);
  INFO("replay: AWEFT_SEED=" << seed);
  Editor editor(seed);
  Document sender(Kind::kObject);
  auto receiver = std::move(*FromSnapshot(TakeSnapshot(sender)));
  int checked = 0;
  sender.Watch(
      [&](const Change& change) {
        REQUIRE(change.undo);
        const std::string sent = TagOf(change.commit, *change.undo);
        CHECK(sent.size() == 8);
        CHECK(TagBefore(*receiver, change.commit) == sent);
        REQUIRE(receiver->Apply(change.commit));
        ++checked;
      },
      /*undo=*/true);
  for (int i = 0; i < 3000; ++i) (void)editor.RandomEdit(sender);
  CHECK(checked > 1500);
  CHECK(TakeSnapshot(sender) == TakeSnapshot(*receiver));
}

}  // namespace
}  // namespace aweft::sync::testing
