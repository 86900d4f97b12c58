// Document model and link throughput: applying small commits, local writes
// becoming commits, snapshot and reconcile of a 100,000-observable document,
// and commits through an in-process link.

#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "sync/document.h"
#include "sync/link.h"
#include "sync/snapshot.h"

namespace aweft::sync {
namespace {

using codec::DeltaType;

// A replace of one short text: the typical commit of an editing stream.
void BM_ApplySmallCommit(benchmark::State& state) {
  Document doc(Kind::kObject);
  (void)doc.Set(doc.root(), "title", std::string("a"));
  doc.Watch([](const Change&) {});
  Commit commits[2] = {{{{DeltaType::kReplace,
                          doc.root().id(),
                          {Kind::kObject, "title"},
                          Value(std::string("plan"))}},
                        {}},
                       {{{DeltaType::kReplace,
                          doc.root().id(),
                          {Kind::kObject, "title"},
                          Value(std::string("done"))}},
                        {}}};
  size_t i = 0;
  for (auto _ : state) {
    auto applied = doc.Apply(commits[i++ & 1]);
    benchmark::DoNotOptimize(applied);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ApplySmallCommit);

// A local write outside a block: one commit, validated and delivered (with
// undo, as a link's tracker asks).
void BM_LocalWrite(benchmark::State& state) {
  Document doc(Kind::kObject);
  doc.Watch([](const Change&) {}, /*undo=*/true);
  double n = 0;
  for (auto _ : state) {
    auto written = doc.Set(doc.root(), "count", n++);
    benchmark::DoNotOptimize(written);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LocalWrite);

std::unique_ptr<Document> Large(size_t n) {
  auto doc = std::make_unique<Document>(Kind::kMap);
  (void)doc->Atomic([&]() -> Result<void> {
    for (size_t i = 0; i < n; ++i) {
      Observable& row = doc->Create(Kind::kObject);
      (void)doc->Set(row, "n", static_cast<double>(i));
      (void)doc->Add(doc->root(), row);
    }
    return {};
  });
  return doc;
}

void BM_Snapshot100k(benchmark::State& state) {
  auto doc = Large(100000);
  for (auto _ : state) {
    Snapshot snapshot = TakeSnapshot(*doc);
    benchmark::DoNotOptimize(snapshot);
  }
  state.counters["observables"] = static_cast<double>(doc->observable_count());
}
BENCHMARK(BM_Snapshot100k)->Unit(benchmark::kMillisecond);

void BM_Reconcile100k(benchmark::State& state) {
  auto doc = Large(100000);
  Snapshot target = TakeSnapshot(*doc);
  auto& [id, row] = *std::next(target.observables.begin(), 50000);
  row.slots["n"] = Value(-1.0);
  for (auto _ : state) {
    auto commit = Reconcile(*doc, target);
    benchmark::DoNotOptimize(commit);
  }
}
BENCHMARK(BM_Reconcile100k)->Unit(benchmark::kMillisecond);

// One end writes, the other applies, through an in-process link; one turn of
// the scheduler per batch of `range(0)` commits.
void BM_InProcessLink(benchmark::State& state) {
  ManualScheduler scheduler;
  auto [x, y] = InProcessPair(scheduler);
  Link a(*x, scheduler), b(*y, scheduler);
  Document source(Kind::kObject);
  auto copy = FromSnapshot(TakeSnapshot(source));
  (void)a.Share("doc", &source);
  (void)b.Share("doc", copy->get());
  scheduler.RunUntilIdle();
  double n = 0;
  const int64_t batch = state.range(0);
  for (auto _ : state) {
    for (int64_t i = 0; i < batch; ++i) (void)source.Set(source.root(), "k", n++);
    scheduler.RunUntilIdle();
  }
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_InProcessLink)->Arg(1)->Arg(16);

}  // namespace
}  // namespace aweft::sync

BENCHMARK_MAIN();
