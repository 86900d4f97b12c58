#include "sync/link.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "sync/snapshot.h"
#include "sync/track.h"

namespace aweft::sync {
namespace {

// Two ends joined in process, driven by hand.
struct Pair {
  ManualScheduler scheduler;
  std::unique_ptr<Channel> a_channel, b_channel;
  std::unique_ptr<Link> a, b;

  Pair() {
    auto [x, y] = InProcessPair(scheduler);
    a_channel = std::move(x);
    b_channel = std::move(y);
    a = std::make_unique<Link>(*a_channel, scheduler);
    b = std::make_unique<Link>(*b_channel, scheduler);
  }
  void Run() { scheduler.RunUntilIdle(); }
};

Shared* Share(Link& link, const std::string& name, Document* doc = nullptr,
              ShareHandlers handlers = {}) {
  auto shared = link.Share(name, doc, std::move(handlers));
  REQUIRE(shared);
  return *shared;
}

TEST_CASE("track reports a received commit as landed and a reaction as local", "[sync][link]") {
  Document doc(Kind::kObject);
  std::vector<bool> landed;
  Tracker tracker(doc, [&](const Tracked& t) { landed.push_back(t.landed); });
  doc.Watch([&](const Change& change) {
    if (change.commit.deltas[0].ref.key == "in") REQUIRE(doc.Set(doc.root(), "echo", 1.0));
  });
  Commit in{{{codec::DeltaType::kAdd, doc.root().id(), {Kind::kObject, "in"}, Value(1.0)}}, {}};
  REQUIRE(tracker.Receive(in));
  CHECK(landed == std::vector<bool>{true, false});
  // A received commit that changes nothing does not swallow the next local one.
  Commit same{{{codec::DeltaType::kReplace, doc.root().id(), {Kind::kObject, "in"}, Value(1.0)}},
              {}};
  REQUIRE(tracker.Receive(same));
  REQUIRE(doc.Set(doc.root(), "local", 2.0));
  CHECK(landed == std::vector<bool>{true, false, false});
}

TEST_CASE("an empty end gets the whole document, then both trade commits", "[sync][link]") {
  for (bool empty_first : {false, true}) {
    Pair p;
    Document source(Kind::kObject);
    Observable& card = source.Create(Kind::kObject);
    REQUIRE(source.Set(card, "title", std::string("plan")));
    REQUIRE(source.Set(source.root(), "card", Attach(card)));
    Shared* empty = nullptr;
    if (empty_first) empty = Share(*p.b, "board");
    Share(*p.a, "board", &source);
    if (!empty_first) empty = Share(*p.b, "board");
    p.Run();
    REQUIRE(empty->ready());
    Document& copy = *empty->document();
    CHECK(TakeSnapshot(copy) == TakeSnapshot(source));
    REQUIRE(copy.Set(copy.root(), "from-b", true));
    REQUIRE(source.Set(source.root(), "from-a", true));
    p.Run();
    CHECK(TakeSnapshot(copy) == TakeSnapshot(source));
  }
}

TEST_CASE("two ends that both hold the document exchange no state", "[sync][link]") {
  Pair p;
  Document one(Kind::kObject);
  REQUIRE(one.Set(one.root(), "a", 1.0));
  auto two = FromSnapshot(TakeSnapshot(one));
  REQUIRE(two);
  std::vector<std::string> kinds;
  Share(*p.a, "doc", &one);
  Share(*p.b, "doc", two->get());
  p.Run();
  CHECK(p.a->stats().frames_in == 1);  // Only the other's open.
  CHECK(p.b->stats().frames_in == 1);
}

TEST_CASE("commits made before the topic is live travel in one frame on go-live", "[sync][link]") {
  Pair p;
  Document one(Kind::kObject);
  auto copy = FromSnapshot(TakeSnapshot(one));
  Share(*p.a, "doc", &one);
  for (int i = 0; i < 5; ++i) REQUIRE(one.Set(one.root(), "k" + std::to_string(i), 1.0 * i));
  Share(*p.b, "doc", copy->get());
  p.Run();
  CHECK(p.b->stats().commits_in == 5);
  CHECK(p.b->stats().frames_in == 2);  // The open and one commits frame.
  CHECK(TakeSnapshot(**copy) == TakeSnapshot(one));
}

TEST_CASE("a state moves the document without replacing its observables", "[sync][link]") {
  Pair p;
  Document one(Kind::kObject);
  Observable& child = one.Create(Kind::kObject);
  REQUIRE(one.Set(child, "v", std::string("zero")));
  REQUIRE(one.Set(one.root(), "child", Attach(child)));
  auto two_owned = FromSnapshot(TakeSnapshot(one));
  Document& two = **two_owned;
  Observable* two_child = two.Find(child.id());
  Share(*p.a, "doc", &one);
  Shared* b = Share(*p.b, "doc", &two);
  p.Run();
  // Concurrent writes to one slot end swapped; resync makes them agree.
  REQUIRE(one.Set(child, "v", std::string("one")));
  REQUIRE(two.Set(*two_child, "v", std::string("two")));
  p.Run();
  CHECK(*one.Find(child.id())->Get("v") == Value(std::string("two")));
  CHECK(*two_child->Get("v") == Value(std::string("one")));
  b->Resync();
  p.Run();
  CHECK(TakeSnapshot(two) == TakeSnapshot(one));
  CHECK(two.Find(child.id()) == two_child);  // Same C++ object.
}

TEST_CASE("accept refusals are reported at both ends and the next commit applies",
          "[sync][link][refusal]") {
  Pair p;
  Document one(Kind::kObject);
  auto two = FromSnapshot(TakeSnapshot(one));
  std::vector<Refused> at_a, at_b;
  Share(*p.a, "doc", &one, {.refused = [&](const Refused& r) { at_a.push_back(r); }});
  Share(
      *p.b, "doc", two->get(),
      {.accept = [](const Commit& c) -> std::vector<WireReason> {
         if (c.deltas[0].ref.key == "secret") {
           return {{"not-here", "secret is not written here", std::vector<std::string>{"secret"}}};
         }
         return {};
       },
       .refused = [&](const Refused& r) { at_b.push_back(r); }});
  p.Run();
  REQUIRE(one.Atomic([&]() -> Result<void> { return {}; }));
  REQUIRE(one.Set(one.root(), "secret", 1.0));
  REQUIRE(one.Set(one.root(), "open", 2.0));
  p.Run();
  REQUIRE(at_a.size() == 1);
  REQUIRE(at_b.size() == 1);
  CHECK(at_a[0].mine);
  CHECK_FALSE(at_b[0].mine);
  CHECK(at_a[0].seq == at_b[0].seq);
  CHECK(at_a[0].reasons[0].code == "not-here");
  CHECK(at_a[0].reasons[0].path == std::vector<std::string>{"secret"});
  REQUIRE(at_a[0].undo);
  REQUIRE(at_a[0].commit);
  CHECK((*two)->root().Get("open"));
  CHECK_FALSE((*two)->root().Get("secret"));
  // The sender yields by applying the undo.
  REQUIRE(one.Apply(*at_a[0].undo));
  p.Run();
  CHECK(TakeSnapshot(one) == TakeSnapshot(**two));
}

TEST_CASE("different roots under one name fault root-mismatch at both ends",
          "[sync][link][refusal]") {
  Pair p;
  Document one(Kind::kObject), two(Kind::kObject);
  std::string heard_a, heard_b;
  Share(*p.a, "doc", &one,
        {.fault = [&](const std::string& r, const std::string&) { heard_a = r; }});
  Share(*p.b, "doc", &two,
        {.fault = [&](const std::string& r, const std::string&) { heard_b = r; }});
  p.Run();
  CHECK(heard_a == "root-mismatch");
  CHECK(heard_b == "root-mismatch");
}

TEST_CASE("neither end holding the document faults no-document at both ends",
          "[sync][link][refusal]") {
  Pair p;
  Shared* a = Share(*p.a, "doc");
  Shared* b = Share(*p.b, "doc");
  p.Run();
  CHECK(a->end_reason() == "no-document");
  CHECK(b->end_reason() == "no-document");
  CHECK_FALSE(a->ready());
}

TEST_CASE("a frame for an unknown topic is answered no-topic and the link carries on",
          "[sync][link][refusal]") {
  Pair p;
  std::vector<codec::Frame> heard;
  p.a_channel->Receive([&](const codec::Frame& f) { heard.push_back(f); });
  p.a_channel->Send(codec::LeaveFrame{6});
  p.Run();
  REQUIRE(heard.size() == 1);
  const auto* fault = std::get_if<codec::FaultFrame>(&heard[0]);
  REQUIRE(fault);
  CHECK(fault->topic == 6);
  CHECK(fault->reason == "no-topic");
  Document one(Kind::kObject);
  Share(*p.a, "doc", &one);
  Shared* b = Share(*p.b, "doc");
  p.Run();
  CHECK(b->ready());
}

TEST_CASE("stop tells the other end left, and other topics carry on", "[sync][link]") {
  Pair p;
  Document one(Kind::kObject), two(Kind::kObject);
  Shared* first = Share(*p.a, "one", &one);
  Share(*p.a, "two", &two);
  std::string heard;
  Shared* far_first =
      Share(*p.b, "one", nullptr,
            {.fault = [&](const std::string& r, const std::string&) { heard = r; }});
  Shared* far_two = Share(*p.b, "two");
  p.Run();
  first->Stop();
  REQUIRE(two.Set(two.root(), "x", 1.0));
  p.Run();
  CHECK(heard == "left");
  CHECK(far_first->ended());
  CHECK(far_two->document()->root().Get("x"));
}

TEST_CASE("a second share of a live name is refused at once", "[sync][link][refusal]") {
  Pair p;
  Document one(Kind::kObject);
  Share(*p.a, "doc", &one);
  auto again = p.a->Share("doc", &one);
  REQUIRE_FALSE(again);
  CHECK(codec::Name(again.error().reason) == "already-shared");
}

TEST_CASE("a state nobody asked for faults unwanted-state", "[sync][link][refusal]") {
  Pair p;
  Document one(Kind::kObject);
  auto two = FromSnapshot(TakeSnapshot(one));
  Shared* a = Share(*p.a, "doc", &one);
  Share(*p.b, "doc", two->get());
  p.Run();
  p.b_channel->Send(codec::StateFrame{1, std::nullopt});  // b's topic 1.
  p.Run();
  CHECK(a->end_reason() == "unwanted-state");
}

TEST_CASE("the channel ending tells every share closed", "[sync][link]") {
  Pair p;
  Document one(Kind::kObject);
  std::string heard;
  Share(*p.a, "doc", &one, {.fault = [&](const std::string& r, const std::string&) { heard = r; }});
  Shared* waiting = Share(*p.a, "unpaired");
  p.b->Close();
  p.Run();
  CHECK(heard == "closed");
  CHECK(waiting->end_reason() == "closed");
}

TEST_CASE("a hub forwards between links and a chain of three converges", "[sync][link]") {
  ManualScheduler scheduler;
  auto [ab1, ab2] = InProcessPair(scheduler);
  auto [bc1, bc2] = InProcessPair(scheduler);
  Link a(*ab1, scheduler), b_left(*ab2, scheduler), b_right(*bc1, scheduler), c(*bc2, scheduler);
  Document origin(Kind::kObject);
  Share(a, "doc", &origin);
  Shared* middle = Share(b_left, "doc");
  scheduler.RunUntilIdle();
  Share(b_right, "doc", middle->document());
  Shared* end = Share(c, "doc");
  scheduler.RunUntilIdle();
  REQUIRE(end->ready());
  int heard_at_a = 0;
  origin.Watch([&](const Change&) { ++heard_at_a; });
  REQUIRE(end->document()->Set(end->document()->root(), "from-c", 1.0));
  REQUIRE(origin.Set(origin.root(), "from-a", 2.0));
  scheduler.RunUntilIdle();
  CHECK(TakeSnapshot(origin) == TakeSnapshot(*middle->document()));
  CHECK(TakeSnapshot(origin) == TakeSnapshot(*end->document()));
  CHECK(heard_at_a == 2);  // Its own, and c's once: nothing looped back.
}

TEST_CASE("a commit refused further along is refused to its writer late, once",
          "[sync][link][refusal]") {
  // writer -> middle (relaying refusals) -> top, which refuses: the middle
  // refuses it to the writer, by the writer's own seq.
  ManualScheduler scheduler;
  auto [wm1, wm2] = InProcessPair(scheduler);
  auto [mt1, mt2] = InProcessPair(scheduler);
  Link writer(*wm1, scheduler), down(*wm2, scheduler, {.relays_refusals = true}),
      up(*mt1, scheduler), top(*mt2, scheduler);
  Document origin(Kind::kObject);
  bool refuse = false;
  Share(top, "doc", &origin, {.accept = [&](const Commit&) -> std::vector<WireReason> {
          if (refuse) return {{"forbidden", "read only up here", std::nullopt}};
          return {};
        }});
  Shared* toward_writer = nullptr;
  std::vector<bool> relayed;
  Shared* middle = Share(up, "doc", nullptr, {.refused = [&](const Refused& r) {
                           REQUIRE(r.commit);
                           relayed.push_back(toward_writer->RefuseLate(*r.commit, r.reasons));
                           // Once: a second relay of it finds nothing.
                           relayed.push_back(toward_writer->RefuseLate(*r.commit, r.reasons));
                         }});
  scheduler.RunUntilIdle();
  toward_writer = Share(down, "doc", middle->document());
  std::vector<Refused> heard;
  Shared* end =
      Share(writer, "doc", nullptr, {.refused = [&](const Refused& r) { heard.push_back(r); }});
  scheduler.RunUntilIdle();
  REQUIRE(end->ready());
  Document& mine = *end->document();
  REQUIRE(mine.Set(mine.root(), "kept", 1.0));
  scheduler.RunUntilIdle();
  refuse = true;
  REQUIRE(mine.Set(mine.root(), "refused", 2.0));
  scheduler.RunUntilIdle();
  CHECK(relayed == std::vector<bool>{true, false});
  REQUIRE(heard.size() == 1);
  CHECK(heard[0].mine);
  CHECK(heard[0].seq == 2);
  CHECK(heard[0].reasons.at(0).code == "forbidden");
  REQUIRE(heard[0].commit);
  CHECK(heard[0].commit->deltas.at(0).ref.key == "refused");
  CHECK(heard[0].undo.has_value());
  // A commit the middle never took from the writer is not refused to it.
  Commit other{{{codec::DeltaType::kAdd, origin.root().id(), {Kind::kObject, "x"}, Value(1.0)}},
               {}};
  CHECK_FALSE(toward_writer->RefuseLate(other, heard[0].reasons));
  CHECK(down.stats().refused_out == 1);
}

TEST_CASE("one link carries several documents with independent numbering", "[sync][link]") {
  Pair p;
  Document x(Kind::kObject), y(Kind::kArray), z(Kind::kMap);
  Share(*p.a, "x", &x);
  Share(*p.a, "y", &y);
  Shared* bz = Share(*p.b, "z");
  Shared* by = Share(*p.b, "y");
  Shared* bx = Share(*p.b, "x");
  Share(*p.a, "z", &z);
  p.Run();
  REQUIRE(y.Push(y.root(), std::string("item")));
  p.Run();
  CHECK(TakeSnapshot(*bx->document()) == TakeSnapshot(x));
  CHECK(TakeSnapshot(*by->document()) == TakeSnapshot(y));
  CHECK(TakeSnapshot(*bz->document()) == TakeSnapshot(z));
}

TEST_CASE("mirror keeps a second document in step", "[sync][link]") {
  ManualScheduler scheduler;
  Document source(Kind::kObject);
  REQUIRE(source.Set(source.root(), "before", 1.0));
  Mirror mirror(source, scheduler);
  scheduler.RunUntilIdle();
  CHECK(TakeSnapshot(mirror.document()) == TakeSnapshot(source));
  REQUIRE(mirror.document().Set(mirror.document().root(), "back", 2.0));
  scheduler.RunUntilIdle();
  CHECK(source.root().Get("back"));
}

TEST_CASE("mirror moves a given target holding other content to the source, then both ways",
          "[sync][link]") {
  ManualScheduler scheduler;
  Document source(Kind::kObject);
  Observable& list = source.Create(Kind::kArray);
  REQUIRE(source.Set(source.root(), "list", Attach(list)));
  REQUIRE(source.Push(list, std::string("a")));
  // The same root, other content: a key the source lacks, one it holds with
  // another value.
  Document target(source.root().id(), Kind::kObject);
  REQUIRE(target.Set(target.root(), "stale", true));
  REQUIRE(target.Set(target.root(), "list", 5.0));
  Mirror mirror(source, target, scheduler);
  CHECK(&mirror.document() == &target);
  scheduler.RunUntilIdle();
  CHECK(TakeSnapshot(target) == TakeSnapshot(source));
  CHECK(!target.root().Get("stale"));
  // Equal ends: a change on either crosses.
  Observable* mirrored = target.Find(list.id());  // The source's ids, taken.
  REQUIRE(mirrored);
  REQUIRE(target.Push(*mirrored, std::string("from target")));
  REQUIRE(source.Set(source.root(), "from source", 1.0));
  scheduler.RunUntilIdle();
  CHECK(TakeSnapshot(target) == TakeSnapshot(source));
  CHECK(list.size() == 2);
  CHECK(target.root().Get("from source"));
  // Stopped, they part.
  mirror.Stop();
  REQUIRE(source.Set(source.root(), "after", 1.0));
  scheduler.RunUntilIdle();
  CHECK(!target.root().Get("after"));
}

}  // namespace
}  // namespace aweft::sync

