// aweft-bench: a load generator for aweft-node. Opens N WebSocket clients,
// shares D documents among them, has W of them write single-slot edits (at a
// rate or flat out) while every client receives, and prints throughput,
// end-to-end latency, bytes per commit and the node's CPU and memory.
//
//   aweft-bench --url ws://127.0.0.1:7420/ --clients 100 --writers 1 --rate 1000
//               --duration 10 [--docs 1] [--light] [--node-pid PID] [--json FILE]

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>

#include "codec/frame.h"
#include "sync/link.h"
#include "sync/random.h"
#include "sync/requests.h"
#include "sync/snapshot.h"
#include "sync/websocket.h"

namespace aweft::bench {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

struct Args {
  std::string url = "ws://127.0.0.1:7420/";
  int clients = 10, writers = 1, docs = 1;
  double rate = 0;  // Commits per second over all writers; 0 is flat out.
  double duration = 5;
  bool light = false;
  int node_pid = 0;
  std::string json;
  std::string prefix = "bench";
};

const Clock::time_point kStart = Clock::now();
double NowMicros() {
  return std::chrono::duration<double, std::micro>(Clock::now() - kStart).count();
}

// The timestamp a writer put in a commit's one delta.
bool StampOf(const codec::Commit& commit, double& stamp) {
  if (commit.deltas.size() != 1 || !commit.deltas[0].value) return false;
  const auto* number = std::get_if<double>(&*commit.deltas[0].value);
  if (!number) return false;
  stamp = *number;
  return true;
}

struct Stats {
  uint64_t written = 0, confirmed = 0, delivered = 0, wire_bytes = 0, wire_commits = 0;
  std::vector<float> latency_us;
};

// A reader that takes frames off the socket and only counts what they
// carry: no document, no link (--light).
struct LightReader {
  std::unique_ptr<sync::WebSocketChannel> channel;
  void Start(asio::io_context& io, sync::Scheduler& scheduler, const Args& args,
             const std::string& name, Stats& stats) {
    channel = sync::WebSocketChannel::Dial(io.get_executor(), scheduler, args.url);
    channel->Receive([&stats](const codec::Frame& frame) {
      const auto* commits = std::get_if<codec::CommitsFrame>(&frame);
      if (!commits) return;
      const double now = NowMicros();
      for (const auto& commit : commits->commits) {
        double stamp;
        ++stats.delivered;
        if (StampOf(commit, stamp)) stats.latency_us.push_back(static_cast<float>(now - stamp));
      }
    });
    channel->Send(codec::OpenFrame{1, name, std::nullopt, true});
  }
};

// A full client: a link and a document (readers and writers).
struct FullClient {
  std::unique_ptr<sync::WebSocketChannel> channel;
  std::unique_ptr<sync::Link> link;
  std::optional<sync::Requests> requests;
  sync::Shared* shared = nullptr;
  codec::Id key = sync::MintId();
  uint64_t asked = 0;
  bool asking = false;

  void Start(asio::io_context& io, sync::Scheduler& scheduler, const Args& args,
             const std::string& name, Stats& stats, bool counts) {
    channel = sync::WebSocketChannel::Dial(io.get_executor(), scheduler, args.url);
    link = std::make_unique<sync::Link>(*channel, scheduler);
    if (auto r = sync::Requests::Open(*channel, io.get_executor())) requests.emplace(std::move(*r));
    sync::ShareHandlers handlers;
    if (counts) {
      handlers.ready = [&stats](sync::Document& document) {
        document.Watch([&stats](const sync::Change& change) {
          if (change.local) return;
          double stamp;
          ++stats.delivered;
          if (StampOf(change.commit, stamp)) {
            stats.latency_us.push_back(static_cast<float>(NowMicros() - stamp));
          }
        });
      };
    }
    shared = *link->Share(name, nullptr, handlers);
  }

  bool Write(Stats& stats) {
    if (!shared || !shared->ready()) return false;
    sync::Document& document = *shared->document();
    (void)document.SetEntry(document.root(), key, NowMicros());
    ++stats.written;
    return true;
  }

