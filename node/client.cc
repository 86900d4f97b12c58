#include "node/client.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/json.hpp>

#include "codec/id.h"
#include "node/messages.h"

namespace aweft {

namespace asio = boost::asio;
namespace json = boost::json;
using codec::Reason;
using codec::Refusal;

Client::Client(asio::any_io_executor executor, Options options)
    : executor_(executor),
      scheduler_(executor),
      options_(std::move(options)),
      links_(options_.link_scheduler ? *options_.link_scheduler : scheduler_),
      reconnect_(executor),
      confirm_(executor),
      backoff_(options_.backoff_min),
      jitter_(std::random_device{}()),
      self_(std::make_shared<Client*>(this)) {
  Connect();
}

Client::~Client() {
  *self_ = nullptr;
  Close();
  for (auto& [name, entry] : entries_) {
    if (entry.document && !entry.owned && !entry.lifetime.expired()) {
      entry.document->Unwatch(entry.watch);
    }
  }
}

void Client::Close() {
  if (closed_) return;
  closed_ = true;
  reconnect_.cancel();
  confirm_.cancel();
  requests_.reset();
  if (link_) link_->Close();
  Retire();
  link_.reset();
  channel_.reset();
}

void Client::Retire() {
  const Stats now = stats();
  retired_ = now;
  retired_.traffic.queued_bytes = 0;
}

Client::Stats Client::stats() const {
  Stats total = retired_;
  if (link_) total.link += link_->stats();
  if (channel_) {
    const sync::TextChannel::Traffic& t = channel_->traffic();
    total.traffic.bytes_in += t.bytes_in;
    total.traffic.bytes_out += t.bytes_out;
    total.traffic.queued_bytes = t.queued_bytes;
  }
  return total;
}

codec::Result<void> Client::Share(const std::string& name, sync::Document& document,
                                  sync::ShareHandlers handlers,
                                  std::deque<codec::Commit> unconfirmed, bool placeholder) {
  if (entries_.count(name)) {
    return Refusal{Reason::kAlreadyShared, "\"" + name + "\" is already shared by this client"};
  }
  Entry& entry = entries_[name];
  entry.document = &document;
  entry.placeholder = placeholder;
  entry.lifetime = document.lifetime();
  entry.handlers = std::move(handlers);
  for (codec::Commit& commit : unconfirmed) Hold(entry, std::move(commit));
  Watch(name, entry);
  if (!entry.unconfirmed.empty()) Confirm();
  if (requests_) Queue(name);
  return {};
}

void Client::Watch(const std::string& name, Entry& entry) {
  // Every commit the node has not sent us needs its confirmation: ours, and
  // any that reached the document some other way (another link).
  entry.watch = entry.document->Watch([this, name](const sync::Change& change) {
    auto it = entries_.find(name);
    if (it == entries_.end()) return;
    Entry& e = it->second;
    if (e.shared && e.shared->Carried(change)) return;  // From the node.
    if (e.replaying) return;
    Hold(e, change.commit);
    Confirm();
  });
}

void Client::Hold(Entry& entry, codec::Commit commit) {
  entry.unconfirmed.push_back({++entry.numbered, std::move(commit)});
}

void Client::OnRefused(Entry& entry, const sync::Refused& refused) {
  if (!refused.commit) {
    // Which one is unknown: resync, which clears this (Replay).
    entry.refused_unknown = true;
    if (entry.shared) entry.shared->Resync();
    return;
  }
  // Pending; or confirmed durable on the node, then refused by a node above
  // it, which orders the document (its correction undoes it here).
  ++entry.refused;
  auto it = std::ranges::find(entry.unconfirmed, *refused.commit, &Entry::Pending::commit);
  if (it != entry.unconfirmed.end()) entry.unconfirmed.erase(it);
}

void Client::Open(const std::string& name, std::function<void(sync::Document&)> ready,
                  std::function<void(const std::string&)> failed,
                  std::function<void(const sync::Refused&)> refused) {
  Entry& entry = entries_[name];
  entry.handlers.refused = std::move(refused);
  entry.handlers.ready = [ready = std::move(ready),
                          once = std::make_shared<bool>(false)](sync::Document& document) {
    if (!*once && ready) ready(document);
    *once = true;
  };
  entry.handlers.fault = [failed](const std::string& reason, const std::string&) {
    if (failed) failed(reason);
  };
  if (requests_) Queue(name);
}

void Client::Forget(const std::string& name) {
  auto it = entries_.find(name);
  if (it == entries_.end()) return;
  if (it->second.shared) it->second.shared->Stop();
  // Called on a copy: it clears the entry's own, which would free the
  // closure while it runs.
  if (auto attached = it->second.attached) attached();
  if (it->second.document && !it->second.owned && !it->second.lifetime.expired()) {
    it->second.document->Unwatch(it->second.watch);
  }
  entries_.erase(it);
}

void Client::Compare(const std::string& name, std::function<void(std::optional<bool> same)> done) {
  auto it = entries_.find(name);
  const bool live =
      it != entries_.end() && it->second.sending && it->second.shared && it->second.shared->live();
  std::weak_ptr<Client*> self = self_;
  // Asked through the link's scheduler, as durable is: it leaves after every
  // frame the link has queued, and the node answers after every frame it
  // sent before.
  links_.Post([self, name, live, done = std::move(done), numbered = live ? it->second.numbered : 0,
               connection = connections_]() mutable {
    auto alive = self.lock();
    if (!live || !alive || !*alive || (*alive)->connections_ != connection) return done({});
    (*alive)->Ask("digest", ToJson(node::HasAsk{name}), [=](sync::AskResult answer) {
      auto a = self.lock();
      if (!a || !*a || !answer) return done({});
      auto digest = node::ParseDigestAnswer(*answer);
      if (!digest) {
        (*a)->Break(digest.error());
        return done({});
      }
      auto e = (*a)->entries_.find(name);
      if (!*digest || e == (*a)->entries_.end() || !e->second.document ||
          e->second.numbered != numbered || (*a)->connections_ != connection) {
        return done({});
      }
      done(**digest == node::Digest(*e->second.document));
    });
  });
}

void Client::Resync(const std::string& name) {
  auto it = entries_.find(name);
  if (it == entries_.end() || !it->second.shared || !it->second.shared->live()) return;
  it->second.sending = false;  // Until the state is in: what it drops is confirmed by nothing.
  it->second.shared->Resync();
}

std::vector<std::string> Client::names() const {
  std::vector<std::string> out;
  for (const auto& [name, entry] : entries_) out.push_back(name);
  return out;
}

size_t Client::unconfirmed(const std::string& name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? 0 : it->second.unconfirmed.size();
}

size_t Client::refused(const std::string& name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? 0 : it->second.refused;
}

void Client::Connect() {
  if (closed_) return;
  sync::WebSocketChannel::Options options;
  options.bearer = options_.token;
  options.tls = options_.tls;
  channel_ = sync::WebSocketChannel::Dial(executor_, scheduler_, options_.url, options);
  link_ = std::make_unique<sync::Link>(*channel_, links_);
  if (options_.frames) link_->OnFrameSeen(options_.frames);
  auto requests = sync::Requests::Open(*channel_, executor_);
  if (requests) requests_.emplace(std::move(*requests));
  if (requests_ && options_.answers_durable) AnswerDurable();
  if (requests_ && options_.tags) node::AskTags(*requests_, *link_);
  std::weak_ptr<Client*> self = self_;
  channel_->Closed([self] {
    if (auto alive = self.lock(); alive && *alive) (*alive)->OnLost();
  });
  ++connections_;
  // First: a node's `hello` makes it a peer above before any of its frames.
  if (on_connected_) on_connected_();
  for (auto& [name, entry] : entries_) Queue(name);
}

void Client::OnConnected(std::function<void()> fn) {
  on_connected_ = std::move(fn);
  if (requests_ && on_connected_) on_connected_();
}

void Client::Ask(std::string name, json::value args, std::function<void(sync::AskResult)> done) {
  if (!requests_) {
    asio::post(executor_, [done = std::move(done)] {
      done(sync::RequestError{
          codec::Spelled(codec::Reason::kClosed), "not connected to the node", {}});
    });
    return;
  }
  // Any answer says the node is there and serving this connection.
  std::weak_ptr<Client*> self = self_;
  requests_->Ask(std::move(name), std::move(args),
                 [self, done = std::move(done)](sync::AskResult answer) {
                   if (auto alive = self.lock(); alive && *alive && answer) (*alive)->Answered();
                   done(std::move(answer));
                 });
}

void Client::Answered() {
  if (!live_ && options_.changed) options_.changed(true, {});
  live_ = true;
  if (!answered_since_) answered_since_ = std::chrono::steady_clock::now();
}

void Client::Probe(const std::string& name,
                   std::function<void(std::optional<std::pair<codec::Id, codec::Kind>>)> done) {
  std::weak_ptr<Client*> self = self_;
  Ask("has", ToJson(node::HasAsk{name}), [self, done = std::move(done)](sync::AskResult answer) {
    if (!answer) return done(std::nullopt);
    auto held = node::ParseHasAnswer(*answer);
    if (!held) {
      if (auto alive = self.lock(); alive && *alive) (*alive)->Break(held.error());
      return done(std::nullopt);
    }
    if (!*held) return done(std::nullopt);
    done(std::make_pair((*held)->root, (*held)->kind));
  });
}

void Client::Break(const codec::Refusal& why) {
  if (!channel_ || channel_->ended()) return;
  if (options_.broken) options_.broken(why);
  channel_->Close();
}

void Client::OnLost() {
  live_ = false;
  ++round_;
  waiting_.clear();
  attaching_ = 0;
  attaching_bytes_ = 0;
  for (auto& [name, entry] : entries_) {
    entry.shared = nullptr;
    entry.sending = false;
    entry.attached = nullptr;
  }
  std::string why = "the connection closed";
  if (channel_ && channel_->end_reason()) why = channel_->end_reason()->message;
  // Not from inside the channel's own callback: tear down on a later turn.
  std::weak_ptr<Client*> self = self_;
  asio::post(executor_, [self, why = std::move(why)] {
    auto alive = self.lock();
    if (!alive || !*alive) return;
    Client& client = **alive;
    client.requests_.reset();
    client.Retire();
    client.link_.reset();
    client.channel_.reset();
    client.asking_ = false;
    if (client.closed_) return;
    const auto since = std::exchange(client.answered_since_, std::nullopt);
    if (since && std::chrono::steady_clock::now() - *since >= client.options_.backoff_max) {
      client.backoff_ = client.options_.backoff_min;  // It had settled.
    }
    std::uniform_int_distribution<int64_t> draw(client.backoff_.count() / 2,
                                                client.backoff_.count());
    const std::chrono::milliseconds delay(draw(client.jitter_));
    if (client.options_.changed) {
      client.options_.changed(false,
                              why + "; dialing again in " + std::to_string(delay.count()) + " ms");
    }
    client.reconnect_.expires_after(delay);
    client.backoff_ = std::min(client.backoff_ * 2, client.options_.backoff_max);
    client.reconnect_.async_wait([self](boost::system::error_code ec) {
      if (auto again = self.lock(); !ec && again && *again) (*again)->Connect();
    });
  });
}

void Client::Queue(const std::string& name) {
  waiting_.push_back(name);
  AttachNext();
}

void Client::AttachNext() {
  while (!waiting_.empty() &&
         (attaching_ == 0 || attaching_bytes_ < options_.resync_window_bytes)) {
    const std::string name = std::move(waiting_.front());
    waiting_.pop_front();
    auto it = entries_.find(name);
    if (it == entries_.end() || it->second.attached) continue;
    // Opened, not yet here: its size is not known, and counts nothing.
    const uint64_t bytes = it->second.document ? it->second.document->bytes() : 0;
    ++attaching_;
    attaching_bytes_ += bytes;
    // Once, on this connection: the state is in, or the share ended.
    std::weak_ptr<Client*> self = self_;
    it->second.attached = [self, name, bytes, round = round_,
                           once = std::make_shared<bool>(false)] {
      auto alive = self.lock();
      if (std::exchange(*once, true) || !alive || !*alive || (*alive)->round_ != round) return;
      Client& client = **alive;
      auto e = client.entries_.find(name);
      if (e != client.entries_.end()) e->second.attached = nullptr;
      --client.attaching_;
      client.attaching_bytes_ -= bytes;
      // Not from inside the link's callback that settled it.
      asio::post(client.executor_, [self] {
        if (auto a = self.lock(); a && *a) (*a)->AttachNext();
      });
    };
    Attach(name, it->second.attached);
  }
}

void Client::Attach(const std::string& name, const std::function<void()>& attached) {
  std::weak_ptr<Client*> self = self_;
  // First ask whether the node holds the name: only then may a resync move
  // this end (a node that lost it would otherwise hand back an empty one).
  requests_->Ask("has", ToJson(node::HasAsk{name}), [self, name, attached](sync::AskResult answer) {
    auto alive = self.lock();
    if (!alive || !*alive) return;
    Client& client = **alive;
    auto it = client.entries_.find(name);
    if (it == client.entries_.end() || !client.link_) return attached();
    Entry& entry = it->second;
    if (!answer) {
      attached();
      if (answer.error().reason != codec::Spelled(codec::Reason::kClosed) && entry.handlers.fault) {
        entry.handlers.fault(answer.error().reason, answer.error().message);
      }
      return;
    }
    auto held = node::ParseHasAnswer(*answer);
    if (!held) {
      attached();
      return client.Break(held.error());
    }
    client.Answered();
    const bool holds = held->has_value();
    if (!holds && entry.placeholder) {  // Nothing to offer: ask again in a second.
      attached();
      return client.AskAgain(name);
    }
    if (!entry.document) {  // Open(): make the document from the node's root.
      if (!holds) {
        attached();
        if (entry.handlers.fault) {
          entry.handlers.fault(codec::Spelled(codec::Reason::kNoDocument),
                               "the node holds no \"" + name + "\"");
        }
        return;
      }
      entry.owned = std::make_unique<sync::Document>((*held)->root, (*held)->kind);
      entry.document = entry.owned.get();
      client.Watch(name, entry);
    }
    sync::ShareHandlers handlers = entry.handlers;
    auto user_synced = entry.handlers.synced;
    auto user_ready = entry.handlers.ready;
    handlers.ready = {};
    auto user_refused = entry.handlers.refused;
    handlers.refused = [self, name, user_refused](const sync::Refused& refused) {
      if (auto a = self.lock(); a && *a && refused.mine) {
        auto e = (*a)->entries_.find(name);
        if (e != (*a)->entries_.end()) (*a)->OnRefused(e->second, refused);
      }
      if (user_refused) user_refused(refused);
    };
    auto user_fault = entry.handlers.fault;
    handlers.fault = [attached, user_fault](const std::string& reason, const std::string& message) {
      attached();
      if (user_fault) user_fault(reason, message);
    };
    handlers.synced = [self, name, user_synced, user_ready, attached](sync::Document& document) {
      attached();
      auto a = self.lock();
      if (!a || !*a) return;
      auto e = (*a)->entries_.find(name);
      if (e != (*a)->entries_.end()) {
        e->second.sending = true;
        e->second.placeholder = false;
        (*a)->Replay(name, e->second);
      }
      if (user_ready) user_ready(document);
      if (user_synced) user_synced(document);
    };
    // Held there: ask for its state in the first open, and yield to it.
    auto shared = client.link_->Share(name, entry.document, std::move(handlers), holds);
    if (!shared) return attached();
    entry.shared = *shared;
    if (!holds) {
      attached();
      entry.sending = true;  // The node takes this end's state.
      if (user_ready) user_ready(*entry.document);
    }
  });
}

void Client::Replay(const std::string& /*name*/, Entry& entry) {
  // After the resync the document is the node's; re-apply what the node had
  // not confirmed. One that had landed is refused (slot-exists, slot-missing)
  // or changes nothing. What the node refused is not: it orders the document.
  entry.refused_unknown = false;
  entry.replaying = true;
  std::vector<codec::Commit> unconfirmed;  // Apply may deliver to our watch.
  for (const Entry::Pending& pending : entry.unconfirmed) unconfirmed.push_back(pending.commit);
  for (const codec::Commit& commit : unconfirmed) (void)entry.document->Apply(commit);
  entry.replaying = false;
}

}  // namespace aweft
