#include "node/shard.h"

#include <pthread.h>

#include <string>

namespace aweft::node {

Shard::Shard(size_t index, LoopContext& node, sync::Scheduler& home_scheduler,
             DurableScheduler& durable)
    : index_(index),
      forward_(io_.get_executor(), node.home, durable),
      loop_(index + 1, node, io_.get_executor(), forward_, &forward_),
      replicas_(loop_, node, scheduler_, home_scheduler, durable) {
  loop_.set_documents(replicas_);
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), ("aweft-shard-" + std::to_string(index_)).c_str());
    io_.run();
  });
}

Shard::~Shard() {
  work_.reset();
  io_.stop();
  thread_.join();
  // Single-threaded from here. The links first: they share the replicas'
  // documents.
  loop_.DropLinks();
  replicas_.Clear();
  replicas_.DetachAll();
}

}  // namespace aweft::node
