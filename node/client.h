#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "node/messages.h"
#include "sync/document.h"
#include "sync/link.h"
#include "sync/requests.h"
#include "sync/websocket.h"

namespace aweft {

// A client of aweft-node: shares documents with a node over one WebSocket
// and keeps them shared across lost connections and node restarts.
//
// When the connection drops it dials again (backoff with jitter). For each
// document it then asks the node whether it holds the name: if so it shares
// it and resyncs (the document is moved by reconcile, every observable kept),
// then re-applies its own commits the node had not confirmed durable; if not
// (the node lost it, or never got it) it shares it so the node takes its
// state. Nothing written offline or in flight is lost, nothing duplicated.
// The node confirms with the `durable` request: everything it received
// before answering is stored.
//
// Lives on one executor's thread; documents it shares must be used there.
class Client {
 public:
  struct Options {
    std::string url;    // ws://host:port/, or wss:// for TLS
    std::string token;  // Bearer token, when the node wants one.
    // wss://: what the node's certificate is checked against
    // (sync::ClientTls). Default: null, the system's trusted certificates.
    std::shared_ptr<boost::asio::ssl::context> tls;
    // Reconnect delays: doubling from `backoff_min` up to `backoff_max`, each
    // drawn between half and all of that; back to `backoff_min` once a
    // connection has stayed up for `backoff_max`. Default: 50 ms, 5 s.
    std::chrono::milliseconds backoff_min{50};
    std::chrono::milliseconds backoff_max{5000};
    // After a reconnect every document is shared again, each asking for the
    // node's state: they go a few at a time, so that the states under way
    // (as large as the copies here) stay within this many bytes, one
    // document at least, and the node's answers never pile up past its send
    // queue (limits.send_queue_bytes). Default: 4 MiB.
    uint64_t resync_window_bytes = 4 << 20;
    // How often, at most, the client asks the node to confirm durability.
    // Default: 20 ms.
    std::chrono::milliseconds confirm_every{20};
    // The level the client asks `durable` at (node/messages.h): `local`, the
    // node's disk (and the upstream's that orders the document, if any), or
    // `replicas`, also a majority of the peers that keep the document in a
    // cluster (docs/node.md "Peers"). A commit is retired from `unconfirmed`
    // only once confirmed at this level. Default: local.
    node::Level level = node::Level::kLocal;
    // Optional: a mark taken for each document when a confirmation is asked
    // for, and handed back once the node confirms, with the level it
    // confirmed at (a node records its store head this way, to know after a
    // restart what its upstream has).
    std::function<uint64_t(const std::string& name)> mark;
    std::function<void(const std::string& name, uint64_t mark, node::Level level)> confirmed;
    // Answer the node's own `durable` question (a node asks the peers that
    // keep a document it orders, for the `replicas` level): once every
    // frame it sent before is applied here and then stored through
    // `link_scheduler`. Only a node's links set it. Default: false (the
    // question is answered `missing`).
    bool answers_durable = false;
    // Optional: the scheduler the link sends through (a node's durable
    // scheduler, so that what goes upstream is stored first). It must post
    // to the client's executor and outlive the client. Default: the
    // executor, directly.
    sync::Scheduler* link_scheduler = nullptr;
    // Agree integrity tags with the node on each connection (codec/FORMAT.md
    // "Integrity tag"): a write that crossed another on its slot is then
    // refused `diverged` and corrected. Default: false (docs/client.md).
    bool tags = false;
    // Optional: hears why the node's answer to a request was not one (a
    // `has` without its root, say: reason `failed`). The connection is then
    // closed and dialed again, with backoff.
    std::function<void(const codec::Refusal&)> broken;
    // Optional: hears the connection come up (`up`: the node answered on
    // it) and each time one ends or a dial fails (`detail`: why, and when
    // the next dial is).
    std::function<void(bool up, const std::string& detail)> changed;
    // Optional: given to each connection's link (sync::Link::OnFrameSeen),
    // for trace logs.
    std::function<void(const sync::Link::FrameSeen&)> frames;
  };

