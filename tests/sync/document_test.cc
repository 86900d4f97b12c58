#include "sync/document.h"

#include <algorithm>
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "codec/commit.h"
#include "codec/id.h"
#include "sync/snapshot.h"
#include "tests/codec/fixture.h"
#include "tests/sync/editor.h"

namespace aweft::sync {
namespace {

namespace json = boost::json;
using codec::testing::FixtureFiles;
using codec::testing::IdForm;
using codec::testing::ReadJson;
using codec::testing::Unhex;

Snapshot SnapshotFromJson(const json::value& document) {
  Snapshot snapshot;
  snapshot.root = *codec::IdFromText(std::string(document.at("root").as_string()));
  for (const auto& [text, node] : document.at("observables").as_object()) {
    SnapshotObservable observable;
    observable.kind = *codec::KindFromName(std::string(node.at("kind").as_string()));
    for (const auto& [key, value] : node.at("slots").as_object()) {
      std::string raw(key);
      if (observable.kind == Kind::kArray) raw = Unhex(key);
      if (observable.kind == Kind::kMap) raw = std::string(codec::IdFromText(raw)->view());
      observable.slots.emplace(raw, codec::testing::ValueFromJson(value, IdForm::kText));
    }
    snapshot.observables.emplace(*codec::IdFromText(std::string(text)), observable);
  }
  snapshot.root_kind = snapshot.observables.at(snapshot.root).kind;
  return snapshot;
}

std::unique_ptr<Document> Build(const Snapshot& snapshot) {
  auto built = FromSnapshot(snapshot);
  REQUIRE(built);
  return std::move(*built);
}

TEST_CASE("a delivery names what applied it, even when it waits in the queue", "[sync][document]") {
  Document a(codec::Kind::kObject), b(codec::Kind::kObject);
  const int link_a = 0, link_b = 0;  // Two origins, told apart by address.
  std::vector<std::pair<std::string, const void*>> heard;
  b.Watch([&](const Change& change) {
    heard.emplace_back(change.commit.deltas[0].ref.key, change.origin);
  });
  // While a's delivery drains, b applies one commit from link_b and makes
  // one of its own: both wait in the queue, each keeping its origin.
  a.Watch([&](const Change&) {
    codec::Commit in{
        {{codec::DeltaType::kAdd, b.root().id(), {codec::Kind::kObject, "in"}, codec::Value(1.0)}},
        {}};
    REQUIRE(b.Apply(in, &link_b));
    REQUIRE(b.Set(b.root(), "mine", 2.0));
  });
  codec::Commit first{
      {{codec::DeltaType::kAdd, a.root().id(), {codec::Kind::kObject, "k"}, codec::Value(0.0)}},
      {}};
  REQUIRE(a.Apply(first, &link_a));
  const std::vector<std::pair<std::string, const void*>> want{{"in", &link_b}, {"mine", nullptr}};
  CHECK(heard == want);
}

TEST_CASE("every valid fixture's commits reach its document in any delta order",
          "[sync][conformance]") {
  for (const std::string& path : FixtureFiles("fixtures")) {
    INFO(path);
    const json::value fixture = ReadJson(path);
    const Snapshot initial = SnapshotFromJson(fixture.at("initial"));
    const Snapshot final = SnapshotFromJson(fixture.at("final"));
    for (int order = 0; order < 3; ++order) {
      auto document = Build(initial);
      std::mt19937_64 rng(20260902 + order);
      for (const json::value& entry : fixture.at("commits").as_array()) {
        auto commit = codec::DecodeCommit(Unhex(entry.at("bytes").as_string()));
        REQUIRE(commit);
        if (order == 1) std::shuffle(commit->deltas.begin(), commit->deltas.end(), rng);
        if (order == 2) std::reverse(commit->deltas.begin(), commit->deltas.end());
        auto applied = document->Apply(*commit);
        INFO((applied ? "" : applied.error().ToString()));
        REQUIRE(applied);
      }
      CHECK(TakeSnapshot(*document) == final);
    }
  }
}

TEST_CASE("every apply-stage invalid fixture decodes, then apply refuses it for its reason",
          "[sync][conformance][refusal]") {
  int checked = 0;
  for (const std::string& path : FixtureFiles("fixtures/invalid")) {
    const json::value fixture = ReadJson(path);
    if (fixture.at("stage").as_string() != "apply") continue;
    INFO(path);
    const Snapshot initial = SnapshotFromJson(fixture.at("initial"));
    auto document = Build(initial);
    auto commit = codec::DecodeCommit(Unhex(fixture.at("bytes").as_string()));
    REQUIRE(commit);
    auto applied = document->Apply(*commit);
    REQUIRE_FALSE(applied);
    CHECK(codec::Name(applied.error().reason) == fixture.at("reason").as_string());
    CHECK(TakeSnapshot(*document) == initial);
    ++checked;
  }
  CHECK(checked == 8);
}

TEST_CASE("a write outside a block is one commit, a block is one coalesced commit", "[sync]") {
  Document doc(Kind::kObject);
  std::vector<Commit> heard;
  doc.Watch([&](const Change& change) { heard.push_back(change.commit); });
  REQUIRE(doc.Set(doc.root(), "a", 1.0));
  REQUIRE(heard.size() == 1);
  CHECK(heard[0].deltas.size() == 1);
  CHECK(heard[0].deltas[0].type == codec::DeltaType::kAdd);

  REQUIRE(doc.Atomic([&]() -> Result<void> {
    REQUIRE(doc.Set(doc.root(), "a", 2.0));
    REQUIRE(doc.Set(doc.root(), "a", 3.0));  // Same slot: net effect only.
    REQUIRE(doc.Set(doc.root(), "b", true));
    REQUIRE(doc.Remove(doc.root(), "b"));  // Absent before and after.
    REQUIRE(doc.Set(doc.root(), "c", std::string("x")));
    return {};
  }));
  REQUIRE(heard.size() == 2);
  REQUIRE(heard[1].deltas.size() == 2);
  CHECK(heard[1].deltas[0].type == codec::DeltaType::kReplace);
  CHECK(heard[1].deltas[0].value == Value(3.0));
  CHECK(heard[1].deltas[1].ref.key == "c");

  // A block whose net effect is nothing emits nothing.
  REQUIRE(doc.Atomic([&]() -> Result<void> {
    REQUIRE(doc.Set(doc.root(), "a", 9.0));
    return doc.Set(doc.root(), "a", 3.0);
  }));
  CHECK(heard.size() == 2);
}

TEST_CASE("a block that refuses rolls back every write and delivers nothing", "[sync][refusal]") {
  Document doc(Kind::kObject);
  REQUIRE(doc.Set(doc.root(), "keep", 1.0));
  const Snapshot before = TakeSnapshot(doc);
  int heard = 0;
  doc.Watch([&](const Change&) { ++heard; });
  auto result = doc.Atomic([&]() -> Result<void> {
    REQUIRE(doc.Set(doc.root(), "keep", 2.0));
    REQUIRE(doc.Set(doc.root(), "new", 3.0));
    return codec::Refusal{codec::Reason::kInvalidWrite, "changed my mind"};
  });
  REQUIRE_FALSE(result);
  CHECK(TakeSnapshot(doc) == before);
  CHECK(heard == 0);
}

TEST_CASE("attaching an observable twice is refused at close as multiple-attach",
          "[sync][refusal]") {
  Document doc(Kind::kObject);
  Observable& child = doc.Create(Kind::kObject);
  REQUIRE(doc.Set(doc.root(), "a", Attach(child)));
  const Snapshot before = TakeSnapshot(doc);
  auto result = doc.Set(doc.root(), "b", Attach(child));  // No remove of "a".
  REQUIRE_FALSE(result);
  CHECK(codec::Name(result.error().reason) == "multiple-attach");
  CHECK(TakeSnapshot(doc) == before);

  // A move: remove the old edge and add the new one in one commit.
  REQUIRE(doc.Atomic([&]() -> Result<void> {
    REQUIRE(doc.Set(doc.root(), "b", Attach(child)));
    return doc.Remove(doc.root(), "a");
  }));
  CHECK(doc.Find(child.id()) == &child);  // Moved, not re-created.
  CHECK(child.parent() == &doc.root());
  CHECK(child.parent_key() == "b");
}

TEST_CASE("attaching an observable inside its own subtree is refused as unreachable",
          "[sync][refusal]") {
  Document doc(Kind::kObject);
  Observable& outer = doc.Create(Kind::kObject);
  Observable& inner = doc.Create(Kind::kObject);
  REQUIRE(doc.Set(outer, "inner", Attach(inner)));
  REQUIRE(doc.Set(doc.root(), "outer", Attach(outer)));
  const Snapshot before = TakeSnapshot(doc);
  auto result = doc.Atomic([&]() -> Result<void> {
    REQUIRE(doc.Remove(doc.root(), "outer"));
    return doc.Set(inner, "loop", Attach(outer));
  });
  REQUIRE_FALSE(result);
  CHECK(codec::Name(result.error().reason) == "unreachable");
  CHECK(TakeSnapshot(doc) == before);
}

TEST_CASE("text keeps a leading byte order mark", "[sync]") {
  Document doc(Kind::kObject);
  const std::string bom = "\xef\xbb\xbfhello";
  std::optional<Commit> heard;
  doc.Watch([&](const Change& change) { heard = change.commit; });
  REQUIRE(doc.Set(doc.root(), bom, bom));
  REQUIRE(heard);
  auto bytes = codec::EncodeCommit(*heard);
  REQUIRE(bytes);
  auto decoded = codec::DecodeCommit(*bytes);
  REQUIRE(decoded);
  Document copy(doc.root().id(), Kind::kObject);
  REQUIRE(copy.Apply(*decoded));
  REQUIRE(copy.root().Get(bom));
  CHECK(*copy.root().Get(bom) == Value(bom));
}

TEST_CASE("a new observable joins with its whole content as adds", "[sync]") {
  Document doc(Kind::kObject);
  Observable& card = doc.Create(Kind::kObject);
  Observable& tags = doc.Create(Kind::kArray);
  REQUIRE(doc.Set(card, "title", std::string("plan")));
  REQUIRE(doc.Push(tags, std::string("urgent")));
  REQUIRE(doc.Set(card, "tags", Attach(tags)));
  std::vector<Commit> heard;
  doc.Watch([&](const Change& change) { heard.push_back(change.commit); });
  REQUIRE(doc.Set(doc.root(), "card", Attach(card)));
  REQUIRE(heard.size() == 1);
  CHECK(heard[0].deltas.size() == 4);
  for (const auto& delta : heard[0].deltas) CHECK(delta.type == codec::DeltaType::kAdd);
  CHECK(doc.Find(card.id()) == &card);
  CHECK(card.parent() == &doc.root());
  CHECK(doc.observable_count() == 3);
}

TEST_CASE("a detached observable leaves the document and comes back by id", "[sync]") {
  Document doc(Kind::kObject);
  Observable& child = doc.Create(Kind::kObject);
  REQUIRE(doc.Set(child, "x", 1.0));
  REQUIRE(doc.Set(doc.root(), "child", Attach(child)));
  const Id id = child.id();
  std::optional<Commit> undo;
  doc.Watch([&](const Change& change) { undo = *change.undo; }, /*undo=*/true);
  REQUIRE(doc.Remove(doc.root(), "child"));
  CHECK(doc.Find(id) == nullptr);
  CHECK(doc.observable_count() == 1);
  // Writing into it is now refused as unreachable.
  Commit stray{{{codec::DeltaType::kAdd, id, {Kind::kObject, "y"}, Value(2.0)}}, {}};
  auto refused = doc.Apply(stray);
  REQUIRE_FALSE(refused);
  CHECK(codec::Name(refused.error().reason) == "unreachable");
  // The undo describes it again, content included.
  REQUIRE(undo);
  CHECK(undo->deltas.size() == 2);
  REQUIRE(doc.Apply(*undo));
  REQUIRE(doc.Find(id));
  CHECK(*doc.Find(id)->Get("x") == Value(1.0));
}

TEST_CASE("a watcher's reaction is a new commit, delivered after the current one", "[sync]") {
  Document doc(Kind::kObject);
  std::vector<std::string> order;
  doc.Watch([&](const Change& change) {
    const std::string& key = change.commit.deltas[0].ref.key;
    order.push_back("first:" + key);
    if (key == "ping") REQUIRE(doc.Set(doc.root(), "pong", true));
  });
  doc.Watch(
      [&](const Change& change) { order.push_back("second:" + change.commit.deltas[0].ref.key); });
  REQUIRE(doc.Set(doc.root(), "ping", true));
  CHECK(order ==
        std::vector<std::string>{"first:ping", "second:ping", "first:pong", "second:pong"});
}

TEST_CASE("a replace that writes what is there delivers nothing", "[sync]") {
  Document doc(Kind::kObject);
  REQUIRE(doc.Set(doc.root(), "a", 1.0));
  int heard = 0;
  doc.Watch([&](const Change&) { ++heard; });
  Commit same{{{codec::DeltaType::kReplace, doc.root().id(), {Kind::kObject, "a"}, Value(1.0)}},
              {}};
  REQUIRE(doc.Apply(same));
  CHECK(heard == 0);
}

TEST_CASE("reconcile to a target that moves X out of A and drops A applies", "[sync][reconcile]") {
  Document doc(Kind::kObject);
  Observable& a = doc.Create(Kind::kObject);
  Observable& b = doc.Create(Kind::kObject);
  Observable& x = doc.Create(Kind::kObject);
  REQUIRE(doc.Set(x, "v", 1.0));
  REQUIRE(doc.Set(a, "x", Attach(x)));
  REQUIRE(doc.Set(doc.root(), "a", Attach(a)));
  REQUIRE(doc.Set(doc.root(), "b", Attach(b)));
  // The target: X lives in B, and A is gone.
  auto other = FromSnapshot(TakeSnapshot(doc));
  REQUIRE(other);
  Document& target = **other;
  REQUIRE(target.Atomic([&]() -> Result<void> {
    REQUIRE(target.Set(*target.Find(b.id()), "x", Attach(*target.Find(x.id()))));
    REQUIRE(target.Remove(*target.Find(a.id()), "x"));
    return target.Remove(target.root(), "a");
  }));
  auto commit = Reconcile(doc, TakeSnapshot(target));
  REQUIRE(commit);
  REQUIRE(*commit);
  auto applied = doc.Apply(**commit);
  INFO((applied ? "" : applied.error().ToString()));
  REQUIRE(applied);
  CHECK(TakeSnapshot(doc) == TakeSnapshot(target));
  CHECK(doc.Find(x.id()) == &x);
  CHECK(x.parent() == &b);
}

TEST_CASE("reconcile refuses another root", "[sync][reconcile][refusal]") {
  Document one(Kind::kObject), two(Kind::kObject);
  auto commit = Reconcile(one, TakeSnapshot(two));
  REQUIRE_FALSE(commit);
  CHECK(codec::Name(commit.error().reason) == "root-mismatch");
  auto root = RootFrom(one.root().id(), 7);
  REQUIRE_FALSE(root);
  CHECK(codec::Name(root.error().reason) == "kind-conflict");
}

TEST_CASE("random edits in one block equal the same edits one commit each", "[sync][property]") {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    INFO("seed " << seed);
    Document single(Kind::kObject);
    auto copy = FromSnapshot(TakeSnapshot(single));
    REQUIRE(copy);
    Document& each = **copy;
    testing::Editor editor(seed);
    std::vector<testing::Edit> edits;
    std::vector<Commit> block;
    single.Watch([&](const Change& change) { block.push_back(change.commit); });
    REQUIRE(single.Atomic([&]() -> Result<void> {
      for (int i = 0; i < 30; ++i) edits.push_back(editor.RandomEdit(single));
      return {};
    }));
    CHECK(block.size() <= 1);
    for (const auto& edit : edits) {
      auto replayed = testing::Editor::Replay(each, edit);
      INFO((replayed ? "" : replayed.error().ToString()));
      REQUIRE(replayed);
    }
    CHECK(TakeSnapshot(single) == TakeSnapshot(each));
    // The one commit, applied to the start state, gives the same document.
    Document fresh(single.root().id(), Kind::kObject);
    for (const Commit& commit : block) REQUIRE(fresh.Apply(commit));
    CHECK(TakeSnapshot(fresh) == TakeSnapshot(single));
  }
}

// Document::bytes() matches a count from scratch (every slot of every
// observable) and the snapshot's, and bounds the state's encoding from above,
// within 8 bytes a number.
void CheckSize(const Document& doc) {
  uint64_t recount = 0;
  size_t numbers = 0;
  for (const auto& [id, node] : doc.index()) {
    for (const auto& [key, value] : node->slots()) {
      recount += SlotBytes(key, value);
      numbers += std::holds_alternative<double>(value);
    }
  }
  REQUIRE(doc.bytes() == recount);
  auto rebuilt = FromSnapshot(TakeSnapshot(doc));
  REQUIRE(rebuilt);
  CHECK((*rebuilt)->bytes() == doc.bytes());
  std::string encoded;
  if (auto state = AsCommit(doc)) REQUIRE(codec::EncodeCommit(*state, encoded));
  CHECK(encoded.size() <= doc.bytes() + 10);
  CHECK(encoded.size() + 8 * numbers >= doc.bytes());
}

TEST_CASE("applying a commit then its undo restores the snapshot and the size",
          "[sync][property]") {
  int dropped_subtrees = 0, shrank = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    INFO("seed " << seed);
    Document doc(Kind::kObject);
    testing::Editor editor(seed);
    std::optional<Commit> undo;
    doc.Watch([&](const Change& change) { undo = *change.undo; }, /*undo=*/true);
    for (int i = 0; i < 40; ++i) {
      const size_t count = doc.observable_count();
      const Snapshot before = TakeSnapshot(doc);
      undo.reset();
      editor.RandomEdit(doc);
      CheckSize(doc);
      if (!undo) continue;
      const Snapshot after = TakeSnapshot(doc);
      dropped_subtrees += doc.observable_count() < count;
      // Growth() bounds what the undo adds, before it is applied.
      const auto size = static_cast<int64_t>(doc.bytes());
      const int64_t growth = Growth(doc, *undo);
      auto applied = doc.Apply(*undo);
      INFO((applied ? "" : applied.error().ToString()));
      REQUIRE(applied);
      CHECK(TakeSnapshot(doc) == before);
      CHECK(static_cast<int64_t>(doc.bytes()) - size <= growth);
      shrank += static_cast<int64_t>(doc.bytes()) < size;
      CheckSize(doc);
      // And the undo's undo takes it forward again.
      REQUIRE(undo);
      REQUIRE(doc.Apply(*undo));
      CHECK(TakeSnapshot(doc) == after);
      CheckSize(doc);
    }
  }
  CHECK(dropped_subtrees > 100);  // Undo re-describes dropped subtrees often.
  CHECK(shrank > 100);
}

