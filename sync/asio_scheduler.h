#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <functional>
#include <utility>

#include "sync/channel.h"

namespace aweft::sync {

// A Scheduler over an Asio executor: work is posted, never run inline. The
// socket channels (websocket.h, tcp.h) run their links on one.
class AsioScheduler : public Scheduler {
 public:
  explicit AsioScheduler(boost::asio::any_io_executor executor) : executor_(std::move(executor)) {}
  void Post(std::function<void()> work) override { boost::asio::post(executor_, std::move(work)); }

 private:
  boost::asio::any_io_executor executor_;
};

}  // namespace aweft::sync
