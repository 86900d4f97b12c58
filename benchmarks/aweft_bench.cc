// aweft-bench: a load generator for aweft-node. Opens N WebSocket clients,
// shares D documents among them, has W of them write single-slot edits (at a
// rate or flat out) while every client receives, and prints throughput,
// end-to-end latency, bytes per commit and the node's CPU and memory.
//
//   aweft-bench --url ws://127.0.0.1:7420/ --clients 100 --writers 1 --rate 1000
//               --duration 10 [--docs 1] [--light] [--window N] [--node-pid PID]
//               [--read-url URL[,URL...]] [--json FILE] [--timeline FILE.csv]
//               [--plot FILE.png]
//
// Every flag is described in docs/benchmarks.md.

#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "benchmarks/cpu_ticks.h"
#include "codec/frame.h"
#include "node/cli.h"
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
  int window = 0;  // Commits a writer may have unconfirmed (durable); 0: no bound.
  std::vector<std::string> read_urls;  // Readers' nodes, round-robin; empty: url.
  std::string json, timeline, plot;
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
  uint64_t written = 0, confirmed = 0, delivered = 0;
  std::vector<float> latency_us;
  std::vector<double> arrival_us;  // When each latency sample arrived (NowMicros).

  void Delivered(const codec::Commit& commit) {
    ++delivered;
    double stamp;
    if (!StampOf(commit, stamp)) return;
    const double now = NowMicros();
    latency_us.push_back(static_cast<float>(now - stamp));
    arrival_us.push_back(now);
  }
};

