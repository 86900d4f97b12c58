#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "node/loop.h"
#include "sync/asio_scheduler.h"
#include "sync/channel.h"
#include "sync/link.h"

namespace aweft::node {

// A shard's documents (docs/node.md "Threads"): a replica of each home
// document its connections share, made on the first open and dropped at
// the last release, kept in step with home over an ordinary link across
// the two threads (sync::CrossThreadPair), from home's state and with the
// same ids. Home orders (docs/sync.md "One order"): the home end of each
// link is an ordering end, so a replica whose writes crossed home's on the
// same slot, or whose commit either end refused, is checked and corrected
// to home's state, as a client is.
//
// Two halves, each on its own thread: the replicas and their links on the
// shard's (Open, Release, and what they post back), the home ends of those
// links, the attachments, on the home thread's.
class Replicas : public Documents {
 public:
  // `loop`: the shard's loop, whose topics stop when a replica ends;
  // `scheduler` runs work on its thread. `home_scheduler` runs work on the
  // home thread; `durable` is what the home ends send through (stored
  // first).
  Replicas(Loop& loop, LoopContext& node, sync::Scheduler& scheduler,
           sync::Scheduler& home_scheduler, DurableScheduler& durable);
  ~Replicas() override;

  void Open(const codec::OpenFrame& open, bool may_write, Opened done) override;
  void Release(const std::string& name) override;
  void Abandon(const std::string& name) override;

  // Home thread: replicas attached now, for aweft_replicas.
  size_t attached() const { return attached_.size(); }
  // Home thread: the home ends' link counters, over every attachment so far
  // (checks and corrections: aweft_divergence_healed_total{by="replica"}).
  sync::Link::Stats link_stats() const;
  // Home thread: drops every attachment (before the shard's thread stops).
  void DetachAll() { attached_.clear(); }
  // Shard thread, once it is joined: drops the replicas.
  void Clear() { replicas_.clear(); }

 private:
  // The shard's end of one replica's link. Shard thread only.
  struct Replica {
    uint64_t generation = 0;  // Which attachment it is the end of.
    std::shared_ptr<sync::Channel> end;
    std::unique_ptr<sync::Link> link;  // Declared after `end`: destroyed first.
    sync::Shared* topic = nullptr;
    // Opens waiting for its state: told the document, or null.
    std::vector<std::function<void(sync::Document*)>> waiting;
  };
  // The home end of a replica's link. Home thread only.
  struct Attachment {
    uint64_t generation = 0;
    int shares = 0;  // The shard's connections sharing the document.
    std::unique_ptr<sync::Channel> end;
    std::unique_ptr<sync::Link> link;
  };

  // Home thread: one more share of `name`, attaching a replica if there is
  // none; then the shard serves `done` from it.
  void Attach(const codec::OpenFrame& open, sync::Document& document, bool created, Opened done);
  // Shard thread: makes the replica of a new attachment (`end` set), then
  // tells `done` once it has home's state.
  void Serve(const codec::OpenFrame& open, uint64_t generation, std::shared_ptr<sync::Channel> end,
             bool created, Opened done);
  void MakeReplica(const std::string& name, uint64_t generation,
                   std::shared_ptr<sync::Channel> end);
  // Home thread: one share fewer.
  void Detach(const std::string& name, bool abandon);

  Loop& loop_;
  LoopContext& node_;
  sync::Scheduler& scheduler_;
  sync::Scheduler& home_scheduler_;
  DurableScheduler& durable_;
  std::map<std::string, Replica, std::less<>> replicas_;     // Shard thread.
  std::map<std::string, Attachment, std::less<>> attached_;  // Home thread.
  uint64_t next_generation_ = 1;                             // Home thread.
  sync::Link::Stats retired_;                                // Home thread: attachments detached.
};

}  // namespace aweft::node
