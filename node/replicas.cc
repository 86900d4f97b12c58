#include "node/replicas.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <utility>

#include "node/log.h"

namespace aweft::node {

namespace asio = boost::asio;
using codec::Reason;
using codec::Refusal;

Replicas::Replicas(Loop& loop, LoopContext& node, sync::Scheduler& scheduler,
                   sync::Scheduler& home_scheduler, DurableScheduler& durable)
    : loop_(loop),
      node_(node),
      scheduler_(scheduler),
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
  asio::post(node_.home, [this, name] { Detach(name, false); });
}

void Replicas::Abandon(const std::string& name) {
  asio::post(node_.home, [this, name] { Detach(name, true); });
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
    // What the home document sends its replica is stored first; home
    // orders, and the replica follows.
    attachment.link =
        std::make_unique<sync::Link>(*attachment.end, durable_, sync::LinkOptions{.orders = true});
    sync::ShareHandlers handlers;
    // The shard's links checked each commit against the connection's rights
    // and the limits; only a failing disk stops one here.
    handlers.accept = [this](const codec::Commit&) -> std::vector<codec::WireReason> {
      if (auto why = node_.hub.Unavailable()) {
        return {{codec::Spelled(Reason::kUnavailable), *why, std::nullopt}};
      }
      return {};
    };
    // Refusals between a replica and home are not counted: home checks the
    // replica and corrects it (aweft_divergence_healed_total{by="replica"}).
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
  handlers.ready = [tell](sync::Document& document) { tell(&document); };
  // Home refused what a client here sent (its disk failed): so does this
  // node, to that client. Home's correction undoes it.
  handlers.refused = [this, name](const sync::Refused& refused) {
    if (refused.mine && refused.commit) loop_.RefuseLate(name, *refused.commit, refused.reasons);
  };
  handlers.fault = [this, tell, name](const std::string& reason, const std::string& message) {
    spdlog::warn("event=replica-end doc={} reason={} detail={}", Quoted{name}, Quoted{reason},
                 Quoted{message});
    tell(nullptr);
    // Those it serves would drift from home unseen: they hear `left`, and
    // may open the document again (a new replica).
    loop_.StopTopics(name);
  };
  // No document: the home end's state makes it, with the same ids.
  auto topic = replica.link->Share(name, nullptr, std::move(handlers));
  replica.topic = topic ? *topic : nullptr;
}

void Replicas::Detach(const std::string& name, bool abandon) {
  auto it = attached_.find(name);
  if (it == attached_.end()) return;
  abandon ? node_.hub.Abandon(name) : node_.hub.Release(name);
  if (--it->second.shares > 0) return;
  retired_ += it->second.link->stats();
  // The replica goes first (posted ahead of the end its channel hears when
  // the home end goes), so that it does not report an end nobody minds.
  asio::post(loop_.executor(), [this, name, generation = it->second.generation] {
    auto replica = replicas_.find(name);
    if (replica == replicas_.end() || replica->second.generation != generation) return;
    replicas_.erase(replica);
  });
  attached_.erase(it);
}

sync::Link::Stats Replicas::link_stats() const {
  sync::Link::Stats total = retired_;
  for (const auto& [name, attachment] : attached_) total += attachment.link->stats();
  return total;
}

}  // namespace aweft::node