// A reader that takes frames off the socket and only counts what they
// carry: no document, no link (--light).
struct LightReader {
  std::unique_ptr<sync::WebSocketChannel> channel;
  void Start(asio::io_context& io, sync::Scheduler& scheduler, const std::string& url,
             const std::string& name, Stats& stats) {
    channel = sync::WebSocketChannel::Dial(io.get_executor(), scheduler, url);
    channel->Receive([&stats](const codec::Frame& frame) {
      const auto* commits = std::get_if<codec::CommitsFrame>(&frame);
      if (!commits) return;
      for (const auto& commit : commits->commits) stats.Delivered(commit);
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

  void Start(asio::io_context& io, sync::Scheduler& scheduler, const std::string& url,
             const std::string& name, Stats& stats, bool counts) {
    this->scheduler = &scheduler;
    channel = sync::WebSocketChannel::Dial(io.get_executor(), scheduler, url);
    link = std::make_unique<sync::Link>(*channel, scheduler);
    if (auto r = sync::Requests::Open(*channel, io.get_executor())) requests.emplace(std::move(*r));
    sync::ShareHandlers handlers;
    if (counts) {
      handlers.ready = [&stats](sync::Document& document) {
        document.Watch([&stats](const sync::Change& change) {
          if (!change.local) stats.Delivered(change.commit);
        });
      };
    }
    shared = *link->Share(name, nullptr, handlers);
  }

  // Writes one edit unless the document is not open yet or `window` edits
  // already wait for the node's confirmation.
  bool Write(Stats& stats, int window) {
    if (!shared || !shared->ready()) return false;
    if (window > 0 && written_here - asked >= static_cast<uint64_t>(window)) return false;
    sync::Document& document = *shared->document();
    (void)document.SetEntry(document.root(), key, NowMicros());
    ++stats.written;
    return true;
  }

  // Asks the node whether this writer's edits are stored, when some wait
  // for that answer and no ask is in flight: one ask at a time, none idle.
  void Confirm(Stats& stats) {
    if (!requests || asking || written_here == asked) return;
    asking = true;
    // Asked after the link's posted flush, so the edits counted here leave
    // before the ask and its answer covers them.
    const uint64_t mine = written_here;
    scheduler->Post([this, &stats, mine] {
      requests->Ask("durable", nullptr, [this, &stats, mine](sync::AskResult answer) {
        asking = false;
        if (answer && mine > asked) {
          stats.confirmed += mine - asked;
          asked = mine;
        }
      });
    });
  }
  sync::Scheduler* scheduler = nullptr;
  uint64_t written_here = 0;
};

// The node's CPU by thread: its main (home) thread (the stored documents, and
// the links of the connections it serves), its shards (aweft-shard-N: their
// connections' sockets, links and replicas), its storage writer
// (aweft-store), and the rest (RocksDB's own). Ticks per thread id, with the thread's group.
std::map<int, std::pair<std::string, uint64_t>> ThreadTicks(int pid) {
  std::map<int, std::pair<std::string, uint64_t>> out;
  std::error_code ec;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(dir, ec)) {
    const int tid = std::atoi(task.path().filename().c_str());
    std::string name;
    const uint64_t ticks = CpuTicks(task.path().string() + "/stat", &name);
    const char* group = tid == pid                           ? "main"
                        : name.rfind("aweft-shard-", 0) == 0 ? "shards"
                        : name == "aweft-store"              ? "store"
                                                             : "other";
    out[tid] = {group, ticks};
  }
  return out;
}

// Seconds of CPU per group between two ThreadTicks (threads that came and
// went count what they used while seen), in the order main, shards, store, other.
std::vector<std::pair<std::string, double>> ThreadSeconds(
    const std::map<int, std::pair<std::string, uint64_t>>& before,
    const std::map<int, std::pair<std::string, uint64_t>>& after) {
  std::vector<std::pair<std::string, double>> out{
      {"main", 0}, {"shards", 0}, {"store", 0}, {"other", 0}};
  for (const auto& [tid, now] : after) {
    auto it = before.find(tid);
    const uint64_t then = it == before.end() ? 0 : it->second.second;
    for (auto& [group, seconds] : out) {
      if (group == now.first) {
        seconds += static_cast<double>(now.second - std::min(then, now.second)) /
                   static_cast<double>(sysconf(_SC_CLK_TCK));
      }
    }
  }
  return out;
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

constexpr const char* kUsage = R"(usage: aweft-bench [flags]   (docs/benchmarks.md)
  --url URL             the node writers dial          (ws://127.0.0.1:7420/)
  --read-url URL[,...]  the nodes readers dial         (--url)
  --clients N           clients, writers included      (10)
  --writers W           of them, writers               (1)
  --docs D              documents                      (1)
  --prefix P            documents' name prefix         (bench)
  --rate R              commits/s over all writers; 0 flat out (0)
  --window N            edits a writer may have unconfirmed; 0 no bound (0)
  --duration S          seconds of writing             (5)
  --light               readers count frames, apply nothing
  --node-pid PID        the node's process, for CPU and memory
  --json FILE           the figures as JSON
  --timeline FILE.csv   latency per 100 ms
  --plot FILE.png       the timeline as a PNG (gnuplot-nox)
)";

// A flag's number, or a refusal naming the flag.
template <class T>
T Number(const std::string& flag, const std::string& text) {
  size_t used = 0;
  T value{};
  try {
    if constexpr (std::is_floating_point_v<T>)
      value = static_cast<T>(std::stod(text, &used));
    else
      value = static_cast<T>(std::stoi(text, &used));
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) {
    throw std::runtime_error(flag + ": \"" + text + "\" is not a number. fix: give one, e.g. " +
                             flag + " 10");
  }
  return value;
}

Args Parse(int argc, char** argv) {
  namespace po = boost::program_options;
  po::options_description flags;
  flags.add_options()("help,h", "")("light", "");
  for (const char* flag : {"url", "clients", "writers", "docs", "rate", "duration", "node-pid",
                           "window", "read-url", "json", "timeline", "plot", "prefix"}) {
    flags.add_options()(flag, po::value<std::string>());
  }
  cli::Parsed parsed;
  try {
    parsed = cli::Parse(std::vector<std::string>(argv + 1, argv + argc), flags);
    if (!parsed.positional.empty()) {
      throw cli::UsageError("'" + parsed.positional.front() + "' is not a flag");
    }
  } catch (const cli::UsageError& e) {
    throw std::runtime_error(std::string(e.what()) + ". fix: see aweft-bench --help");
  }
  Args a;
  for (const auto& [name, value] : parsed.flags) {
    const std::string flag = "--" + name;
    if (name == "help") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (name == "url")
      a.url = value;
    else if (name == "clients")
      a.clients = Number<int>(flag, value);
    else if (name == "writers")
      a.writers = Number<int>(flag, value);
    else if (name == "docs")
      a.docs = Number<int>(flag, value);
    else if (name == "rate")
      a.rate = Number<double>(flag, value);
    else if (name == "duration")
      a.duration = Number<double>(flag, value);
    else if (name == "light")
      a.light = true;
    else if (name == "node-pid")
      a.node_pid = Number<int>(flag, value);
    else if (name == "window")
      a.window = Number<int>(flag, value);
    else if (name == "read-url") {
      std::istringstream list(value);
      for (std::string url; std::getline(list, url, ',');) {
        if (!url.empty()) a.read_urls.push_back(url);
      }
    } else if (name == "json")
      a.json = value;
    else if (name == "timeline")
      a.timeline = value;
    else if (name == "plot")
      a.plot = value;
    else
      a.prefix = value;
  }
  if (a.writers < 1 || a.clients < a.writers || a.docs < 1 || a.window < 0 || a.rate < 0 ||
      a.duration <= 0) {
    throw std::runtime_error(
        "need 1 <= writers <= clients, docs >= 1, window >= 0, rate >= 0 and duration > 0");
  }
  if (a.read_urls.empty()) a.read_urls.push_back(a.url);
  return a;
}

// Latency over the run, in 100 ms buckets of arrival time: one CSV row per
// bucket with its deliveries and its p50, p99 and max latency in ms.
std::string Timeline(const Stats& stats, double begin_us) {
  constexpr double kBucketUs = 1e5;
  std::vector<std::vector<float>> buckets;
  for (size_t i = 0; i < stats.arrival_us.size(); ++i) {
    const double at = stats.arrival_us[i] - begin_us;
    if (at < 0) continue;
    const auto b = static_cast<size_t>(at / kBucketUs);
    if (b >= buckets.size()) buckets.resize(b + 1);
    buckets[b].push_back(stats.latency_us[i]);
  }
  std::string csv = "t_s,deliveries,p50_ms,p99_ms,max_ms\n";
  char row[128];
  for (size_t b = 0; b < buckets.size(); ++b) {
    auto& v = buckets[b];
    const double max = v.empty() ? 0 : *std::max_element(v.begin(), v.end());
    std::snprintf(row, sizeof row, "%.1f,%zu,%.3f,%.3f,%.3f\n", static_cast<double>(b) / 10,
                  v.size(), Percentile(v, 0.5) / 1e3, Percentile(v, 0.99) / 1e3, max / 1e3);
    csv += row;
  }
  return csv;
}

// Draws the timeline with gnuplot (Debian: gnuplot-nox) into a PNG.
void Plot(const std::string& csv_path, const std::string& png, const std::string& title) {
  FILE* gnuplot = popen("gnuplot 2>&1", "w");
  if (!gnuplot)
    throw std::runtime_error("plot: gnuplot did not start. fix: apt-get install gnuplot-nox");
  std::fprintf(gnuplot,
               "set terminal png size 1200,600\nset output '%s'\n"
               "set datafile separator ','\nset key autotitle columnhead top left\n"
               "set title '%s'\nset xlabel 'seconds into the run'\n"
               "set ylabel 'write to reader latency (ms)'\nset logscale y\nset grid\n"
               "plot '%s' using 1:($3>0?$3:1/0) with lines title 'p50', "
               "'' using 1:($4>0?$4:1/0) with lines title 'p99', "
               "'' using 1:($5>0?$5:1/0) with lines title 'max'\n",
               png.c_str(), title.c_str(), csv_path.c_str());
  if (pclose(gnuplot) != 0) {
    throw std::runtime_error(
        "plot: gnuplot failed (is it installed?). fix: apt-get install gnuplot-nox");
  }
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
      writers.back()->Start(io, scheduler, args.url, name_of(c), stats, false);
      continue;
    }
    const std::string& url = args.read_urls[(c - args.writers) % args.read_urls.size()];
    if (args.light) {
      light.push_back(std::make_unique<LightReader>());
      light.back()->Start(io, scheduler, url, name_of(c), stats);
    } else {
      readers.push_back(std::make_unique<FullClient>());
      readers.back()->Start(io, scheduler, url, name_of(c), stats, true);
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
  // The seeders leave before the run: every client the node sends to is
  // then one that counts what it receives.
  for (auto& seeder : seeders) seeder->link->Close();
  io.run_for(std::chrono::milliseconds(100));
  const uint64_t cpu_before = args.node_pid ? CpuTicks(args.node_pid) : 0;
  const auto threads_before =
      args.node_pid ? ThreadTicks(args.node_pid) : decltype(ThreadTicks(0)){};
  const auto begin = Clock::now();
  const double begin_us = NowMicros();
  const auto end = begin + std::chrono::duration<double>(args.duration);
  const double interval_us = args.rate > 0 ? 1e6 * args.writers / args.rate : 0;
  double next_write = NowMicros();
  uint64_t turns = 0;
  while (Clock::now() < end) {
    const double now = NowMicros();
    if (interval_us == 0 || now >= next_write) {
      // Flat out with a window, a writer fills it each turn (its link sends
      // the edits in one frame); otherwise it writes once a turn.
      const bool fill = interval_us == 0 && args.window > 0;
      for (auto& w : writers) {
        while (w->Write(stats, args.window)) {
          ++w->written_here;
          if (!fill) break;
        }
      }
      next_write += interval_us;
      if (interval_us > 0 && next_write < now - 1e5) next_write = now;  // Fell behind.
    }
    if (++turns % 64 == 0 || interval_us > 0 || args.window > 0) {
      for (auto& w : writers) w->Confirm(stats);
    }
    io.poll();
    if (interval_us > 0 && next_write > NowMicros()) io.run_for(std::chrono::microseconds(200));
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  // Drain what is in flight: at least 500 ms, and until the node has
  // confirmed every write (at most 10 s more).
  const auto drained = Clock::now() + std::chrono::milliseconds(500);
  const auto give_up = drained + std::chrono::seconds(10);
  for (;;) {
    bool confirmed = true;
    for (auto& w : writers) {
      w->Confirm(stats);
      confirmed = confirmed && (!w->requests || w->asked == w->written_here);
    }
    const auto now = Clock::now();
    if ((confirmed && now >= drained) || now >= give_up) break;
    io.run_for(std::chrono::milliseconds(20));
  }
  const uint64_t cpu_after = args.node_pid ? CpuTicks(args.node_pid) : 0;
  const double node_cpu = static_cast<double>(cpu_after - cpu_before) / sysconf(_SC_CLK_TCK);
  const auto thread_seconds = args.node_pid
                                  ? ThreadSeconds(threads_before, ThreadTicks(args.node_pid))
                                  : std::vector<std::pair<std::string, double>>{};

  // Bytes on the wire for one commit: a commits frame with one commit.
  codec::Commit sample{{{codec::DeltaType::kReplace,
                         sync::MintId(),
                         {codec::Kind::kMap, std::string(sync::MintId().view())},
                         codec::Value(123456.789)}},
                       {}};
  const size_t frame_bytes = codec::EncodeFrame(codec::CommitsFrame{1, 1, {sample}})->size();

  std::vector<float> lat = stats.latency_us;
  const double p50 = Percentile(lat, 0.50), p99 = Percentile(lat, 0.99),
               p999 = Percentile(lat, 0.999);
  const double max = lat.empty() ? 0 : *std::max_element(lat.begin(), lat.end());
  boost::json::object out{
      {"clients", args.clients},
      {"writers", args.writers},
      {"docs", args.docs},
      {"rate", args.rate},
      {"light", args.light},
      {"window", args.window},
      {"read_urls", boost::json::value_from(args.read_urls)},
      {"seconds", seconds},
      {"written", stats.written},
      {"commits_per_s", stats.written / seconds},
      {"durable", stats.confirmed},
      {"durable_per_s", stats.confirmed / seconds},
      {"delivered", stats.delivered},
      {"deliveries_per_s", stats.delivered / seconds},
      {"latency_us", boost::json::object{{"p50", p50}, {"p99", p99}, {"p999", p999}, {"max", max}}},
      {"frame_bytes_per_commit", frame_bytes}};
  if (args.node_pid) {
    out["node_cpu_s"] = node_cpu;
    out["node_cpu_us_per_delivery"] = stats.delivered ? 1e6 * node_cpu / stats.delivered : 0.0;
    out["node_peak_kib"] = PeakKiB(args.node_pid);
    boost::json::object threads;
    for (const auto& [group, seconds] : thread_seconds) threads[group] = seconds;
    out["node_cpu_s_by_thread"] = std::move(threads);
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
    std::printf("  node threads     ");
    for (const auto& [group, seconds] : thread_seconds)
      std::printf(" %s %.2f s", group.c_str(), seconds);
    std::printf(" (CPU)\n");
  }
  if (!args.json.empty()) std::ofstream(args.json) << boost::json::serialize(out) << "\n";
  if (!args.timeline.empty() || !args.plot.empty()) {
    const std::string csv_path = args.timeline.empty() ? args.plot + ".csv" : args.timeline;
    std::ofstream(csv_path) << Timeline(stats, begin_us);
    if (!args.plot.empty()) {
      const std::string title =
          "aweft-bench: " + std::to_string(args.clients) + " clients, " +
          std::to_string(args.writers) + " writers, " +
          (args.rate > 0 ? std::to_string(static_cast<long>(args.rate)) + " commits/s"
                         : "flat out") +
          ", " + std::to_string(args.docs) + " documents";
      Plot(csv_path, args.plot, title);
      if (args.timeline.empty()) std::remove(csv_path.c_str());
      std::printf("  plot              %s\n", args.plot.c_str());
    }
  }
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
