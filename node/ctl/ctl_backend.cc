#include "node/ctl/ctl_backend.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <filesystem>

#include "admin/http_client.h"
#include "codec/commit.h"
#include "codec/id.h"
#include "codec/json.h"
#include "node/json/commit_json.h"
#include "node/json/document_json.h"
#include "storage/store.h"
#include "sync/snapshot.h"

namespace aweft::node::ctl {
namespace {

namespace json = boost::json;
using admin::Answer;
using codec::Reason;
using codec::Refusal;

class OnlineBackend : public Backend {
 public:
  OnlineBackend(std::string url, std::string token)
      : url_(std::move(url)), token_(std::move(token)) {
    while (!url_.empty() && url_.back() == '/') url_.pop_back();
  }

  Answer Documents(const std::string& prefix, const std::string& after, size_t limit) override {
    return Call("GET", "/v1/documents?prefix=" + admin::PathEncode(prefix) + "&after=" +
                           admin::PathEncode(after) + "&limit=" + std::to_string(limit));
  }
  Answer State(const std::string& name, std::optional<uint64_t> at) override {
    return Call("GET", Doc(name) + (at ? "?at=" + std::to_string(*at) : ""));
  }
  Answer Commits(const std::string& name, uint64_t since, size_t limit) override {
    return Call("GET", Doc(name) + "/commits?since=" + std::to_string(since) +
                           "&limit=" + std::to_string(limit));
  }
  Answer Export(const std::string& name) override { return Call("GET", Doc(name) + "/export"); }
  Answer Import(const std::string& name, const json::value& exported) override {
    return Call("PUT", Doc(name), codec::WriteJson(exported));
  }
  Answer Snapshot(const std::string& name) override {
    return Call("POST", Doc(name) + "/snapshot");
  }
  Answer Stats() override;
  Answer Remove(const std::string& name) override {
    return Call("DELETE", Doc(name) + "?confirm=" + admin::PathEncode(name));
  }
  Answer Get(const std::string& route) { return Call("GET", route); }

 private:
  static std::string Doc(const std::string& name) {
    return "/v1/documents/" + admin::PathEncode(name);
  }
  admin::HttpReply Send(const std::string& method, const std::string& target,
                        const std::string& body = "") {
    try {
      return admin::HttpRequest(url_, method, target, token_, body);
    } catch (const admin::HttpError& e) {
      throw Unreachable(std::string("cannot reach the node at ") + url_ + ": " + e.what());
    }
  }
  Answer Call(const std::string& method, const std::string& target, const std::string& body = "");

  std::string url_, token_;
};

Answer OnlineBackend::Call(const std::string& method, const std::string& target,
                           const std::string& body) {
  const admin::HttpReply reply = Send(method, target, body);
  json::error_code ec;
  json::value parsed = codec::ParseJson(reply.body, ec);
  if (ec) {
    throw Unreachable("the node at " + url_ + " answered " + std::to_string(reply.status) +
                      " with no JSON (is it an aweft-node admin endpoint?)");
  }
  if (reply.status >= 200 && reply.status < 300) return parsed;
  admin::Problem problem;
  problem.status = reply.status;
  if (const json::object* o = parsed.if_object()) {
    auto text = [&](const char* key) {
      const json::value* v = o->if_contains(key);
      return v && v->is_string() ? std::string(v->as_string()) : std::string();
    };
    problem.reason = text("reason");
    problem.message = text("message");
    problem.fix = text("fix");
  }
  return problem;
}

// The exposition format's samples as {"name{labels}": value}; comments and
// histogram buckets are left out.
Answer OnlineBackend::Stats() {
  const admin::HttpReply reply = Send("GET", "/metrics");
  if (reply.status != 200) {
    return Call("GET", "/metrics");  // The node's problem, as JSON.
  }
  json::object out;
  size_t start = 0;
  while (start < reply.body.size()) {
    size_t end = reply.body.find('\n', start);
    if (end == std::string::npos) end = reply.body.size();
    const std::string line = reply.body.substr(start, end - start);
    start = end + 1;
    const size_t space = line.rfind(' ');
    if (line.empty() || line[0] == '#' || space == std::string::npos) continue;
    const std::string key = line.substr(0, space);
    if (key.find("_bucket{") != std::string::npos) continue;
    try {
      out[key] = std::stod(line.substr(space + 1));
    } catch (const std::exception&) {
      // NaN or +Inf: not a figure to print.
    }
  }
  return out;
}

Refusal NoDocument(const std::string& name) {
  return {Reason::kNoDocument, "the data directory holds no \"" + name + "\""};
}

class OfflineBackend : public Backend {
 public:
  OfflineBackend(storage::Store store, uint64_t max_document_bytes)
      : store_(std::move(store)), max_document_bytes_(max_document_bytes) {}

  Answer Documents(const std::string& prefix, const std::string& after, size_t limit) override {
    auto infos = store_.List(prefix, after, limit + 1);
    const bool more = infos.size() > limit;
    if (more) infos.pop_back();
    json::array documents;
    for (const auto& info : infos) {
      json::object one = InfoToJson(info);
      one["links"] = json::array();
      documents.push_back(std::move(one));
    }
    json::value next = nullptr;
    if (more) next = json::string(infos.back().name);
    return json::object{{"documents", std::move(documents)}, {"next", std::move(next)}};
  }

