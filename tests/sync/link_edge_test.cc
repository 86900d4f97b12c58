// The link where application code misbehaves or the channel goes away
// (behaviour.md §7 items 24, 25, 28).

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sync/link.h"
#include "sync/snapshot.h"

namespace aweft::sync {
namespace {

// Ends joined in a chain in process, each holding a copy of one document.
struct Chain {
  ManualScheduler scheduler;
  std::vector<std::unique_ptr<Channel>> channels;
  std::vector<std::unique_ptr<Link>> links;  // 2i and 2i+1 join end i and i+1.
  std::vector<std::unique_ptr<Document>> docs;

  explicit Chain(int ends) {
    docs.push_back(std::make_unique<Document>(Kind::kObject));
    for (int i = 1; i < ends; ++i) {
      docs.push_back(std::move(*FromSnapshot(TakeSnapshot(*docs[0]))));
    }
    for (int i = 1; i < ends; ++i) {
      auto [x, y] = InProcessPair(scheduler);
      channels.push_back(std::move(x));
      channels.push_back(std::move(y));
      links.push_back(std::make_unique<Link>(*channels[channels.size() - 2], scheduler));
      links.push_back(std::make_unique<Link>(*channels.back(), scheduler));
    }
  }
  Link& left(int i) { return *links[2 * i]; }       // End i, toward i + 1.
  Link& right(int i) { return *links[2 * i + 1]; }  // End i + 1, toward i.
  void Run() { scheduler.RunUntilIdle(); }
};

std::vector<WireReason> RefuseNothing(const Commit&) { return {}; }

bool Has(Document& doc, const std::string& key) { return doc.root().Get(key) != nullptr; }

TEST_CASE(
    "accept throwing refuses with accept-threw at both ends and the rest of "
    "the frame applies",
    "[sync][link][refusal]") {
  Chain c(2);
  std::vector<Refused> at_a, at_b;
  REQUIRE(c.left(0).Share("doc", c.docs[0].get(),
                          {.refused = [&](const Refused& r) { at_a.push_back(r); }}));
  REQUIRE(c.right(0).Share("doc", c.docs[1].get(),
                           {.accept =
                                [](const Commit& commit) {
                                  if (commit.deltas[0].ref.key == "bad") {
                                    throw std::runtime_error("cannot judge bad");
                                  }
                                  return RefuseNothing(commit);
                                },
                            .refused = [&](const Refused& r) { at_b.push_back(r); }}));
  c.Run();
  const uint64_t frames_before = c.right(0).stats().frames_in;
  Document& one = *c.docs[0];
  REQUIRE(one.Set(one.root(), "before", 1.0));
  REQUIRE(one.Set(one.root(), "bad", 2.0));
  REQUIRE(one.Set(one.root(), "after", 3.0));
  c.Run();
  CHECK(c.right(0).stats().frames_in == frames_before + 1);  // One frame of three.
  REQUIRE(at_a.size() == 1);
  REQUIRE(at_b.size() == 1);
  CHECK(at_a[0].mine);
  CHECK_FALSE(at_b[0].mine);
  CHECK(at_a[0].seq == 2);
  CHECK(at_b[0].seq == 2);
  for (const Refused* r : {&at_a[0], &at_b[0]}) {
    REQUIRE(r->reasons.size() == 1);
    CHECK(r->reasons[0].code == "accept-threw");
    CHECK(r->reasons[0].message == "cannot judge bad");
  }
  CHECK(at_a[0].undo);
  Document& two = *c.docs[1];
  CHECK(Has(two, "before"));
  CHECK(Has(two, "after"));
  CHECK_FALSE(Has(two, "bad"));
}

TEST_CASE(
    "a watcher throwing as a commit lands: the frame applies and the error "
    "surfaces once after it",
    "[sync][link]") {
  // Three ends in a chain, so the middle one also shows the commit counts as
  // landed: it is forwarded, not refused.
  Chain c(3);
  std::vector<Refused> refusals;
  auto handlers = [&] {
    return ShareHandlers{.refused = [&](const Refused& r) { refusals.push_back(r); }};
  };
  REQUIRE(c.left(0).Share("doc", c.docs[0].get(), handlers()));
  REQUIRE(c.right(0).Share("doc", c.docs[1].get(), handlers()));
  REQUIRE(c.left(1).Share("doc", c.docs[1].get(), handlers()));
  REQUIRE(c.right(1).Share("doc", c.docs[2].get(), handlers()));
  c.Run();
  Document& middle = *c.docs[1];
  int thrown = 0;
  middle.Watch([&](const Change& change) {
    for (const auto& delta : change.commit.deltas) {
      if (delta.ref.key == "boom") {
        ++thrown;
        throw std::runtime_error("the watcher broke");
      }
    }
  });
  Document& one = *c.docs[0];
  REQUIRE(one.Set(one.root(), "x", 1.0));
  REQUIRE(one.Set(one.root(), "boom", 2.0));
  REQUIRE(one.Set(one.root(), "y", 3.0));
  // The error leaves the scheduler once the whole frame has applied.
  CHECK_THROWS_WITH(c.Run(), "the watcher broke");
  CHECK(Has(middle, "x"));
  CHECK(Has(middle, "boom"));
  CHECK(Has(middle, "y"));
  CHECK_NOTHROW(c.Run());  // Once only.
  CHECK(thrown == 1);
  CHECK(refusals.empty());
  CHECK(TakeSnapshot(*c.docs[2]) == TakeSnapshot(one));
  // The next commit is not taken for the one that threw.
  REQUIRE(one.Set(one.root(), "z", 4.0));
  c.Run();
  CHECK(TakeSnapshot(*c.docs[2]) == TakeSnapshot(one));
}

TEST_CASE(
    "the channel ending under the link tells every share closed but "
    "Link::Close tells nobody",
    "[sync][link]") {
  Chain c(2);
  std::map<std::string, std::vector<std::string>> heard;
  std::map<std::string, int> ready;
  auto handlers = [&](const std::string& who) {
    return ShareHandlers{
        .fault = [&heard, who](const std::string& reason,
                               const std::string&) { heard[who].push_back(reason); },
        .ready = [&ready, who](Document&) { ++ready[who]; }};
  };
  Document lonely(Kind::kObject);
  Shared* a_doc = *c.left(0).Share("doc", c.docs[0].get(), handlers("a-doc"));
  Shared* a_waiting = *c.left(0).Share("wanted", nullptr, handlers("a-waiting"));
  Shared* a_lonely = *c.left(0).Share("lonely", &lonely, handlers("a-lonely"));
  Shared* b_doc = *c.right(0).Share("doc", c.docs[1].get(), handlers("b-doc"));
  Shared* b_waiting = *c.right(0).Share("other", nullptr, handlers("b-waiting"));
  c.Run();
  REQUIRE(ready["a-doc"] == 1);
  REQUIRE(ready["b-doc"] == 1);

  c.right(0).Close();
  c.Run();
  // The far end: every share, paired or not, hears closed once.
  CHECK(heard["a-doc"] == std::vector<std::string>{"closed"});
  CHECK(heard["a-waiting"] == std::vector<std::string>{"closed"});
  CHECK(heard["a-lonely"] == std::vector<std::string>{"closed"});
  CHECK(ready["a-waiting"] == 0);  // It never got a document.
  CHECK_FALSE(a_waiting->ready());
  for (Shared* s : {a_doc, a_waiting, a_lonely}) {
    CHECK(s->end_reason() == "closed");
  }
  // The end that closed: ended, told nobody.
  CHECK(heard["b-doc"].empty());
  CHECK(heard["b-waiting"].empty());
  for (Shared* s : {b_doc, b_waiting}) CHECK(s->end_reason() == "closed");
  CHECK(c.left(0).closed());
  // A closed link shares nothing more.
  auto again = c.left(0).Share("late", &lonely);
  REQUIRE_FALSE(again);
  CHECK(codec::Name(again.error().reason) == "closed");
  // Writes after the end go nowhere and break nothing.
  REQUIRE(c.docs[0]->Set(c.docs[0]->root(), "after", 1.0));
  c.Run();
  CHECK_FALSE(Has(*c.docs[1], "after"));
}

}  // namespace
}  // namespace aweft::sync
