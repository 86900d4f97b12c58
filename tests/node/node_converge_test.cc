// One state everywhere (docs/sync.md "One order"), through real node
// processes on loopback: clients race on the same four keys, on one node and
// across chains of nodes, and once writes stop every client, and a client
// joining fresh, holds the state of the node at the root. One client on each
// node is a bare protocol-v1 link end that does nothing to converge (what the
// reference client does); the others are aweft::Client.

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "admin/http_client.h"
#include "node/client.h"
#include "node/messages.h"
#include "sync/asio_scheduler.h"
#include "sync/requests.h"
#include "sync/snapshot.h"
#include "sync/websocket.h"
#include "tests/node/node_process.h"
#include "tests/node/race.h"

namespace aweft::node::testing {
namespace {

using sync::Document;
using Clock = std::chrono::steady_clock;

struct ConvergeRace : Race {
  // Waits for one state everywhere; returns the time it took from the last
  // write, and checks it holds and that a fresh client on every node is
  // given it.
  std::chrono::milliseconds Settle(std::chrono::seconds limit) {
    const auto last = Clock::now();
    RunUntil(
        io, [&] { return AllEqual(); }, limit);
    INFO(Describe());
    REQUIRE(AllEqual());
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - last);
    // Nothing moves it afterwards.
    RunUntil(
        io, [] { return false; }, std::chrono::milliseconds(300));
    CHECK(AllEqual());
    for (size_t n = 0; n < nodes.size(); ++n) {
      INFO("node " << n);
      CHECK(Fresh(n) == sync::TakeSnapshot(*docs[0]));
    }
    return took;
  }
};

// Builds a chain of `nodes`, creates the document on the root with an
// aweft::Client, adds the writers (node, bare), races and settles.
void RaceOn(int nodes, const std::vector<std::pair<size_t, bool>>& writers, int rounds,
            uint64_t seed) {
  ConvergeRace race;
  race.Chain(nodes);
  race.Create();
  for (const auto& [node, bare] : writers) bare ? race.OpenBare(node) : race.Open(node);
  race.Hammer(rounds, seed);
  const auto took = race.Settle(std::chrono::seconds(10));
  WARN(nodes << " node(s), " << race.docs.size() << " writers x " << rounds
             << " writes on 4 keys: one state " << took.count() << " ms after the last write");
}

TEST_CASE("three clients racing on four keys of one node end in the node's state",
          "[node][converge]") {
  RaceOn(1, {{0, false}, {0, true}}, 200, 1);
}

TEST_CASE("clients racing on four keys at both ends of a chain of two end in the root's state",
          "[node][converge][cluster]") {
  RaceOn(2, {{0, true}, {1, false}, {1, true}}, 150, 2);
}

TEST_CASE("clients racing on four keys along a chain of three end in the root's state",
          "[node][converge][cluster]") {
  RaceOn(3, {{1, true}, {2, false}, {2, true}}, 150, 3);
}

// A commit the node refuses (here: the client may only read) is undone at its
// writer by the node's correction, and reported there with the commit and the
// reasons; it is never counted as confirmed.
TEST_CASE("a commit the node refuses is undone at its writer, reported, and never confirmed",
          "[node][converge][refusal]") {
  TempDir dir;
  boost::asio::io_context io;
  NodeProcess node(dir.path() + "/data", {"--config", TwoTokens(dir.path() + "/node.toml")});
  node.Start();
  aweft::Client::Options options;
  options.url = node.url();
  options.token = "writer-secret";
  aweft::Client owner(io.get_executor(), options);
  Document board(codec::Kind::kObject);
  REQUIRE(board.Set(board.root(), "k0", 0.0));
  REQUIRE(owner.Share("board", board));
  REQUIRE(RunUntil(io, [&] { return owner.stats().link.frames_in > 0; }));

  options.token = "reader-secret";
  aweft::Client reader(io.get_executor(), options);
  std::vector<sync::Refused> heard;
  sync::ShareHandlers handlers;
  handlers.refused = [&](const sync::Refused& refused) { heard.push_back(refused); };
  Document mine(board.root().id(), codec::Kind::kObject);
  REQUIRE(reader.Share("board", mine, handlers));
  REQUIRE(RunUntil(io, [&] { return mine.root().Get("k0") != nullptr; }));
  REQUIRE(mine.Set(mine.root(), "k0", "mine"));
  REQUIRE(RunUntil(io, [&] {
    const codec::Value* k0 = mine.root().Get("k0");
    return !heard.empty() && k0 && *k0 == codec::Value(0.0);
  }));
  REQUIRE(heard.size() == 1);
  CHECK(heard[0].mine);
  REQUIRE_FALSE(heard[0].reasons.empty());
  CHECK(heard[0].reasons[0].code == "forbidden");
  REQUIRE(heard[0].commit);
  REQUIRE(heard[0].commit->deltas.size() == 1);
  CHECK(heard[0].commit->deltas[0].value == codec::Value(std::string("mine")));
  CHECK(reader.refused("board") == 1);
  // Confirmation rounds come and go: the refused commit is not among them.
  RunUntil(
      io, [] { return false; }, std::chrono::milliseconds(200));
  CHECK(reader.unconfirmed("board") == 0);
  CHECK(*board.root().Get("k0") == codec::Value(0.0));
}

// aweft::Client agrees integrity tags with the node (the `tags` request):
// its write that crossed a bare end's on the same slot is refused `diverged`,
// reported to it, and corrected; the two end in the node's state.
TEST_CASE("a tagged write that crossed another on its slot is refused diverged, then corrected",
          "[node][converge]") {
  TempDir dir;
  boost::asio::io_context io;
  sync::AsioScheduler scheduler(io.get_executor());
  NodeProcess node(dir.path() + "/data");
  node.Start();
  aweft::Client::Options options;
  options.url = node.url();
  options.tags = true;
  aweft::Client tagged(io.get_executor(), options);
  Document mine(codec::Kind::kObject);
  REQUIRE(mine.Set(mine.root(), "k", 0.0));
  int diverged = 0;
  sync::ShareHandlers handlers;
  handlers.refused = [&](const sync::Refused& refused) {
    if (refused.mine && refused.reasons[0].code == "diverged") ++diverged;
  };
  REQUIRE(tagged.Share("race", mine, handlers));
  REQUIRE(RunUntil(io, [&] { return tagged.stats().link.frames_in > 0; }));
  testing::Client bare(io, scheduler, node.url());
  auto shared = bare.link->Share("race", nullptr);
  REQUIRE(shared);
  REQUIRE(RunUntil(io, [&] { return (*shared)->ready(); }));
  Document& theirs = *(*shared)->document();
  // Both write in one turn: the two frames race to the node, and about half
  // the time the tagged one arrives second, made on a state the node left.
  for (int i = 0; i < 40 && diverged == 0; ++i) {
    REQUIRE(theirs.Set(theirs.root(), "k", "bare-" + std::to_string(i)));
    REQUIRE(mine.Set(mine.root(), "k", "tagged-" + std::to_string(i)));
    RunUntil(
        io, [] { return false; }, std::chrono::milliseconds(50));
  }
  CHECK(diverged > 0);
  CHECK(RunUntil(io, [&] {
    return sync::TakeSnapshot(mine) == sync::TakeSnapshot(theirs) &&
           tagged.unconfirmed("race") == 0;
  }));
  CHECK(tagged.refused("race") == static_cast<size_t>(diverged));
}

// A stand-in for an upstream node that does not order: a bare link end over
// a WebSocket listener, answering a node's requests (hello, has, durable,
// digest) from one document. Same-slot races between it and the node below
// leave the two apart, as two bare ends are (behaviour.md §2.9).
struct BareUpstream {
  BareUpstream(boost::asio::io_context& io, sync::Scheduler& scheduler)
      : io(io),
        scheduler(scheduler),
        listener(
            io.get_executor(), scheduler, "127.0.0.1", 0,
            [this](std::unique_ptr<sync::WebSocketChannel> channel) { Take(std::move(channel)); }) {
  }
  ~BareUpstream() {
    requests.reset();
    link.reset();
  }