  Answer State(const std::string& name, std::optional<uint64_t> at) override {
    if (!store_.Info(name)) return NoDocument(name);
    const uint64_t seq = at.value_or(store_.Head(name));
    auto state = store_.StateAt(name, seq);
    if (!state) return state.error();
    json::object out{{"name", name}, {"seq", seq}};
    for (auto& [key, value] : StateToJson(*state)) out[key] = value;
    return out;
  }

  Answer Commits(const std::string& name, uint64_t since, size_t limit) override {
    auto info = store_.Info(name);
    if (!info) return NoDocument(name);
    auto entries = store_.Since(name, since, limit);
    if (!entries) return entries.error();
    json::array commits;
    for (const auto& entry : *entries) {
      commits.push_back(
          json::object{{"seq", entry.seq}, {"commit", CommitToJson(entry.commit, IdForm::kText)}});
    }
    const uint64_t last = entries->empty() ? since : entries->back().seq;
    json::value next = nullptr;
    if (last < info->head) next = last;
    return json::object{{"name", name},
                        {"since", since},
                        {"head", info->head},
                        {"floor", info->floor},
                        {"commits", std::move(commits)},
                        {"next", next}};
  }

  Answer Export(const std::string& name) override {
    if (!store_.Info(name)) return NoDocument(name);
    const uint64_t head = store_.Head(name);
    auto state = store_.StateAt(name, head);
    if (!state) return state.error();
    auto document = sync::FromSnapshot(*state);
    if (!document) return document.error();
    return ExportToJson(name, **document, head);
  }

  Answer Import(const std::string& name, const json::value& body) override {
    if (store_.Info(name)) {
      return admin::MakeProblem(admin::Why::kExists,
                                "the data directory holds \"" + name + "\" already");
    }
    auto exported = ExportFromJson(body);
    if (!exported) return admin::MakeProblem(exported.error(), 400);
    if (auto over = OverDocumentLimit(*exported, max_document_bytes_,
                                      "limits.max_document_bytes; --max-document-bytes here")) {
      return admin::MakeProblem(*over, 413);
    }
    auto document = store_.OpenDocument(name, exported->kind, exported->root);
    if (!document) return document.error();
    if (exported->commit) {
      if (auto applied = (*document)->Apply(*exported->commit); !applied) return applied.error();
    }
    store_.Sync();
    store_.CloseDocument(name);
    json::object out = InfoToJson(*store_.Info(name));
    out["links"] = json::array();
    return out;
  }

  Answer Remove(const std::string& name) override {
    if (auto removed = store_.Remove(name); !removed) return removed.error();
    return json::object{{"name", name}, {"removed", true}};
  }

  Answer Snapshot(const std::string& name) override {
    if (auto taken = store_.Snapshot(name); !taken) return taken.error();
    auto info = store_.Info(name);
    return json::object{{"name", name}, {"snapshot", info->snapshot}, {"head", info->head}};
  }

  // The figures a closed store has, under the node's metric names.
  Answer Stats() override {
    const storage::StoreStats stats = store_.Stats(/*with_rocksdb=*/true);
    uint64_t bytes = 0, documents = 0;
    for (const auto& info : store_.List()) {
      bytes += info.approximate_bytes;
      ++documents;
    }
    auto number = [](uint64_t v) { return static_cast<double>(v); };
    return json::object{
        {"aweft_documents_stored", number(documents)},
        {"aweft_documents_bytes", number(bytes)},
        {"aweft_rocksdb_live_sst_bytes", number(stats.live_sst_bytes)},
        {"aweft_rocksdb_memtable_bytes", number(stats.memtable_bytes)},
        {"aweft_rocksdb_estimated_keys", number(stats.estimated_keys)},
        {"aweft_rocksdb_pending_compaction_bytes", number(stats.pending_compaction_bytes)},
        {"aweft_rocksdb_level0_files", number(stats.level0_files)},
        {"aweft_rocksdb_table_readers_bytes", number(stats.table_readers_bytes)}};
  }

 private:
  storage::Store store_;
  uint64_t max_document_bytes_;
};

}  // namespace

std::unique_ptr<Backend> Online(const std::string& url, const std::string& token) {
  return std::make_unique<OnlineBackend>(url, token);
}

std::unique_ptr<Backend> Offline(const std::string& data, uint64_t max_document_bytes) {
  const std::string path = data + "/store";
  if (!std::filesystem::is_directory(path)) {
    throw Unreachable("'" + data + "' holds no store (no " + path + ")");
  }
  try {
    auto store = storage::Store::Open(path);
    if (!store) throw Unreachable("cannot open " + path + ": " + store.error().ToString());
    return std::make_unique<OfflineBackend>(std::move(*store), max_document_bytes);
  } catch (const storage::Failure& e) {
    throw Unreachable("cannot open " + path +
                      " (a running node holds it? then use --node): " + e.what());
  }
}

Answer AskNode(const std::string& url, const std::string& token, const std::string& route) {
  return OnlineBackend(url, token).Get(route);
}

}  // namespace aweft::node::ctl
