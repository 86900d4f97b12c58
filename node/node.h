#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "admin/http_server.h"
#include "admin/metrics.h"
#include "admin/router.h"
#include "node/access.h"
#include "node/admin_source.h"
#include "node/catch_up.h"
#include "node/config.h"
#include "node/durable.h"
#include "node/hub.h"
#include "node/loop.h"
#include "node/quorum.h"
#include "node/shard.h"
#include "node/upstreams.h"
#include "storage/store.h"
#include "sync/asio_scheduler.h"
#include "sync/websocket.h"

namespace aweft::node {

// The replication node: one store, one WebSocket listener for clients and
// peers, a link per connection, documents loaded on first share and evicted
// when idle (docs/node.md). Runs on one io_context, on its thread (the home
// thread: the store, the documents, upstreams, the admin endpoint). With
// `threads` above 1, accepted connections are spread round-robin over the
// home thread and threads - 1 shards: a shard runs its connections' sockets,
// links and requests, and holds a replica of each document they share, kept
// in step with the home document over an in-process link (docs/node.md
// "Threads").
class Node {
 public:
  // Opens the store and binds the listener. Throws ConfigError for settings
  // that cannot work (a non-loopback address without tokens), and
  // storage::Failure when the disk fails.
  Node(Config config, boost::asio::io_context& io);
  ~Node();

  // The port links are served on (useful with port 0).
  uint16_t port() const { return listener_->port(); }
  // Where links reach it: ws://HOST:PORT/, or wss:// with TLS.
  std::string url() const;
  // The admin endpoint's port; 0 when `admin` is off.
  uint16_t admin_port() const { return admin_server_ ? admin_server_->port() : 0; }
  const std::string& id() const { return config_.node_id; }

  // Stops accepting, closes every link after sending what is queued, syncs
  // and closes the store. `done` runs once that is finished.
  void Shutdown(std::function<void()> done);

  // What the admin endpoint reads (node/admin_source.h). Home thread only.
  const Config& config() const { return config_; }
  Hub& hub() { return *hub_; }
  Upstreams& upstreams() { return *upstreams_; }
  CatchUp& catch_up() { return *catch_up_; }
  storage::Store& store() { return *store_; }
  NodeMetrics& meters() { return meters_; }
  // What every accepted connection holds, together (limits.memory_bytes).
  const sync::MemoryBudget& budget() const { return *budget_; }
  std::chrono::steady_clock::time_point started() const { return started_; }
  bool stopping() const { return stopping_; }
  // Calls `fn` for every open connection, each on its own thread, one call
  // at a time: every shard is asked at once and the home thread waits for
  // them all (the node's one wait on another thread; a shard never waits on
  // home, so it cannot deadlock).
  void ForEachConnection(const std::function<void(const Loop::Connection&)>& fn);
  // Replicas attached on every shard now.
  size_t replicas() const;
  // The home ends of every shard's replica links, over the node's life.
  sync::Link::Stats replica_links() const;

 private:
  // Hands a connection to the loop of the thread the listener placed it on.
  void Accept(std::unique_ptr<sync::WebSocketChannel> channel);
  void StartAdmin();
  // Counts connections the listener closed unserved, and says so in the log
  // (at most once per 10 s). On the listener's thread.
  void Shed(bool full, size_t count);

  Config config_;
  Access access_{config_.tokens, config_.allowed_origins,
                 config_.limits.max_connections_per_address};
  boost::asio::io_context& io_;
  std::unique_ptr<storage::Store> store_;
  sync::AsioScheduler channel_scheduler_;
  std::unique_ptr<DurableScheduler> link_scheduler_;
  std::unique_ptr<Upstreams> upstreams_;
  std::unique_ptr<Quorum> quorum_;
  std::unique_ptr<Hub> hub_;  // After upstreams_, which it shares documents with.
  std::unique_ptr<CatchUp> catch_up_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> connection_ids_{1};
  std::unique_ptr<LoopContext> context_;
  std::unique_ptr<Loop> home_;                  // Loop 0, on the home thread.
  std::vector<std::unique_ptr<Shard>> shards_;  // threads - 1.
  size_t next_place_ = 0;  // Round-robin over home and shards (listener's thread).
  // The TLS context the listener and the admin endpoint serve with (null:
  // plain); declared before both, which use it.
  std::shared_ptr<boost::asio::ssl::context> server_tls_;
  std::shared_ptr<sync::MemoryBudget> budget_;
  std::unique_ptr<sync::WebSocketListener> listener_;
  size_t shed_unsaid_ = 0;  // Shed since the last line about it.
  std::chrono::steady_clock::time_point shed_said_;

  // The admin endpoint (docs/admin.md). Declared last: the server goes
  // first, before what it calls.
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  admin::Metrics metrics_;
  NodeMetrics meters_{metrics_};
  std::unique_ptr<NodeAdmin> admin_source_;
  std::unique_ptr<admin::Router> router_;
  std::unique_ptr<admin::HttpServer> admin_server_;
};

}  // namespace aweft::node
