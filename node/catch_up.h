#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>

#include "node/config.h"
#include "node/hub.h"
#include "node/messages.h"
#include "node/upstreams.h"
#include "storage/store.h"

namespace aweft::node {

// Keeps, among peers, every document this node is a replica of loaded and
// shared with its home, whether or not a client has it open
// (docs/node.md "Peers"): the ones it stores, and, every 10 s, each one the
// live peers list (`names`) that it keeps and does not hold yet. At most 16
// are brought in at once; a document counts as brought in once its home's
// state is in. The first round ends the node's catch-up: only then does it
// take its place as home (Upstreams::SetHomeReady). Home thread only; does
// nothing without peers.
class CatchUp {
 public:
  CatchUp(const Config& config, boost::asio::io_context& io, Hub& hub, Upstreams& upstreams,
          storage::Store& store);
  void Stop();

  // Its home asks this node to keep `document` (the `keep` request): it
  // is brought in now rather than at the next round, if this node keeps it.
  void Keep(const Listed& document) { Want(document.name, document.held); }
  // Documents to bring in: waiting, and under way.
  uint64_t behind() const { return queue_.size() + under_way_.size(); }
  // Documents brought in since the start.
  uint64_t caught_up() const { return caught_up_; }
  // Whether the first round has ended.
  bool done() const { return upstreams_.home_ready(); }

 private:
  void Tick();
  // Lists `link`'s documents after `after`, a page at a time.
  void List(Upstreams::Link& link, const std::string& after, uint64_t round);
  void Want(const std::string& name, std::optional<Held> held);
  void BringIn();

  const Config& config_;
  Hub& hub_;
  Upstreams& upstreams_;
  storage::Store& store_;
  boost::asio::steady_timer timer_;
  const std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point next_round_, next_progress_;
  uint64_t round_ = 0;
  size_t listing_ = 0;  // Peers of this round not yet listed to the end.
  std::deque<std::pair<std::string, std::optional<Held>>> queue_;
  std::set<std::string, std::less<>> queued_;
  std::map<std::string, std::chrono::steady_clock::time_point, std::less<>> under_way_;
  uint64_t caught_up_ = 0;
  bool stopped_ = false;
};

}  // namespace aweft::node
