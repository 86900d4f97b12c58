// Clusters of peers (docs/node.md "Clusters"): aweft-node processes on
// loopback that each name all of them, clients racing on the same slots at
// every node.

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "admin/http_client.h"
#include "node/client.h"
#include "node/placement.h"
#include "sync/snapshot.h"
#include "tests/node/link_proxy.h"
#include "tests/node/node_process.h"

namespace aweft::node::testing {
namespace {

using sync::Document;

// RunUntil for what the nodes hold: asks at most every 20 ms.
bool Poll(boost::asio::io_context& io, const std::function<bool()>& done,
          std::chrono::milliseconds limit) {
  return RunUntil(
      io,
      [&] {
        if (done()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return false;
      },
      limit);
}

// `count` peers of one cluster: ids peer-0, peer-1, ...; each names every
// one of them, itself included, on ports fixed before any starts.
struct Peers {
  // How node `from` reaches node `to`, which listens on `port`.
  using Url = std::function<std::string(int from, int to, uint16_t port)>;
  static std::string Direct(int, int, uint16_t port) {
    return "ws://127.0.0.1:" + std::to_string(port) + "/";
  }

  Peers(const std::string& dir, int count, std::vector<std::string> extra = {},
        const Url& url = Direct)
      : ports(FreePorts(count)) {
    for (int i = 0; i < count; ++i) {
      std::vector<std::string> args{"--node-id", Id(i), "--log-level", "info"};
      args.insert(args.end(), extra.begin(), extra.end());
      for (int j = 0; j < count; ++j) args.insert(args.end(), {"--peer", url(i, j, ports[j])});
      nodes.push_back(std::make_unique<NodeProcess>(dir + "/" + Id(i), args));
    }
    for (int i = 0; i < count; ++i) nodes[i]->Start(ports[i]);
  }
  static std::string Id(int i) { return "peer-" + std::to_string(i); }

  // Waits until every node has logged that it sees all the others live.
  bool AllLive(boost::asio::io_context& io) {
    std::vector<std::string> logs(nodes.size());
    const std::string all = "event=peers live=" + std::to_string(nodes.size() - 1) + " ";
    return RunUntil(
        io,
        [&] {
          bool live = true;
          for (size_t i = 0; i < nodes.size(); ++i) {
            logs[i] += nodes[i]->Drain();
            live = live && logs[i].find(all) != std::string::npos;
          }
          return live;
        },
        std::chrono::milliseconds(15000));
  }

  // Makes `count` documents, `name(d)` at node d % size with {"v": d}, each
  // by a client of that node that is gone once they are stored.
  bool Make(boost::asio::io_context& io, int count, const std::function<std::string(int)>& name,
            Level level = Level::kLocal) {
    std::vector<std::unique_ptr<aweft::Client>> clients;
    std::vector<std::unique_ptr<Document>> made;
    for (auto& node : nodes) {
      aweft::Client::Options options;
      options.url = node->url();
      options.level = level;
      clients.push_back(std::make_unique<aweft::Client>(io.get_executor(), options));
    }
    auto at = [&](int d) -> aweft::Client& { return *clients[d % clients.size()]; };
    for (int d = 0; d < count; ++d) {
      made.push_back(std::make_unique<Document>(codec::Kind::kObject));
      if (!at(d).Share(name(d), *made.back())) return false;
      // After the share: a commit to confirm, so the wait means stored.
      if (!made.back()->Set(made.back()->root(), "v", static_cast<double>(d))) return false;
    }
    return RunUntil(
        io,
        [&] {
          for (int d = 0; d < count; ++d) {
            if (!at(d).connected() || at(d).unconfirmed(name(d)) != 0) return false;
          }
          return true;
        },
        std::chrono::milliseconds(15000));
  }

  // The ids of the peers, in order.
  std::vector<std::string> Ids() const {
    std::vector<std::string> ids;
    for (size_t i = 0; i < nodes.size(); ++i) ids.push_back(Id(static_cast<int>(i)));
    return ids;
  }

  // Node `i`'s /v1/cluster: each peer's id and state, "id=state ...", in
  // the order named.
  std::string PeerStates(int i) {
    auto got = admin::HttpRequest(nodes[i]->admin_url(), "GET", "/v1/cluster", "", "",
                                  std::chrono::seconds(5));
    if (got.status != 200) return "status " + std::to_string(got.status);
    std::string out;
    const boost::json::value cluster = boost::json::parse(got.body);
    for (const auto& peer : cluster.at("peers").as_array()) {
      out += std::string(peer.at("id").as_string()) + "=" +
             std::string(peer.at("state").as_string()) + " ";
    }
    return out;
  }

  // The document's observables as node `i` holds them (its seq differs), or
  // "status N" when it answers N.
  std::string State(int i, const std::string& name) {
    auto got = admin::HttpRequest(nodes[i]->admin_url(), "GET", "/v1/documents/" + name, "", "",
                                  std::chrono::seconds(5));
    if (got.status != 200) return "status " + std::to_string(got.status);
    boost::json::value state = boost::json::parse(got.body);
    return boost::json::serialize(state.at("observables"));
  }

  // Where node `i` says the document lives: "home=ID replicas=A,B".
  std::string Placement(int i, const std::string& name) {
    auto got = admin::HttpRequest(nodes[i]->admin_url(), "GET", "/v1/documents/" + name, "", "",
                                  std::chrono::seconds(5));
    if (got.status != 200) return "status " + std::to_string(got.status);
    const boost::json::value state = boost::json::parse(got.body);
    std::string out = "home=" + std::string(state.at("home").as_string()) + " replicas=";
    for (const auto& id : state.at("replicas").as_array()) {
      out +=
          std::string(id.as_string()) + (&id == &state.at("replicas").as_array().back() ? "" : ",");
    }
    return out;
  }

  std::vector<uint16_t> ports;
  std::vector<std::unique_ptr<NodeProcess>> nodes;
};

// Every link from one peer to another through a proxy the test can cut;
// a node's link to itself goes direct.
struct Proxies {
  explicit Proxies(boost::asio::io_context& io) : io(io) {}
  Peers::Url Urls() {
    return [this](int from, int to, uint16_t port) {
      if (from == to) return Peers::Direct(from, to, port);
      auto& proxy = at[{from, to}];
      proxy = std::make_unique<LinkProxy>(io, port);
      return proxy->url();
    };
  }
  void Restore() {
    for (auto& [ends, proxy] : at) proxy->Restore();
  }

  boost::asio::io_context& io;
  std::map<std::pair<int, int>, std::unique_ptr<LinkProxy>> at;  // By (from, to).
};

// "board": {"list": []}, made by a client of node 0 and opened by a client
// of each other node; copies[c] is client c's.
struct Board {
  Board(boost::asio::io_context& io, Peers& peers, Level level = Level::kLocal) : io(io) {
    for (auto& node : peers.nodes) {
      aweft::Client::Options options;
      options.url = node->url();
      options.level = level;
      clients.push_back(std::make_unique<aweft::Client>(io.get_executor(), options));
    }
    copies.assign(clients.size(), nullptr);
  }
  bool Open() {
    if (!clients[0]->Share("board", made)) return false;
    // After the share: a commit to confirm, so the wait means stored.
    if (!made.Set(made.root(), "list", sync::Attach(list))) return false;
    copies[0] = &made;
    if (!RunUntil(
            io, [&] { return clients[0]->connected() && clients[0]->unconfirmed("board") == 0; })) {
      return false;
    }
    for (size_t c = 1; c < clients.size(); ++c) {
      clients[c]->Open("board", [this, c](Document& doc) { copies[c] = &doc; });
    }
    return RunUntil(
        io, [&] { return std::find(copies.begin(), copies.end(), nullptr) == copies.end(); },
        std::chrono::milliseconds(10000));
  }
  // What client `c` pushes in round `round`: "cC-ROUND".
  static std::string Item(size_t c, int round) {
    return "c" + std::to_string(c) + "-" + std::to_string(round);
  }
  bool Push(size_t c, int round) {
    sync::Observable* at = copies[c]->Find(list.id());
    return at && copies[c]->Push(*at, Item(c, round));
  }
  // Every client connected, all confirmed, and all copies equal.
  bool Settled() {
    for (size_t c = 0; c < clients.size(); ++c) {
      if (!clients[c]->connected() || clients[c]->unconfirmed("board") != 0) return false;
      if (sync::TakeSnapshot(*copies[c]) != sync::TakeSnapshot(made)) return false;
    }
    return true;
  }
  // The pushes of `rounds` rounds that the list does not hold exactly once,
  // each with how often it does: "" when none.
  std::string NotOnce(int rounds) {
    std::multiset<std::string> held;
    for (size_t k = 0; k < list.size(); ++k) {
      if (const auto* text = std::get_if<std::string>(&list.At(k))) held.insert(*text);
    }
    std::string wrong;
    for (size_t c = 0; c < clients.size(); ++c) {
      for (int i = 0; i < rounds; ++i) {
        const size_t count = held.count(Item(c, i));
        if (count != 1) wrong += " " + Item(c, i) + "x" + std::to_string(count);
      }
    }
    return wrong;
  }

  boost::asio::io_context& io;
  std::vector<std::unique_ptr<aweft::Client>> clients;
  std::vector<Document*> copies;
  Document made{codec::Kind::kObject};
  sync::Observable& list = made.Create(codec::Kind::kArray);
};

TEST_CASE("three peers: clients racing on the same slots at every node end in one state",
          "[node][cluster][peers]") {
  TempDir dir;
  boost::asio::io_context io;
  Peers peers(dir.path(), 3);
  REQUIRE(peers.AllLive(io));
  CHECK(peers.PeerStates(1) == "peer-0=linked peer-1=self peer-2=linked ");

  // One client per node; each makes two of the six documents, then opens
  // the other four through its node (which finds them at their homes).
  constexpr int kDocuments = 6;
  std::vector<std::unique_ptr<aweft::Client>> clients;
  for (auto& node : peers.nodes) {
    aweft::Client::Options options;
    options.url = node->url();
    clients.push_back(std::make_unique<aweft::Client>(io.get_executor(), options));
  }
  std::vector<std::vector<Document*>> copies(3, std::vector<Document*>(kDocuments));
  std::vector<std::unique_ptr<Document>> made;
  auto name = [](int d) { return "doc-" + std::to_string(d); };
  for (int d = 0; d < kDocuments; ++d) {
    made.push_back(std::make_unique<Document>(codec::Kind::kObject));
    REQUIRE(clients[d % 3]->Share(name(d), *made.back()));
    // After the share: a commit to confirm, so the wait below means stored.
    REQUIRE(made.back()->Set(made.back()->root(), "made-at", static_cast<double>(d % 3)));
    copies[d % 3][d] = made.back().get();
  }
  REQUIRE(RunUntil(io, [&] {
    for (int d = 0; d < kDocuments; ++d) {
      if (!clients[d % 3]->connected() || clients[d % 3]->unconfirmed(name(d)) != 0) return false;
    }
    return true;
  }));
  std::string failures;
  for (int c = 0; c < 3; ++c) {
    for (int d = 0; d < kDocuments; ++d) {
      if (d % 3 == c) continue;
      clients[c]->Open(
          name(d), [&copies, c, d](Document& doc) { copies[c][d] = &doc; },
          [&failures, c, d](const std::string& why) {
            failures +=
                "client " + std::to_string(c) + " doc-" + std::to_string(d) + ": " + why + "\n";
          });
    }
  }
  auto all_open = [&] {
    for (auto& row : copies) {
      for (Document* doc : row) {
        if (!doc) return false;
      }
    }
    return true;
  };
  const bool opened = RunUntil(io, all_open, std::chrono::milliseconds(15000));
  if (!opened) {
    for (auto& node : peers.nodes) failures += node->Drain();
  }
  INFO(failures);
  REQUIRE(opened);

  // Rounds of writes to the same two slots of every document, from all
  // three clients in the same turn, so that they cross on the way.
  std::mt19937 random(26);
  for (int round = 0; round < 40; ++round) {
    for (int c = 0; c < 3; ++c) {
      for (int d = 0; d < kDocuments; ++d) {
        Document& doc = *copies[c][d];
        const std::string slot = random() % 2 ? "a" : "b";
        REQUIRE(doc.Set(doc.root(), slot, "c" + std::to_string(c) + "-r" + std::to_string(round)));
      }
    }
    io.restart();
    io.run_for(std::chrono::milliseconds(random() % 10));
  }
  auto settled = [&] {
    for (int d = 0; d < kDocuments; ++d) {
      for (int c = 0; c < 3; ++c) {
        if (clients[c]->unconfirmed(name(d)) != 0) return false;
        if (sync::TakeSnapshot(*copies[c][d]) != sync::TakeSnapshot(*copies[0][d])) return false;
      }
    }
    return true;
  };
  REQUIRE(RunUntil(io, settled, std::chrono::milliseconds(20000)));
  // And the nodes hold what the clients do.
  for (int d = 0; d < kDocuments; ++d) {
    INFO(name(d));
    const std::string at0 = peers.State(0, name(d));
    CHECK(at0.find("\"a\"") != std::string::npos);
    CHECK(Poll(
        io, [&] { return peers.State(1, name(d)) == at0; }, std::chrono::seconds(5)));
    CHECK(Poll(
        io, [&] { return peers.State(2, name(d)) == at0; }, std::chrono::seconds(5)));
  }
}

TEST_CASE("every document ends on its replicas with no client open, wherever it was made",
          "[node][cluster][peers]") {
  TempDir dir;
  boost::asio::io_context io;
  // Three peers keeping each document twice: one of the three is not among
  // a document's replicas, and documents are made there too.
  Peers peers(dir.path(), 3, {"--set", "cluster.replicas=2"});
  REQUIRE(peers.AllLive(io));
  constexpr int kDocuments = 9;
  auto name = [](int d) { return "kept-" + std::to_string(d); };
  REQUIRE(peers.Make(io, kDocuments, name));  // No client is left.
  const std::vector<std::string> ids = peers.Ids();
  int elsewhere = 0;  // Documents made at a node not among their replicas.
  for (int d = 0; d < kDocuments; ++d) {
    const std::vector<std::string> replicas = Replicas(name(d), ids, 2);
    INFO(name(d) << " made at " << Peers::Id(d % 3) << ", kept by " << replicas[0] << " and "
                 << replicas[1]);
    elsewhere += replicas[0] != Peers::Id(d % 3) && replicas[1] != Peers::Id(d % 3);
    std::string states[2];
    for (int r = 0; r < 2; ++r) {
      const int at = replicas[r].back() - '0';
      // A replica lists the others' documents every 10 s.
      CHECK(Poll(
          io,
          [&] {
            states[r] = peers.State(at, name(d));
            return states[r].find("\"v\":" + std::to_string(d)) != std::string::npos;
          },
          std::chrono::milliseconds(25000)));
    }
    CHECK(states[0] == states[1]);
    // Both place it so, and say so.
    for (int r = 0; r < 2; ++r) {
      CHECK(peers.Placement(replicas[r].back() - '0', name(d)) ==
            "home=" + replicas[0] + " replicas=" + replicas[0] + "," + replicas[1]);
    }
  }
  CHECK(elsewhere > 0);  // The case the test is for happened.
}

TEST_CASE("a document's home killed under writes: writes go on elsewhere, and it catches up",
          "[node][cluster][peers]") {
  TempDir dir;
  boost::asio::io_context io;
  Peers peers(dir.path(), 3, {"--set", "cluster.failover_ms=1000"});
  REQUIRE(peers.AllLive(io));
  const std::string home_id = Rank("board", peers.Ids()).front();
  const int home = home_id.back() - '0';
  INFO("board is homed at " << home_id);

  // A client at every node pushing to one list, confirming at `replicas`;
  // the one at the home is cut off with it, and sends what it wrote
  // offline once it is back.
  Board board(io, peers, Level::kReplicas);
  REQUIRE(board.Open());

  constexpr int kRounds = 60;
  for (int i = 0; i < kRounds; ++i) {
    for (int c = 0; c < 3; ++c) REQUIRE(board.Push(c, i));
    io.restart();
    io.run_for(std::chrono::milliseconds(50));  // 3 s in all, failover_ms thrice.
    if (i == 10) peers.nodes[home]->Kill();
    if (i == 45) {
      // With the home down past failover_ms, another peer orders the
      // document: what the other nodes' clients wrote is confirmed.
      CHECK(RunUntil(
          io,
          [&] {
            for (int c = 0; c < 3; ++c) {
              if (c != home && board.clients[c]->unconfirmed("board") != 0) return false;
            }
            return true;
          },
          std::chrono::milliseconds(15000)));
      CHECK(peers.PeerStates((home + 1) % 3).find(home_id + "=down") != std::string::npos);
      peers.nodes[home]->Start(peers.ports[home]);
    }
  }
  REQUIRE(RunUntil(
      io, [&] { return board.Settled(); }, std::chrono::milliseconds(30000)));
  const std::string wrong = board.NotOnce(kRounds);
  INFO("pushes not held once:" << wrong);
  CHECK(board.list.size() == 3 * kRounds);
  CHECK(wrong.empty());
  // Every node holds that state, the one that came back included.
  const std::string at0 = peers.State(0, "board");
  for (int n = 1; n < 3; ++n) {
    CHECK(Poll(
        io, [&] { return peers.State(n, "board") == at0; }, std::chrono::seconds(10)));
  }
}

TEST_CASE("a peer whose data directory was deleted gets every document back from the others",
          "[node][cluster][peers]") {
  TempDir dir;
  boost::asio::io_context io;
  // Each client shares 4 documents; peer-1 is home of 6 of them, which
  // each other peer shares with it on one link: past the bound, which
  // holds clients, not peers.
  Peers peers(dir.path(), 3, {"--set", "limits.max_topics_per_link=4"});
  REQUIRE(peers.AllLive(io));
  constexpr int kDocuments = 12;
  auto name = [](int d) { return "lost-" + std::to_string(d); };
  // Confirmed at `replicas`: on two of the three at least. R = 3 of three
  // peers: each keeps every document. Node 1 loses its disk at once.
  REQUIRE(peers.Make(io, kDocuments, name, Level::kReplicas));
  peers.nodes[1]->Kill();
  std::filesystem::remove_all(dir.path() + "/" + Peers::Id(1));
  peers.nodes[1]->Start(peers.ports[1]);
  for (int d = 0; d < kDocuments; ++d) {
    INFO(name(d));
    std::string want;
    CHECK(Poll(
        io,
        [&] {
          want = peers.State(0, name(d));
          return want.find("\"v\":" + std::to_string(d)) != std::string::npos &&
                 peers.State(1, name(d)) == want && peers.State(2, name(d)) == want;
        },
        std::chrono::seconds(15)));
    INFO("node 0: " << want << " node 1: " << peers.State(1, name(d)));
  }
}

TEST_CASE("a peer cut off from the two others while clients write on both sides: one state after",
          "[node][cluster][peers]") {
  TempDir dir;
  boost::asio::io_context io;
  Proxies proxies(io);
  Peers peers(dir.path(), 3, {"--set", "cluster.failover_ms=500"}, proxies.Urls());
  REQUIRE(peers.AllLive(io));

  Board board(io, peers);
  REQUIRE(board.Open());
  auto write = [&](int round) {
    for (int c = 0; c < 3; ++c) {
      REQUIRE(board.Push(c, round));
      Document& copy = *board.copies[c];
      REQUIRE(copy.Set(copy.root(), "slot", Board::Item(c, round)));  // The same slot everywhere.
    }
    io.restart();
    io.run_for(std::chrono::milliseconds(20));
  };
  auto confirmed = [&] {
    for (auto& client : board.clients) {
      if (client->unconfirmed("board") != 0) return false;
    }
    return true;
  };
  constexpr int kRounds = 30;
  for (int i = 0; i < 10; ++i) write(i);
  // Node 0 alone on one side, 1 and 2 on the other; each side orders the
  // document once failover_ms has passed, and confirms its clients' writes.
  for (auto& [ends, proxy] : proxies.at) {
    if (ends.first == 0 || ends.second == 0) proxy->Cut();
  }
  for (int i = 10; i < 20; ++i) write(i);
  CHECK(RunUntil(io, confirmed, std::chrono::milliseconds(10000)));
  proxies.Restore();
  for (int i = 20; i < kRounds; ++i) write(i);
  REQUIRE(RunUntil(
      io, [&] { return board.Settled(); }, std::chrono::milliseconds(30000)));
  const std::string wrong = board.NotOnce(kRounds);
  INFO("pushes not held once:" << wrong);
  CHECK(wrong.empty());
  const std::string at0 = peers.State(0, "board");
  for (int n = 1; n < 3; ++n) {
    CHECK(Poll(
        io, [&] { return peers.State(n, "board") == at0; }, std::chrono::seconds(10)));
  }
}

TEST_CASE("the replicas level confirms once a majority of a document's replicas stored it",
          "[node][cluster][peers]") {
  TempDir dir;
  boost::asio::io_context io;
  Proxies proxies(io);
  // No failover while links are cut: the home stays home.
  Peers peers(dir.path(), 3, {"--set", "cluster.failover_ms=60000"}, proxies.Urls());
  REQUIRE(peers.AllLive(io));
  const std::vector<std::string> ranked = Rank("board", peers.Ids());
  const int home = ranked[0].back() - '0', second = ranked[1].back() - '0',
            third = ranked[2].back() - '0';
  INFO("board ranks " << ranked[0] << " " << ranked[1] << " " << ranked[2]);

  Board board(io, peers, Level::kReplicas);
  REQUIRE(board.Open());
  auto confirmed = [&](int c) {
    return RunUntil(
        io, [&] { return board.clients[c]->unconfirmed("board") == 0; },
        std::chrono::milliseconds(10000));
  };
  for (int c = 0; c < 3; ++c) REQUIRE(board.Push(c, 0));
  for (int c = 0; c < 3; ++c) CHECK(confirmed(c));

  // The third replica no longer hears the home: home and second are two of
  // three, a majority.
  proxies.at[{third, home}]->Cut();
  REQUIRE(board.Push(second, 1));
  REQUIRE(board.Push(home, 1));
  CHECK(confirmed(second));
  CHECK(confirmed(home));

  // Nor does the second: one of three. The home stores a write but does
  // not confirm it at `replicas`, and says why; at `local` it confirms.
  proxies.at[{second, home}]->Cut();
  REQUIRE(board.Push(home, 2));
  CHECK(RunUntil(
      io, [&] { return !board.clients[home]->confirm_error().empty(); },
      std::chrono::milliseconds(10000)));
  const std::string why = board.clients[home]->confirm_error();
  INFO(why);
  CHECK(why.starts_with("unavailable: \"board\" is stored on 1 of its 3 replicas"));
  CHECK(board.clients[home]->unconfirmed("board") == 1);
  aweft::Client::Options options;
  options.url = peers.nodes[home]->url();
  aweft::Client local(io.get_executor(), options);
  Document* opened = nullptr;
  local.Open("board", [&](Document& doc) { opened = &doc; });
  REQUIRE(RunUntil(io, [&] { return opened != nullptr; }));
  REQUIRE(opened->Set(opened->root(), "local", true));
  CHECK(RunUntil(io, [&] { return local.unconfirmed("board") == 0; }));
  CHECK(board.clients[home]->unconfirmed("board") == 1);

  // Back: the write is confirmed, and every copy holds each push once.
  proxies.Restore();
  CHECK(confirmed(home));
  REQUIRE(RunUntil(
      io, [&] { return board.Settled(); }, std::chrono::milliseconds(30000)));
  const std::string wrong = board.NotOnce(1);
  INFO("pushes not held once:" << wrong);
  CHECK(wrong.empty());
}

}  // namespace
}  // namespace aweft::node::testing
