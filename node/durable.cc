#include "node/durable.h"

#include <pthread.h>

#include <boost/asio/post.hpp>

namespace aweft::node {

namespace asio = boost::asio;

DurableScheduler::DurableScheduler(asio::any_io_executor loop, storage::Store& store, Synced synced)
    : loop_(std::move(loop)),
      store_(store),
      synced_(std::move(synced)),
      self_(std::make_shared<DurableScheduler*>(this)),
      writer_work_(writer_.get_executor()),
      thread_([this] {
        pthread_setname_np(pthread_self(), "aweft-store");
        writer_.run();
      }) {}

DurableScheduler::~DurableScheduler() {
  *self_ = nullptr;
  writer_work_.reset();
  thread_.join();
}

void DurableScheduler::Post(std::function<void()> work) {
  // What is pending goes in the next batch; with nothing pending, the work
  // may still carry commits of the batch being written.
  const uint64_t needs = store_.pending() ? staged_ + 1 : staged_;
  std::optional<std::chrono::steady_clock::time_point> since;
  if (forwarded_ && needs > stored_) since = std::chrono::steady_clock::now();
  waiting_.push_back({needs, std::move(work), since});
  PostPump();
}

void DurableScheduler::Kick() { PostPump(); }

void DurableScheduler::PostPump() {
  if (pump_posted_) return;
  pump_posted_ = true;
  std::weak_ptr<DurableScheduler*> self = self_;
  asio::post(loop_, [self] {
    if (auto alive = self.lock(); alive && *alive) (*alive)->Pump();
  });
}

void DurableScheduler::Pump() {
  pump_posted_ = false;
  // Work may post more: that joins the back, behind what is stored.
  while (!waiting_.empty() && waiting_.front().batch <= stored_) {
    auto work = std::move(waiting_.front().work);
    const auto since = waiting_.front().since;
    waiting_.pop_front();
    if (since) forwarded_(std::chrono::steady_clock::now() - *since);
    work();
  }
  if (in_flight_) return;
  if (store_.pending() || !waiting_.empty()) Submit();
}

void DurableScheduler::Submit() {
  in_flight_ = true;
  ++staged_;
  auto batch = std::make_shared<storage::Store::Batch>(store_.Stage());
  std::weak_ptr<DurableScheduler*> self = self_;
  asio::post(writer_, [self, batch, loop = loop_] {
    const auto start = std::chrono::steady_clock::now();
    (void)batch->Write();  // A failure is thrown by Finish(), on the loop.
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    batch->PrepareSnapshots();  // Here, not on the loop, which runs every document.
    asio::post(loop, [self, batch, took] {
      auto alive = self.lock();
      if (!alive || !*alive) return;
      DurableScheduler& scheduler = **alive;
      scheduler.in_flight_ = false;
      const uint64_t commits = batch->commits();
      scheduler.store_.Finish(std::move(*batch));
      ++scheduler.stored_;
      if (scheduler.synced_ && commits > 0) scheduler.synced_(commits, took);
      scheduler.Pump();
    });
  });
}

struct ForwardScheduler::State {
  asio::any_io_executor shard, home;
  std::weak_ptr<DurableScheduler*> durable;
  std::deque<std::function<void()>> queue;  // Posted, not yet sealed.
  bool counting = false;                    // A count of queue is posted.
  uint64_t dirtied = 0;                     // Dirty() calls so far.
  uint64_t stored = 0;                      // Of those, known stored at home.
  size_t waiting = 0;                       // Works posted that have not run.
};

ForwardScheduler::ForwardScheduler(asio::any_io_executor shard, asio::any_io_executor home,
                                   DurableScheduler& durable)
    : state_(std::make_shared<State>()) {
  state_->shard = std::move(shard);
  state_->home = std::move(home);
  state_->durable = durable.weak();
}

namespace {

// Posts `fn` to `executor` so that it runs on the second turn from now:
// after whatever the current turn and the next post there.
template <class Fn>
void PostTwice(const asio::any_io_executor& executor, Fn fn) {
  asio::post(executor,
             [executor, fn = std::move(fn)]() mutable { asio::post(executor, std::move(fn)); });
}

}  // namespace

void ForwardScheduler::Dirty() { ++state_->dirtied; }

void ForwardScheduler::Post(std::function<void()> work) {
  if (state_->waiting == 0 && state_->dirtied == state_->stored) {
    return asio::post(state_->shard, std::move(work));  // Nothing unstored went home.
  }
  ++state_->waiting;
  state_->queue.push_back(std::move(work));
  if (state_->counting) return;
  state_->counting = true;
  // Counted one turn on, sealed the turn after: the flushes the work's
  // turn posted have run by then, work posted later waits for the next seal.
  asio::post(state_->shard, [state = state_] {
    state->counting = false;
    const size_t count = state->queue.size();
    const uint64_t dirtied = state->dirtied;  // What the seal will cover.
    asio::post(state->shard, [state, count, dirtied] {
      auto batch = std::make_shared<std::vector<std::function<void()>>>();
      for (size_t i = 0; i < count; ++i) {
        batch->push_back(std::move(state->queue.front()));
        state->queue.pop_front();
      }
      PostTwice(state->home, [state, batch, dirtied] {
        auto durable = state->durable.lock();
        if (!durable || !*durable) return;  // The node is going.
        (*durable)->Post([state, batch, dirtied] {
          asio::post(state->shard, [state, batch, dirtied] {
            state->stored = std::max(state->stored, dirtied);
            state->waiting -= batch->size();
            for (auto& work : *batch) work();
          });
        });
      });
    });
  });
}

}  // namespace aweft::node
