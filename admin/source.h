#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "admin/problem.h"

namespace aweft::admin {

// One check /ready reports.
struct Check {
  std::string name;  // "store", "listener", "upstreams".
  bool ok = false;
  std::string detail;  // Why it fails, or what it found.
};

// A page of the document list.
struct DocumentQuery {
  std::string prefix;    // Only names starting with it.
  std::string contains;  // Only names holding it (anywhere; empty: any).
  std::string after;     // Only names sorting after it (the previous page's last).
  size_t limit = 100;    // At most this many (1..1000).
};

// The rest of an answer whose JSON costs much to build (a whole document, a
// page of commits): the source's call does what needs the node and returns
// this for the rest, which the endpoint runs on a thread of its own, so that
// the links the node's loop serves are not held up. It owns what it uses.
using Later = std::function<Answer()>;

// A Later whose answer is known already.
inline Later Now(Answer answer) {
  return [answer = std::move(answer)] { return answer; };
}

// What the admin endpoint asks of the node: plain JSON answers in the shapes
// docs/admin.md shows, or a Problem. The node implements it (node/); the
// endpoint knows nothing else of storage or sync. Called on the node's loop
// thread only, one call at a time.
class Source {
 public:
  virtual ~Source() = default;

  // GET /ready: every check; ready when all pass.
  virtual std::vector<Check> Readiness() = 0;
  // GET /v1/node: id, version, config in effect (secrets masked), upstreams.
  virtual boost::json::object NodeInfo() = 0;
  // GET /v1/documents: {"documents": [...], "next": NAME|null}.
  virtual boost::json::object Documents(const DocumentQuery& query) = 0;
  // Every /v1/documents/NAME route asks this first: a name the node could
  // never hold is refused invalid-name (400), not looked up.
  virtual std::optional<codec::Refusal> CheckName(std::string_view /*name*/) {
    return std::nullopt;
  }
  // GET /v1/documents/NAME[?at=SEQ]: the state as JSON, now or after `at`.
  virtual Later State(std::string_view name, std::optional<uint64_t> at) = 0;
  // GET /v1/documents/NAME/commits: the commits after `since`, at most `limit`.
  virtual Later Commits(std::string_view name, uint64_t since, size_t limit) = 0;
  // GET /v1/documents/NAME/export: one canonical commit plus metadata.
  virtual Later Export(std::string_view name) = 0;
  // PUT /v1/documents/NAME: creates NAME from what Export gave.
  virtual Answer Import(std::string_view name, const boost::json::value& exported) = 0;
  // POST /v1/documents/NAME/snapshot.
  virtual Answer Snapshot(std::string_view name) = 0;
  // DELETE /v1/documents/NAME (confirmed already).
  virtual Answer Remove(std::string_view name) = 0;
  // GET /v1/links: {"links": [...]}.
  virtual boost::json::object Links() = 0;
  // GET /v1/cluster: this node's peers and its part among them.
  virtual boost::json::object Cluster() = 0;
  // Before /metrics renders: brings gauges and mirrored counters up to date.
  virtual void CollectMetrics() = 0;
};

}  // namespace aweft::admin
