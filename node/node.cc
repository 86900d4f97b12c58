#include "node/node.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <boost/json.hpp>
#include <boost/system/system_error.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <latch>
#include <mutex>

#include "codec/commit.h"
#include "codec/id.h"
#include "codec/refusal.h"
#include "node/access.h"
#include "node/hub.h"
#include "node/log.h"
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

// The descriptor limit, said for a person: "ulimit -n is 1024".
std::string DescriptorLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return "ulimit -n unknown";
  return "ulimit -n is " + std::to_string(limit.rlim_cur);
}

// Raises the soft descriptor limit to the hard one (the node polls with
// epoll: a low soft limit only guards select()), and returns the bound on
// open connections: `configured`, or at 0 three quarters of the
// descriptors, the rest kept for the store, upstream links and admin.
uint64_t ConnectionBound(uint64_t configured) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return configured > 0 ? configured : 768;
  if (limit.rlim_cur < limit.rlim_max) {
    const rlimit raised{limit.rlim_max, limit.rlim_max};
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  const uint64_t descriptors = std::min<uint64_t>(limit.rlim_cur, uint64_t{1} << 30);
  if (configured == 0) return std::max<uint64_t>(descriptors / 4 * 3, 1);
  if (configured > descriptors) {
    spdlog::warn("event=config detail={}",
                 Quoted{"limits.max_connections is " + std::to_string(configured) +
                        ", more than the " + std::to_string(descriptors) +
                        " descriptors the process may open; past them new connections are "
                        "closed as they are accepted. Raise the descriptor limit (ulimit -n, "
                        "LimitNOFILE), or lower limits.max_connections"});
  }
  return configured;
}

// The bound on what connections hold: `configured`, or at 0 a quarter of
// the machine's memory.
uint64_t MemoryBound(uint64_t configured) {
  if (configured > 0) return configured;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return uint64_t{1} << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 4;
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

[[noreturn]] void BadData(const std::string& data, const std::string& what,
                          const std::string& fix) {
  throw ConfigError("config: 'data' is " + data + ", " + what + ". " + fix);
}

// The data directory, made if missing; a ConfigError naming `data` when it
// cannot be (docs/node.md "Start-up errors").
void PrepareData(const std::string& data) {
  std::error_code ec;
  if (std::filesystem::exists(data, ec) && !std::filesystem::is_directory(data, ec)) {
    BadData(data, "which is not a directory", "Give --data a directory, new or empty.");
  }
  std::filesystem::create_directories(data, ec);
  if (ec) {
    BadData(data, "which cannot be made: " + ec.message(),
            "Give --data a directory this user may create and write.");
  }
  if (::access(data.c_str(), W_OK | X_OK) != 0) {
    BadData(data, std::string("which cannot be written: ") + std::strerror(errno),
            "Give --data a directory this user may write, on a disk that takes writes.");
  }
}

// The store in DATA/store; a ConfigError naming `data` for what the user
// can fix: held by another process, not a store, or a newer version's.
std::unique_ptr<storage::Store> OpenStore(const std::string& data,
                                          const storage::Options& options) {
  try {
    auto store = storage::Store::Open(data + "/store", options);
    if (store) return std::make_unique<storage::Store>(std::move(*store));
    if (store.error().reason == Reason::kUnknownVersion) {
      BadData(data, "whose store cannot be used: " + store.error().message,
              "Give --data a new or empty directory, or run the aweft-node version that wrote it.");
    }
    BadData(data, "whose store cannot be opened: " + store.error().ToString(),
            "Restore it from a backup, or give --data a new or empty directory.");
  } catch (const storage::Failure& e) {  // A ConfigError from BadData passes through.
    const std::string what = e.what();
    if (what.find("lock file") != std::string::npos) {
      BadData(data, "whose store another process holds open (another aweft-node?)",
              "Stop that process, or give this node a data directory of its own.");
    }
    BadData(data, "whose store cannot be opened: " + what,
            "If it is an aweft store, its files are damaged: restore them from a backup; else "
            "give --data a new or empty directory.");
  }
}

}  // namespace

