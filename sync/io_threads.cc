#include "sync/io_threads.h"

#include <pthread.h>

#include <string>

namespace aweft::sync {

IoThreads::IoThreads(size_t count) {
  for (size_t i = 0; i < count; ++i) {
    contexts_.push_back(std::make_unique<boost::asio::io_context>(1));
    guards_.push_back(boost::asio::make_work_guard(*contexts_.back()));
  }
  for (size_t i = 0; i < contexts_.size(); ++i) {
    threads_.emplace_back([io = contexts_[i].get(), name = "aweft-io-" + std::to_string(i + 1)] {
      // Named for top, perf and aweft-bench's per-thread CPU (15 chars at most).
      pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
      io->run();
    });
  }
}

IoThreads::~IoThreads() { Join(); }

boost::asio::any_io_executor IoThreads::Next() {
  boost::asio::any_io_executor executor = contexts_[next_]->get_executor();
  next_ = (next_ + 1) % contexts_.size();
  return executor;
}

void IoThreads::Join() {
  guards_.clear();
  for (auto& context : contexts_) context->stop();
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

}  // namespace aweft::sync