  void Confirm(Stats& stats) {
    if (!requests || asking) return;
    asking = true;
    const uint64_t mine = written_here;  // Sent before the ask: confirmed by it.
    requests->Ask("durable", nullptr, [this, &stats, mine](sync::AskResult answer) {
      asking = false;
      if (answer && mine > asked) {
        stats.confirmed += mine - asked;
        asked = mine;
      }
    });
  }
  uint64_t written_here = 0;
};

uint64_t CpuTicks(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  std::istringstream fields(line.substr(line.rfind(')') + 2));
  std::string field;
  uint64_t utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return utime + stime;
}

long PeakKiB(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  long value = 0;
  while (in >> key) {
    if (key == "VmHWM:") {
      in >> value;
      return value;
    }
  }
  return 0;
}

double Percentile(std::vector<float>& v, double p) {
  if (v.empty()) return 0;
  const size_t at = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(at), v.end());
  return v[at];
}

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--url") a.url = next();
    else if (flag == "--clients") a.clients = std::stoi(next());
    else if (flag == "--writers") a.writers = std::stoi(next());
    else if (flag == "--docs") a.docs = std::stoi(next());
    else if (flag == "--rate") a.rate = std::stod(next());
    else if (flag == "--duration") a.duration = std::stod(next());
    else if (flag == "--light") a.light = true;
    else if (flag == "--node-pid") a.node_pid = std::stoi(next());
    else if (flag == "--json") a.json = next();
    else if (flag == "--prefix") a.prefix = next();
    else throw std::runtime_error("unknown flag " + flag + " (see the header of aweft_bench.cc)");
  }
  if (a.writers < 1 || a.clients < a.writers || a.docs < 1) {
    throw std::runtime_error("need 1 <= writers <= clients and docs >= 1");
  }
  return a;
}

