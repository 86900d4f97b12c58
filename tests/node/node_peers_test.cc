// Clusters of peers (docs/node.md "Clusters"): aweft-node processes on
// loopback that each name all of them, clients racing on the same slots at
// every node.

#include <boost/asio/ip/tcp.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <catch2/catch.hpp>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "admin/http_client.h"
#include "node/client.h"
#include "sync/snapshot.h"
#include "tests/node/node_process.h"

namespace aweft::node::testing {
namespace {

using sync::Document;

// `count` peers of one cluster: ids peer-0, peer-1, ...; each names every
// one of them, itself included, on ports fixed before any starts.
struct Peers {
  Peers(const std::string& dir, int count) {
    boost::asio::io_context io;
    std::vector<boost::asio::ip::tcp::acceptor> held;
    for (int i = 0; i < count; ++i) {
      held.emplace_back(
          io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
      ports.push_back(held.back().local_endpoint().port());
    }
    held.clear();
    for (int i = 0; i < count; ++i) {
      std::vector<std::string> args{"--node-id", Id(i), "--log-level", "info"};
      for (uint16_t port : ports) {
        args.insert(args.end(), {"--peer", "ws://127.0.0.1:" + std::to_string(port) + "/"});
      }
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

  // The document's observables as node `i` holds them (its seq differs).
  std::string State(int i, const std::string& name) {
    auto got = admin::HttpRequest(nodes[i]->admin_url(), "GET", "/v1/documents/" + name, "", "",
                                  std::chrono::seconds(5));
    if (got.status != 200) return "status " + std::to_string(got.status);
    boost::json::value state = boost::json::parse(got.body);
    return boost::json::serialize(state.at("observables"));
  }

  std::vector<uint16_t> ports;
  std::vector<std::unique_ptr<NodeProcess>> nodes;
};

TEST_CASE("three peers: clients racing on the same slots at every node end in one state",
          "[node][cluster][peers]") {
  TempDir dir;
  boost::asio::io_context io;
  Peers peers(dir.path(), 3);
  REQUIRE(peers.AllLive(io));

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
    CHECK(RunUntil(io, [&] { return peers.State(1, name(d)) == at0; }));
    CHECK(RunUntil(io, [&] { return peers.State(2, name(d)) == at0; }));
  }
}

}  // namespace
}  // namespace aweft::node::testing