Node::Node(Config config, asio::io_context& io)
    : config_(std::move(config)), io_(io), channel_scheduler_(io.get_executor()) {
  auto [host, port] = HostPort(config_.listen, "listen");
  if (config_.tokens.empty() && !Loopback(host)) {
    throw ConfigError("config: 'listen' is " + config_.listen +
                      ", not loopback, and no [[tokens]] are configured. Configure "
                      "tokens, or listen on 127.0.0.1.");
  }
  PrepareData(config_.data);
  config_.storage.sync_every_commit = false;  // One sync per turn, before forwarding.
  // A full or read-only disk: wait for it, refusing new writes meanwhile,
  // rather than stop. RocksDB's LOG would be on that disk: its warnings go
  // to the node's log instead.
  config_.storage.retry_failed_writes = true;
  config_.storage.rocksdb_log = [](const std::string& line) {
    // A failed open is said once, by the start-up error.
    if (line.find("DB::Open() failed") != std::string::npos) return;
    spdlog::warn("event=rocksdb detail={}", Quoted{line});
  };
  store_ = OpenStore(config_.data, config_.storage);
  config_.node_id = NodeId(config_.data, config_.node_id);
  link_scheduler_ = std::make_unique<DurableScheduler>(
      io.get_executor(), *store_, [this](uint64_t commits, std::chrono::duration<double> took) {
        meters_.sync_seconds.Observe(took.count());
        meters_.sync_commits.Observe(static_cast<double>(commits));
      });
  link_scheduler_->OnForwarded(
      [this](std::chrono::duration<double> waited) { meters_.forward.Observe(waited.count()); });
  sync::WebSocketChannel::Options options;
  options.max_message = config_.max_frame_bytes;
  options.max_queued_bytes = config_.limits.send_queue_bytes;
  options.idle_timeout = config_.limits.idle_timeout;
  options.max_text = config_.limits.max_text_bytes;
  config_.limits.max_connections = ConnectionBound(config_.limits.max_connections);
  options.max_connections = config_.limits.max_connections;
  options.on_shed = [this](bool full, size_t count) { Shed(full, count); };
  config_.limits.memory_bytes = MemoryBound(config_.limits.memory_bytes);
  budget_ = std::make_shared<sync::MemoryBudget>(config_.limits.memory_bytes);
  options.budget = budget_;
  options.message_timeout = config_.limits.message_timeout;
  // A certificate or key that cannot be used is a bad setting (exit 2).
  auto tls = [](auto make) {
    try {
      return make();
    } catch (const sync::TlsError& e) {
      throw ConfigError(std::string("config: ") + e.what());
    }
  };
  if (config_.tls.serving()) {
    server_tls_ = tls([&] { return sync::ServerTls(config_.tls.cert_file, config_.tls.key_file); });
    options.tls = server_tls_;
  }
  std::shared_ptr<boost::asio::ssl::context> upstream_tls;
  if (!config_.tls.ca_file.empty()) {
    upstream_tls = tls([&] { return sync::ClientTls(config_.tls.ca_file); });
  }
  upstreams_ =
      std::make_unique<Upstreams>(config_, io_, *store_, *link_scheduler_, upstream_tls, meters_);
  quorum_ = std::make_unique<Quorum>(config_, io_, *upstreams_);
  hub_ = std::make_unique<Hub>(config_, io_, *store_, *link_scheduler_, *upstreams_);
  catch_up_ = std::make_unique<CatchUp>(config_, io_, *hub_, *upstreams_, *store_);
  context_.reset(new LoopContext{config_, access_, meters_, io_.get_executor(), *hub_, *upstreams_,
                                 *quorum_, *catch_up_, *store_, stopping_, connection_ids_});
  home_ = std::make_unique<Loop>(0, *context_, io_.get_executor(), *link_scheduler_, nullptr);
  home_->set_documents(*hub_);
  for (size_t i = 1; i < config_.threads; ++i) {
    shards_.push_back(
        std::make_unique<Shard>(i - 1, *context_, channel_scheduler_, *link_scheduler_));
  }
  // A commit refused above is refused to its writer, on whichever loop.
  upstreams_->OnRefused([this](const std::string& name, const codec::Commit& commit,
                               const std::vector<codec::WireReason>& reasons) {
    home_->RefuseLate(name, commit, reasons);
    for (auto& shard : shards_) {
      asio::post(shard->io(), [&loop = shard->loop(), name, commit, reasons] {
        loop.RefuseLate(name, commit, reasons);
      });
    }
  });
  if (!shards_.empty()) {
    // Called on the listener's (the home) thread.
    options.place = [this]() -> std::pair<asio::any_io_executor, sync::Scheduler*> {
      const size_t slot = next_place_++ % (shards_.size() + 1);
      if (slot == 0) return {io_.get_executor(), &channel_scheduler_};
      Shard& shard = *shards_[slot - 1];
      return {shard.io().get_executor(), &shard.scheduler()};
    };
  }
  try {
    listener_ = std::make_unique<sync::WebSocketListener>(
        io.get_executor(), channel_scheduler_, host, port,
        [this](std::unique_ptr<sync::WebSocketChannel> channel) { Accept(std::move(channel)); },
        options);
  } catch (const boost::system::system_error& e) {
    throw ConfigError("config: 'listen' is " + config_.listen +
                      ", which cannot be served: " + e.code().message() +
                      ". Choose another address or port (port 0 picks a free one).");
  }
  StartAdmin();
  spdlog::info(
      "event=start node={} listen={}:{} admin={} data={} documents={} threads={} "
      "max_connections={}",
      config_.node_id, host, listener_->port(), admin_port(), config_.data, store_->List().size(),
      config_.threads, config_.limits.max_connections);
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
  std::vector<std::string> hosts = config_.admin_hosts;
  hosts.push_back(host);  // The name it listens on, when that is one.
  router_ = std::make_unique<admin::Router>(*admin_source_, metrics_, config_.admin_token,
                                            std::move(hosts));
  try {
    admin_server_ = std::make_unique<admin::HttpServer>(
        io_.get_executor(), host, port,
        [this](const admin::Request& request) { return router_->Handle(request); },
        admin::HttpServer::Options{config_.limits.max_http_body_bytes, server_tls_});
  } catch (const boost::system::system_error& e) {
    throw ConfigError("config: 'admin' is " + config_.admin +
                      ", which cannot be served: " + e.code().message() +
                      ". Choose another address or port, or set admin = \"off\".");
  }
}

