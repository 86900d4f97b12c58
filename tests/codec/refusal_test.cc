// Refusals: every reason's one spelling, its fix, and the rendered form.
#include "codec/refusal.h"

#include <catch2/catch.hpp>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace aweft::codec {
namespace {

// Every reason with the spelling the spec gives it (format spec §7,
// behaviour.md §5). Keep in enum order; the last entry is the last reason.
const std::vector<std::pair<Reason, std::string>>& Spellings() {
  static const std::vector<std::pair<Reason, std::string>> spellings = {
      {Reason::kMalformedHead, "malformed-head"},
      {Reason::kIndefiniteLength, "indefinite-length"},
      {Reason::kNonCanonicalInteger, "non-canonical-integer"},
      {Reason::kTruncated, "truncated"},
      {Reason::kTrailingBytes, "trailing-bytes"},
      {Reason::kNestingTooDeep, "nesting-too-deep"},
      {Reason::kIntegerOutOfRange, "integer-out-of-range"},
      {Reason::kNonCanonicalFloat, "non-canonical-float"},
      {Reason::kNonFiniteFloat, "non-finite-float"},
      {Reason::kInvalidUtf8, "invalid-utf8"},
      {Reason::kUnsupportedMajor, "unsupported-major"},
      {Reason::kUnsupportedSimple, "unsupported-simple"},
      {Reason::kInvalidCommit, "invalid-commit"},
      {Reason::kEmptyCommit, "empty-commit"},
      {Reason::kInvalidTag, "invalid-tag"},
      {Reason::kDuplicateSlot, "duplicate-slot"},
      {Reason::kDeltasOutOfOrder, "deltas-out-of-order"},
      {Reason::kInvalidDelta, "invalid-delta"},
      {Reason::kUnknownDeltaType, "unknown-delta-type"},
      {Reason::kMissingValue, "missing-value"},
      {Reason::kUnexpectedValue, "unexpected-value"},
      {Reason::kInvalidId, "invalid-id"},
      {Reason::kInvalidRef, "invalid-ref"},
      {Reason::kUnknownRefKind, "unknown-ref-kind"},
      {Reason::kInvalidReference, "invalid-reference"},
      {Reason::kUnknownEdgeKind, "unknown-edge-kind"},
      {Reason::kInvalidPosition, "invalid-position"},
      {Reason::kLoneSurrogate, "lone-surrogate"},
      {Reason::kInvalidHex, "invalid-hex"},
      {Reason::kInvalidValue, "invalid-value"},
      {Reason::kKindConflict, "kind-conflict"},
      {Reason::kMultipleAttach, "multiple-attach"},
      {Reason::kSlotExists, "slot-exists"},
      {Reason::kSlotMissing, "slot-missing"},
      {Reason::kUnreachable, "unreachable"},
      {Reason::kDuplicateId, "duplicate-id"},
      {Reason::kInvalidKey, "invalid-key"},
      {Reason::kInvalidWrite, "invalid-write"},
      {Reason::kNotObservable, "not-observable"},
      {Reason::kSealed, "sealed"},
      {Reason::kBadFrame, "bad-frame"},
      {Reason::kNoDocument, "no-document"},
      {Reason::kRootMismatch, "root-mismatch"},
      {Reason::kNoTopic, "no-topic"},
      {Reason::kUnwantedState, "unwanted-state"},
      {Reason::kLeft, "left"},
      {Reason::kClosed, "closed"},
      {Reason::kAcceptThrew, "accept-threw"},
      {Reason::kAlreadyShared, "already-shared"},
      {Reason::kAnswering, "answering"},
      {Reason::kDuplicate, "duplicate"},
      {Reason::kNotData, "not-data"},
      {Reason::kTimeout, "timeout"},
      {Reason::kMissing, "missing"},
      {Reason::kFailed, "failed"},
      {Reason::kNotOpen, "not-open"},
      {Reason::kUnknownVersion, "unknown-version"},
      {Reason::kCorrupt, "corrupt"},
      {Reason::kForbidden, "forbidden"},
      {Reason::kLimit, "limit"},
      {Reason::kInvalidName, "invalid-name"},
      {Reason::kUnavailable, "unavailable"},
      {Reason::kCycle, "cycle"},
      {Reason::kDiverged, "diverged"},
  };
  return spellings;
}

TEST_CASE("Every reason has the spec's spelling", "[codec][refusal]") {
  const auto& spellings = Spellings();
  // The table covers the enum: its last entry is the last enumerator.
  REQUIRE(static_cast<size_t>(spellings.back().first) + 1 == spellings.size());
  std::set<std::string> seen;
  for (size_t i = 0; i < spellings.size(); ++i) {
    const auto& [reason, spelling] = spellings[i];
    INFO(spelling);
    CHECK(static_cast<size_t>(reason) == i);
    CHECK(Name(reason) == spelling);
    CHECK(seen.insert(spelling).second);
  }
  CHECK(Name(static_cast<Reason>(spellings.size())) == "unknown-reason");
}

TEST_CASE("Every reason has one imperative sentence as its fix", "[codec][refusal]") {
  for (const auto& [reason, spelling] : Spellings()) {
    INFO(spelling);
    const std::string_view fix = Fix(reason);
    REQUIRE(fix.size() > 10);
    CHECK(std::isupper(static_cast<unsigned char>(fix.front())));
    CHECK(fix.back() == '.');
    // One sentence: no full stop before the last character.
    CHECK(fix.substr(0, fix.size() - 1).find(". ") == std::string_view::npos);
  }
}

TEST_CASE("A refusal renders as reason, detail and fix", "[codec][refusal]") {
  const Refusal refusal{Reason::kTruncated, "a head is cut short at offset 3"};
  CHECK(refusal.ToString() ==
        "truncated: a head is cut short at offset 3. " + std::string(Fix(Reason::kTruncated)));
  const Refusal stopped{Reason::kBadFrame, "topic 0."};
  CHECK(stopped.ToString() == "bad-frame: topic 0. " + std::string(Fix(Reason::kBadFrame)));
  const Refusal bare{Reason::kClosed, ""};
  CHECK(bare.ToString() == "closed. " + std::string(Fix(Reason::kClosed)));
}

// Name() is the only place a spelling is written: anywhere else a reason is
// codec::Name(Reason::k...) or Spelled(...). A line that holds a spelling as
// a string for another purpose (a query parameter called "limit") says so
// with the words "not a reason".
TEST_CASE("No reason is spelled as a literal outside codec/refusal.cc", "[codec][refusal]") {
  namespace fs = std::filesystem;
  const fs::path root(AWEFT_SOURCE_DIR);
  std::vector<std::string> found;
  for (const char* module : {"codec", "sync", "storage", "admin", "node"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / module)) {
      const fs::path& path = entry.path();
      if (path.extension() != ".cc" && path.extension() != ".h") continue;
      if (path == root / "codec" / "refusal.cc") continue;
      std::ifstream in(path);
      std::string line;
      for (int number = 1; std::getline(in, line); ++number) {
        if (line.find("not a reason") != std::string::npos) continue;
        for (const auto& [reason, spelling] : Spellings()) {
          if (line.find('"' + spelling + '"') == std::string::npos) continue;
          found.push_back(fs::relative(path, root).string() + ":" + std::to_string(number) +
                          ": \"" + spelling + "\"");
        }
      }
    }
  }
  INFO([&] {
    std::string all;
    for (const std::string& f : found) all += f + "\n";
    return all;
  }());
  CHECK(found.empty());
}

}  // namespace
}  // namespace aweft::codec
