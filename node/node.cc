#include "node/node.h"

#include <fstream>
#include <filesystem>

#include <boost/asio/post.hpp>
#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include "codec/id.h"
#include "sync/random.h"
#include "sync/requests.h"

namespace aweft::node {

namespace asio = boost::asio;
using codec::Reason;
using codec::Refusal;

void DurableScheduler::Post(std::function<void()> work) {
  asio::post(executor_, [this, work = std::move(work)] {
    store_.Sync();
    work();
  });
}

struct Node::Connection {
  uint64_t id = 0;
  std::unique_ptr<sync::WebSocketChannel> channel;
  std::unique_ptr<sync::Link> link;
  std::optional<sync::Requests> requests;
  const Token* token = nullptr;  // Null when no tokens are configured.
  std::set<std::string> shared;  // Names this connection shares now.
  std::string remote;
};

namespace {

bool Loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

// Compares in time that depends only on the lengths, not on where they differ.
bool SameSecret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= a[i] ^ b[i % (b.empty() ? 1 : b.size())];
  return diff == 0 && !b.empty();
}

std::string BearerOf(const sync::WebSocketChannel::Handshake& handshake) {
  const std::string prefix = "Bearer ";
  if (handshake.authorization.rfind(prefix, 0) == 0) {
    return handshake.authorization.substr(prefix.size());
  }
  const size_t query = handshake.target.find('?');
  if (query == std::string::npos) return "";
  std::string_view params = std::string_view(handshake.target).substr(query + 1);
  while (!params.empty()) {
    const size_t amp = params.find('&');
    std::string_view param = params.substr(0, amp);
    if (param.rfind("token=", 0) == 0) return std::string(param.substr(6));
    if (amp == std::string_view::npos) break;
    params.remove_prefix(amp + 1);
  }
  return "";
}

bool AnyMatches(const std::vector<std::string>& patterns, std::string_view name) {
  for (const auto& pattern : patterns) {
    if (NameMatches(pattern, name)) return true;
  }
  return false;
}

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
      channel_scheduler_(io.get_executor()),
      eviction_(io) {
  auto [host, port] = HostPort(config_.listen, "listen");
  if (config_.tokens.empty() && !Loopback(host)) {
    throw ConfigError("config: 'listen' is " + config_.listen +
                      ", not loopback, and no [[tokens]] are configured. Configure "
                      "tokens, or listen on 127.0.0.1.");
  }
  std::filesystem::create_directories(config_.data);
  config_.node_id = NodeId(config_.data, config_.node_id);
  config_.storage.sync_every_commit = false;  // One sync per turn, before forwarding.
  auto store = storage::Store::Open(config_.data + "/store", config_.storage);
  if (!store) throw storage::Failure(store.error().ToString());
  store_ = std::make_unique<storage::Store>(std::move(*store));
  link_scheduler_ = std::make_unique<DurableScheduler>(io.get_executor(), *store_);
  sync::WebSocketChannel::Options options;
  options.max_message = config_.max_frame_bytes;
  listener_ = std::make_unique<sync::WebSocketListener>(
      io.get_executor(), channel_scheduler_, host, port,
      [this](std::unique_ptr<sync::WebSocketChannel> channel) { Accept(std::move(channel)); },
      options);
  spdlog::info("event=start node={} listen={}:{} data={} documents={}", config_.node_id, host,
               listener_->port(), config_.data, store_->List().size());
  ScheduleEviction();
}

Node::~Node() {
  for (auto& [id, connection] : connections_) connection->link.reset();
  for (auto& [name, loaded] : loaded_) loaded.document->Unwatch(loaded.watch);
}

void Node::Accept(std::unique_ptr<sync::WebSocketChannel> channel) {
  if (stopping_) return;
  auto connection = std::make_unique<Connection>();
  Connection& c = *connection;
  c.id = next_connection_++;
  c.remote = channel->handshake().remote;
  c.channel = std::move(channel);
  c.channel->Closed([this, id = c.id] {
    asio::post(io_, [this, id] {
      if (auto it = connections_.find(id); it != connections_.end()) Drop(*it->second);
    });
  });
  connections_.emplace(c.id, std::move(connection));
  if (!config_.tokens.empty()) {
    const std::string bearer = BearerOf(c.channel->handshake());
    for (const Token& token : config_.tokens) {
      if (SameSecret(bearer, token.secret)) c.token = &token;
    }
    if (!c.token) {
      spdlog::warn("event=refused peer={} reason=forbidden detail=\"no valid token\"", c.remote);
      c.channel->Send(codec::FaultFrame{0, "forbidden",
                                        "a valid bearer token is needed (Authorization header "
                                        "or ?token=)"});
      c.channel->Close();
      return;
    }
  }
  c.link = std::make_unique<sync::Link>(*c.channel, *link_scheduler_);
  c.link->OnOpen([this, &c](const codec::OpenFrame& open) { OnOpen(c, open); });
  if (auto requests = sync::Requests::Open(*c.channel, io_.get_executor())) {
    c.requests.emplace(std::move(*requests));
    (void)c.requests->Answer(
        [this, &c](const std::string& name, const boost::json::value& args, sync::Reply reply) {
          Answer(c, name, args, std::move(reply));
        });
  }
  spdlog::info("event=connect peer={} connection={}", c.remote, c.id);
}

bool Node::CanRead(const Connection& c, std::string_view name) const {
  return !c.token || AnyMatches(c.token->read, name) || AnyMatches(c.token->write, name);
}

bool Node::CanWrite(const Connection& c, std::string_view name) const {
  return !c.token || AnyMatches(c.token->write, name);
}

void Node::Answer(Connection& c, const std::string& request, const boost::json::value& args,
                  sync::Reply reply) {
  namespace json = boost::json;
  if (request == "durable") {
    // Runs after every frame this connection sent before the request, with
    // the store synced first: all they carried is stored.
    link_scheduler_->Post([reply] { reply.SendResult(json::object{{"durable", true}}); });
    return;
  }
  if (request == "has") {
    const json::object* object = args.if_object();
    const json::string* name = object ? object->at("name").if_string() : nullptr;
    if (!name) {
      return reply.SendError({"invalid-name", "has takes {\"name\": text}", {}});
    }
    if (!CanRead(c, *name)) {
      return reply.SendError({"forbidden", "this token has no right to \"" + std::string(*name) + "\"", {}});
    }
    std::optional<codec::Id> root;
    codec::Kind kind = codec::Kind::kObject;
    if (auto it = loaded_.find(std::string_view(*name)); it != loaded_.end()) {
      root = it->second.document->root().id();
      kind = it->second.document->root().kind();
    } else if (auto info = store_->Info(std::string_view(*name)); info && info->damage.empty()) {
      root = info->root;
      kind = info->kind;
    }
    if (!root) return reply.SendResult(json::object{{"held", false}});
    return reply.SendResult(json::object{{"held", true},
                                         {"root", codec::IdText(*root)},
                                         {"kind", std::string(codec::KindName(kind))}});
  }
  reply.SendError({"missing", "nothing here answers " + request, {}});
}

void Node::OnOpen(Connection& c, const codec::OpenFrame& open) {
  const std::string& name = open.name;
  const bool can_read = CanRead(c, name);
  const bool can_write = CanWrite(c, name);
  if (!can_read) {
    spdlog::warn("event=refused doc=\"{}\" peer={} reason=forbidden", name, c.remote);
    return c.link->Decline(open, "forbidden",
                           "this token has no right to \"" + name + "\"");
  }
  const bool may_create = open.root && can_write && AnyMatches(config_.create, name);
  const bool existed = loaded_.count(name) || store_->Info(name).has_value();
  auto document = Load(name, may_create ? open.root : std::nullopt);
  if (!document) {
    spdlog::info("event=decline doc=\"{}\" peer={} reason={}", name, c.remote,
                 codec::Name(document.error().reason));
    return c.link->Decline(open, std::string(codec::Name(document.error().reason)),
                           document.error().message);
  }
  sync::ShareHandlers handlers;
  if (!can_write) {
    handlers.accept = [name](const codec::Commit&) -> std::vector<codec::WireReason> {
      return {{"forbidden", "this token may only read \"" + name + "\"", std::nullopt}};
    };
  }
  handlers.fault = [this, &c, name](const std::string& reason, const std::string&) {
    spdlog::info("event=end doc=\"{}\" peer={} reason={}", name, c.remote, reason);
    if (c.shared.erase(name)) Release(name);
  };
  auto shared = c.link->Share(name, *document, std::move(handlers));
  if (!shared) {
    return c.link->Decline(open, std::string(codec::Name(shared.error().reason)),
                           shared.error().message);
  }
  c.shared.insert(name);
  ++loaded_[name].shares;
  // A document the client just made here: ask it for its state.
  if (!existed) (*shared)->Resync();
  spdlog::info("event=share doc=\"{}\" peer={} created={}", name, c.remote, !existed);
}

codec::Result<sync::Document*> Node::Load(const std::string& name,
                                          const std::optional<codec::RootRef>& create_root) {
  if (auto it = loaded_.find(name); it != loaded_.end()) return it->second.document;
  const bool stored = store_->Info(name).has_value();
  if (!stored && !create_root) {
    return Refusal{Reason::kNoDocument, "this node holds no \"" + name + "\""};
  }
  std::optional<codec::Id> root;
  codec::Kind kind = codec::Kind::kObject;
  if (!stored) {
    auto id = codec::IdFromBytes(create_root->id);
    if (!id) return id.error();
    root = *id;
    kind = create_root->kind;
  }
  auto document = store_->OpenDocument(name, kind, root);
  if (!document) return document.error();
  Loaded& loaded = loaded_[name];
  loaded.document = *document;
  loaded.active = std::chrono::steady_clock::now();
  loaded.watch = (*document)->Watch([&loaded](const sync::Change&) {
    loaded.active = std::chrono::steady_clock::now();
  });
  spdlog::info("event=load doc=\"{}\" created={}", name, !stored);
  return *document;
}

void Node::Release(const std::string& name) {
  auto it = loaded_.find(name);
  if (it == loaded_.end()) return;
  --it->second.shares;
  it->second.active = std::chrono::steady_clock::now();
}

void Node::Drop(Connection& c) {
  spdlog::info("event=disconnect peer={} connection={} reason=\"{}\"", c.remote, c.id,
               c.channel->end_reason());
  for (const std::string& name : c.shared) Release(name);
  c.shared.clear();
  connections_.erase(c.id);
}

void Node::ScheduleEviction() {
  const auto period = std::max(std::chrono::seconds(1), config_.idle_evict / 4);
  eviction_.expires_after(period);
  eviction_.async_wait([this](boost::system::error_code ec) {
    if (ec || stopping_) return;
    const auto now = std::chrono::steady_clock::now();
    for (auto it = loaded_.begin(); it != loaded_.end();) {
      Loaded& loaded = it->second;
      if (loaded.shares > 0 || now - loaded.active < config_.idle_evict) {
        ++it;
        continue;
      }
      loaded.document->Unwatch(loaded.watch);
      store_->CloseDocument(it->first);
      spdlog::info("event=evict doc=\"{}\"", it->first);
      it = loaded_.erase(it);
    }
    ScheduleEviction();
  });
}

void Node::Shutdown(std::function<void()> done) {
  if (stopping_) return;
  stopping_ = true;
  spdlog::info("event=shutdown connections={} documents={}", connections_.size(), loaded_.size());
  eviction_.cancel();
  listener_->Stop();
  for (auto& [id, connection] : connections_) {
    if (connection->link) connection->link->Close();
    else connection->channel->Close();
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