namespace aweft::sync {
namespace {

TEST_CASE("an applier refusal is reported at both ends with the applier's reason",
          "[sync][link][refusal]") {
  // Behaviour item 10: a write into something the other end removed.
  Pair p;
  Document one(Kind::kObject);
  Observable& card = one.Create(Kind::kObject);
  REQUIRE(one.Set(one.root(), "card", Attach(card)));
  auto two = FromSnapshot(TakeSnapshot(one));
  std::vector<Refused> at_a, at_b;
  Share(*p.a, "doc", &one, {.refused = [&](const Refused& r) { at_a.push_back(r); }});
  Share(*p.b, "doc", two->get(), {.refused = [&](const Refused& r) { at_b.push_back(r); }});
  p.Run();
  REQUIRE((*two)->Remove((*two)->root(), "card"));    // b drops it...
  REQUIRE(one.Set(card, "title", std::string("x")));  // ...while a writes into it.
  p.Run();
  REQUIRE(at_b.size() == 1);
  CHECK_FALSE(at_b[0].mine);
  CHECK(at_b[0].reasons[0].code == "unreachable");
  REQUIRE(at_a.size() >= 1);
  CHECK(at_a.back().mine);
  CHECK(at_a.back().reasons[0].code == "unreachable");
  CHECK(at_a.back().undo.has_value());
}

TEST_CASE("a refusal beyond the window is reported with its seq only, a recent one in full",
          "[sync][link][refusal]") {
  // Behaviour item 11, with a window of 2.
  ManualScheduler scheduler;
  auto [x, y] = InProcessPair(scheduler);
  Link a(*x, scheduler, {.window = 2}), b(*y, scheduler);
  Document one(Kind::kObject);
  auto two = FromSnapshot(TakeSnapshot(one));
  std::vector<Refused> heard;
  Share(a, "doc", &one, {.refused = [&](const Refused& r) { heard.push_back(r); }});
  bool refuse = false;
  Share(b, "doc", two->get(), {.accept = [&](const Commit&) -> std::vector<WireReason> {
          if (refuse) return {{"not-now", "refused on purpose", std::nullopt}};
          return {};
        }});
  scheduler.RunUntilIdle();
  refuse = true;
  for (int i = 0; i < 5; ++i) REQUIRE(one.Set(one.root(), "k" + std::to_string(i), 1.0 * i));
  scheduler.RunUntilIdle();
  REQUIRE(heard.size() == 5);
  for (int i = 0; i < 3; ++i) CHECK_FALSE(heard[i].commit.has_value());  // Out of the window.
  for (int i = 3; i < 5; ++i) {
    CHECK(heard[i].commit.has_value());
    CHECK(heard[i].undo.has_value());
  }
}

TEST_CASE("a fault for an open topic ends it and tells its handler the reason",
          "[sync][link][refusal]") {
  // Behaviour item 14. A fault that names no reason ends the topic as
  // bad-frame: a check of tests/fuzz/fuzz_link_frames.cc found the topic
  // ending with an empty reason, and the handler hearing one.
  auto [sent, told] = GENERATE(table<std::string, std::string>({
      {"no-topic", "no-topic"},
      {"", "bad-frame"},
  }));
  Pair p;
  Document one(Kind::kObject);
  std::string heard;
  Shared* a = Share(*p.a, "doc", &one,
                    {.fault = [&](const std::string& r, const std::string&) { heard = r; }});
  p.Run();
  p.b_channel->Send(codec::FaultFrame{a->mine_topic(), sent, "nothing here"});
  p.Run();
  CHECK(heard == told);
  CHECK(a->ended());
  CHECK(a->end_reason() == told);
}

TEST_CASE("a reacting watcher's write replicates exactly once and nothing loops back",
          "[sync][link]") {
  // Behaviour item 17.
  Pair p;
  Document one(Kind::kObject);
  auto two = FromSnapshot(TakeSnapshot(one));
  Share(*p.a, "doc", &one);
  Share(*p.b, "doc", two->get());
  p.Run();
  Document& other = **two;
  other.Watch([&](const Change& change) {
    if (!change.local && change.commit.deltas[0].ref.key == "ping") {
      REQUIRE(other.Set(other.root(), "pong", true));
    }
  });
  int heard_at_one = 0;
  one.Watch([&](const Change&) { ++heard_at_one; });
  REQUIRE(one.Set(one.root(), "ping", true));
  p.Run();
  CHECK(heard_at_one == 2);  // Its own ping and the one pong.
  CHECK(one.root().Get("pong"));
  CHECK(p.a->stats().commits_in == 1);
  CHECK(p.b->stats().commits_in == 1);
}

}  // namespace
}  // namespace aweft::sync
