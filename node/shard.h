#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <thread>

#include "node/durable.h"
#include "node/loop.h"
#include "node/replicas.h"
#include "sync/asio_scheduler.h"

namespace aweft::node {

// A thread serving connections beside the home thread (docs/node.md
// "Threads"), named aweft-shard-N: its loop, and the replicas of the home
// documents that loop serves. Made and destroyed on the home thread.
class Shard {
 public:
  // `home_scheduler` runs work on the home thread; `durable` is its store's.
  Shard(size_t index, LoopContext& node, sync::Scheduler& home_scheduler,
        DurableScheduler& durable);
  // Stops and joins the thread, then frees what it served, the replicas'
  // home ends last.
  ~Shard();
  Shard(const Shard&) = delete;
  Shard& operator=(const Shard&) = delete;

  boost::asio::io_context& io() { return io_; }
  sync::Scheduler& scheduler() { return scheduler_; }
  Loop& loop() { return loop_; }
  const Replicas& replicas() const { return replicas_; }

 private:
  const size_t index_;
  boost::asio::io_context io_;
  sync::AsioScheduler scheduler_{io_.get_executor()};
  ForwardScheduler forward_;  // The loop's links send through it.
  Loop loop_;
  Replicas replicas_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{
      io_.get_executor()};
  std::thread thread_;
};

}  // namespace aweft::node
