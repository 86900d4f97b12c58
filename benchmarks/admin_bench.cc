// The admin endpoint's reads of a large document, and what they cost the
// node's links: a document of max_document_bytes (8 MiB by default, written
// in nine commits) is read R times each as its state and its export, one
// read after another on a thread of the benchmark's, while a client on the
// node writes one small value at a time to another document and waits for
// each to be confirmed. A plain main printing a table; figures, not
// pass/fail.
//
//   build/benchmarks/admin_bench [--reads R]
//
// The round trips are taken first with no read under way, then during the
// reads: with the JSON built on the node's loop, a round trip that met a read
// waited for all of it.

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "admin/http_client.h"
#include "benchmarks/process_bench.h"
#include "node/client.h"
#include "tests/node/node_process.h"

namespace {

using namespace aweft;
using bench::Arg;
using bench::Clock;
using bench::Ms;
using node::testing::NodeProcess;
using node::testing::RunUntil;
using node::testing::TempDir;

// Median, 99th percentile and largest of `ms` (sorted here).
std::string Spread(std::vector<double> ms) {
  if (ms.empty()) return "none";
  std::sort(ms.begin(), ms.end());
  char line[128];
  std::snprintf(line, sizeof line, "%zu: median %.1f, p99 %.1f, max %.1f", ms.size(),
                ms[ms.size() / 2], ms[ms.size() * 99 / 100], ms.back());
  return line;
}

// One write to `probe` and its confirmation, in ms; negative on a failure.
double RoundTrip(boost::asio::io_context& io, aweft::Client& client, sync::Document& probe, int n) {
  const auto start = Clock::now();
  if (!probe.Set(probe.root(), "n", static_cast<double>(n))) return -1;
  const bool confirmed = RunUntil(
      io, [&] { return client.unconfirmed("probe") == 0; }, std::chrono::seconds(30));
  return confirmed ? Ms(Clock::now() - start) : -1;
}

}  // namespace

int main(int argc, char** argv) {
  const int reads = Arg(argc, argv, "--reads", 10);
  TempDir dir;
  NodeProcess node(dir.path() + "/data");
  node.Start();
  boost::asio::io_context io;
  aweft::Client::Options options;
  options.url = node.url();
  sync::Document full(codec::Kind::kObject), probe(codec::Kind::kObject);  // Outlive writer.
  aweft::Client writer(io.get_executor(), options);
  if (!writer.Share("full", full) || !writer.Share("probe", probe)) return 1;
  for (int i = 0; i < 8; ++i) {
    (void)full.Set(full.root(), "k" + std::to_string(i), std::string(1000000, 'a' + i));
  }
  const size_t rest = (8 << 20) - full.bytes() - 100;
  (void)full.Set(full.root(), "rest", std::string(rest - sync::SlotBytes("rest", ""), 'r'));
  if (!RunUntil(
          io, [&] { return writer.connected() && writer.unconfirmed("full") == 0; },
          std::chrono::seconds(120))) {
    std::fprintf(stderr, "admin_bench: the document was not confirmed\n");
    return 1;
  }
  std::printf("document: %zu bytes (max_document_bytes 8 MiB)\n", full.bytes());

  int n = 0;
  std::vector<double> idle;
  for (int i = 0; i < 200; ++i) idle.push_back(RoundTrip(io, writer, probe, ++n));

  std::atomic<bool> reading{true};
  std::vector<double> state_ms, export_ms;
  size_t state_bytes = 0, export_bytes = 0;
  std::thread reader([&] {
    for (int i = 0; i < reads; ++i) {
      for (const char* part : {"", "/export"}) {
        const auto start = Clock::now();
        const admin::HttpReply reply =
            admin::HttpRequest(node.admin_url(), "GET", std::string("/v1/documents/full") + part,
                               "", "", std::chrono::seconds(60));
        const double ms = Ms(Clock::now() - start);
        (*part ? export_ms : state_ms).push_back(reply.status == 200 ? ms : -1);
        (*part ? export_bytes : state_bytes) = reply.body.size();
      }
    }
    reading = false;
  });
  std::vector<double> during;
  while (reading) during.push_back(RoundTrip(io, writer, probe, ++n));
  reader.join();

  const bool failed = std::count(idle.begin(), idle.end(), -1) +
                          std::count(during.begin(), during.end(), -1) +
                          std::count(state_ms.begin(), state_ms.end(), -1) +
                          std::count(export_ms.begin(), export_ms.end(), -1) >
                      0;
  std::printf("\n| what | ms |\n|---|---|\n");
  std::printf("| GET state (%zu bytes of JSON) | %s |\n", state_bytes, Spread(state_ms).c_str());
  std::printf("| GET export (%zu bytes of JSON) | %s |\n", export_bytes, Spread(export_ms).c_str());
  std::printf("| a write's round trip, no read under way | %s |\n", Spread(idle).c_str());
  std::printf("| a write's round trip during the reads | %s |\n", Spread(during).c_str());
  if (failed) std::printf("some requests or writes failed (counted as -1 above)\n");
  return failed ? 1 : 0;
}