  std::string url() const { return "ws://127.0.0.1:" + std::to_string(listener.port()) + "/"; }

  void Take(std::unique_ptr<sync::WebSocketChannel> next) {
    requests.reset();
    link.reset();
    channel = std::move(next);
    link = std::make_unique<sync::Link>(*channel, scheduler);
    link->OnOpen([this](const codec::OpenFrame& open) {
      sync::ShareHandlers handlers;
      handlers.accept = [this](const codec::Commit&) -> std::vector<codec::WireReason> {
        if (refuse) return {{"forbidden", "refused on purpose", std::nullopt}};
        return {};
      };
      (void)link->Share(open.name, &doc, std::move(handlers));
    });
    requests.emplace(std::move(*sync::Requests::Open(*channel, io.get_executor())));
    (void)requests->Answer(
        [this](const std::string& name, const boost::json::value&, sync::Reply reply) {
          boost::json::value answer;
          if (name == "hello") answer = ToJson(HelloAnswer{{"bare-upstream"}});
          if (name == "has") answer = HasAnswerJson(Held{doc.root().id(), doc.root().kind()});
          if (name == "durable") answer = DurableAnswerJson();
          if (name == "digest") answer = DigestAnswerJson(Digest(doc));
          if (name == "durable" && hold_durable) return held.push_back({reply, answer});
          // After the link's frames queued before it, as a node answers.
          scheduler.Post([reply, answer] { reply.SendResult(answer); });
        });
  }

