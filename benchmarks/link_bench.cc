// The link over real sockets on loopback: commits per second from one end
// writing to the other applying (WebSocket and TCP, both ends on one
// io_context and one thread), and the frame bytes each commit costs when it
// travels alone or in a frame of 16.

#include <benchmark/benchmark.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "codec/frame.h"
#include "sync/document.h"
#include "sync/link.h"
#include "sync/snapshot.h"
#include "sync/tcp.h"
#include "sync/websocket.h"

namespace aweft::sync {
namespace {

namespace asio = boost::asio;

struct WebSocket {
  using Channel = WebSocketChannel;
  using Listener = WebSocketListener;
  static std::unique_ptr<Channel> Dial(asio::io_context& io, Scheduler& s, uint16_t port) {
    return WebSocketChannel::Dial(io.get_executor(), s,
                                  "ws://127.0.0.1:" + std::to_string(port) + "/");
  }
};

struct Tcp {
  using Channel = TcpChannel;
  using Listener = TcpListener;
  static std::unique_ptr<Channel> Dial(asio::io_context& io, Scheduler& s, uint16_t port) {
    return TcpChannel::Dial(io.get_executor(), s, "127.0.0.1", port);
  }
};

// One end writes `per_turn` commits per scheduler turn (so each turn's
// commits leave as one frame); the other applies them. An iteration is 1,024
// commits, written and applied.
template <typename Socket>
void BM_LinkStream(benchmark::State& state) {
  constexpr int kCommits = 1024;
  const int per_turn = static_cast<int>(state.range(0));
  asio::io_context io;
  AsioScheduler scheduler(io.get_executor());
  std::unique_ptr<typename Socket::Channel> accepted;
  typename Socket::Listener listener(
      io.get_executor(), scheduler, "127.0.0.1", 0,
      [&](std::unique_ptr<typename Socket::Channel> c) { accepted = std::move(c); });
  auto dialed = Socket::Dial(io, scheduler, listener.port());
  while (!accepted) io.run_one();
  Link writer(*dialed, scheduler), reader(*accepted, scheduler);
  Document source(Kind::kObject);
  auto copy = FromSnapshot(TakeSnapshot(source));
  (void)writer.Share("doc", &source);
  (void)reader.Share("doc", copy->get());
  while (writer.stats().frames_in == 0 || reader.stats().frames_in == 0) {
    io.run_one();
  }

  double n = 0;
  for (auto _ : state) {
    const uint64_t target = reader.stats().commits_in + kCommits;
    int written = 0;
    std::function<void()> write = [&] {
      for (int i = 0; i < per_turn && written < kCommits; ++i, ++written) {
        (void)source.Set(source.root(), "count", n++);
      }
      if (written < kCommits) asio::post(io, write);
    };
    asio::post(io, write);
    while (reader.stats().commits_in < target) io.run_one();
  }
  state.counters["commits/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * kCommits), benchmark::Counter::kIsRate);
  state.counters["commits/frame"] = static_cast<double>(reader.stats().commits_in) /
                                    static_cast<double>(reader.stats().frames_in - 1);
}
// Real time: a stalled socket costs wall time, not CPU.
BENCHMARK_TEMPLATE(BM_LinkStream, WebSocket)
    ->Arg(1)
    ->Arg(16)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_TEMPLATE(BM_LinkStream, Tcp)
    ->Arg(1)
    ->Arg(16)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The commits a stream of small edits makes: a number replaced, then a short
// text, in turn.
std::vector<Commit> EditStream(int count) {
  Document doc(Kind::kObject);
  (void)doc.Set(doc.root(), "count", -1.0);
  (void)doc.Set(doc.root(), "title", std::string("untitled"));
  std::vector<Commit> commits;
  doc.Watch([&](const Change& change) { commits.push_back(change.commit); });
  for (int i = 0; i < count; ++i) {
    if (i % 2 == 0) {
      (void)doc.Set(doc.root(), "count", static_cast<double>(i));
    } else {
      (void)doc.Set(doc.root(), "title", "card " + std::to_string(i));
    }
  }
  return commits;
}

// Frame bytes per commit (the encoded frame alone; TCP adds 4 bytes a frame,
// WebSocket 2 to 14) when each frame carries `range(0)` commits; the time is
// encoding one such frame.
void BM_FrameBytesPerCommit(benchmark::State& state) {
  const int per_frame = static_cast<int>(state.range(0));
  const std::vector<Commit> commits = EditStream(256);
  std::vector<codec::Frame> frames;
  for (size_t i = 0; i + per_frame <= commits.size(); i += per_frame) {
    codec::CommitsFrame frame{1, 1000 + i, {}};
    for (size_t j = i; j < i + per_frame; ++j) {
      frame.commits.push_back(commits[j]);
    }
    frames.push_back(std::move(frame));
  }
  size_t bytes = 0;
  for (const auto& frame : frames) bytes += codec::EncodeFrame(frame)->size();
  size_t i = 0;
  for (auto _ : state) {
    auto encoded = codec::EncodeFrame(frames[i++ % frames.size()]);
    benchmark::DoNotOptimize(encoded);
  }
  state.counters["bytes/commit"] =
      static_cast<double>(bytes) / static_cast<double>(frames.size() * per_frame);
  state.counters["bytes/frame"] = static_cast<double>(bytes) / static_cast<double>(frames.size());
}
BENCHMARK(BM_FrameBytesPerCommit)->Arg(1)->Arg(16);

}  // namespace
}  // namespace aweft::sync

BENCHMARK_MAIN();
