#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "admin/problem.h"

// aweftctl's two ways to reach documents: a running node's admin endpoint,
// or a data directory opened directly. Both answer in the admin endpoint's
// JSON shapes (docs/admin.md), so every command prints the same either way.
namespace aweft::node::ctl {

// The node or the data directory cannot be reached at all: exit 3.
class Unreachable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // {"documents": [...], "next": NAME|null}
  virtual admin::Answer Documents(const std::string& prefix, const std::string& after,
                                  size_t limit) = 0;
  virtual admin::Answer State(const std::string& name, std::optional<uint64_t> at) = 0;
  virtual admin::Answer Commits(const std::string& name, uint64_t since, size_t limit) = 0;
  virtual admin::Answer Export(const std::string& name) = 0;
  virtual admin::Answer Import(const std::string& name, const boost::json::value& exported) = 0;
  virtual admin::Answer Snapshot(const std::string& name) = 0;
  // {"aweft_name{labels}": value, ...}
  virtual admin::Answer Stats() = 0;
  // {"name", "removed": true}
  virtual admin::Answer Remove(const std::string& name) = 0;
};

// A running node's own routes (/v1/links, /v1/node, /ready): the JSON it
// answers, or its problem. Throws Unreachable as Online's calls do.
admin::Answer AskNode(const std::string& url, const std::string& token, const std::string& route);

// Talks to `url` ("http://host:port") with `token` when not empty.
std::unique_ptr<Backend> Online(const std::string& url, const std::string& token);

// Opens DIR/store. Throws Unreachable when it cannot be opened (missing,
// another version, or in use by a running node). An import of a document
// over `max_document_bytes` is refused `limit`, as the node would refuse it.
std::unique_ptr<Backend> Offline(const std::string& data, uint64_t max_document_bytes);

}  // namespace aweft::node::ctl
