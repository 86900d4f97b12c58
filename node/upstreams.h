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
  };

  // `links`: the scheduler upstream links send through (what goes up is
  // stored first). `tls`: what wss:// upstreams are checked against (null:
  // the system's certificates).
  Upstreams(const Config& config, boost::asio::io_context& io, storage::Store& store,
            sync::Scheduler& links, std::shared_ptr<boost::asio::ssl::context> tls,
            NodeMetrics& meters);

  // The first upstream whose names match `name` and that is no cycle; null
  // when there is none.
  Link* For(std::string_view name);
  // This node's id, then the paths of its upstreams.
  std::vector<std::string> Path() const;
  // Shares a document just loaded with its upstream, if it has one: what
  // the upstream has not confirmed is re-applied after its state. `ready`
  // hears each time the document holds the upstream's state again (or the
  // upstream took this node's, having none).
  void Share(const std::string& name, sync::Document& document, std::function<void()> ready);
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
  using Confirmed = std::function<void(std::optional<codec::Refusal> why)>;
  void AwaitConfirmed(const std::vector<std::string>& names, Confirmed done);
  // Called with each commit an upstream refuses (after this node took it),
  // to refuse it to its writer too. Set once, before the first Share.
  using Refusals = std::function<void(const std::string& name, const codec::Commit& commit,
                                      const std::vector<codec::WireReason>& reasons)>;
  void OnRefused(Refusals fn) { on_refused_ = std::move(fn); }

  const std::vector<std::unique_ptr<Link>>& links() const { return links_; }

 private:
  void Hello(Link& link);
  // Compares every document shared with `link` with the upstream's copy; one
  // found apart twice in a row takes the upstream's state.
  void Digests(Link& link);
  void ScheduleHello();
  void LoadConfirmed();
  void SaveConfirmed();
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
  boost::asio::steady_timer hello_;
  Refusals on_refused_;
  struct Awaiting {
    struct Mark {
      Link* link;
      std::string name;
      uint64_t seq;
    };
    std::vector<Mark> marks;  // Still to be confirmed.
    Confirmed done;
    std::chrono::steady_clock::time_point until;
  };
  std::vector<Awaiting> awaiting_;
  bool closed_ = false;
};

}  // namespace aweft::node
