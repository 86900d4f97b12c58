#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "node/admin_source.h"
#include "node/client.h"
#include "node/config.h"
#include "storage/store.h"

namespace aweft::node {

// "a > b > c".
std::string JoinedPath(const std::vector<std::string>& path);

// The nodes this one dials (docs/node.md "Clusters"): a Client per
// configured upstream; `hello` on each connection and every second after,
// which learns the path of nodes above and refuses a cycle; and, per
// (upstream, document), the store seq that upstream has confirmed, kept in
// DATA/upstream-confirmed so that after a restart only what it may lack is
// sent again. Home thread only.
class Upstreams {
 public:
  struct Link {
    Upstream config;
    std::unique_ptr<Client> client;
    std::vector<std::string> path;  // Its id, then its own upstreams' paths.
    bool cycle = false;             // Refused: it leads back here.
    // Anti-entropy: when the next digest round is due, when every shared
    // document last agreed with the upstream's, and the documents whose
    // last round found them apart.
    std::chrono::steady_clock::time_point next_digests;
    std::optional<std::chrono::steady_clock::time_point> agreed;
    std::map<std::string, int> apart;
    // A peer ([[peers]]): its node id once known (from `hello`, or kept
    // from an earlier run), whether it is this node itself, and since when
    // its link has been down (it stays a candidate for home until
    // cluster.failover_ms has passed).
    bool peer = false;
    bool self = false;
    std::string id;
    std::chrono::steady_clock::time_point down_since, up_since;
    // Whether its last `hello` answer said it takes its place as home (a
    // peer catching up does not yet); false until the first on each
    // connection, kept while the link is down.
    bool home = false;
  };

  // `links`: the scheduler upstream links send through (what goes up is
  // stored first). `tls`: what wss:// upstreams are checked against (null:
  // the system's certificates).
  Upstreams(const Config& config, boost::asio::io_context& io, storage::Store& store,
            sync::Scheduler& links, std::shared_ptr<boost::asio::ssl::context> tls,
            NodeMetrics& meters);

  // The link to the place that orders `name`; null when this node does.
  // Without peers, the first upstream whose names match `name` and that is
  // no cycle. With peers, the document's home: of this node and the peers
  // whose ids are known and that are live, the first by rendezvous ranking
  // (node/placement.h). A node only ever links to a peer ranked before it,
  // so the links of one document never make a cycle.
  Link* For(std::string_view name);
  // Whether this node, among peers, takes its place as home of documents:
  // once it has caught up (CatchUp); always without peers.
  bool home_ready() const { return home_ready_; }
  void SetHomeReady();
  // Whether this node is one of the cluster.replicas peers that keep `name`
  // (of this node and every peer whose id it knows, live or not), and so
  // keeps it loaded; false without peers.
  bool Keeps(std::string_view name) const;
  // The ids of those peers, this node's among them if it is one; empty
  // without peers.
  std::vector<std::string> Keepers(std::string_view name) const;
  // This node's id, then the paths of its upstreams.
  std::vector<std::string> Path() const;
  // Shares a document just loaded with its upstream, if it has one: what
  // the upstream has not confirmed is re-applied after its state. `ready`
  // hears each time the document holds the upstream's state again (or the
  // upstream took this node's, having none).
  // A `placeholder` (Hub::Loaded) only ever takes the upstream's state.
  void Share(const std::string& name, sync::Document& document, std::function<void()> ready,
             bool placeholder);
  // Stops sharing `name` with every upstream (it was evicted or deleted).
  void Forget(const std::string& name);
  // Closes every upstream link (shutdown).
  void Close();
  // Calls `done` once the upstream that orders each of `names` has
  // confirmed this node's store of it up to its head now (so a client told
  // `durable` holds what the document's order kept: docs/node.md
  // "Clusters"); at once for a name no upstream orders. With why not
  // instead (`unavailable`) when that upstream is not connected, or has not
  // confirmed within 5 s. Asks the upstreams to confirm now.
  // At `replicas` (node/messages.h), that upstream, their home, confirms
  // a majority of the document's replicas hold it too (node/quorum.h).
  using ConfirmedFn = std::function<void(std::optional<codec::Refusal> why)>;
  static constexpr std::chrono::seconds kConfirmWithin{5};
  void AwaitConfirmed(const std::vector<std::string>& names, Level level, ConfirmedFn done);
  // Called with each commit an upstream refuses (after this node took it),
  // to refuse it to its writer too. Set once, before the first Share.
  using Refusals = std::function<void(const std::string& name, const codec::Commit& commit,
                                      const std::vector<codec::WireReason>& reasons)>;
  void OnRefused(Refusals fn) { on_refused_ = std::move(fn); }

