#include "node/hub.h"

#include <spdlog/spdlog.h>

#include <boost/asio/dispatch.hpp>

#include "codec/id.h"
#include "node/access.h"
#include "node/log.h"

namespace aweft::node {

namespace asio = boost::asio;
using codec::Reason;
using codec::Refusal;

Hub::Hub(const Config& config, asio::io_context& io, storage::Store& store,
         DurableScheduler& durable, Upstreams& upstreams)
    : config_(config),
      store_(store),
      durable_(durable),
      upstreams_(upstreams),
      stored_documents_(store.List().size()),
      eviction_(io),
      stall_watch_(io),
      waiting_watch_(io) {
  ScheduleEviction();
}

Hub::~Hub() {
  for (auto& [name, loaded] : loaded_) loaded.document->Unwatch(loaded.watch);
}

void Hub::Open(const codec::OpenFrame& open, bool may_write, Opened done) {
  const std::string& name = open.name;
  // One that wants state is served from above, if anything.
  const bool may_create = open.root && !open.want && may_write && AnyMatches(config_.create, name);
  auto load = [this, done](const std::string& name, const std::optional<codec::RootRef>& root,
                           bool created, bool placeholder) {
    auto document = Load(name, root, placeholder);
    if (!document) return done(document, created);
    Loaded& loaded = loaded_[name];
    const Upstreams::Link* above = upstreams_.For(name);
    // A copy the upstream has not yet brought up to its state may be an
    // empty one made to hold its place: wait for that state, unless the
    // upstream is out of reach (then this node's copy is the best there is,
    // unless it is such a placeholder) or the opener brought the state.
    const bool out_of_reach = !above || !above->client->connected();
    if (created || loaded.from_above || (out_of_reach && !loaded.placeholder)) {
      ++loaded.shares;
      return done(document, created);
    }
    loaded.waiting.push_back({done, std::chrono::steady_clock::now() + std::chrono::seconds(5)});
    WatchWaiting();
  };
  if (auto it = loaded_.find(name); it != loaded_.end() && it->second.abandoned) {
    if (!DropAbandoned(name)) it->second.abandoned = false;  // Someone else's now.
  }
  const bool existed = loaded_.count(name) || store_.Info(name).has_value();
  if (!existed && !may_create) {
    if (Upstreams::Link* upstream = upstreams_.For(name)) {
      // Neither this node nor the client holds it: perhaps a node above does.
      return upstream->client->Probe(name, [this, name, done, load](auto held) {
        if (stopped_) return;
        if (!held) {
          return done(Refusal{Reason::kNoDocument, "no node on the way up holds \"" + name + "\""},
                      false);
        }
        load(name, codec::RootRef{std::string(held->first.view()), held->second}, false, true);
      });
    }
  }
  load(name, may_create ? open.root : std::nullopt, !existed, false);
}

codec::Result<sync::Document*> Hub::Load(const std::string& name,
                                         const std::optional<codec::RootRef>& create_root,
                                         bool placeholder) {
  if (auto it = loaded_.find(name); it != loaded_.end()) return it->second.document;
  const bool stored = store_.Info(name).has_value();
  if (!stored && !create_root) {
    return Refusal{Reason::kNoDocument, "this node holds no \"" + name + "\""};
  }
  std::optional<codec::Id> root;
  codec::Kind kind = codec::Kind::kObject;
  if (!stored) {
    if (auto why = Unavailable()) return Refusal{Reason::kUnavailable, *why};
    if (stored_documents_ >= config_.limits.max_documents) {
      return Refusal{Reason::kLimit, "this node holds " + std::to_string(stored_documents_) +
                                         " documents already (limits.max_documents)"};
    }
    auto id = codec::IdFromBytes(create_root->id);
    if (!id) return id.error();
    root = *id;
    kind = create_root->kind;
  }
  auto document = store_.OpenDocument(name, kind, root);
  if (!document) return document.error();
  if (!stored) ++stored_documents_;
  Loaded& loaded = loaded_[name];
  loaded.document = *document;
  loaded.active = std::chrono::steady_clock::now();
  loaded.watch = (*document)->Watch([this, &loaded](const sync::Change&) {
    loaded.active = std::chrono::steady_clock::now();
    // A commit nobody forwards is stored all the same, in the next batch.
    durable_.Kick();
  });
  spdlog::info("event=load doc={} created={}", Quoted{name}, !stored);
  loaded.from_above = upstreams_.For(name) == nullptr;
  loaded.placeholder = placeholder && !stored && !loaded.from_above;
  upstreams_.Share(
      name, **document, [this, name] { FromAbove(name); }, loaded.placeholder);
  return *document;
}

void Hub::FromAbove(const std::string& name) {
  auto it = loaded_.find(name);
  if (it == loaded_.end() || stopped_) return;
  if (it->second.placeholder && !upstreams_.For(name)) {
    // This node orders it now (its home failed over here) and never had
    // its state: the empty copy must not become the document. It goes,
    // unless something reached it; the peers that hold the document share
    // it with this node, which takes their state.
    ExpireWaiting(it->second, name, true);
    it->second.abandoned = true;
    if (DropAbandoned(name)) return;
    it->second.abandoned = false;
  }
  it->second.placeholder = false;
  it->second.from_above = true;
  std::vector<Loaded::Waiting> waiting = std::move(it->second.waiting);
  it->second.waiting.clear();
  for (Loaded::Waiting& wait : waiting) {
    ++it->second.shares;
    wait.done(it->second.document, false);
  }
}

void Hub::ExpireWaiting(Loaded& loaded, const std::string& name, bool all) {
  const auto now = std::chrono::steady_clock::now();
  std::vector<Loaded::Waiting> expired;
  std::erase_if(loaded.waiting, [&](Loaded::Waiting& wait) {
    if (!all && wait.until > now) return false;
    expired.push_back(std::move(wait));
    return true;
  });
  const Upstreams::Link* above = upstreams_.For(name);
  for (Loaded::Waiting& wait : expired) {
    wait.done(Refusal{Reason::kUnavailable,
                      "the node above that orders \"" + name + "\" (" +
                          (above ? above->config.url : std::string("gone")) +
                          ") has not sent its state within 5 s, and this node serves no copy it "
                          "may not have whole"},
              false);
  }
}

void Hub::WatchWaiting() {
  if (waiting_watched_) return;
  waiting_watched_ = true;
  waiting_watch_.expires_after(std::chrono::milliseconds(250));
  waiting_watch_.async_wait([this](boost::system::error_code ec) {
    waiting_watched_ = false;
    if (ec || stopped_) return;
    bool any = false;
    for (auto& [name, loaded] : loaded_) {
      ExpireWaiting(loaded, name, false);
      any = any || !loaded.waiting.empty();
    }
    if (any) WatchWaiting();
  });
}

void Hub::Release(const std::string& name) {
  auto it = loaded_.find(name);
  if (it == loaded_.end()) return;
  --it->second.shares;
  it->second.active = std::chrono::steady_clock::now();
}

void Hub::Abandon(const std::string& name) {
  Release(name);
  if (auto it = loaded_.find(name); it != loaded_.end()) it->second.abandoned = true;
}

bool Hub::DropAbandoned(const std::string& name) {
  auto it = loaded_.find(name);
  if (it == loaded_.end() || it->second.shares > 0 || !it->second.waiting.empty() ||
      store_.Head(name) != 0 || Unavailable()) {
    return false;
  }
  Unload(name);
  if (auto removed = store_.Remove(name); !removed) {
    spdlog::warn("event=abandon doc={} detail={}", Quoted{name},
                 Quoted{removed.error().ToString()});
    return false;
  }
  Removed();
  spdlog::info("event=abandon doc={}", Quoted{name});
  return true;
}

const Hub::Loaded* Hub::Find(std::string_view name) const {
  auto it = loaded_.find(name);
  return it == loaded_.end() ? nullptr : &it->second;
}

void Hub::Unload(std::string_view name) {
  auto it = loaded_.find(name);
  if (it == loaded_.end()) return;
  // Nothing may hold the document once the store frees it.
  ExpireWaiting(it->second, it->first, true);
  it->second.document->Unwatch(it->second.watch);
  upstreams_.Forget(it->first);
  loaded_.erase(it);
}

void Hub::ScheduleEviction() {
  const auto period = std::max(std::chrono::seconds(1), config_.idle_evict / 4);
  eviction_.expires_after(period);
  eviction_.async_wait([this](boost::system::error_code ec) {
    if (ec || stopped_) return;
    // Closing a document writes it: not while the disk fails writes.
    if (Unavailable()) return ScheduleEviction();
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::string> idle;
    std::vector<std::string> abandoned;
    for (const auto& [name, loaded] : loaded_) {
      if (loaded.abandoned && loaded.shares <= 0) abandoned.push_back(name);
      if (loaded.shares <= 0 && now - loaded.active >= config_.idle_evict &&
          !upstreams_.Keeps(name)) {
        idle.push_back(name);
      }
    }
    for (const std::string& name : abandoned) {
      if (DropAbandoned(name)) std::erase(idle, name);
    }
    for (const std::string& name : idle) {
      Unload(name);
      store_.CloseDocument(name);
      spdlog::info("event=evict doc={}", Quoted{name});
    }
    ScheduleEviction();
  });
}

std::optional<std::string> Hub::Unavailable() {
  std::optional<std::string> stalled = store_.Stalled();
  const bool was = stalled_.exchange(stalled.has_value());
  if (stalled && !was) {
    spdlog::error("event=storage state=stalled detail={}", Quoted{*stalled});
  } else if (!stalled && was) {
    spdlog::warn("event=storage state=recovered");
  }
  if (!stalled) return std::nullopt;
  return "the node cannot store writes now (" + *stalled +
         "); it retries every second and takes writes again once the disk does";
}

void Hub::AwaitDurable(sync::Reply reply, asio::any_io_executor where,
                       std::shared_ptr<std::atomic<bool>> done) {
  durable_waiting_.push_back({std::move(reply), std::move(where), std::move(done)});
  WatchStall();
}

void Hub::WatchStall() {
  if (stall_watched_) return;
  stall_watched_ = true;
  stall_watch_.expires_after(std::chrono::milliseconds(100));
  stall_watch_.async_wait([this](boost::system::error_code ec) {
    stall_watched_ = false;
    if (ec) return;
    std::erase_if(durable_waiting_, [](const DurableAsk& ask) { return ask.done->load(); });
    if (auto why = Unavailable()) {
      for (const DurableAsk& ask : durable_waiting_) {
        asio::dispatch(ask.where, [ask, why] {
          if (ask.done->exchange(true)) return;  // Answered meanwhile.
          ask.reply.SendError({codec::Spelled(Reason::kUnavailable), *why, {}});
        });
      }
      durable_waiting_.clear();
    }
    if (!durable_waiting_.empty() && !stopped_) WatchStall();
  });
}

void Hub::Stop() {
  stopped_ = true;
  eviction_.cancel();
  stall_watch_.cancel();
  waiting_watch_.cancel();
}

}  // namespace aweft::node
