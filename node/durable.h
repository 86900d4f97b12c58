#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

#include "storage/store.h"
#include "sync/channel.h"

namespace aweft::node {

// Stores what the documents commit on a thread of its own, and runs work
// posted to it only once everything committed before the Post is stored
// (DESIGN §4: durable before forwarded). The node's links send through it,
// so no frame carries a commit that a crash could still lose.
//
// Group commit: one batch is written at a time; the commits that arrive
// meanwhile go in the next, so under load each write (one fsync under
// `sync` durability) carries many commits, and the loop never waits for
// the disk.
//
// Post() and Kick() run on the loop's thread (the store's); the thread
// only writes batches. A write that fails is thrown (storage::Failure) on
// the loop's thread, from its handler, as Store::Sync() would.
class DurableScheduler : public sync::Scheduler {
 public:
  // `synced`, if set, hears each batch that carried commits: how many, and
  // how long the write took (for metrics).
  using Synced = std::function<void(uint64_t commits, std::chrono::duration<double> took)>;
  DurableScheduler(boost::asio::any_io_executor loop, storage::Store& store, Synced synced = {});
  // Waits for the batch being written, if any.
  ~DurableScheduler() override;

  void Post(std::function<void()> work) override;
  // Stores what is pending soon, though no work waits for it.
  void Kick();
  // Hears, for each work that waited for commits to be stored (a link's
  // flush carrying them on), how long it waited: from Post() to its run,
  // the commit-to-forward latency (for metrics).
  void OnForwarded(std::function<void(std::chrono::duration<double>)> fn) {
    forwarded_ = std::move(fn);
  }

  // Batches handed to the thread, and finished.
  uint64_t staged() const { return staged_; }
  uint64_t stored() const { return stored_; }
  // Null once this scheduler is destroyed (checked on the loop's thread).
  std::weak_ptr<DurableScheduler*> weak() const { return self_; }

 private:
  struct Waiting {
    uint64_t batch;  // Runs once this many batches are stored.
    std::function<void()> work;
    // When it was posted, if it waits for a batch not yet stored.
    std::optional<std::chrono::steady_clock::time_point> since;
  };

  void PostPump();
  void Pump();
  void Submit();

  boost::asio::any_io_executor loop_;
  storage::Store& store_;
  Synced synced_;
  std::function<void(std::chrono::duration<double>)> forwarded_;
  std::deque<Waiting> waiting_;  // Non-decreasing `batch`, FIFO.
  uint64_t staged_ = 0, stored_ = 0;
  bool in_flight_ = false, pump_posted_ = false;
  std::shared_ptr<DurableScheduler*> self_;  // Reset when destroyed.

  boost::asio::io_context writer_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> writer_work_;
  std::thread thread_;
};

// The scheduler a shard's links send through (docs/node.md "Threads"): work
// posted on the shard's thread runs there once every commit the shard had
// passed on to the home thread (over its replicas' links) before the Post is
// stored, so a commit one client sends reaches the shard's other clients
// only once it is durable, as on the home thread.
//
// How: a Post waits two turns of the shard's loop, so the replicas' links
// have sent what the commits before it made them queue (a link flushes on
// its next turn); then a marker crosses to the home loop behind those
// frames, waits two turns there, so the home links have applied them (a
// channel delivers on its next turn), and waits on the DurableScheduler for
// the batch that stores them; the work then comes back to the shard.
//
// Only commits that entered a replica on the shard (from its clients) need
// that: what came from home was stored before it was sent. So the caller
// marks each such commit with Dirty() before it is applied; while nothing
// marked is still unstored and no work waits, work runs on the shard's
// next turn instead.
class ForwardScheduler : public sync::Scheduler {
 public:
  ForwardScheduler(boost::asio::any_io_executor shard, boost::asio::any_io_executor home,
                   DurableScheduler& durable);
  // On the shard's thread.
  void Post(std::function<void()> work) override;
  // A commit is about to enter a replica from a client (the shard's thread).
  void Dirty();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace aweft::node
