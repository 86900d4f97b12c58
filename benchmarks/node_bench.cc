// aweft-node as a process: how fast it is ready after a restart with many
// documents, and what a loaded idle document and an idle connection cost in
// memory (issue 8's restart and memory targets). A plain main printing a
// table; figures, not pass/fail.
//
//   build/benchmarks/node_bench [--documents N] [--loaded K] [--connections C] [--runs R]
//
// It writes N documents (default 10,000) straight into a store, then starts
// aweft-node on it R times (default 3): from fork to the "listening" line,
// and to a client holding one of the documents (accepting and serving).
// Then, on one node: its RSS before and after a client opens K documents
// (default 1,000) and leaves them loaded and idle, and before and after C
// idle connections (default 1,000).

#include <sys/resource.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/process_bench.h"
#include "node/client.h"
#include "storage/store.h"
#include "sync/asio_scheduler.h"
#include "sync/websocket.h"
#include "tests/node/node_process.h"

namespace {

using namespace aweft;
using bench::Arg;
using bench::Clock;
using bench::Ms;
using node::testing::NodeProcess;
using node::testing::RunUntil;
using node::testing::TempDir;

// Resident memory of `pid`, in KiB.
long RssKiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

void Populate(const std::string& data, int documents) {
  storage::Options options;
  options.durability = storage::Durability::kWal;  // Made once; synced at close.
  options.sync_every_commit = false;
  auto store = storage::Store::Open(data + "/store", options);
  if (!store) {
    std::fprintf(stderr, "node_bench: %s\n", store.error().ToString().c_str());
    std::exit(1);
  }
  for (int i = 0; i < documents; ++i) {
    const std::string name = "doc-" + std::to_string(i);
    auto document = store->OpenDocument(name);
    if (!document) std::exit(1);
    (void)(*document)->Set((*document)->root(), "title", std::string("document ") + name);
    (void)(*document)->Set((*document)->root(), "n", static_cast<double>(i));
    store->CloseDocument(name);
  }
  store->Sync();
}

// Opens `names` on one client and waits until it holds them all.
bool OpenAll(boost::asio::io_context& io, aweft::Client& client,
             const std::vector<std::string>& names) {
  size_t ready = 0;
  for (const std::string& name : names) {
    client.Open(name, [&](sync::Document&) { ++ready; });
  }
  return RunUntil(
      io, [&] { return ready == names.size(); }, std::chrono::seconds(120));
}

}  // namespace

int main(int argc, char** argv) {
  const int documents = Arg(argc, argv, "--documents", 10000);
  const int loaded = std::min(Arg(argc, argv, "--loaded", 1000), documents);
  const int connections = Arg(argc, argv, "--connections", 1000);
  const int runs = Arg(argc, argv, "--runs", 3);
  // Both ends of every connection need a descriptor; the node inherits this.
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &files);

  TempDir dir;
  const std::string data = dir.path() + "/data";
  const auto populate_start = Clock::now();
  Populate(data, documents);
  std::printf("populated %d documents in %.0f ms\n", documents, Ms(Clock::now() - populate_start));

  boost::asio::io_context io;
  const std::vector<std::string> flags = {"--admin", "off", "--set",
                                          "documents.idle_evict_seconds=3600"};
  std::printf("\n| run | to listening (ms) | to serving a document (ms) |\n|---|---|---|\n");
  std::vector<double> serving;
  uint16_t port = 0;
  for (int run = 1; run <= runs; ++run) {
    NodeProcess node(data, flags);
    const auto start = Clock::now();
    port = node.Start(port);
    const double listening = Ms(Clock::now() - start);
    aweft::Client::Options options;
    options.url = node.url();
    aweft::Client client(io.get_executor(), options);
    if (!OpenAll(io, client, {"doc-" + std::to_string(documents / 2)})) {
      std::fprintf(stderr, "node_bench: the node did not serve a document\n");
      return 1;
    }
    serving.push_back(Ms(Clock::now() - start));
    std::printf("| %d | %.1f | %.1f |\n", run, listening, serving.back());
  }
  std::sort(serving.begin(), serving.end());
  std::printf("restart with %d documents: median %.1f ms to serving\n", documents,
              serving[serving.size() / 2]);

  NodeProcess node(data, flags);
  node.Start(port);
  aweft::Client::Options options;
  options.url = node.url();
  {
    aweft::Client warm(io.get_executor(), options);  // The first connection's costs.
    OpenAll(io, warm, {"doc-0"});
  }
  RunUntil(
      io, [] { return false; }, std::chrono::milliseconds(500));
  const long base = RssKiB(node.pid());
  {
    aweft::Client client(io.get_executor(), options);
    std::vector<std::string> names;
    for (int i = 1; i <= loaded; ++i) names.push_back("doc-" + std::to_string(i));
    if (!OpenAll(io, client, names)) return 1;
  }  // Closed: the documents stay loaded, idle, until idle_evict_seconds.
  RunUntil(
      io, [] { return false; }, std::chrono::milliseconds(1000));
  const long with_documents = RssKiB(node.pid());

  // Idle connections: each asks one request, so that its answer proves the
  // node took it, then stays quiet.
  sync::AsioScheduler scheduler(io.get_executor());
  std::vector<std::unique_ptr<sync::WebSocketChannel>> idle;
  size_t answered = 0;
  for (int i = 0; i < connections; ++i) {
    idle.push_back(sync::WebSocketChannel::Dial(io.get_executor(), scheduler, node.url()));
    idle.back()->OnText([&](const std::string&) { ++answered; });
    idle.back()->SendText(R"({"id":1,"name":"durable"})");
  }
  const bool all = RunUntil(
      io, [&] { return answered == idle.size(); }, std::chrono::seconds(60));
  RunUntil(
      io, [] { return false; }, std::chrono::milliseconds(1000));
  const long with_connections = RssKiB(node.pid());
  std::printf(
      "\n| node RSS | KiB |\n|---|---|\n| idle, one document loaded | %ld |\n"
      "| + %d documents loaded and idle | %ld |\n| + %d idle connections%s | %ld |\n",
      base, loaded, with_documents, connections, all ? "" : " (not all connected)",
      with_connections);
  std::printf("per loaded idle document: %.1f KiB (each holds 2 keys)\n",
              static_cast<double>(with_documents - base) / loaded);
  std::printf("per idle connection: %.1f KiB\n",
              static_cast<double>(with_connections - with_documents) / connections);
  return 0;
}