int Run(const Args& args) {
  asio::io_context io;
  sync::AsioScheduler scheduler(io.get_executor());
  Stats stats;
  // Every document is made by one seeding client first (a map root).
  std::vector<std::unique_ptr<sync::Document>> seeds;
  std::vector<std::unique_ptr<FullClient>> seeders;
  auto name_of = [&](int i) { return args.prefix + "-" + std::to_string(i % args.docs); };
  for (int d = 0; d < args.docs; ++d) {
    seeds.push_back(std::make_unique<sync::Document>(codec::Kind::kMap));
    auto seeder = std::make_unique<FullClient>();
    seeder->channel = sync::WebSocketChannel::Dial(io.get_executor(), scheduler, args.url);
    seeder->link = std::make_unique<sync::Link>(*seeder->channel, scheduler);
    (void)seeder->link->Share(name_of(d), seeds.back().get());
    seeders.push_back(std::move(seeder));
  }
  io.run_for(std::chrono::milliseconds(300));
  std::vector<std::unique_ptr<FullClient>> writers;
  std::vector<std::unique_ptr<FullClient>> readers;
  std::vector<std::unique_ptr<LightReader>> light;
  for (int c = 0; c < args.clients; ++c) {
    if (c < args.writers) {
      writers.push_back(std::make_unique<FullClient>());
      writers.back()->Start(io, scheduler, args, name_of(c), stats, false);
    } else if (args.light) {
      light.push_back(std::make_unique<LightReader>());
      light.back()->Start(io, scheduler, args, name_of(c), stats);
    } else {
      readers.push_back(std::make_unique<FullClient>());
      readers.back()->Start(io, scheduler, args, name_of(c), stats, true);
    }
  }
  const auto settle = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < settle) {
    io.run_for(std::chrono::milliseconds(20));
    bool all = true;
    for (auto& w : writers) all = all && w->shared && w->shared->ready();
    for (auto& r : readers) all = all && r->shared && r->shared->ready();
    if (all) break;
  }
  const uint64_t cpu_before = args.node_pid ? CpuTicks(args.node_pid) : 0;
  const auto begin = Clock::now();
  const auto end = begin + std::chrono::duration<double>(args.duration);
  const double interval_us = args.rate > 0 ? 1e6 * args.writers / args.rate : 0;
  double next_write = NowMicros();
  uint64_t turns = 0;
  while (Clock::now() < end) {
    const double now = NowMicros();
    if (interval_us == 0 || now >= next_write) {
      for (auto& w : writers) {
        if (w->Write(stats)) ++w->written_here;
      }
      next_write += interval_us;
      if (interval_us > 0 && next_write < now - 1e5) next_write = now;  // Fell behind.
    }
    if (++turns % 64 == 0 || interval_us > 0) {
      for (auto& w : writers) w->Confirm(stats);
    }
    io.poll();
    if (interval_us > 0 && next_write > NowMicros()) io.run_for(std::chrono::microseconds(200));
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  for (auto& w : writers) w->Confirm(stats);
  io.run_for(std::chrono::milliseconds(500));  // Drain what is in flight.
  const uint64_t cpu_after = args.node_pid ? CpuTicks(args.node_pid) : 0;
  const double node_cpu = static_cast<double>(cpu_after - cpu_before) / sysconf(_SC_CLK_TCK);

  // Bytes on the wire for one commit: a commits frame with one commit.
  codec::Commit sample{{{codec::DeltaType::kReplace, sync::MintId(), {codec::Kind::kMap, std::string(sync::MintId().view())}, codec::Value(123456.789)}}, {}};
  const size_t frame_bytes = codec::EncodeFrame(codec::CommitsFrame{1, 1, {sample}})->size();

  std::vector<float> lat = stats.latency_us;
  const double p50 = Percentile(lat, 0.50), p99 = Percentile(lat, 0.99),
               p999 = Percentile(lat, 0.999);
  const double max = lat.empty() ? 0 : *std::max_element(lat.begin(), lat.end());
  boost::json::object out{
      {"clients", args.clients}, {"writers", args.writers}, {"docs", args.docs},
      {"rate", args.rate}, {"light", args.light}, {"seconds", seconds},
      {"written", stats.written}, {"commits_per_s", stats.written / seconds},
      {"durable", stats.confirmed}, {"durable_per_s", stats.confirmed / seconds},
      {"delivered", stats.delivered}, {"deliveries_per_s", stats.delivered / seconds},
      {"latency_us", boost::json::object{{"p50", p50}, {"p99", p99}, {"p999", p999}, {"max", max}}},
      {"frame_bytes_per_commit", frame_bytes}};
  if (args.node_pid) {
    out["node_cpu_s"] = node_cpu;
    out["node_cpu_us_per_delivery"] = stats.delivered ? 1e6 * node_cpu / stats.delivered : 0.0;
    out["node_peak_kib"] = PeakKiB(args.node_pid);
  }
  std::printf("clients %d, writers %d, documents %d, %s readers, %.1f s\n", args.clients,
              args.writers, args.docs, args.light ? "light" : "full", seconds);
  std::printf("  written           %10.0f commits/s (%llu)\n", stats.written / seconds,
              static_cast<unsigned long long>(stats.written));
  std::printf("  durable           %10.0f commits/s (confirmed by the node)\n",
              stats.confirmed / seconds);
  std::printf("  delivered         %10.0f commits/s to readers\n", stats.delivered / seconds);
  std::printf("  latency           p50 %.0f us, p99 %.0f us, p99.9 %.0f us, max %.0f us\n", p50,
              p99, p999, max);
  std::printf("  bytes per commit  %zu (a commits frame with one commit)\n", frame_bytes);
  if (args.node_pid) {
    std::printf("  node              %.2f s CPU, %.2f us CPU per delivery, peak %ld KiB\n",
                node_cpu, stats.delivered ? 1e6 * node_cpu / stats.delivered : 0.0,
                PeakKiB(args.node_pid));
  }
  if (!args.json.empty()) std::ofstream(args.json) << boost::json::serialize(out) << "\n";
  return stats.written > 0 ? 0 : 1;
}

}  // namespace
}  // namespace aweft::bench

int main(int argc, char** argv) {
  try {
    return aweft::bench::Run(aweft::bench::Parse(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "aweft-bench: " << e.what() << "\n";
    return 2;
  }
}