TEST_CASE("reconcile between random states converges and keeps identity",
          "[sync][property][reconcile]") {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    INFO("seed " << seed);
    Document base(Kind::kObject);
    testing::Editor editor(seed);
    for (int i = 0; i < 15; ++i) editor.RandomEdit(base);
    auto other = FromSnapshot(TakeSnapshot(base));
    REQUIRE(other);
    for (int i = 0; i < 15; ++i) editor.RandomEdit(base);
    for (int i = 0; i < 15; ++i) editor.RandomEdit(**other);
    const Snapshot target = TakeSnapshot(**other);
    std::map<Id, const Observable*> shared;
    for (const auto& [id, node] : base.index()) {
      if (target.observables.count(id)) shared[id] = node.get();
    }
    auto commit = Reconcile(base, target);
    REQUIRE(commit);
    if (*commit) {
      auto applied = base.Apply(**commit);
      INFO((applied ? "" : applied.error().ToString()));
      REQUIRE(applied);
    }
    CHECK(TakeSnapshot(base) == target);
    CheckSize(base);
    for (const auto& [id, node] : shared) CHECK(base.Find(id) == node);
    auto again = Reconcile(base, target);
    REQUIRE(again);
    CHECK_FALSE(*again);
  }
}

TEST_CASE("as_commit into a fresh root reproduces the document", "[sync][property]") {
  size_t observables = 0;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    INFO("seed " << seed);
    Document doc(Kind::kMap);
    testing::Editor editor(seed);
    for (int i = 0; i < 30; ++i) editor.RandomEdit(doc);
    auto copy = RootFrom(doc.root().id(), static_cast<int>(Kind::kMap));
    REQUIRE(copy);
    if (auto commit = AsCommit(doc)) REQUIRE((*copy)->Apply(*commit));
    CHECK(TakeSnapshot(**copy) == TakeSnapshot(doc));
    auto rebuilt = FromSnapshot(TakeSnapshot(doc));
    REQUIRE(rebuilt);
    CHECK(TakeSnapshot(**rebuilt) == TakeSnapshot(doc));
    observables += doc.observable_count();
  }
  CHECK(observables > 200);  // The edits do build nested observables.
  Document empty(Kind::kObject);
  CHECK_FALSE(AsCommit(empty));
}

}  // namespace
}  // namespace aweft::sync
