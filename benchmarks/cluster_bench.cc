// One node against a cluster of three peers on this machine (docs/node.md
// "Peers"), aweft-node processes on loopback, driven the same way:
//
// - CPU per commit: one aweft::Client per node (one in all for the single
//   node) writes rounds over 24 documents, one commit to each per round,
//   until each round is confirmed at `local`; the nodes' CPU (utime + stime
//   from /proc) over the commits. Peers with cluster.replicas 1 and 3.
// - Latency: one client writes alone, one commit at a time, until it is
//   confirmed (asking every 1 ms), at `local` and at `replicas`, to a
//   document whose home is another node than the one it writes to (the
//   single node: its own); p50 and p99.
// - Catch-up: three peers (R = 3); one is stopped while N documents are
//   made at another, then started: the time until it has caught up
//   (`home_ready` in /v1/cluster), for each N.
//
// Run: build/benchmarks/cluster_bench [--rounds R] [--writes W] [--behind N ...]
// (defaults: 300 rounds, 200 writes, catch-up with 1000 and 10000 behind).

#include <unistd.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "admin/http_client.h"
#include "benchmarks/cpu_ticks.h"
#include "benchmarks/process_bench.h"
#include "node/client.h"
#include "node/placement.h"
#include "tests/node/node_process.h"

namespace {

using aweft::bench::Clock;
using aweft::bench::CpuTicks;
using aweft::bench::Ms;
using aweft::node::Level;
using aweft::node::LevelName;
using aweft::node::testing::NodeProcess;
using aweft::node::testing::TempDir;
using aweft::sync::Document;

constexpr int kDocuments = 24;

void Require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "cluster_bench: %s\n", what);
  std::exit(1);
}

// `count` nodes: one alone, or peers peer-0, peer-1, ... each naming all.
struct Cluster {
  Cluster(int count, int replicas) : ports(aweft::node::testing::FreePorts(count)) {
    for (int i = 0; i < count; ++i) {
      std::vector<std::string> args{"--node-id", Id(i)};
      if (count > 1) {
        args.insert(args.end(), {"--set", "cluster.replicas=" + std::to_string(replicas)});
        for (uint16_t port : ports) {
          args.insert(args.end(), {"--peer", "ws://127.0.0.1:" + std::to_string(port) + "/"});
        }
      }
      nodes.push_back(std::make_unique<NodeProcess>(dir.path() + "/" + Id(i), args));
      nodes.back()->Start(ports[i]);
    }
  }
  static std::string Id(int i) { return "peer-" + std::to_string(i); }
  std::vector<std::string> Ids() const {
    std::vector<std::string> ids;
    for (size_t i = 0; i < nodes.size(); ++i) ids.push_back(Id(static_cast<int>(i)));
    return ids;
  }
  // Node `i`'s /v1/cluster field `key` (false when absent).
  bool ClusterFlag(int i, const char* key) {
    auto got = aweft::admin::HttpRequest(nodes[i]->admin_url(), "GET", "/v1/cluster");
    if (got.status != 200) return false;
    const boost::json::value* flag = boost::json::parse(got.body).as_object().if_contains(key);
    return flag && flag->is_bool() && flag->get_bool();
  }
  // Every node says it has caught up and sees the others.
  bool Ready() {
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (nodes.size() > 1 && !ClusterFlag(static_cast<int>(i), "home_ready")) return false;
    }
    return true;
  }
  uint64_t Ticks() const {
    uint64_t ticks = 0;
    for (const auto& node : nodes) ticks += CpuTicks(node->pid());
    return ticks;
  }

  TempDir dir;
  std::vector<uint16_t> ports;
  std::vector<std::unique_ptr<NodeProcess>> nodes;
};

bool Until(boost::asio::io_context& io, const std::function<bool()>& done,
           std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() > deadline) return false;
    io.restart();
    io.run_for(std::chrono::milliseconds(1));
  }
  return true;
}

std::unique_ptr<aweft::Client> ClientOf(boost::asio::io_context& io, NodeProcess& node,
                                        Level level) {
  aweft::Client::Options options;
  options.url = node.url();
  options.level = level;
  // Asks `durable` at once rather than within 20 ms: the latency is the
  // nodes', not the client's pacing.
  options.confirm_every = std::chrono::milliseconds(1);
  return std::make_unique<aweft::Client>(io.get_executor(), options);
}

// Milliseconds of node CPU per commit, for `rounds` rounds over kDocuments.
double CpuPerCommit(Cluster& cluster, int rounds) {
  boost::asio::io_context io;
  std::vector<std::unique_ptr<aweft::Client>> clients;
  for (auto& node : cluster.nodes) clients.push_back(ClientOf(io, *node, Level::kLocal));
  std::vector<std::unique_ptr<Document>> docs;
  auto client = [&](int d) -> aweft::Client& { return *clients[d % clients.size()]; };
  auto name = [](int d) { return "load-" + std::to_string(d); };
  for (int d = 0; d < kDocuments; ++d) {
    docs.push_back(std::make_unique<Document>(aweft::codec::Kind::kObject));
    Require(static_cast<bool>(client(d).Share(name(d), *docs.back())), "share");
    Require(static_cast<bool>(docs.back()->Set(docs.back()->root(), "v", 0.0)), "set");
  }
  auto confirmed = [&] {
    for (int d = 0; d < kDocuments; ++d) {
      if (client(d).unconfirmed(name(d)) != 0) return false;
    }
    return true;
  };
  Require(Until(io, confirmed, std::chrono::seconds(30)), "documents made");
  const uint64_t before = cluster.Ticks();
  for (int r = 1; r <= rounds; ++r) {
    for (auto& doc : docs) {
      Require(static_cast<bool>(doc->Set(doc->root(), "v", static_cast<double>(r))), "write");
    }
    Require(Until(io, confirmed, std::chrono::seconds(30)), "round confirmed");
  }
  const double ticks = static_cast<double>(cluster.Ticks() - before);
  return ticks * 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK)) / (rounds * kDocuments);
}

