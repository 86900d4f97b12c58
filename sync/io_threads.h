#pragma once

#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

namespace aweft::sync {

// Threads for sockets: each runs an io_context of its own, so whatever is
// bound to one of their executors runs on that thread alone, in order (no
// strand needed). A listener hands them its connections round-robin
// (WebSocketChannel::Options::socket_executor).
class IoThreads {
 public:
  // Starts `count` threads; 0 starts none.
  explicit IoThreads(size_t count);
  ~IoThreads();
  IoThreads(const IoThreads&) = delete;
  IoThreads& operator=(const IoThreads&) = delete;

  size_t size() const { return contexts_.size(); }
  // The next thread's executor, round-robin. REQUIRES: size() > 0. Called on
  // one thread (the listener's).
  boost::asio::any_io_executor Next();
  // Stops the threads and waits for them. Work still queued is destroyed
  // with this object, so what it refers to must outlive it. Idempotent.
  void Join();

 private:
  using Guard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;
  std::vector<std::unique_ptr<boost::asio::io_context>> contexts_;
  std::vector<Guard> guards_;
  std::vector<std::thread> threads_;
  size_t next_ = 0;
};

}  // namespace aweft::sync
