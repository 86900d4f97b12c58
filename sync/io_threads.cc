#include "sync/io_threads.h"

namespace aweft::sync {

IoThreads::IoThreads(size_t count) {
  for (size_t i = 0; i < count; ++i) {
    contexts_.push_back(std::make_unique<boost::asio::io_context>(1));
    guards_.push_back(boost::asio::make_work_guard(*contexts_.back()));
  }
  for (auto& context : contexts_) {
    threads_.emplace_back([io = context.get()] { io->run(); });
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
