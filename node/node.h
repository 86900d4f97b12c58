#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "admin/http_server.h"
#include "admin/metrics.h"
#include "admin/router.h"
#include "node/admin_source.h"
#include "node/client.h"
#include "node/config.h"
#include "node/durable.h"
#include "storage/store.h"
#include "sync/io_threads.h"
#include "sync/link.h"
#include "sync/requests.h"
#include "sync/websocket.h"

namespace aweft::node {

// The replication node: one store, one WebSocket listener for clients and
// peers, a link per connection, documents loaded on first share and evicted
// when idle (docs/node.md). Runs on one io_context, on its thread; with
// `threads` above 1, the sockets of accepted connections run on threads of
// their own (threads - 1), their links and documents still here.
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

 private:
  friend class NodeAdmin;
  struct Connection {
    uint64_t id = 0;
    std::unique_ptr<sync::WebSocketChannel> channel;
    std::unique_ptr<sync::Link> link;
    std::optional<sync::Requests> requests;
    const Token* token = nullptr;  // Null when no tokens are configured.
    std::set<std::string> shared;  // Names this connection shares now.
    std::string remote;
    bool peer = false;  // Another node (it asked `hello`), not a client.
    std::vector<sync::Reply> answering;  // Requests taken, some answered since.
    std::chrono::steady_clock::time_point since = std::chrono::steady_clock::now();
  };
  struct Loaded {
    sync::Document* document = nullptr;
    int shares = 0;
    std::chrono::steady_clock::time_point active;
    uint64_t watch = 0;
  };

  void Accept(std::unique_ptr<sync::WebSocketChannel> channel);
  // Ends a connection at once with a link fault.
  void Refuse(Connection& connection, const std::string& reason, const std::string& message);
  void OnOpen(Connection& connection, const codec::OpenFrame& open);
  void Answer(Connection& connection, const std::string& request,
              const boost::json::value& args, sync::Reply reply);
  void Decline(Connection& connection, const codec::OpenFrame& open, const std::string& reason,
               const std::string& message);
  void CountRefused(const sync::Refused& refused);
  // The `limit` reasons a commit from a peer earns (limits.max_*).
  std::vector<codec::WireReason> Oversized(const codec::Commit& commit) const;
  // Why the node cannot store now (its disk fails writes, and they are being
  // retried), or nothing. Logs when that starts and ends.
  std::optional<std::string> Unavailable();
  void StartAdmin();
  bool CanRead(const Connection& connection, std::string_view name) const;
  bool CanWrite(const Connection& connection, std::string_view name) const;
  codec::Result<sync::Document*> Load(const std::string& name,
                                      const std::optional<codec::RootRef>& create_root);
  void Release(const std::string& name);

  // Upstreams: nodes this one dials and shares matching documents with.
  struct UpstreamLink {
    Upstream config;
    std::unique_ptr<Client> client;
    std::vector<std::string> path;  // Its id, then its own upstreams' paths.
    bool cycle = false;             // Refused: it leads back here.
  };
  UpstreamLink* UpstreamFor(std::string_view name);
  void Hello(UpstreamLink& upstream);
  void RepeatHello();
  void LoadConfirmed();
  void SaveConfirmed();
  std::vector<std::string> Path() const;
  void OpenFromUpstream(uint64_t connection, const codec::OpenFrame& open,
                        UpstreamLink& upstream);
  void Serve(Connection& connection, const codec::OpenFrame& open, sync::Document& document,
             bool created);
  void Drop(Connection& connection);
  void ScheduleEviction();
  // While durable asks wait for a batch, looks every 100 ms whether the disk
  // has begun to fail it; if so, answers them `unavailable` at once.
  void WatchStall();

  Config config_;
  boost::asio::io_context& io_;
  std::unique_ptr<storage::Store> store_;
  sync::AsioScheduler channel_scheduler_;
  std::unique_ptr<DurableScheduler> link_scheduler_;
  // The TLS context the listener and the admin endpoint serve with (null:
  // plain); declared before both, which use it.
  std::shared_ptr<boost::asio::ssl::context> server_tls_;
  // The threads accepted sockets run on (threads - 1); declared before the
  // listener and the connections, whose sockets they run.
  std::unique_ptr<sync::IoThreads> socket_threads_;
  std::unique_ptr<sync::WebSocketListener> listener_;
  std::map<uint64_t, std::unique_ptr<Connection>> connections_;
  uint64_t next_connection_ = 1;
  std::map<std::string, Loaded, std::less<>> loaded_;
  std::map<std::string, uint64_t, std::less<>> per_address_;  // Connections, by IP.
  uint64_t stored_documents_ = 0;  // For limits.max_documents.
  std::vector<std::unique_ptr<UpstreamLink>> upstreams_;
  // Per (upstream url, document): the store seq the upstream has confirmed.
  std::map<std::pair<std::string, std::string>, uint64_t> confirmed_;
  boost::asio::steady_timer eviction_, hello_, stall_watch_;
  std::vector<sync::Reply> durable_waiting_;  // Durable asks not yet answered.
  bool stall_watched_ = false;
  bool stopping_ = false;
  bool stalled_ = false;  // The store was found stalled (for the log).

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
