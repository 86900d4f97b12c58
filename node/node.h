#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "admin/http_server.h"
#include "admin/metrics.h"
#include "admin/router.h"
#include "node/access.h"
#include "node/admin_source.h"
#include "node/client.h"
#include "node/config.h"
#include "node/durable.h"
#include "node/hub.h"
#include "node/upstreams.h"
#include "storage/store.h"
#include "sync/asio_scheduler.h"
#include "sync/link.h"
#include "sync/requests.h"
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

 private:
  friend class NodeAdmin;
  struct Shard;
  struct Connection {
    uint64_t id = 0;
    Shard* shard = nullptr;  // The thread it runs on; null: the home thread.
    std::unique_ptr<sync::WebSocketChannel> channel;
    std::unique_ptr<sync::Link> link;
    std::optional<sync::Requests> requests;
    const Token* token = nullptr;  // Null when no tokens are configured.
    std::map<std::string, sync::Shared*> shared;  // What this connection shares now.
    std::string remote;
    bool peer = false;  // Another node (it asked `hello`), not a client.
    std::vector<sync::Reply> answering;  // Requests taken, some answered since.
    std::chrono::steady_clock::time_point since = std::chrono::steady_clock::now();
  };

  // A document's replica on a shard: the shard's end of its link to the
  // home document. Shard thread only.
  struct Replica {
    uint64_t generation = 0;  // Which attachment it is the end of.
    std::shared_ptr<sync::Channel> end;
    std::unique_ptr<sync::Link> link;  // Declared after `end`: destroyed first.
    sync::Shared* topic = nullptr;
    bool resync_posted = false;
    bool resyncing = false;     // Asked for home's state; not applied yet.
    bool resync_again = false;  // Asked for again meanwhile.
    // Same-slot writes made at once here and at home would leave the two
    // swapped (behaviour.md §2.9): the slots of commits sent home and not
    // yet applied there, by the epoch they were sent in. A commit from home
    // touching one makes the replica resync.
    std::map<std::string, uint64_t> unapplied;
    uint64_t epoch = 0;
    bool barrier_posted = false;
    bool landing = false;  // A commit from home is being applied.
    bool watching = false;
    // Connections waiting for its state: told the document, or null.
    std::vector<std::function<void(sync::Document*)>> waiting;
  };
  // A thread serving connections. Everything in it is used on its thread,
  // and by the home thread only once the thread is joined.
  struct Shard {
    Shard(size_t index, boost::asio::io_context& home, DurableScheduler& durable);
    ~Shard();  // Stops and joins the thread, then frees what it served.
    const size_t index;
    boost::asio::io_context io;
    sync::AsioScheduler scheduler{io.get_executor()};
    ForwardScheduler forward;  // Its connections' links send through it.
    std::map<uint64_t, std::unique_ptr<Connection>> connections;
    std::map<std::string, Replica, std::less<>> replicas;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{
        io.get_executor()};
    std::thread thread;
  };
  // The home end of a replica's link, per (shard, name). Home thread only.
  struct Attachment {
    uint64_t generation = 0;
    int shares = 0;  // The shard's connections sharing the document.
    std::unique_ptr<sync::Channel> end;
    std::unique_ptr<sync::Link> link;
  };

  void Accept(std::unique_ptr<sync::WebSocketChannel> channel);
  // The shard whose thread this is; null on any other.
  static thread_local Shard* current_shard_;
  // The connections of `shard` (null: the home thread's), and its executor.
  std::map<uint64_t, std::unique_ptr<Connection>>& ConnectionsOf(Shard* shard);
  boost::asio::any_io_executor ExecutorOf(Shard* shard);
  // Runs `fn` on the home thread: now if this is it (`shard` null), else
  // posted there.
  template <class Fn>
  void OnHome(Shard* shard, Fn fn);
  // Runs `fn` with connection `id` of `shard` (null: home) on its thread,
  // if it is still open then.
  template <class Fn>
  void OnConnection(Shard* shard, uint64_t id, Fn fn);
  // The scheduler connection `c`'s link sends through: durable before sent.
  sync::Scheduler& LinkScheduler(const Connection& c);
  // Calls `fn` for every open connection, each on its own thread (shards
  // are asked in turn, the home thread waiting). Home thread only.
  void ForEachConnection(const std::function<void(const Connection&)>& fn);
  // Home thread: counts one more share of `name` by a connection of
  // `shard`, attaching a replica there if it has none; tells the shard.
  void Attach(Shard& shard, uint64_t connection, const codec::OpenFrame& open,
              sync::Document& document, bool created);
  // Shard thread: serves `open` to the connection from the replica, once
  // the replica has its state.
  void ServeReplica(Shard& shard, uint64_t connection, const codec::OpenFrame& open,
                    uint64_t generation, std::shared_ptr<sync::Channel> end, bool created);
  // Shard thread: the replica takes the home document's state, once per
  // turn however often asked.
  void ResyncReplica(Shard& shard, const std::string& name);
  // Shard thread: watches each commit on a replica for same-slot writes.
  void GuardReplica(Shard& shard, const std::string& name, const sync::Change& change);
  // Shard thread: forgets the replica's unapplied slots once home has them.
  void ReplicaBarrier(Shard& shard, const std::string& name);
  // Gives back one share of `name` a connection of `shard` (null: home)
  // held, from its thread.
  void ReleaseShare(Shard* shard, const std::string& name);
  // Home thread: one share fewer of `name` by a connection of `shard`.
  void Detach(size_t shard, const std::string& name);
  // Ends a connection at once with a link fault.
  void Refuse(Connection& connection, const codec::Refusal& why);
  void OnOpen(Connection& connection, const codec::OpenFrame& open);
  void Answer(Connection& connection, const std::string& request,
              const boost::json::value& args, sync::Reply reply);
  void Decline(Connection& connection, const codec::OpenFrame& open, const std::string& reason,
               const std::string& message);
  void CountRefused(const sync::Refused& refused);
  // The `limit` reasons a commit from a client earns (limits.max_*).
  std::vector<codec::WireReason> Oversized(const codec::Commit& commit) const;
  void StartAdmin();

  void Serve(Connection& connection, const codec::OpenFrame& open, sync::Document& document,
             bool created);
  void Drop(Connection& connection);

  Config config_;
  Access access_{config_.tokens, config_.limits.max_connections_per_address};
  boost::asio::io_context& io_;
  std::unique_ptr<storage::Store> store_;
  sync::AsioScheduler channel_scheduler_;
  std::unique_ptr<DurableScheduler> link_scheduler_;
  // Shards (threads - 1), each with its replicas' attachments here.
  std::vector<std::unique_ptr<Shard>> shards_;
  std::map<std::pair<size_t, std::string>, Attachment> attached_;
  uint64_t next_generation_ = 1;
  size_t next_place_ = 0;  // Round-robin over home and shards (listener's thread).
  // The TLS context the listener and the admin endpoint serve with (null:
  // plain); declared before both, which use it.
  std::shared_ptr<boost::asio::ssl::context> server_tls_;
  std::unique_ptr<sync::WebSocketListener> listener_;
  std::map<uint64_t, std::unique_ptr<Connection>> connections_;  // The home thread's.
  std::atomic<uint64_t> next_connection_{1};
  std::unique_ptr<Upstreams> upstreams_;
  std::unique_ptr<Hub> hub_;  // After upstreams_, which it shares documents with.
  std::atomic<bool> stopping_{false};

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
