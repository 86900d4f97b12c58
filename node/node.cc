#include "node/node.h"

#include <fstream>
#include <filesystem>
#include <future>

#include <boost/asio/post.hpp>
#include <boost/system/system_error.hpp>
#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include "codec/commit.h"
#include "codec/id.h"
#include "node/access.h"
#include "node/hub.h"
#include "node/messages.h"
#include "node/upstreams.h"
#include "storage/format.h"
#include "sync/random.h"
#include "sync/requests.h"
#include "sync/tls.h"

namespace aweft::node {

namespace asio = boost::asio;
using codec::Reason;
using codec::Refusal;

namespace {

std::string NodeId(const std::string& data, const std::string& configured) {
  if (!configured.empty()) return configured;
  const std::string path = data + "/node-id";
  std::ifstream in(path);
  std::string id;
  if (in >> id && !id.empty()) return id;
  id = codec::IdText(sync::MintId());
  std::ofstream out(path);
  out << id << "\n";
  if (!out) throw storage::Failure("cannot write " + path);
  return id;
}

}  // namespace

Node::Node(Config config, asio::io_context& io)
    : config_(std::move(config)),
      io_(io),
      channel_scheduler_(io.get_executor()) {
  auto [host, port] = HostPort(config_.listen, "listen");
  if (config_.tokens.empty() && !Loopback(host)) {
    throw ConfigError("config: 'listen' is " + config_.listen +
                      ", not loopback, and no [[tokens]] are configured. Configure "
                      "tokens, or listen on 127.0.0.1.");
  }
  std::filesystem::create_directories(config_.data);
  config_.node_id = NodeId(config_.data, config_.node_id);
  config_.storage.sync_every_commit = false;  // One sync per turn, before forwarding.
  // A full or read-only disk: wait for it, refusing new writes meanwhile,
  // rather than stop. RocksDB's LOG would be on that disk: its warnings go
  // to the node's log instead.
  config_.storage.retry_failed_writes = true;
  config_.storage.rocksdb_log = [](const std::string& line) {
    spdlog::warn("event=rocksdb detail=\"{}\"", line);
  };
  auto store = storage::Store::Open(config_.data + "/store", config_.storage);
  if (!store) throw storage::Failure(store.error().ToString());
  store_ = std::make_unique<storage::Store>(std::move(*store));
  link_scheduler_ = std::make_unique<DurableScheduler>(
      io.get_executor(), *store_, [this](uint64_t commits, std::chrono::duration<double> took) {
        meters_.sync_seconds.Observe(took.count());
        meters_.sync_commits.Observe(static_cast<double>(commits));
      });
  sync::WebSocketChannel::Options options;
  options.max_message = config_.max_frame_bytes;
  options.max_queued_bytes = config_.limits.send_queue_bytes;
  options.idle_timeout = config_.limits.idle_timeout;
  options.max_text = config_.limits.max_text_bytes;
  // A certificate or key that cannot be used is a bad setting (exit 2).
  auto tls = [](auto make) {
    try {
      return make();
    } catch (const sync::TlsError& e) {
      throw ConfigError(std::string("config: ") + e.what());
    }
  };
  for (size_t i = 1; i < config_.threads; ++i) {
    shards_.push_back(std::make_unique<Shard>(i - 1, io_, *link_scheduler_));
  }
  if (!shards_.empty()) {
    // Called on the listener's (the home) thread.
    options.place = [this]() -> std::pair<asio::any_io_executor, sync::Scheduler*> {
      const size_t slot = next_place_++ % (shards_.size() + 1);
      if (slot == 0) return {io_.get_executor(), &channel_scheduler_};
      Shard& shard = *shards_[slot - 1];
      return {shard.io.get_executor(), &shard.scheduler};
    };
  }
  if (config_.tls.serving()) {
    server_tls_ = tls([&] { return sync::ServerTls(config_.tls.cert_file, config_.tls.key_file); });
    options.tls = server_tls_;
  }
  std::shared_ptr<boost::asio::ssl::context> upstream_tls;
  if (!config_.tls.ca_file.empty()) {
    upstream_tls = tls([&] { return sync::ClientTls(config_.tls.ca_file); });
  }
  upstreams_ = std::make_unique<Upstreams>(config_, io_, *store_, *link_scheduler_, upstream_tls,
                                           meters_);
  hub_ = std::make_unique<Hub>(config_, io_, *store_, *link_scheduler_, *upstreams_);
  listener_ = std::make_unique<sync::WebSocketListener>(
      io.get_executor(), channel_scheduler_, host, port,
      [this](std::unique_ptr<sync::WebSocketChannel> channel) { Accept(std::move(channel)); },
      options);
  StartAdmin();
  spdlog::info("event=start node={} listen={}:{} admin={} data={} documents={} threads={}",
               config_.node_id, host, listener_->port(), admin_port(), config_.data,
               store_->List().size(), config_.threads);
}

std::string Node::url() const {
  return std::string(config_.tls.serving() ? "wss://" : "ws://") +
         HostPort(config_.listen, "listen").first + ":" + std::to_string(port()) + "/";
}

void Node::StartAdmin() {
  if (config_.admin == "off") return;
  auto [host, port] = HostPort(config_.admin, "admin");
  if (config_.admin_token.empty() && !Loopback(host)) {
    throw ConfigError("config: 'admin' is " + config_.admin +
                      ", not loopback, and no admin_token is configured. Configure "
                      "admin_token, or serve admin on 127.0.0.1.");
  }
  admin_source_ = std::make_unique<NodeAdmin>(*this);
  router_ = std::make_unique<admin::Router>(*admin_source_, metrics_, config_.admin_token);
  try {
    admin_server_ = std::make_unique<admin::HttpServer>(
        io_.get_executor(), host, port,
        [this](const admin::Request& request) { return router_->Handle(request); },
        admin::HttpServer::Options{config_.limits.max_http_body_bytes, server_tls_});
  } catch (const boost::system::system_error& e) {
    throw ConfigError("config: 'admin' is " + config_.admin + ", which cannot be served: " +
                      e.code().message() +
                      ". Choose another address or port, or set admin = \"off\".");
  }
}

thread_local Node::Shard* Node::current_shard_ = nullptr;

Node::Shard::Shard(size_t index, asio::io_context& home, DurableScheduler& durable)
    : index(index), forward(io.get_executor(), home.get_executor(), durable) {
  thread = std::thread([this] {
    pthread_setname_np(pthread_self(), ("aweft-shard-" + std::to_string(this->index)).c_str());
    current_shard_ = this;
    io.run();
  });
}

Node::Shard::~Shard() {
  work.reset();
  io.stop();
  thread.join();
  // Single-threaded from here. The links first: they share the replicas'
  // documents.
  for (auto& [id, connection] : connections) connection->link.reset();
  connections.clear();
  replicas.clear();
}

Node::~Node() {
  listener_->Stop();
  shards_.clear();
  attached_.clear();
  for (auto& [id, connection] : connections_) connection->link.reset();
}

template <class Fn>
void Node::OnHome(Shard* shard, Fn fn) {
  if (!shard) return fn();
  asio::post(io_, std::move(fn));
}

std::map<uint64_t, std::unique_ptr<Node::Connection>>& Node::ConnectionsOf(Shard* shard) {
  return shard ? shard->connections : connections_;
}

asio::any_io_executor Node::ExecutorOf(Shard* shard) {
  return shard ? shard->io.get_executor() : io_.get_executor();
}

template <class Fn>
void Node::OnConnection(Shard* shard, uint64_t id, Fn fn) {
  auto run = [this, shard, id, fn = std::move(fn)]() mutable {
    auto& connections = ConnectionsOf(shard);
    if (auto it = connections.find(id); it != connections.end()) fn(*it->second);
  };
  if (!shard) return run();
  asio::post(shard->io, std::move(run));
}

sync::Scheduler& Node::LinkScheduler(const Connection& c) {
  return c.shard ? static_cast<sync::Scheduler&>(c.shard->forward) : *link_scheduler_;
}

void Node::ForEachConnection(const std::function<void(const Connection&)>& fn) {
  for (const auto& [id, c] : connections_) fn(*c);
  for (auto& shard : shards_) {
    std::promise<void> done;
    asio::post(shard->io, [&] {
      for (const auto& [id, c] : shard->connections) fn(*c);
      done.set_value();
    });
    done.get_future().wait();
  }
}

void Node::Accept(std::unique_ptr<sync::WebSocketChannel> channel) {
  if (stopping_) return;
  auto connection = std::make_unique<Connection>();
  Connection& c = *connection;
  c.id = next_connection_++;
  c.shard = current_shard_;
  c.remote = channel->handshake().remote;
  c.channel = std::move(channel);
  c.channel->Closed([this, shard = c.shard, id = c.id] {
    // Dropped on a later turn: the channel's other listeners run first.
    asio::post(ExecutorOf(shard), [this, shard, id] {
      auto& connections = ConnectionsOf(shard);
      if (auto it = connections.find(id); it != connections.end()) Drop(*it->second);
    });
  });
  ConnectionsOf(c.shard).emplace(c.id, std::move(connection));
  if (auto arrived = access_.Arrive(c.remote); !arrived) return Refuse(c, arrived.error());
  auto token = access_.Authenticate(c.channel->handshake());
  if (!token) return Refuse(c, token.error());
  c.token = *token;
  c.link = std::make_unique<sync::Link>(*c.channel, LinkScheduler(c));
  c.link->OnOpen([this, &c](const codec::OpenFrame& open) { OnOpen(c, open); });
  if (auto requests = sync::Requests::Open(*c.channel, ExecutorOf(c.shard))) {
    c.requests.emplace(std::move(*requests));
    (void)c.requests->Answer(
        [this, &c](const std::string& name, const boost::json::value& args, sync::Reply reply) {
          Answer(c, name, args, std::move(reply));
        });
  }
  meters_.connections.Add(1);
  spdlog::info("event=connect peer={} connection={}", c.remote, c.id);
}

void Node::Refuse(Connection& c, const Refusal& why) {
  const std::string reason = codec::Spelled(why.reason);
  spdlog::warn("event=refused peer={} reason={} detail=\"{}\"", c.remote, reason, why.message);
  meters_.faults.Add(1, {reason, "local"});
  c.channel->Send(codec::FaultFrame{0, reason, why.message});
  c.channel->Close();
}

void Node::Answer(Connection& c, const std::string& request, const boost::json::value& args,
                  sync::Reply reply) {
  namespace json = boost::json;
  std::erase_if(c.answering, [](const sync::Reply& r) { return r.answered(); });
  if (c.answering.size() >= config_.limits.max_requests_in_flight) {
    return reply.SendError({codec::Spelled(codec::Reason::kLimit),
                            std::to_string(c.answering.size()) +
                                " requests are unanswered on this link; wait for their answers "
                                "(limits.max_requests_in_flight)",
                            {}});
  }
  c.answering.push_back(reply);
  if (request == "durable") {
    // The disk fails writes: say so now rather than answer once it is back.
    if (auto why = hub_->Unavailable()) return reply.SendError({codec::Spelled(codec::Reason::kUnavailable), *why, {}});
    // Runs after every frame this connection sent before the request, with
    // the store synced first: all they carried is stored. If the disk fails
    // that batch meanwhile, WatchStall answers first.
    auto done = std::make_shared<std::atomic<bool>>(false);
    LinkScheduler(c).Post([reply, done] {
      reply.SendResult(DurableAnswerJson());
      done->store(true);
    });
    return OnHome(c.shard, [this, reply, where = ExecutorOf(c.shard), done] {
      hub_->AwaitDurable(reply, where, done);
    });
  }
  // The rest is answered from the home thread's state, on this thread.
  auto answer = [this, shard = c.shard, id = c.id, reply](auto compute) {
    OnHome(shard, [this, shard, id, reply, compute = std::move(compute)] {
      compute([this, shard, id, reply](json::value result, std::optional<sync::RequestError> error) {
        OnConnection(shard, id, [reply, result = std::move(result), error](Connection&) {
          if (error) return reply.SendError(*error);
          reply.SendResult(result);
        });
      });
    });
  };
  if (request == "has") {
    auto ask = ParseHasAsk(args);
    if (!ask) {
      return reply.SendError({codec::Spelled(ask.error().reason), ask.error().message, {}});
    }
    if (!Access::CanRead(c.token, ask->name)) {
      return reply.SendError({codec::Spelled(codec::Reason::kForbidden),
                              "this token has no right to \"" + ask->name + "\"", {}});
    }
    return answer([this, name = std::move(ask->name)](auto tell) {
      auto held = [](const codec::Id& root, codec::Kind kind) {
        return HasAnswerJson(Held{root, kind});
      };
      if (const Hub::Loaded* loaded = hub_->Find(name)) {
        return tell(held(loaded->document->root().id(), loaded->document->root().kind()),
                    std::nullopt);
      }
      if (auto info = store_->Info(name); info && info->damage.empty()) {
        return tell(held(info->root, info->kind), std::nullopt);
      }
      // Not here: perhaps a node above holds it.
      if (Upstreams::Link* upstream = upstreams_->For(name)) {
        return upstream->client->Probe(name, [tell, held](auto found) {
          if (!found) return tell(HasAnswerJson(std::nullopt), std::nullopt);
          tell(held(found->first, found->second), std::nullopt);
        });
      }
      tell(HasAnswerJson(std::nullopt), std::nullopt);
    });
  }
  if (request == "hello") {
    c.peer = true;  // Only nodes say hello.
    return answer([this, id = ParseHelloAsk(args).id, remote = c.remote](auto tell) {
      std::vector<std::string> path = upstreams_->Path();
      if (id && std::find(path.begin(), path.end(), *id) != path.end()) {
        spdlog::error("event=cycle node={} peer={} detail=\"{} is already upstream of {}: {}\"",
                      config_.node_id, remote, *id, config_.node_id, JoinedPath(path));
        return tell(nullptr, sync::RequestError{codec::Spelled(codec::Reason::kCycle),
                                                "node " + *id + " is already upstream of " +
                                                    config_.node_id + " (" + JoinedPath(path) +
                                                    "); linking them makes a cycle",
                                                {}});
      }
      tell(ToJson(HelloAnswer{std::move(path)}), std::nullopt);
    });
  }
  reply.SendError({codec::Spelled(codec::Reason::kMissing), "nothing here answers " + request, {}});
}

void Node::OnOpen(Connection& c, const codec::OpenFrame& open) {
  const std::string& name = open.name;
  // Before the name reaches a log line or a key.
  if (auto checked = storage::format::CheckName(name); !checked) {
    spdlog::info("event=decline peer={} reason=invalid-name", c.remote);
    return Decline(c, open, codec::Spelled(codec::Reason::kInvalidName), checked.error().message);
  }
  if (c.shared.size() >= config_.limits.max_topics_per_link) {
    return Decline(c, open, codec::Spelled(codec::Reason::kLimit),
                   std::to_string(c.shared.size()) +
                       " documents are shared on this link already (limits.max_topics_per_link)");
  }
  const bool can_read = Access::CanRead(c.token, name);
  const bool can_write = Access::CanWrite(c.token, name);
  if (!can_read) {
    spdlog::warn("event=refused doc=\"{}\" peer={} reason=forbidden", name, c.remote);
    return Decline(c, open, codec::Spelled(codec::Reason::kForbidden), "this token has no right to \"" + name + "\"");
  }
  // A client that holds the document (and does not ask for ours) may create
  // it here; one that wants state is served from above, if anything.
  const bool may_create = open.root && !open.want && can_write && AnyMatches(config_.create, name);
  OnHome(c.shard, [this, shard = c.shard, id = c.id, open, may_create, remote = c.remote] {
    hub_->Open(open, may_create,
             [this, shard, id, open, remote](codec::Result<sync::Document*> document, bool created) {
      if (!document) {
        spdlog::info("event=decline doc=\"{}\" peer={} reason={}", open.name, remote,
                     codec::Name(document.error().reason));
        return OnConnection(shard, id, [this, open, refusal = document.error()](Connection& c) {
          Decline(c, open, std::string(codec::Name(refusal.reason)), refusal.message);
        });
      }
      if (shard) return Attach(*shard, id, open, **document, created);
      auto it = connections_.find(id);
      if (it == connections_.end() || stopping_) return hub_->Release(open.name);
      Serve(*it->second, open, **document, created);
    });
  });
}

void Node::Attach(Shard& shard, uint64_t connection, const codec::OpenFrame& open,
                  sync::Document& document, bool created) {
  Attachment& attachment = attached_[{shard.index, open.name}];
  ++attachment.shares;
  std::shared_ptr<sync::Channel> end;
  if (!attachment.link) {
    auto [home, there] = sync::CrossThreadPair(channel_scheduler_, shard.scheduler);
    attachment.generation = next_generation_++;
    attachment.end = std::move(home);
    // What the home document sends its replica is stored first.
    attachment.link = std::make_unique<sync::Link>(*attachment.end, *link_scheduler_);
    sync::ShareHandlers handlers;
    // The shard's links checked each commit against the connection's rights
    // and the limits; only a failing disk stops one here.
    handlers.accept = [this](const codec::Commit&) -> std::vector<codec::WireReason> {
      if (auto why = hub_->Unavailable()) return {{codec::Spelled(codec::Reason::kUnavailable), *why, std::nullopt}};
      return {};
    };
    // Refusals between a replica and home are not counted: the replica
    // yields (aweft_replica_resyncs_total counts that).
    (void)attachment.link->Share(open.name, &document, std::move(handlers));
    end = std::move(there);
  }
  asio::post(shard.io, [this, &shard, connection, open, generation = attachment.generation, end,
                        created] { ServeReplica(shard, connection, open, generation, end, created); });
}

void Node::ServeReplica(Shard& shard, uint64_t connection, const codec::OpenFrame& open,
                        uint64_t generation, std::shared_ptr<sync::Channel> end, bool created) {
  const std::string& name = open.name;
  if (end) {
    // A new attachment: a replica still here was detached.
    shard.replicas.erase(name);
    Replica& replica = shard.replicas[name];
    replica.generation = generation;
    replica.end = std::move(end);
    replica.link = std::make_unique<sync::Link>(*replica.end, shard.scheduler);
    auto tell = [&shard, name](sync::Document* document) {
      auto it = shard.replicas.find(name);
      if (it == shard.replicas.end()) return;
      auto waiting = std::move(it->second.waiting);
      it->second.waiting.clear();
      for (auto& fn : waiting) fn(document);
    };
    sync::ShareHandlers handlers;
    handlers.ready = [this, &shard, name, tell](sync::Document& document) {
      auto it = shard.replicas.find(name);
      if (it != shard.replicas.end() && !it->second.watching) {
        it->second.watching = true;
        document.Watch([this, &shard, name](const sync::Change& change) {
          GuardReplica(shard, name, change);
        });
      }
      tell(&document);
    };
    handlers.fault = [this, &shard, tell, name](const std::string& reason,
                                                const std::string& message) {
      spdlog::warn("event=replica-end doc=\"{}\" reason={} detail=\"{}\"", name, reason, message);
      tell(nullptr);
      // Those it serves would drift from home unseen: they hear `left`, and
      // may open the document again (a new replica).
      for (auto& [id, c] : shard.connections) {
        auto it = c->shared.find(name);
        if (it == c->shared.end()) continue;
        it->second->Stop();
        c->shared.erase(it);
        ReleaseShare(&shard, name);
      }
    };
    // Concurrent edits one end refused leave the two apart: the replica
    // yields to the home document.
    handlers.refused = [this, &shard, name](const sync::Refused&) { ResyncReplica(shard, name); };
    handlers.synced = [this, &shard, name](sync::Document&) {
      auto it = shard.replicas.find(name);
      if (it == shard.replicas.end()) return;
      it->second.resyncing = false;
      if (std::exchange(it->second.resync_again, false)) ResyncReplica(shard, name);
    };
    handlers.landing = [&shard, name](bool on) {
      if (auto it = shard.replicas.find(name); it != shard.replicas.end()) it->second.landing = on;
    };
    // No document: the home end's state makes it, with the same ids.
    auto topic = replica.link->Share(name, nullptr, std::move(handlers));
    replica.topic = topic ? *topic : nullptr;
  }
  auto serve = [this, &shard, connection, open, created](sync::Document* document) {
    auto it = shard.connections.find(connection);
    if (it == shard.connections.end() || stopping_ || !document) {
      if (it != shard.connections.end() && !stopping_) {
        Decline(*it->second, open, codec::Spelled(codec::Reason::kUnavailable),
                "the document's replica on this thread ended; open it again");
      }
      return ReleaseShare(&shard, open.name);
    }
    Serve(*it->second, open, *document, created);
  };
  auto it = shard.replicas.find(name);
  if (it == shard.replicas.end() || !it->second.topic || it->second.topic->ended()) {
    return serve(nullptr);
  }
  if (it->second.topic->ready()) return serve(it->second.topic->document());
  it->second.waiting.push_back(std::move(serve));
}

void Node::ResyncReplica(Shard& shard, const std::string& name) {
  auto it = shard.replicas.find(name);
  if (it == shard.replicas.end() || it->second.resync_posted) return;
  it->second.resync_posted = true;
  asio::post(shard.io, [this, &shard, name, generation = it->second.generation] {
    auto again = shard.replicas.find(name);
    if (again == shard.replicas.end() || again->second.generation != generation) return;
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
    meters_.replica_resyncs.Add(1);
    replica.topic->Resync();
  });
}

namespace {

std::string SlotKey(const codec::Delta& delta) {
  std::string key(delta.id.view());
  key += static_cast<char>(delta.ref.kind);
  key += delta.ref.key;
  return key;
}

}  // namespace

void Node::GuardReplica(Shard& shard, const std::string& name, const sync::Change& change) {
  auto it = shard.replicas.find(name);
  if (it == shard.replicas.end()) return;
  Replica& replica = it->second;
  if (replica.landing) {  // From home: the first delivery while landing.
    replica.landing = false;
    for (const codec::Delta& delta : change.commit.deltas) {
      if (replica.unapplied.count(SlotKey(delta))) return ResyncReplica(shard, name);
    }
    return;
  }
  // A client's commit, on its way home.
  for (const codec::Delta& delta : change.commit.deltas) {
    replica.unapplied[SlotKey(delta)] = replica.epoch;
  }
  if (!replica.barrier_posted) ReplicaBarrier(shard, name);
}

void Node::ReplicaBarrier(Shard& shard, const std::string& name) {
  Replica& replica = shard.replicas.at(name);
  replica.barrier_posted = true;
  const uint64_t tag = replica.epoch++;
  // Runs once home has stored, so applied, every commit sent before it.
  shard.forward.Post([this, &shard, name, generation = replica.generation, tag] {
    auto it = shard.replicas.find(name);
    if (it == shard.replicas.end() || it->second.generation != generation) return;
    Replica& r = it->second;
    r.barrier_posted = false;
    std::erase_if(r.unapplied, [tag](const auto& slot) { return slot.second <= tag; });
    if (!r.unapplied.empty()) ReplicaBarrier(shard, name);
  });
}

void Node::ReleaseShare(Shard* shard, const std::string& name) {
  OnHome(shard, [this, index = shard ? std::optional<size_t>(shard->index) : std::nullopt, name] {
    if (index) return Detach(*index, name);
    hub_->Release(name);
  });
}

void Node::Detach(size_t index, const std::string& name) {
  auto it = attached_.find({index, name});
  if (it == attached_.end()) return;
  hub_->Release(name);
  if (--it->second.shares > 0) return;
  // The replica goes first (posted ahead of the end its channel hears when
  // the home end goes), so that it does not report an end nobody minds.
  Shard& shard = *shards_[index];
  asio::post(shard.io, [&shard, name, generation = it->second.generation] {
    auto replica = shard.replicas.find(name);
    if (replica == shard.replicas.end() || replica->second.generation != generation) return;
    shard.replicas.erase(replica);
  });
  attached_.erase(it);
}

std::vector<codec::WireReason> Node::Oversized(const codec::Commit& commit) const {
  const Limits& limits = config_.limits;
  if (commit.deltas.size() > limits.max_deltas_per_commit) {
    return {{codec::Spelled(codec::Reason::kLimit),
             "a commit of " + std::to_string(commit.deltas.size()) + " deltas is over " +
                 std::to_string(limits.max_deltas_per_commit) + " (limits.max_deltas_per_commit)",
             std::nullopt}};
  }
  std::string bytes;
  if (codec::EncodeCommit(commit, bytes) && bytes.size() > limits.max_commit_bytes) {
    return {{codec::Spelled(codec::Reason::kLimit),
             "a commit of " + std::to_string(bytes.size()) + " bytes is over " +
                 std::to_string(limits.max_commit_bytes) + " (limits.max_commit_bytes)",
             std::nullopt}};
  }
  return {};
}

void Node::Decline(Connection& c, const codec::OpenFrame& open, const std::string& reason,
                   const std::string& message) {
  meters_.faults.Add(1, {reason, "local"});
  c.link->Decline(open, reason, message);
}

void Node::CountRefused(const sync::Refused& refused) { node::CountRefused(meters_, refused); }

void Node::Serve(Connection& c, const codec::OpenFrame& open, sync::Document& document,
                 bool created) {
  const std::string& name = open.name;
  sync::ShareHandlers handlers;
  handlers.accept = [this, &c, name, writes = Access::CanWrite(c.token, name)](
                        const codec::Commit& commit) -> std::vector<codec::WireReason> {
    if (!writes) return {{codec::Spelled(codec::Reason::kForbidden), "this token may only read \"" + name + "\"", std::nullopt}};
    if (auto why = hub_->Unavailable()) return {{codec::Spelled(codec::Reason::kUnavailable), *why, std::nullopt}};
    // A node below confirmed this commit to its writer once it had checked
    // it against its own limits (or took it as a state, or made it in a
    // resync): refused here, it would be lost there. Its frame is still
    // bounded by documents.max_frame_bytes (docs/node.md "Clusters").
    if (c.peer) return {};
    return Oversized(commit);
  };
  handlers.refused = [this](const sync::Refused& refused) { CountRefused(refused); };
  if (c.shard) {
    // What a client sends a replica must be stored at home before the
    // shard's links send anything more (docs/node.md "Threads").
    handlers.landing = [shard = c.shard](bool starts) {
      if (starts) shard->forward.Dirty();
    };
  }
  handlers.fault = [this, &c, name](const std::string& reason, const std::string&) {
    meters_.faults.Add(1, {reason, "remote"});
    spdlog::info("event=end doc=\"{}\" peer={} reason={}", name, c.remote, reason);
    if (c.shared.erase(name)) ReleaseShare(c.shard, name);
  };
  // A document the client just made here: ask it for its state.
  auto shared = c.link->Share(name, &document, std::move(handlers), /*want=*/created);
  if (!shared) {
    ReleaseShare(c.shard, name);
    return Decline(c, open, std::string(codec::Name(shared.error().reason)),
                   shared.error().message);
  }
  c.shared.emplace(name, *shared);
  spdlog::info("event=share doc=\"{}\" peer={} created={}", name, c.remote, created);
}

void Node::Drop(Connection& c) {
  spdlog::info("event=disconnect peer={} connection={} reason=\"{}\"", c.remote, c.id,
               c.channel->end_reason());
  // Bytes that were not a frame: the channel ended the connection.
  if (c.channel->end_reason().rfind(codec::Spelled(codec::Reason::kBadFrame), 0) == 0) {
    meters_.faults.Add(1, {codec::Spelled(codec::Reason::kBadFrame), "local"});
  }
  OnHome(c.shard, [this, link = c.link ? std::optional(c.link->stats()) : std::nullopt,
                   traffic = c.channel->traffic()] {
    if (link) AddStats(meters_.retired_link, *link);
    AddTraffic(meters_.retired_traffic, traffic);
  });
  for (const auto& [name, topic] : c.shared) ReleaseShare(c.shard, name);
  c.shared.clear();
  access_.Leave(c.remote);
  ConnectionsOf(c.shard).erase(c.id);
}

void Node::Shutdown(std::function<void()> done) {
  if (stopping_) return;
  stopping_ = true;
  spdlog::info("event=shutdown connections={} documents={}", connections_.size(),
               hub_->loaded().size());
  hub_->Stop();
  listener_->Stop();
  if (admin_server_) admin_server_->Stop();
  // What waits for a failing disk now will not be stored: give it up, so
  // that stopping ends (the node then exits saying so).
  if (hub_->Unavailable()) store_->StopRetrying();
  upstreams_->Close();
  auto close = [](const std::map<uint64_t, std::unique_ptr<Connection>>& connections) {
    for (auto& [id, connection] : connections) {
      if (connection->link) connection->link->Close();
      else connection->channel->Close();
    }
  };
  close(connections_);
  for (auto& shard : shards_) {
    asio::post(shard->io, [close, &shard = *shard] { close(shard.connections); });
  }
  store_->Sync();
  // Give the sockets a moment to send what was queued and close cleanly.
  auto timer = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(300));
  timer->async_wait([this, timer, done = std::move(done)](boost::system::error_code) {
    store_->Sync();
    done();
  });
}

}  // namespace aweft::node
