#pragma once

#include <boost/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/source.h"

namespace aweft::admin::testing {

namespace json = boost::json;

// A node of two documents, "a" and "team/b", that remembers what it was asked.
class FakeSource : public Source {
 public:
  std::vector<Check> Readiness() override {
    return {{"store", true, ""}, {"upstreams", ready, "x"}};
  }
  json::object NodeInfo() override { return {{"id", "fake"}}; }
  json::object Documents(const DocumentQuery& query) override {
    asked = query.prefix + "|" + query.after + "|" + std::to_string(query.limit);
    return {{"documents", json::array()}, {"next", nullptr}};
  }
  Later State(std::string_view name, std::optional<uint64_t> at) override {
    asked = std::string(name) + "@" + (at ? std::to_string(*at) : "now");
    if (name != "a" && name != "team/b") return Now(NoDocument(name));
    return Now(json::object{{"name", name}});
  }
  Later Commits(std::string_view name, uint64_t since, size_t limit) override {
    asked = std::string(name) + ":" + std::to_string(since) + ":" + std::to_string(limit);
    if (since < 10) return Now(codec::Refusal{codec::Reason::kTruncated, "history starts at 10"});
    return Now(json::object{{"commits", json::array()}});
  }
  Later Export(std::string_view name) override { return Now(json::object{{"name", name}}); }
  Answer Import(std::string_view name, const json::value& body) override {
    asked = std::string(name) + "=" + json::serialize(body);
    return json::object{{"name", name}};
  }
  Answer Snapshot(std::string_view name) override {
    asked = "snapshot " + std::string(name);
    return json::object{{"name", name}};
  }
  Answer Remove(std::string_view name) override {
    asked = "removed " + std::string(name);
    return json::object{{"removed", true}};
  }
  json::object Links() override { return {{"links", json::array()}}; }
  json::object Cluster() override { return {{"peers", json::array()}}; }
  void CollectMetrics() override { ++collected; }

  static Answer NoDocument(std::string_view name) {
    return codec::Refusal{codec::Reason::kNoDocument, "no " + std::string(name)};
  }

  bool ready = true;
  std::string asked;
  int collected = 0;
};

}  // namespace aweft::admin::testing