  Client(boost::asio::any_io_executor executor, Options options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Shares `document` under `name` now and after every reconnect. The
  // document must outlive the client (or Forget()). `unconfirmed`: commits
  // the node may not have (from an earlier run), re-applied after a resync.
  // Refuses already-shared.
  // `placeholder`: the document is an empty copy holding the place of one
  // the node holds (a node catching up): it only ever takes the node's
  // state, and while the node holds none it is not offered, but asked for
  // again every second.
  codec::Result<void> Share(const std::string& name, sync::Document& document,
                            sync::ShareHandlers handlers = {},
                            std::deque<codec::Commit> unconfirmed = {}, bool placeholder = false);

  // Opens a document the node holds and this client does not: `ready` hears
  // the client-owned document once it has the node's state. no-document (or
  // the node's refusal) goes to `failed`; `refused` hears each commit made
  // here that was refused, as a share's handler does.
  void Open(const std::string& name, std::function<void(sync::Document&)> ready,
            std::function<void(const std::string& reason)> failed = {},
            std::function<void(const sync::Refused&)> refused = {});

  // Stops sharing `name`.
  void Forget(const std::string& name);

  // Asks the node whether it holds `name`: `done` hears its root and kind,
  // or nullopt (not held, or no connection).
  void Probe(const std::string& name,
             std::function<void(std::optional<std::pair<codec::Id, codec::Kind>>)> done);

  // Compares `name` with the node's copy (the `digest` request): `done`
  // hears true or false, or nullopt when the answer cannot tell (no
  // connection, the share is not live, or a commit was made here while the
  // question was out, so the two were not meant to be equal).
  void Compare(const std::string& name, std::function<void(std::optional<bool> same)> done);
  // Takes the node's state for `name` (reconcile, ids kept), then re-applies
  // what the node has not confirmed, as after a reconnect.
  void Resync(const std::string& name);
  // The names shared, in order.
  std::vector<std::string> names() const;

  // Ends the connection for `why` (told to Options::broken); it is dialed
  // again, with backoff.
  void Break(const codec::Refusal& why);

  // Any request to the node; `closed` when there is no connection.
  void Ask(std::string name, boost::json::value args, std::function<void(sync::AskResult)> done);

  // Runs `fn` each time a connection is made, before any document is
  // attached on it (requests may be asked then), and now if one is being
  // made: the constructor dials at once.
  void OnConnected(std::function<void()> fn);

  bool connected() const { return link_ != nullptr && live_; }
  // Commits of `name` the node has not yet confirmed durable, nor refused.
  size_t unconfirmed(const std::string& name) const;
  // Commits of `name` refused so far; the share's `refused` handler heard
  // each, with the reasons, the commit and its undo. The node refuses one
  // before confirming it, or relays a refusal from a node above it, which
  // orders the document, after it stored it (then the commit counted as
  // durable on this node first). A refused commit is not sent again: the
  // ordering node moves this end to its own state without it (docs/sync.md
  // "One order").
  size_t refused(const std::string& name) const;
  // Asks the node, within confirm_every, to confirm what it has taken,
  // whether or not anything is unconfirmed (Options::confirmed hears the
  // marks), at Options::level or `at`, the higher. The client does this by
  // itself while commits are unconfirmed.
  void Confirm(node::Level at = node::Level::kLocal);
  // Why the node last declined to confirm ("unavailable: the node cannot
  // store writes now (...)"); empty once it confirms again. While it is set
  // the client asks again every second.
  const std::string& confirm_error() const { return confirm_error_; }
  // How many times the connection was made (1 after the first).
  uint64_t connections() const { return connections_; }

  // Counters over every connection so far (for metrics): the links' and
  // the sockets' (queued_bytes: the current connection's only).
  struct Stats {
    sync::Link::Stats link;
    sync::WebSocketChannel::Traffic traffic;
  };
  Stats stats() const;

  void Close();

 private:
  struct Entry {
    sync::Document* document = nullptr;
    std::weak_ptr<void> lifetime;           // Expires with the document.
    std::unique_ptr<sync::Document> owned;  // For Open().
    sync::ShareHandlers handlers;
    uint64_t watch = 0;
    // Commits not yet confirmed, oldest first, numbered in that order: a
    // confirmation retires those numbered up to the last one sent before it
    // was asked (a refusal may take one out of the middle meanwhile).
    struct Pending {
      uint64_t number;
      codec::Commit commit;
    };
    std::deque<Pending> unconfirmed;
    uint64_t numbered = 0;  // Numbers given so far.
    uint64_t refused = 0;   // Refused so far.
    // A refusal named a commit no longer in the link's window: which one is
    // unknown, so no mark is handed on until the resync this asks for.
    bool refused_unknown = false;
    sync::Shared* shared = nullptr;
    // The share's commits reach the node: it took this end's state, or sent
    // its own and the resync is done. Before that a durable answer confirms
    // none of this entry's commits (the resync would drop them).
    bool sending = false;
    bool replaying = false;
    bool placeholder = false;  // Share's: offered never, until it has the node's state.
    // Set while it is being attached: frees its room in the resync window.
    std::function<void()> attached;
  };

  void Connect();
  void OnConnected();
  void OnLost();
  // The node answered a request on this connection: it is live.
  void Answered();
  // Queues `name` to attach; attaches what the resync window has room for.
  void Queue(const std::string& name);
  void AttachNext();
  // Queues `name` again in a second, on this connection, if it is not
  // shared by then.
  void AskAgain(const std::string& name);
  void Attach(const std::string& name, const std::function<void()>& attached);
  void Watch(const std::string& name, Entry& entry);
  void Replay(const std::string& name, Entry& entry);
  void OnRefused(Entry& entry, const sync::Refused& refused);
  static void Hold(Entry& entry, codec::Commit commit);
  void Retire();
  // Answers the node's `durable` on this connection (Options::answers_durable).
  void AnswerDurable();

  boost::asio::any_io_executor executor_;
  sync::AsioScheduler scheduler_;
  Options options_;
  sync::Scheduler& links_;  // The link's: options_.link_scheduler or scheduler_.
  std::unique_ptr<sync::WebSocketChannel> channel_;
  std::unique_ptr<sync::Link> link_;
  std::optional<sync::Requests> requests_;
  std::map<std::string, Entry> entries_;
  // Waiting to attach on this connection; attaching now, and their bytes.
  std::deque<std::string> waiting_;
  size_t attaching_ = 0;
  uint64_t attaching_bytes_ = 0;
  uint64_t round_ = 0;  // One more each time a connection is lost: what settles later is stale.
  std::function<void()> on_connected_;
  boost::asio::steady_timer reconnect_, confirm_;
  std::chrono::milliseconds backoff_;
  // When the node first answered on this connection: one that ends sooner
  // than backoff_max after does not reset the backoff.
  std::optional<std::chrono::steady_clock::time_point> answered_since_;
  std::mt19937_64 jitter_;
  std::shared_ptr<Client*> self_;
  uint64_t connections_ = 0;
  uint64_t question_ = 0;  // Numbers the durable questions asked.
  Stats retired_;          // Connections that ended.
  bool live_ = false, closed_ = false, confirm_posted_ = false, asking_ = false;
  bool confirm_replicas_ = false;  // The next question asks at `replicas`.
  std::string confirm_error_;
};

}  // namespace aweft