  boost::asio::io_context& io;
  sync::Scheduler& scheduler;
  Document doc{codec::Kind::kObject};
  sync::WebSocketListener listener;
  std::unique_ptr<sync::WebSocketChannel> channel;
  std::unique_ptr<sync::Link> link;
  std::optional<sync::Requests> requests;
  bool refuse = false;        // Refuse every commit, `forbidden`.
  bool hold_durable = false;  // Keep `durable` asks unanswered, in `held`.
  std::vector<std::pair<sync::Reply, boost::json::value>> held;
};

// A node below confirms a write to its client only once the node above,
// which orders the document, has confirmed it (docs/node.md "Clusters");
// one the node above refuses is refused to the writer and never confirmed.
TEST_CASE("a write below is confirmed once the node above has it, and one refused there never is",
          "[node][converge][cluster][refusal]") {
  TempDir dir;
  boost::asio::io_context io;
  sync::AsioScheduler scheduler(io.get_executor());
  BareUpstream upstream(io, scheduler);
  upstream.hold_durable = true;
  NodeProcess b(dir.path() + "/b", {"--upstream", upstream.url()});
  b.Start();
  aweft::Client::Options options;
  options.url = b.url();
  aweft::Client client(io.get_executor(), options);
  Document* below = nullptr;
  std::vector<sync::Refused> heard;
  client.Open(
      "doc", [&](Document& d) { below = &d; }, {},
      [&](const sync::Refused& refused) { heard.push_back(refused); });
  REQUIRE(RunUntil(
      io, [&] { return below != nullptr; }, std::chrono::seconds(10)));

  REQUIRE(below->Set(below->root(), "kept", true));
  REQUIRE(RunUntil(io, [&] { return upstream.doc.root().Get("kept") != nullptr; }));
  // Stored on b and passed on, but not confirmed above: not confirmed here.
  RunUntil(
      io, [] { return false; }, std::chrono::milliseconds(500));
  CHECK(client.unconfirmed("doc") == 1);
  REQUIRE_FALSE(upstream.held.empty());
  for (auto& [reply, answer] : upstream.held) reply.SendResult(answer);
  upstream.held.clear();
  CHECK(RunUntil(io, [&] { return client.unconfirmed("doc") == 0; }));

  upstream.refuse = true;
  REQUIRE(below->Set(below->root(), "refused", true));
  REQUIRE(RunUntil(
      io, [&] { return !heard.empty(); }, std::chrono::seconds(10)));
  CHECK(heard.at(0).reasons.at(0).code == "forbidden");
  CHECK(client.refused("doc") == 1);
  CHECK(client.unconfirmed("doc") == 0);
  CHECK_FALSE(upstream.doc.root().Get("refused"));
}

// Anti-entropy (docs/node.md): a node below compares each document it
// shares with its upstream's digest now and then, and one found apart in
// two rounds takes the upstream's state. The upstream here is a bare end, so
// a same-slot race leaves the two apart for good unless the digests find it.
TEST_CASE("a node below finds by digest that it differs from its upstream, and heals",
          "[node][converge][cluster]") {
  TempDir dir;
  boost::asio::io_context io;
  sync::AsioScheduler scheduler(io.get_executor());
  BareUpstream upstream(io, scheduler);
  REQUIRE(upstream.doc.Set(upstream.doc.root(), "k", "start"));
  const std::string config = dir.path() + "/b.toml";
  std::ofstream(config) << "[[upstreams]]\nurl = \"" << upstream.url()
                        << "\"\ndigest_seconds = 1\n";
  NodeProcess b(dir.path() + "/b", {"--config", config});
  b.Start();
  aweft::Client::Options options;
  options.url = b.url();
  aweft::Client client(io.get_executor(), options);
  Document* below = nullptr;
  client.Open("race", [&](Document& d) { below = &d; });
  REQUIRE(RunUntil(
      io, [&] { return below && below->root().Get("k"); }, std::chrono::seconds(10)));

  // Race on one slot until the two are left apart.
  auto apart = [&] { return !(sync::TakeSnapshot(*below) == sync::TakeSnapshot(upstream.doc)); };
  bool diverged = false;
  for (int i = 0; i < 50 && !diverged; ++i) {
    REQUIRE(below->Set(below->root(), "k", "below-" + std::to_string(i)));
    REQUIRE(upstream.doc.Set(upstream.doc.root(), "k", "above-" + std::to_string(i)));
    RunUntil(
        io, [] { return false; }, std::chrono::milliseconds(100));
    diverged = apart();
  }
  REQUIRE(diverged);
  // Found in two rounds a second apart, and healed: b takes the upstream's
  // state, and b's client follows b.
  CHECK(RunUntil(
      io, [&] { return !apart(); }, std::chrono::seconds(10)));
  const std::string log = b.Drain();
  CHECK_THAT(log, Catch::Contains("event=divergence doc=\"race\""));
  const std::string metrics = admin::HttpRequest(b.admin_url(), "GET", "/metrics").body;
  CHECK_THAT(metrics, Catch::Contains("aweft_divergence_healed_total{by=\"digest\"} "));
  // The next round agrees, and the links say when.
  CHECK(RunUntil(
      io,
      [&] {
        const std::string links = admin::HttpRequest(b.admin_url(), "GET", "/v1/links").body;
        return links.find("\"agreed_seconds_ago\":") != std::string::npos &&
               links.find("\"agreed_seconds_ago\":null") == std::string::npos;
      },
      std::chrono::seconds(5)));
}

}  // namespace
}  // namespace aweft::node::testing