double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(p * values.size()))];
}

// One writer at node 0, one commit at a time until confirmed at `level`.
std::vector<double> Latencies(Cluster& cluster, Level level, int writes) {
  // A name whose home is not node 0, where there are peers.
  std::string name;
  for (int i = 0; name.empty(); ++i) {
    const std::string candidate =
        std::string("alone-") + LevelName(level).data() + "-" + std::to_string(i);
    if (cluster.nodes.size() == 1 ||
        aweft::node::Rank(candidate, cluster.Ids()).front() != Cluster::Id(0)) {
      name = candidate;
    }
  }
  boost::asio::io_context io;
  auto client = ClientOf(io, *cluster.nodes[0], level);
  Document doc(aweft::codec::Kind::kObject);
  Require(static_cast<bool>(client->Share(name, doc)), "share");
  Require(static_cast<bool>(doc.Set(doc.root(), "v", 0.0)), "set");
  auto confirmed = [&] { return client->unconfirmed(name) == 0; };
  Require(Until(io, confirmed, std::chrono::seconds(30)), "made");
  std::vector<double> ms;
  for (int i = 1; i <= writes; ++i) {
    Require(static_cast<bool>(doc.Set(doc.root(), "v", static_cast<double>(i))), "write");
    const auto start = Clock::now();
    Require(Until(io, confirmed, std::chrono::seconds(30)), "confirmed");
    ms.push_back(Ms(Clock::now() - start));
  }
  return ms;
}

// Seconds a peer takes to catch up with `behind` documents made while it
// was stopped.
double CatchUp(int behind) {
  Cluster cluster(3, 3);
  boost::asio::io_context io;
  Require(Until(
              io, [&] { return cluster.Ready(); }, std::chrono::seconds(30)),
          "cluster up");
  cluster.nodes[2]->Kill();
  // A few clients: each link shares at most limits.max_topics_per_link.
  std::vector<std::unique_ptr<aweft::Client>> clients;
  std::vector<std::unique_ptr<Document>> docs;
  constexpr int kPerClient = 500;
  for (int d = 0; d < behind; ++d) {
    if (d % kPerClient == 0) clients.push_back(ClientOf(io, *cluster.nodes[0], Level::kLocal));
    docs.push_back(std::make_unique<Document>(aweft::codec::Kind::kObject));
    Require(static_cast<bool>(clients.back()->Share("behind-" + std::to_string(d), *docs.back())),
            "share");
    Require(static_cast<bool>(docs.back()->Set(docs.back()->root(), "v", static_cast<double>(d))),
            "set");
  }
  Require(Until(
              io,
              [&] {
                for (int d = 0; d < behind; ++d) {
                  if (clients[d / kPerClient]->unconfirmed("behind-" + std::to_string(d)) != 0) {
                    return false;
                  }
                }
                return true;
              },
              std::chrono::seconds(600)),
          "documents made");
  clients.clear();
  const auto start = Clock::now();
  cluster.nodes[2]->Start(cluster.ports[2]);
  // Asked every 50 ms: /v1/cluster counts the documents homed at each peer,
  // on the node's loop.
  Require(Until(
              io,
              [&] {
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
                return cluster.ClusterFlag(2, "home_ready");
              },
              std::chrono::seconds(900)),
          "caught up");
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = aweft::bench::Arg(argc, argv, "--rounds", 300);
  const int writes = aweft::bench::Arg(argc, argv, "--writes", 200);
  std::vector<int> behind;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--behind") behind.push_back(std::atoi(argv[i + 1]));
  }
  if (behind.empty()) behind = {1000, 10000};

  std::printf("cluster_bench: %d rounds over %d documents, %d lone writes\n\n", rounds, kDocuments,
              writes);
  std::printf(
      "| setup | node CPU per commit | local p50 | local p99 | replicas p50 | replicas p99 |\n");
  std::printf("|---|---|---|---|---|---|\n");
  struct Setup {
    const char* name;
    int nodes, replicas;
  };
  for (const Setup& setup : {Setup{"one node", 1, 1}, Setup{"three peers, R = 1", 3, 1},
                             Setup{"three peers, R = 3", 3, 3}}) {
    Cluster cluster(setup.nodes, setup.replicas);
    boost::asio::io_context io;
    Require(Until(
                io, [&] { return cluster.Ready(); }, std::chrono::seconds(30)),
            "cluster up");
    const double cpu = CpuPerCommit(cluster, rounds);
    const std::vector<double> local = Latencies(cluster, Level::kLocal, writes);
    const std::vector<double> replicas = Latencies(cluster, Level::kReplicas, writes);
    std::printf("| %s | %.3f ms | %.2f ms | %.2f ms | %.2f ms | %.2f ms |\n", setup.name, cpu,
                Percentile(local, 0.5), Percentile(local, 0.99), Percentile(replicas, 0.5),
                Percentile(replicas, 0.99));
    std::fflush(stdout);
  }
  std::printf("\n| documents behind | catch-up |\n|---|---|\n");
  for (int n : behind) {
    std::printf("| %d | %.1f s |\n", n, CatchUp(n));
    std::fflush(stdout);
  }
  return 0;
}
