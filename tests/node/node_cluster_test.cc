// Clusters of aweft-node processes on loopback: chains, restarts, cycles.

#include <boost/asio/ip/tcp.hpp>
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "admin/http_client.h"
#include "node/client.h"
#include "node/messages.h"
#include "sync/requests.h"
#include "sync/snapshot.h"
#include "sync/websocket.h"
#include "tests/node/node_process.h"

namespace aweft::node::testing {
namespace {

using sync::Document;

std::vector<std::string> Upstream(const NodeProcess& above) { return {"--upstream", above.url()}; }

TEST_CASE(
    "a chain of three nodes with clients at both ends converges, and a killed "
    "middle node loses nothing confirmed",
    "[node][cluster]") {
  TempDir dir;
  boost::asio::io_context io;
  NodeProcess a(dir.path() + "/a");
  a.Start();
  NodeProcess b(dir.path() + "/b", Upstream(a));
  const uint16_t b_port = b.Start();
  NodeProcess c(dir.path() + "/c", Upstream(b));
  c.Start();

  aweft::Client::Options at_a, at_c;
  at_a.url = a.url();
  at_c.url = c.url();
  aweft::Client top(io.get_executor(), at_a), bottom(io.get_executor(), at_c);
  Document board(codec::Kind::kObject);
  sync::Observable& list = board.Create(codec::Kind::kArray);
  REQUIRE(board.Set(board.root(), "list", sync::Attach(list)));
  REQUIRE(top.Share("board", board));
  REQUIRE(RunUntil(io, [&] { return top.connected() && top.unconfirmed("board") == 0; }));
  Document* below = nullptr;
  // Nodes c and b do not hold it: they find it upstream.
  RunUntil(
      io, [&] { return false; }, std::chrono::milliseconds(300));
  bottom.Open("board", [&](Document& d) { below = &d; });
  REQUIRE(RunUntil(
      io, [&] { return below != nullptr; }, std::chrono::milliseconds(10000)));

  auto equal = [&] { return below && sync::TakeSnapshot(board) == sync::TakeSnapshot(*below); };
  REQUIRE(RunUntil(io, equal, std::chrono::milliseconds(10000)));
  // Writes at both ends reach the other.
  REQUIRE(board.Set(board.root(), "from-top", true));
  REQUIRE(below->Set(below->root(), "from-bottom", true));
  REQUIRE(RunUntil(io, equal, std::chrono::milliseconds(10000)));

  // Under load, the middle node dies and comes back.
  for (int i = 0; i < 30; ++i) {
    REQUIRE(board.Push(list, std::string("top-") + std::to_string(i)));
    sync::Observable* their_list = below->Find(list.id());
    REQUIRE(their_list);
    REQUIRE(below->Push(*their_list, std::string("bottom-") + std::to_string(i)));
    io.restart();
    io.run_for(std::chrono::milliseconds(5));
    if (i == 10) b.Kill();
    if (i == 20) b.Start(b_port);
  }
  REQUIRE(RunUntil(
      io,
      [&] { return equal() && top.unconfirmed("board") == 0 && bottom.unconfirmed("board") == 0; },
      std::chrono::milliseconds(20000)));
  std::string held;  // Which writes are there, should one be missing.
  for (size_t k = 0; k < list.size(); ++k) {
    const codec::Value& value = list.At(k);
    if (const auto* text = std::get_if<std::string>(&value)) held += " " + *text;
  }
  INFO("the list:" << held);
  CHECK(list.size() == 60);  // Every write of both ends, once.
  CHECK(board.root().Get("from-bottom"));
  CHECK(below->root().Get("from-top"));
}

TEST_CASE("an open through a middle node gets the upstream's state first, never an empty copy",
          "[node][cluster]") {
  TempDir dir;
  boost::asio::io_context io;
  NodeProcess a(dir.path() + "/a");
  a.Start();
  NodeProcess b(dir.path() + "/b", Upstream(a));
  const uint16_t b_port = b.Start();
  aweft::Client::Options at_a, at_b;
  at_a.url = a.url();
  at_b.url = b.url();
  aweft::Client top(io.get_executor(), at_a);
  Document board(codec::Kind::kObject);
  for (int i = 0; i < 5; ++i) REQUIRE(board.Set(board.root(), "k" + std::to_string(i), 1.0 * i));
  REQUIRE(top.Share("board", board));
  REQUIRE(RunUntil(io, [&] { return top.connected() && top.unconfirmed("board") == 0; }));

  // b holds nothing of it: the first state its client sees is a's.
  auto open_at_b = [&] {
    auto client = std::make_unique<aweft::Client>(io.get_executor(), at_b);
    std::optional<size_t> keys;
    std::string failed;
    client->Open(
        "board", [&](Document& d) { keys = d.root().size(); },
        [&](const std::string& reason) { failed = reason; });
    REQUIRE(RunUntil(
        io, [&] { return keys || !failed.empty(); }, std::chrono::milliseconds(10000)));
    INFO("failed: " << failed);
    REQUIRE(keys);
    return *keys;
  };
  CHECK(open_at_b() == 5);
  CHECK(open_at_b() == 5);  // Loaded at b now, and in step.

  // With a down, b (restarted, so it loads the name again) serves the copy
  // it stored, and does not wait for a.
  top.Forget("board");
  a.Kill();
  b.Kill();
  b.Start(b_port);
  const auto start = std::chrono::steady_clock::now();
  CHECK(open_at_b() == 5);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
}

// issue: a state over the upstream's limits.max_commit_bytes, confirmed
// durable at the node below, was refused above, and the refusal went unheard:
// the node below marked it confirmed upstream and, after a restart, resynced
// it away. A node takes from another node what that node took from its
// clients; a commit the upstream does refuse never moves the mark past it.
TEST_CASE(
    "a confirmed state over the upstream's commit limit is kept across a chain and a "
    "restart",
    "[node][cluster]") {
  TempDir dir;
  boost::asio::io_context io;
  NodeProcess a(dir.path() + "/a");
  a.Start();
  NodeProcess b(dir.path() + "/b", Upstream(a));
  const uint16_t b_port = b.Start();
  aweft::Client::Options at_a, at_b;
  at_a.url = a.url();
  at_b.url = b.url();
  aweft::Client writer(io.get_executor(), at_b), reader(io.get_executor(), at_a);
  // Four byte strings of 512 KiB: 2 MiB, over the default 1 MiB limit.
  const std::string big(512 << 10, 'x');
  constexpr int kDocuments = 3;
  std::vector<std::unique_ptr<Document>> written;
  for (int i = 0; i < kDocuments; ++i) {
    written.push_back(std::make_unique<Document>(codec::Kind::kObject));
    for (int k = 0; k < 4; ++k) {
      REQUIRE(
          written.back()->Set(written.back()->root(), "k" + std::to_string(k), codec::Bytes{big}));
    }
    REQUIRE(writer.Share("big-" + std::to_string(i), *written.back()));
  }
  auto all_confirmed = [&] {
    for (int i = 0; i < kDocuments; ++i) {
      if (writer.unconfirmed("big-" + std::to_string(i)) != 0) return false;
    }
    return writer.connected();
  };
  REQUIRE(RunUntil(io, all_confirmed, std::chrono::milliseconds(20000)));
  // Read at a, the node above, once b has shared them there (opened
  // before, a name is no-document): every document reaches it whole.
  std::vector<Document*> above(kDocuments, nullptr);
  for (int i = 0; i < kDocuments; ++i) {
    const std::string name = "big-" + std::to_string(i);
    // Shared with the answer, which may come after this scope (a timeout).
    auto held = std::make_shared<bool>(false), asking = std::make_shared<bool>(false);
    REQUIRE(RunUntil(
        io,
        [&] {
          if (!*held && !*asking) {
            *asking = true;
            reader.Probe(name, [held, asking](auto found) {
              *held = found.has_value();
              *asking = false;
            });
          }
          return *held;
        },
        std::chrono::milliseconds(20000)));
    reader.Open(name, [&above, i](Document& d) { above[i] = &d; });
  }
  auto holds = [](Document* d, const std::vector<std::string>& keys) {
    if (d == nullptr) return false;
    for (const std::string& key : keys) {
      if (d->root().Get(key) == nullptr) return false;
    }
    return true;
  };
  const std::vector<std::string> four{"k0", "k1", "k2", "k3"};
  const bool reached = RunUntil(
      io,
      [&] {
        for (Document* d : above) {
          if (!holds(d, four)) return false;
        }
        return true;
      },
      std::chrono::milliseconds(20000));
  INFO("a: " << a.Drain() << "\nb: " << b.Drain());
  REQUIRE(reached);
  REQUIRE(RunUntil(
      io,
      [&] {
        for (Document* d : above) {
          if (!holds(d, four)) return false;
        }
        return true;
      },
      std::chrono::milliseconds(20000)));

  // b restarts; its writer reconnects and writes once more.
  b.Kill();
  b.Start(b_port);
  for (auto& document : written) REQUIRE(document->Set(document->root(), "poke", true));
  REQUIRE(RunUntil(io, all_confirmed, std::chrono::milliseconds(20000)));
  std::vector<std::string> five = four;
  five.push_back("poke");
  for (int i = 0; i < kDocuments; ++i) {
    INFO("big-" << i);
    CHECK(holds(written[i].get(), five));
  }
  CHECK(RunUntil(
      io,
      [&] {
        for (Document* d : above) {
          if (!holds(d, five)) return false;
        }
        return true;
      },
      std::chrono::milliseconds(20000)));
  // A new client of b reads them whole from b's store.
  aweft::Client fresh(io.get_executor(), at_b);
  std::vector<Document*> below(kDocuments, nullptr);
  for (int i = 0; i < kDocuments; ++i) {
    fresh.Open("big-" + std::to_string(i), [&below, i](Document& d) { below[i] = &d; });
  }
  CHECK(RunUntil(
      io,
      [&] {
        for (Document* d : below) {
          if (!holds(d, five)) return false;
        }
        return true;
      },
      std::chrono::milliseconds(20000)));
}

// The node above refuses a commit the nodes below confirmed (here: b's token
// there may only read). The node above orders the document (docs/sync.md
// "One order"): b is corrected to its state, c to b's and c's writer to c's,
// so the write is undone everywhere, said in b's log, refused to its writer
// through c, and not back after a restart.
TEST_CASE("a commit the upstream refuses is undone below, and refused to its writer",
          "[node][cluster][refusal]") {
  TempDir dir;
  boost::asio::io_context io;
  NodeProcess a(dir.path() + "/a", {"--config", TwoTokens(dir.path() + "/a.toml")});
  a.Start();
  const std::string b_config = dir.path() + "/b.toml";
  std::ofstream(b_config) << "[[upstreams]]\nurl = \"" << a.url()
                          << "\"\ntoken = \"reader-secret\"\n";
  NodeProcess b(dir.path() + "/b", {"--config", b_config});
  const uint16_t b_port = b.Start();
  NodeProcess c(dir.path() + "/c", {"--upstream", b.url()});
  c.Start();

  aweft::Client::Options at_a, at_b, at_c;
  at_a.url = a.url();
  at_a.token = "writer-secret";
  at_b.url = b.url();
  at_c.url = c.url();
  aweft::Client top(io.get_executor(), at_a);
  Document board(codec::Kind::kObject);
  REQUIRE(board.Set(board.root(), "from-top", true));
  REQUIRE(top.Share("board", board));
  REQUIRE(RunUntil(io, [&] { return top.connected() && top.unconfirmed("board") == 0; }));

  // Two connections first: with --threads 3 the writer's lands on a shard
  // (round robin), whose replica of the document the refusal must reach.
  aweft::Client idle1(io.get_executor(), at_c);
  REQUIRE(RunUntil(io, [&] { return idle1.connections() == 1; }));
  aweft::Client idle2(io.get_executor(), at_c);
  REQUIRE(RunUntil(io, [&] { return idle2.connections() == 1; }));
  std::string b_log;
  {
    aweft::Client writer(io.get_executor(), at_c);
    Document* below = nullptr;
    std::vector<sync::Refused> heard;
    writer.Open(
        "board", [&](Document& d) { below = &d; }, {},
        [&](const sync::Refused& refused) { heard.push_back(refused); });
    REQUIRE(RunUntil(
        io, [&] { return below && below->root().Get("from-top"); },
        std::chrono::milliseconds(10000)));
    REQUIRE(below->Set(below->root(), "from-below", true));
    // (That c confirms only once a has it is pinned by node_converge_test's
    // held-durable upstream: here the refusal would outrun any confirmation.)
    REQUIRE(RunUntil(
        io,
        [&] {
          b_log += b.Drain();
          return b_log.find("event=upstream-refused doc=\"board\" reason=forbidden") !=
                 std::string::npos;
        },
        std::chrono::milliseconds(10000)));
    // Undone at b and c, and so at the writer, which hears it refused with
    // a's reason.
    CHECK(RunUntil(io, [&] { return !below->root().Get("from-below"); }));
    CHECK(below->root().Get("from-top"));
    REQUIRE(RunUntil(
        io, [&] { return !heard.empty(); }, std::chrono::milliseconds(10000)));
    CHECK(heard.size() == 1);
    CHECK(heard.at(0).mine);
    CHECK(heard.at(0).reasons.at(0).code == "forbidden");
    REQUIRE(heard.at(0).commit);
    CHECK(heard.at(0).commit->deltas.at(0).ref.key == "from-below");
    CHECK(writer.refused("board") == 1);
    CHECK(writer.unconfirmed("board") == 0);
  }
  const std::string c_log = c.Drain();
  INFO(c_log);
  // b relayed a's refusal to c, which relayed it to the writer.
  CHECK(c_log.find("event=upstream-refused doc=\"board\" reason=forbidden") != std::string::npos);
  CHECK_FALSE(board.root().Get("from-below"));
  // a corrected b, and counted it.
  const std::string metrics = admin::HttpRequest(a.admin_url(), "GET", "/metrics").body;
  const std::string healed = "aweft_divergence_healed_total{by=\"correction\"} ";
  const size_t at = metrics.find(healed);
  REQUIRE(at != std::string::npos);
  CHECK(std::stod(metrics.substr(at + healed.size())) >= 1);

  b.Kill();
  b.Start(b_port);
  aweft::Client fresh(io.get_executor(), at_b);
  Document* again = nullptr;
  fresh.Open("board", [&](Document& d) { again = &d; });
  REQUIRE(RunUntil(
      io, [&] { return again && again->root().Get("from-top"); },
      std::chrono::milliseconds(10000)));
  // Whatever b sends again after its restart, a's order holds.
  RunUntil(
      io, [] { return false; }, std::chrono::milliseconds(500));
  INFO(b_log << "\nafter the restart:\n" << b.Drain());
  CHECK(again->root().Get("from-top"));
  CHECK_FALSE(again->root().Get("from-below"));
  CHECK_FALSE(board.root().Get("from-below"));
}

// A node above that answers its requests with something malformed (a `has`
// without a root, a `hello` whose path is a number): the node below ends that
// link, says so, dials again with backoff, and keeps serving its clients.
TEST_CASE("a malformed answer from an upstream ends that link, is logged, and the node stays up",
          "[node][cluster][refusal]") {
  TempDir dir;
  boost::asio::io_context io;
  sync::AsioScheduler scheduler(io.get_executor());
  std::vector<std::unique_ptr<sync::WebSocketChannel>> accepted;
  std::vector<sync::Requests> answering;
  sync::WebSocketListener fake(
      io.get_executor(), scheduler, "127.0.0.1", 0,
      [&](std::unique_ptr<sync::WebSocketChannel> channel) {
        auto requests = sync::Requests::Open(*channel, io.get_executor());
        REQUIRE(requests);
        REQUIRE(requests->Answer(
            [](const std::string& name, const boost::json::value&, sync::Reply reply) {
              if (name == "has") return reply.SendResult(boost::json::object{{"held", true}});
              if (name == "hello") return reply.SendResult(boost::json::object{{"path", 5}});
              reply.SendResult(nullptr);
            }));
        answering.push_back(std::move(*requests));
        accepted.push_back(std::move(channel));
      });
  NodeProcess b(dir.path() + "/b",
                {"--upstream", "ws://127.0.0.1:" + std::to_string(fake.port()) + "/"});
  b.Start();
  aweft::Client::Options at_b;
  at_b.url = b.url();
  aweft::Client client(io.get_executor(), at_b);
  std::string failed;
  client.Open(
      "elsewhere", [](Document&) {}, [&](const std::string& reason) { failed = reason; });
  std::string log;
  CHECK(RunUntil(
      io,
      [&] {
        log += b.Drain();
        return log.find("event=upstream-broken") != std::string::npos && accepted.size() >= 2;
      },
      std::chrono::milliseconds(10000)));
  INFO(log);
  CHECK(log.find("reason=failed") != std::string::npos);
  // b is up and serves documents: it stores a write and passes it on, but
  // cannot confirm it where the name is ordered, and says so.
  Document own(codec::Kind::kObject);
  REQUIRE(client.Share("own", own));
  REQUIRE(own.Set(own.root(), "k", true));
  CHECK(RunUntil(
      io,
      [&] {
        return client.confirm_error().find("the node above that orders it") != std::string::npos;
      },
      std::chrono::milliseconds(10000)));
  CHECK(client.confirm_error().rfind("unavailable: ", 0) == 0);
  CHECK(client.unconfirmed("own") == 1);
  aweft::Client reader(io.get_executor(), at_b);
  Document* seen = nullptr;
  reader.Open("own", [&](Document& d) { seen = &d; });
  CHECK(RunUntil(io, [&] { return seen && seen->root().Get("k"); }));
  CHECK(::kill(b.pid(), 0) == 0);
}

// A node that answers, then drops the link at once (an upstream cutting a
// node below at every frame, say): the client dials again with growing
// backoff, not at once each time (before, every answer reset it).
TEST_CASE("a link dropped right after the node answers is dialed again with growing backoff",
          "[node][client][refusal]") {
  boost::asio::io_context io;
  sync::AsioScheduler scheduler(io.get_executor());
  std::vector<std::unique_ptr<sync::WebSocketChannel>> accepted;
  std::vector<sync::Requests> answering;
  sync::WebSocketListener dropper(
      io.get_executor(), scheduler, "127.0.0.1", 0,
      [&](std::unique_ptr<sync::WebSocketChannel> channel) {
        auto requests = sync::Requests::Open(*channel, io.get_executor());
        REQUIRE(requests);
        sync::WebSocketChannel* raw = channel.get();
        REQUIRE(requests->Answer(
            [raw, &io](const std::string&, const boost::json::value&, sync::Reply reply) {
              reply.SendResult(HasAnswerJson(std::nullopt));
              boost::asio::post(io, [raw] { raw->Close(); });
            }));
        answering.push_back(std::move(*requests));
        accepted.push_back(std::move(channel));
      });
  aweft::Client::Options options;
  options.url = "ws://127.0.0.1:" + std::to_string(dropper.port()) + "/";
  options.backoff_min = std::chrono::milliseconds(50);
  options.backoff_max = std::chrono::milliseconds(2000);
  aweft::Client client(io.get_executor(), options);
  client.Open("doc", [](Document&) {});
  RunUntil(
      io, [] { return false; }, std::chrono::milliseconds(3000));
  // Doubling from 50 ms (each delay drawn between half and all of it): at
  // most 50 + 100 + ... + 1600 ms fit in 3 s, 7 dials with the first.
  INFO(accepted.size() << " connections in 3 s");
  CHECK(accepted.size() >= 3);
  CHECK(accepted.size() <= 8);
}

TEST_CASE("a cycle of three nodes is refused with a clear error and the nodes keep running",
          "[node][cluster][refusal]") {
  TempDir dir;
  boost::asio::io_context io;
  // Ports known before the nodes start, so that each can name the next.
  const std::vector<uint16_t> port = FreePorts(3);
  auto url = [&](int i) { return "ws://127.0.0.1:" + std::to_string(port[i]) + "/"; };
  NodeProcess a(dir.path() + "/a",
                {"--node-id", "node-a", "--upstream", url(1), "--log-level", "info"});
  NodeProcess b(dir.path() + "/b",
                {"--node-id", "node-b", "--upstream", url(2), "--log-level", "info"});
  NodeProcess c(dir.path() + "/c",
                {"--node-id", "node-c", "--upstream", url(0), "--log-level", "info"});
  a.Start(port[0]);
  b.Start(port[1]);
  c.Start(port[2]);
  std::string errors;
  const bool found = RunUntil(
      io,
      [&] {
        errors += a.Drain() + b.Drain() + c.Drain();
        return errors.find("event=cycle") != std::string::npos;
      },
      std::chrono::milliseconds(10000));
  INFO(errors);
  REQUIRE(found);
  CHECK(errors.find("node-a") != std::string::npos);
  CHECK(errors.find("node-b") != std::string::npos);
  CHECK(errors.find("node-c") != std::string::npos);
  // Each still serves its own clients. A document of its own at each: one
  // made at a reaches b and c through their upstreams, and another document
  // under that name is refused there (root-mismatch), its commits never
  // confirmed.
  for (NodeProcess* node : {&a, &b, &c}) {
    aweft::Client::Options options;
    options.url = node->url();
    aweft::Client client(io.get_executor(), options);
    Document doc(codec::Kind::kObject);
    const std::string name = "local-" + node->url();
    REQUIRE(client.Share(name, doc));
    REQUIRE(doc.Set(doc.root(), "k", 1.0));
    INFO(name);
    CHECK(RunUntil(io, [&] { return client.connected() && client.unconfirmed(name) == 0; }));
  }
}

}  // namespace
}  // namespace aweft::node::testing
