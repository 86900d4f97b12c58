#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codec/refusal.h"
#include "node/config.h"
#include "node/upstreams.h"

namespace aweft::node {

class Loop;

// The `replicas` level of `durable` where this node is home (docs/node.md
// "Peers"): a document it orders is confirmed once a majority of the
// cluster.replicas peers that keep it, this node among them if it is one,
// hold what this node stored of it. Each peer that keeps a document links
// to its home (Upstreams), so it is one of this node's connections; the
// home asks `durable` back over that connection (aweft::Client answers it
// once what the home sent before is stored there).
//
// Home thread only.
class Quorum {
 public:
  Quorum(const Config& config, boost::asio::io_context& io, Upstreams& upstreams);

  // A peer's connection said hello with its id (the newest one counts).
  void Joined(const std::string& id, Loop& loop, uint64_t connection);

  // Calls `done` once each of `names` this node orders (with peers) is
  // stored on a majority of its replicas, or with why not (`unavailable`:
  // which replica lacked what) when that is out of reach, or after 5 s.
  // At once when this node orders none of them.
  void Await(const std::vector<std::string>& names, Upstreams::ConfirmedFn done);

 private:
  struct Wait;
  // Asks peer `id` whether it stored `name` for `wait`.
  void Ask(std::shared_ptr<Wait> wait, const std::string& name, const std::string& id);
  // Answers `wait` if it is decided; with `expired`, as it stands.
  static void Decide(Wait& wait, bool expired);

  const Config& config_;
  boost::asio::io_context& io_;
  Upstreams& upstreams_;
  struct Place {
    Loop* loop;
    uint64_t connection;
  };
  std::map<std::string, Place> peers_;  // By node id.
};

}  // namespace aweft::node
