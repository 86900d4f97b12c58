// Codec throughput: encode, decode and validate of a typical small commit, a
// 40-delta commit and a commits frame of 16 commits. Each benchmark reports
// ns/op, bytes/s and heap allocations per operation ("allocs"), counted by
// replacing the global operator new in this binary (allocation_counter.cc).

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <utility>

#include "benchmarks/allocation_counter.h"
#include "codec/commit.h"
#include "codec/frame.h"

namespace aweft::codec {
namespace {

Id MakeId(uint32_t n) {
  Id id;
  for (int i = 0; i < 4; ++i) id.bytes[8 + i] = static_cast<uint8_t>(n >> (24 - 8 * i));
  id.bytes[0] = 0x5a;  // Not all zero, as a random id would not be.
  return id;
}

Delta Object(DeltaType type, uint32_t id, std::string key, Value value) {
  return Delta{type, MakeId(id), Ref{Kind::kObject, std::move(key)}, std::move(value)};
}

// One replace of a short text: what a user typing into a field produces.
Commit SmallCommit(uint32_t id = 1, std::string text = "plan") {
  return Commit{{Object(DeltaType::kReplace, id, "title", std::move(text))}, std::nullopt};
}

// Forty deltas over eight objects, an array and a map: text, numbers,
// booleans, positions and references, as a form save or a paste makes.
Commit LargeCommit() {
  Commit commit;
  for (uint32_t n = 1; n <= 8; ++n) {
    commit.deltas.push_back(
        Object(DeltaType::kAdd, n, "title", "item number " + std::to_string(n)));
    commit.deltas.push_back(Object(DeltaType::kReplace, n, "count", n * 1.5));
    commit.deltas.push_back(Object(DeltaType::kAdd, n, "done", n % 2 == 0));
    commit.deltas.push_back(Object(DeltaType::kAdd, n, "owner",
                                   Reference{Edge::kAlias, Kind::kObject, MakeId(100 + n)}));
  }
  for (uint8_t n = 1; n <= 4; ++n) {
    commit.deltas.push_back(Delta{DeltaType::kAdd, MakeId(50),
                                  Ref{Kind::kArray, std::string{'\x80', static_cast<char>(n)}},
                                  Value(Reference{Edge::kAttach, Kind::kObject, MakeId(n)})});
    commit.deltas.push_back(Delta{DeltaType::kRemove, MakeId(60),
                                  Ref{Kind::kMap, std::string(MakeId(200 + n).view())},
                                  std::nullopt});
  }
  return commit;
}

Frame CommitsOf16() {
  CommitsFrame frame{1, 1, {}};
  for (uint32_t n = 0; n < 16; ++n) {
    frame.commits.push_back(SmallCommit(n + 1, "title " + std::to_string(n)));
  }
  return frame;
}

std::string Encoded(const Commit& commit) { return *EncodeCommit(commit); }
std::string Encoded(const Frame& frame) { return *EncodeFrame(frame); }

// Runs `op` once per iteration and reports bytes/s over `bytes` bytes and
// the heap allocations one op makes on average.
template <typename Op>
void Measure(benchmark::State& state, size_t bytes, Op op) {
  uint64_t before = bench::Allocations();
  for (auto _ : state) op();
  uint64_t made = bench::Allocations() - before;
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["allocs"] =
      benchmark::Counter(static_cast<double>(made), benchmark::Counter::kAvgIterations);
  state.counters["bytes"] = static_cast<double>(bytes);
}

void BM_EncodeCommit(benchmark::State& state, Commit commit) {
  const size_t size = Encoded(commit).size();
  Measure(state, size, [&] {
    Result<std::string> bytes = EncodeCommit(commit);
    benchmark::DoNotOptimize(bytes);
  });
}

// Appending to a reused buffer, as a sender filling one outgoing message.
void BM_EncodeCommitInto(benchmark::State& state, Commit commit) {
  const size_t size = Encoded(commit).size();
  std::string out;
  out.reserve(size);
  Measure(state, size, [&] {
    out.clear();
    Result<void> done = EncodeCommit(commit, out);
    benchmark::DoNotOptimize(done);
    benchmark::DoNotOptimize(out.data());
  });
}

void BM_DecodeCommit(benchmark::State& state, Commit commit) {
  const std::string bytes = Encoded(commit);
  Measure(state, bytes.size(), [&] {
    Result<Commit> decoded = DecodeCommit(bytes);
    benchmark::DoNotOptimize(decoded);
  });
}

void BM_ValidateCommit(benchmark::State& state, Commit commit) {
  const std::string bytes = Encoded(commit);
  Measure(state, bytes.size(), [&] {
    Result<void> valid = ValidateCommit(bytes);
    benchmark::DoNotOptimize(valid);
  });
}

void BM_EncodeFrame(benchmark::State& state, Frame frame) {
  const size_t size = Encoded(frame).size();
  Measure(state, size, [&] {
    Result<std::string> bytes = EncodeFrame(frame);
    benchmark::DoNotOptimize(bytes);
  });
}

void BM_DecodeFrame(benchmark::State& state, Frame frame) {
  const std::string bytes = Encoded(frame);
  Measure(state, bytes.size(), [&] {
    Result<Frame> decoded = DecodeFrame(bytes);
    benchmark::DoNotOptimize(decoded);
  });
}

BENCHMARK_CAPTURE(BM_EncodeCommit, small, SmallCommit());
BENCHMARK_CAPTURE(BM_EncodeCommit, deltas40, LargeCommit());
BENCHMARK_CAPTURE(BM_EncodeCommitInto, small, SmallCommit());
BENCHMARK_CAPTURE(BM_EncodeCommitInto, deltas40, LargeCommit());
BENCHMARK_CAPTURE(BM_DecodeCommit, small, SmallCommit());
BENCHMARK_CAPTURE(BM_DecodeCommit, deltas40, LargeCommit());
BENCHMARK_CAPTURE(BM_ValidateCommit, small, SmallCommit());
BENCHMARK_CAPTURE(BM_ValidateCommit, deltas40, LargeCommit());
BENCHMARK_CAPTURE(BM_EncodeFrame, small_commit, Frame(CommitsFrame{1, 1, {SmallCommit()}}));
BENCHMARK_CAPTURE(BM_DecodeFrame, small_commit, Frame(CommitsFrame{1, 1, {SmallCommit()}}));
BENCHMARK_CAPTURE(BM_EncodeFrame, commits16, CommitsOf16());
BENCHMARK_CAPTURE(BM_DecodeFrame, commits16, CommitsOf16());

}  // namespace
}  // namespace aweft::codec

BENCHMARK_MAIN();
