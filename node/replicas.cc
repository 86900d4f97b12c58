#include "node/replicas.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <utility>

namespace aweft::node {

namespace asio = boost::asio;
using codec::Reason;
using codec::Refusal;

namespace {

std::string SlotKey(const codec::Delta& delta) {
  std::string key(delta.id.view());
  key += static_cast<char>(delta.ref.kind);
  key += delta.ref.key;
  return key;
}

}  // namespace

Replicas::Replicas(Loop& loop, LoopContext& node, sync::Scheduler& scheduler,
                   ForwardScheduler& forward, sync::Scheduler& home_scheduler,
                   DurableScheduler& durable)
    : loop_(loop),
      node_(node),
      scheduler_(scheduler),
      forward_(forward),
      home_scheduler_(home_scheduler),
      durable_(durable) {}

Replicas::~Replicas() = default;

void Replicas::Open(const codec::OpenFrame& open, bool may_write, Opened done) {
  asio::post(node_.home, [this, open, may_write, done = std::move(done)]() mutable {
    node_.hub.Open(
        open, may_write, [this, open, done](codec::Result<sync::Document*> document, bool created) {
          if (!document) {
            return asio::post(loop_.executor(),
                              [done, refusal = document.error()] { done(refusal, false); });
          }
          Attach(open, **document, created, done);
        });
  });
}

void Replicas::Release(const std::string& name) {
  asio::post(node_.home, [this, name] { Detach(name); });
}

void Replicas::Attach(const codec::OpenFrame& open, sync::Document& document, bool created,
                      Opened done) {
  Attachment& attachment = attached_[open.name];
  ++attachment.shares;
  std::shared_ptr<sync::Channel> end;
  if (!attachment.link) {
    auto [home, there] = sync::CrossThreadPair(home_scheduler_, scheduler_);
    attachment.generation = next_generation_++;
    attachment.end = std::move(home);
    // What the home document sends its replica is stored first.
    attachment.link = std::make_unique<sync::Link>(*attachment.end, durable_);
    sync::ShareHandlers handlers;
    // The shard's links checked each commit against the connection's rights
    // and the limits; only a failing disk stops one here.
    handlers.accept = [this](const codec::Commit&) -> std::vector<codec::WireReason> {
      if (auto why = node_.hub.Unavailable()) {
        return {{codec::Spelled(Reason::kUnavailable), *why, std::nullopt}};
      }
      return {};
    };
    // Refusals between a replica and home are not counted: the replica
    // yields (aweft_replica_resyncs_total counts that).
    (void)attachment.link->Share(open.name, &document, std::move(handlers));
    end = std::move(there);
  }
  asio::post(loop_.executor(),
             [this, open, generation = attachment.generation, end, created,
              done = std::move(done)] { Serve(open, generation, end, created, done); });
}

void Replicas::Serve(const codec::OpenFrame& open, uint64_t generation,
                     std::shared_ptr<sync::Channel> end, bool created, Opened done) {
  const std::string& name = open.name;
  if (end) MakeReplica(name, generation, std::move(end));
  auto serve = [this, name, created, done](sync::Document* document) {
    if (document) return done(document, created);
    Release(name);
    done(
        Refusal{Reason::kUnavailable, "the document's replica on this thread ended; open it again"},
        false);
  };
  auto it = replicas_.find(name);
  if (it == replicas_.end() || !it->second.topic || it->second.topic->ended()) {
    return serve(nullptr);
  }
  if (it->second.topic->ready()) return serve(it->second.topic->document());
  it->second.waiting.push_back(std::move(serve));
}

void Replicas::MakeReplica(const std::string& name, uint64_t generation,
                           std::shared_ptr<sync::Channel> end) {
  // A new attachment: a replica still here was detached.
  replicas_.erase(name);
  Replica& replica = replicas_[name];
  replica.generation = generation;
  replica.end = std::move(end);
  replica.link = std::make_unique<sync::Link>(*replica.end, scheduler_);
  auto tell = [this, name](sync::Document* document) {
    auto it = replicas_.find(name);
    if (it == replicas_.end()) return;
    auto waiting = std::move(it->second.waiting);
    it->second.waiting.clear();
    for (auto& fn : waiting) fn(document);
  };
  sync::ShareHandlers handlers;
  handlers.ready = [this, name, tell](sync::Document& document) {
    auto it = replicas_.find(name);
    if (it != replicas_.end() && !it->second.watching) {
      it->second.watching = true;
      document.Watch([this, name](const sync::Change& change) { Guard(name, change); });
    }
    tell(&document);
  };
  handlers.fault = [this, tell, name](const std::string& reason, const std::string& message) {
    spdlog::warn("event=replica-end doc=\"{}\" reason={} detail=\"{}\"", name, reason, message);
    tell(nullptr);
    // Those it serves would drift from home unseen: they hear `left`, and
    // may open the document again (a new replica).
    loop_.StopTopics(name);
  };
  // Concurrent edits one end refused leave the two apart: the replica
  // yields to the home document.
  handlers.refused = [this, name](const sync::Refused&) { Resync(name); };
  handlers.synced = [this, name](sync::Document&) {
    auto it = replicas_.find(name);
    if (it == replicas_.end()) return;
    it->second.resyncing = false;
    if (std::exchange(it->second.resync_again, false)) Resync(name);
  };
  // No document: the home end's state makes it, with the same ids.
  auto topic = replica.link->Share(name, nullptr, std::move(handlers));
  replica.topic = topic ? *topic : nullptr;
}

void Replicas::Detach(const std::string& name) {
  auto it = attached_.find(name);
  if (it == attached_.end()) return;
  node_.hub.Release(name);
  if (--it->second.shares > 0) return;
  // The replica goes first (posted ahead of the end its channel hears when
  // the home end goes), so that it does not report an end nobody minds.
  asio::post(loop_.executor(), [this, name, generation = it->second.generation] {
    auto replica = replicas_.find(name);
    if (replica == replicas_.end() || replica->second.generation != generation) return;
    replicas_.erase(replica);
  });
  attached_.erase(it);
}

void Replicas::Resync(const std::string& name) {
  auto it = replicas_.find(name);
  if (it == replicas_.end() || it->second.resync_posted) return;
  it->second.resync_posted = true;
  asio::post(loop_.executor(), [this, name, generation = it->second.generation] {
    auto again = replicas_.find(name);
    if (again == replicas_.end() || again->second.generation != generation) return;
    Replica& replica = again->second;
    replica.resync_posted = false;
    if (!replica.topic || replica.topic->ended()) return;
    // The home end answers after applying all this end sent before.
    // One at a time: a second state would arrive unasked.
    if (replica.resyncing) {
      replica.resync_again = true;
      return;
    }
    replica.resyncing = true;
    replica.unapplied.clear();
    node_.meters.replica_resyncs.Add(1);
    replica.topic->Resync();
  });
}

void Replicas::Guard(const std::string& name, const sync::Change& change) {
  auto it = replicas_.find(name);
  if (it == replicas_.end()) return;
  Replica& replica = it->second;
  if (replica.topic && replica.topic->Carried(change)) {  // From home.
    for (const codec::Delta& delta : change.commit.deltas) {
      if (replica.unapplied.count(SlotKey(delta))) return Resync(name);
    }
    return;
  }
  // A client's commit, on its way home.
  for (const codec::Delta& delta : change.commit.deltas) {
    replica.unapplied[SlotKey(delta)] = replica.epoch;
  }
  if (!replica.barrier_posted) Barrier(name);
}

void Replicas::Barrier(const std::string& name) {
  Replica& replica = replicas_.at(name);
  replica.barrier_posted = true;
  const uint64_t tag = replica.epoch++;
  // Runs once home has stored, so applied, every commit sent before it.
  forward_.Post([this, name, generation = replica.generation, tag] {
    auto it = replicas_.find(name);
    if (it == replicas_.end() || it->second.generation != generation) return;
    Replica& r = it->second;
    r.barrier_posted = false;
    std::erase_if(r.unapplied, [tag](const auto& slot) { return slot.second <= tag; });
    if (!r.unapplied.empty()) Barrier(name);
  });
}

}  // namespace aweft::node
