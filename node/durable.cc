#include "node/durable.h"

#include <pthread.h>

#include <boost/asio/post.hpp>

namespace aweft::node {

namespace asio = boost::asio;

DurableScheduler::DurableScheduler(asio::any_io_executor loop, storage::Store& store,
                                   Synced synced)
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
  waiting_.push_back({needs, std::move(work)});
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
    waiting_.pop_front();
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

}  // namespace aweft::node