  const std::vector<std::unique_ptr<Link>>& links() const { return links_; }

 private:
  // Makes the link to `upstream` (a peer with `peer`).
  void Dial(const Upstream& upstream, bool peer, boost::asio::io_context& io,
            sync::Scheduler& links, std::shared_ptr<boost::asio::ssl::context> tls);
  void ShareWith(Link& link, const std::string& name, sync::Document& document,
                 std::function<void()> ready);
  // This node orders `name`: the other peers that keep it are asked to
  // bring it in now (`keep`), so that it is on its replicas from its first
  // write rather than from their next catch-up round.
  void AskToKeep(const std::string& name, const sync::Document& document);
  // Whether `peer` may be home: its link is up, or has been down for less
  // than cluster.failover_ms.
  bool Live(const Link& peer, std::chrono::steady_clock::time_point now) const;
  // When the peers live or their ids changed, moves every shared document
  // whose home changed to its new home (docs/node.md "Clusters").
  void Relink();
  std::vector<std::string> View() const;  // The ids of the live peers, sorted.
  // A peer's id, learnt from its `hello` answer.
  void LearnedId(Link& link, const std::string& id);
  void LoadPeerIds();
  void SavePeerIds();
  void Hello(Link& link);
  // Compares every document shared with `link` with the upstream's copy; one
  // found apart twice in a row takes the upstream's state.
  void Digests(Link& link);
  void ScheduleHello();
  void LoadConfirmed();
  void SaveConfirmed();
  // Whether `link` confirmed `name` up to store seq `seq` at `level`.
  bool Confirmed(const Link& link, const std::string& name, Level level, uint64_t seq) const;
  // Answers the AwaitConfirmed calls now confirmed; with `expire`, also
  // those whose upstream is gone or that waited too long.
  void Settle(bool expire);
  static codec::Refusal NotConfirmed(const Link& link, const std::string& name,
                                     const std::string& because);

  const Config& config_;
  storage::Store& store_;
  NodeMetrics& meters_;
  std::vector<std::unique_ptr<Link>> links_;
  // Per (upstream url, document): the store seq the upstream has confirmed.
  std::map<std::pair<std::string, std::string>, uint64_t> confirmed_;
  // The same at `replicas` (not kept across restarts).
  std::map<std::pair<std::string, std::string>, uint64_t> replicated_;
  boost::asio::steady_timer hello_;
  Refusals on_refused_;
  // The documents shared (Share, until Forget), and the link each went to.
  struct SharedDocument {
    Link* link = nullptr;
    sync::Document* document = nullptr;
    std::function<void()> ready;
    bool placeholder = false;  // Until the first `ready`.
  };
  std::map<std::string, SharedDocument, std::less<>> shared_;
  std::vector<std::string> view_;  // View() at the last Relink.
  bool relink_due_ = false;        // A document was shared under another view since.
  bool home_ready_;
  struct Awaiting {
    struct Mark {
      Link* link;
      std::string name;
      uint64_t seq;
    };
    std::vector<Mark> marks;  // Still to be confirmed.
    Level level;
    ConfirmedFn done;
    std::chrono::steady_clock::time_point until;
  };
  std::vector<Awaiting> awaiting_;
  bool closed_ = false;
};

}  // namespace aweft::node