void Node::Shed(bool full, size_t count) {
  meters_.shed.Add(static_cast<double>(count), {full ? "max_connections" : "descriptors"});
  shed_unsaid_ += count;
  const auto now = std::chrono::steady_clock::now();
  if (now - shed_said_ < std::chrono::seconds(10)) return;
  const std::string detail =
      full ? codec::Spelled(codec::Reason::kLimit) + ": " +
                 std::to_string(config_.limits.max_connections) +
                 " connections are open (limits.max_connections); new ones are closed as they "
                 "are accepted. Raise limits.max_connections, and the descriptor limit with it"
           : codec::Spelled(codec::Reason::kLimit) + ": the process is out of file descriptors (" +
                 DescriptorLimit() +
                 "); new connections are closed as they are accepted. Raise the descriptor "
                 "limit (ulimit -n, LimitNOFILE), or lower limits.max_connections";
  spdlog::warn("event=shed connections={} detail={}", shed_unsaid_, Quoted{detail});
  shed_unsaid_ = 0;
  shed_said_ = now;
}

Node::~Node() {
  listener_->Stop();
  shards_.clear();
  home_->DropLinks();
}

void Node::Accept(std::unique_ptr<sync::WebSocketChannel> channel) {
  if (io_.get_executor().running_in_this_thread()) return home_->Accept(std::move(channel));
  for (auto& shard : shards_) {
    if (shard->loop().running_here()) return shard->loop().Accept(std::move(channel));
  }
}

void Node::ForEachConnection(const std::function<void(const Loop::Connection&)>& fn) {
  // Every shard at once, one at a time through `fn`; home's meanwhile.
  std::mutex one;
  std::latch done(static_cast<std::ptrdiff_t>(shards_.size()));
  for (auto& shard : shards_) {
    asio::post(shard->io(), [&, &loop = shard->loop()] {
      {
        std::lock_guard lock(one);
        for (const auto& [id, c] : loop.connections()) fn(*c);
      }
      done.count_down();
    });
  }
  {
    std::lock_guard lock(one);
    for (const auto& [id, c] : home_->connections()) fn(*c);
  }
  done.wait();
}

size_t Node::replicas() const {
  size_t attached = 0;
  for (const auto& shard : shards_) attached += shard->replicas().attached();
  return attached;
}

sync::Link::Stats Node::replica_links() const {
  sync::Link::Stats total;
  for (const auto& shard : shards_) total += shard->replicas().link_stats();
  return total;
}

void Node::Shutdown(std::function<void()> done) {
  if (stopping_) return;
  stopping_ = true;
  spdlog::info("event=shutdown connections={} documents={}", home_->connections().size(),
               hub_->loaded().size());
  hub_->Stop();
  catch_up_->Stop();
  listener_->Stop();
  if (admin_server_) admin_server_->Stop();
  // What waits for a failing disk now will not be stored: give it up, so
  // that stopping ends (the node then exits saying so).
  if (hub_->Unavailable()) store_->StopRetrying();
  upstreams_->Close();
  home_->CloseAll();
  for (auto& shard : shards_) {
    asio::post(shard->io(), [&loop = shard->loop()] { loop.CloseAll(); });
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
