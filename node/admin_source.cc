#include "node/admin_source.h"

#include <spdlog/spdlog.h>

#include <boost/json/array.hpp>

#include "codec/id.h"
#include "node/json/commit_json.h"
#include "node/json/document_json.h"
#include "node/log.h"
#include "node/node.h"
#include "storage/format.h"
#include "sync/snapshot.h"

namespace aweft::node {
namespace {

namespace json = boost::json;
using codec::Reason;
using codec::Refusal;

json::object InOut(uint64_t in, uint64_t out) { return {{"in", in}, {"out", out}}; }

Refusal NotHeld(std::string_view name) {
  return Refusal{Reason::kNoDocument, "this node holds no \"" + std::string(name) + "\""};
}

std::string Masked(const std::string& secret) { return secret.empty() ? "" : "********"; }

json::array Texts(const std::vector<std::string>& texts) {
  return json::array(texts.begin(), texts.end());
}

}  // namespace

void AddTraffic(sync::TextChannel::Traffic& total, const sync::TextChannel::Traffic& more) {
  total.bytes_in += more.bytes_in;
  total.bytes_out += more.bytes_out;
}

std::vector<admin::Check> NodeAdmin::Readiness() {
  std::vector<admin::Check> checks;
  const auto why = node_.hub().Unavailable();
  checks.push_back({"store", !why, why ? *why : "open at " + node_.config().data + "/store"});
  checks.push_back(
      {"listener", !node_.stopping(), node_.stopping() ? "shutting down" : node_.url()});
  size_t linked = 0, upstreams = 0, peers = 0, peers_linked = 0;
  std::string missing;
  for (const auto& upstream : node_.upstreams().links()) {
    // A node serves while peers are down: it orders their documents then.
    if (upstream->peer) {
      peers += !upstream->self;
      peers_linked += !upstream->self && upstream->client->connected();
      continue;
    }
    ++upstreams;
    if (upstream->client->connected() && !upstream->cycle) {
      ++linked;
    } else {
      missing += (missing.empty() ? "" : ", ") + upstream->config.url +
                 (upstream->cycle ? " (refused: a cycle)" : " (not connected)");
    }
  }
  const bool all = linked == upstreams;
  checks.push_back({"upstreams", all,
                    upstreams == 0 ? "none configured"
                    : all          ? std::to_string(linked) + " linked"
                                   : missing});
  if (peers > 0) {
    checks.push_back(
        {"peers", true, std::to_string(peers_linked) + " of " + std::to_string(peers) + " linked"});
  }
  return checks;
}

json::object NodeAdmin::Config() const {
  const node::Config& c = node_.config();
  json::array tokens;
  for (const Token& token : c.tokens) {
    tokens.push_back(json::object{{"token", Masked(token.secret)},
                                  {"read", Texts(token.read)},
                                  {"write", Texts(token.write)}});
  }
  json::array upstreams, peers;
  for (const Upstream& upstream : c.upstreams) {
    upstreams.push_back(json::object{{"url", upstream.url},
                                     {"names", Texts(upstream.names)},
                                     {"token", Masked(upstream.token)}});
  }
  for (const Upstream& peer : c.peers) {
    peers.push_back(json::object{{"url", peer.url}, {"token", Masked(peer.token)}});
  }
  const char* durability = c.storage.durability == storage::Durability::kSync  ? "sync"
                           : c.storage.durability == storage::Durability::kWal ? "wal"
                                                                               : "none";
  return {
      {"data", c.data},
      {"listen", c.listen},
      {"admin", c.admin},
      {"admin_token", Masked(c.admin_token)},
      {"admin_hosts", Texts(c.admin_hosts)},
      {"allowed_origins", Texts(c.allowed_origins)},
      {"log_level", c.log_level},
      {"log_format", c.log_format},
      {"node_id", c.node_id},
      {"threads", c.threads},
      {"storage", json::object{{"durability", durability},
                               {"snapshot_every_commits", c.storage.snapshot_every_commits},
                               {"snapshot_every_bytes", c.storage.snapshot_every_bytes},
                               {"history_commits", c.storage.history_commits}}},
      {"documents", json::object{{"idle_evict_seconds", c.idle_evict.count()},
                                 {"create", Texts(c.create)},
                                 {"max_frame_bytes", c.max_frame_bytes}}},
      {"limits", json::object{{"max_commit_bytes", c.limits.max_commit_bytes},
                              {"max_document_bytes", c.limits.max_document_bytes},
                              {"max_deltas_per_commit", c.limits.max_deltas_per_commit},
                              {"max_topics_per_link", c.limits.max_topics_per_link},
                              {"max_documents", c.limits.max_documents},
                              {"max_requests_in_flight", c.limits.max_requests_in_flight},
                              {"max_text_bytes", c.limits.max_text_bytes},
                              {"max_http_body_bytes", c.limits.max_http_body_bytes},
                              {"max_connections_per_address", c.limits.max_connections_per_address},
                              {"max_connections", c.limits.max_connections},
                              {"send_queue_bytes", c.limits.send_queue_bytes},
                              {"idle_timeout_seconds", c.limits.idle_timeout.count()},
                              {"memory_bytes", c.limits.memory_bytes},
                              {"message_timeout_seconds", c.limits.message_timeout.count()}}},
      // Paths only: the key itself never leaves its file.
      {"tls", json::object{{"cert_file", c.tls.cert_file},
                           {"key_file", c.tls.key_file},
                           {"ca_file", c.tls.ca_file}}},
      {"tokens", std::move(tokens)},
      {"upstreams", std::move(upstreams)},
      {"peers", std::move(peers)},
      {"cluster", json::object{{"replicas", c.cluster.replicas},
                               {"failover_ms", c.cluster.failover.count()}}}};
}

json::object NodeAdmin::NodeInfo() {
  json::array upstreams, peers;
  for (const auto& upstream : node_.upstreams().links()) {
    if (upstream->peer) {
      peers.push_back(json::object{{"url", upstream->config.url},
                                   {"id", upstream->id},
                                   {"self", upstream->self},
                                   {"connected", upstream->client->connected()}});
      continue;
    }
    upstreams.push_back(json::object{{"url", upstream->config.url},
                                     {"connected", upstream->client->connected()},
                                     {"cycle", upstream->cycle},  // not a reason: a field
                                     {"path", Texts(upstream->path)}});
  }
  const auto uptime = std::chrono::steady_clock::now() - node_.started();
  return {{"id", node_.config().node_id},
          {"version", AWEFT_VERSION},
          {"uptime_seconds", std::chrono::duration_cast<std::chrono::seconds>(uptime).count()},
          {"listen", node_.url()},
          {"config", Config()},
          {"upstreams", std::move(upstreams)},
          {"peers", std::move(peers)}};
}

// The links sharing `name` now: connection ids, and the upstream it goes to.
json::array NodeAdmin::LinksOf(std::string_view name) {
  json::array out;
  node_.ForEachConnection([&](const Loop::Connection& c) {
    if (c.shared.count(std::string(name))) out.emplace_back("c" + std::to_string(c.id));
  });
  if (node_.hub().Find(name)) {
    for (size_t i = 0; i < node_.upstreams().links().size(); ++i) {
      if (node_.upstreams().links()[i].get() == node_.upstreams().For(name)) {
        out.emplace_back("u" + std::to_string(i));
      }
    }
  }
  return out;
}

json::object NodeAdmin::Documents(const admin::DocumentQuery& query) {
  // One more than asked: whether there is a next page. With `contains`,
  // the names are read a thousand at a time until enough hold it.
  std::vector<storage::DocumentInfo> infos;
  const size_t chunk = query.contains.empty() ? query.limit + 1 : 1000;
  for (std::string after = query.after; infos.size() <= query.limit;) {
    std::vector<storage::DocumentInfo> read = node_.store().List(query.prefix, after, chunk);
    if (!read.empty()) after = read.back().name;  // Before the names move out.
    for (auto& info : read) {
      if (infos.size() <= query.limit && info.name.find(query.contains) != std::string::npos) {
        infos.push_back(std::move(info));
      }
    }
    if (read.size() < chunk) break;  // The end of the list: no more to read.
  }
  const bool more = infos.size() > query.limit;
  if (more) infos.pop_back();
  json::array documents;
  for (const auto& info : infos) {
    json::object one = InfoToJson(info);
    one["links"] = LinksOf(info.name);
    documents.push_back(std::move(one));
  }
  json::value next = nullptr;
  if (more) next = json::string(infos.back().name);
  return {{"documents", std::move(documents)}, {"next", std::move(next)}};
}

std::optional<codec::Refusal> NodeAdmin::CheckName(std::string_view name) {
  if (auto checked = storage::format::CheckName(name); !checked) return checked.error();
  return std::nullopt;
}

// A document's state as the loop sees it now (`at` unset, and loaded), or
// as stored after `at` (or the head).
codec::Result<sync::Snapshot> NodeAdmin::StateOf(std::string_view name, uint64_t seq, bool now) {
  if (const Hub::Loaded* loaded = node_.hub().Find(name); now && loaded) {
    return sync::TakeSnapshot(*loaded->document);
  }
  return node_.store().StateAt(name, seq);
}

// The loop copies the state (a few ms for 8 MiB); the JSON, 2 to 3 times its
// size and most of the work, is built on the admin endpoint's thread.
admin::Later NodeAdmin::State(std::string_view name, std::optional<uint64_t> at) {
  if (!node_.store().Info(name)) return admin::Now(NotHeld(name));
  const uint64_t seq = at.value_or(node_.store().Head(name));
  auto state = StateOf(name, seq, !at);
  if (!state) return admin::Now(state.error());
  // Among peers, where it lives (docs/node.md "Peers").
  json::object placement;
  if (!node_.config().peers.empty()) {
    const Upstreams::Link* home = node_.upstreams().For(name);
    placement["home"] = home ? home->id : node_.config().node_id;
    json::array replicas;
    for (const std::string& id : node_.upstreams().Keepers(name)) replicas.emplace_back(id);
    placement["replicas"] = std::move(replicas);
  }
  return [name = std::string(name), seq, state = std::move(*state),
          placement = std::move(placement)]() -> admin::Answer {
    json::object out{{"name", name}, {"seq", seq}};
    for (auto& [key, value] : placement) out[key] = value;
    for (auto& [key, value] : StateToJson(state)) out[key] = value;
    return out;
  };
}

admin::Later NodeAdmin::Commits(std::string_view name, uint64_t since, size_t limit) {
  auto info = node_.store().Info(name);
  if (!info) return admin::Now(NotHeld(name));
  auto entries = node_.store().Since(name, since, limit);
  if (!entries) return admin::Now(entries.error());
  const uint64_t head = node_.store().Head(name);
  return [name = std::string(name), since, head, floor = info->floor,
          entries = std::move(*entries)]() -> admin::Answer {
    json::array commits;
    for (const auto& entry : entries) {
      commits.push_back(
          json::object{{"seq", entry.seq}, {"commit", CommitToJson(entry.commit, IdForm::kText)}});
    }
    const uint64_t last = entries.empty() ? since : entries.back().seq;
    json::value next = nullptr;
    if (last < head) next = last;
    return json::object{{"name", name},
                        {"since", since},
                        {"head", head},
                        {"floor", floor},
                        {"commits", std::move(commits)},
                        {"next", next}};
  };
}

admin::Later NodeAdmin::Export(std::string_view name) {
  if (!node_.store().Info(name)) return admin::Now(NotHeld(name));
  const uint64_t head = node_.store().Head(name);
  auto state = StateOf(name, head, /*now=*/true);
  if (!state) return admin::Now(state.error());
  return [name = std::string(name), head, state = std::move(*state)]() -> admin::Answer {
    auto document = sync::FromSnapshot(state);
    if (!document) return document.error();
    return ExportToJson(name, **document, head);
  };
}

admin::Answer NodeAdmin::Import(std::string_view name, const json::value& body) {
  if (node_.hub().Find(name) || node_.store().Info(name)) {
    return admin::MakeProblem(admin::Why::kExists,
                              "this node holds \"" + std::string(name) + "\" already");
  }
  auto exported = ExportFromJson(body);
  if (!exported) return admin::MakeProblem(exported.error(), 400);
  if (auto over = OverDocumentLimit(*exported, node_.config().limits.max_document_bytes,
                                    "limits.max_document_bytes")) {
    return admin::MakeProblem(*over, 413);
  }
  auto document = node_.hub().Load(
      std::string(name), codec::RootRef{std::string(exported->root.view()), exported->kind});
  if (!document) return document.error();
  if (exported->commit) {
    // ExportFromJson applied it to an empty root already: it applies here.
    if (auto applied = (*document)->Apply(*exported->commit); !applied) return applied.error();
  }
  node_.store().Sync();
  auto info = node_.store().Info(name);
  json::object out = InfoToJson(*info);
  out["links"] = LinksOf(name);
  return out;
}

admin::Answer NodeAdmin::Snapshot(std::string_view name) {
  if (auto why = node_.hub().Unavailable()) return Refusal{Reason::kUnavailable, *why};
  if (auto taken = node_.store().Snapshot(name); !taken) return taken.error();
  auto info = node_.store().Info(name);
  if (!info) return NotHeld(name);
  return json::object{{"name", name}, {"snapshot", info->snapshot}, {"head", info->head}};
}

admin::Answer NodeAdmin::Remove(std::string_view name) {
  if (auto why = node_.hub().Unavailable()) return Refusal{Reason::kUnavailable, *why};
  if (const Hub::Loaded* loaded = node_.hub().Find(name)) {
    if (loaded->shares > 0) {
      return admin::MakeProblem(
          admin::Why::kInUse,
          std::to_string(loaded->shares) + " link(s) share \"" + std::string(name) + "\" now");
    }
    node_.hub().Unload(name);
  }
  if (auto removed = node_.store().Remove(name); !removed) return removed.error();
  node_.hub().Removed();
  return json::object{{"name", name}, {"removed", true}};
}

json::object NodeAdmin::Links() {
  const auto now = std::chrono::steady_clock::now();
  json::array links;
  node_.ForEachConnection([&](const Loop::Connection& c) {
    if (!c.link) return;  // Refused at the handshake, closing.
    const sync::Link::Stats& s = c.link->stats();
    const sync::TextChannel::Traffic& t = c.channel->traffic();
    json::array topics;
    for (const auto& [name, topic] : c.shared) topics.emplace_back(name);
    links.push_back(
        json::object{{"id", "c" + std::to_string(c.id)},
                     {"kind", c.peer ? "peer" : "client"},
                     {"direction", "accepted"},
                     {"remote", c.remote},
                     {"connected_seconds",
                      std::chrono::duration_cast<std::chrono::seconds>(now - c.since).count()},
                     {"topics", std::move(topics)},
                     {"bytes", InOut(t.bytes_in, t.bytes_out)},
                     {"frames", InOut(s.frames_in, s.frames_out)},
                     {"commits", InOut(s.commits_in, s.commits_out)},
                     {"refusals", InOut(s.refused_in, s.refused_out)},
                     {"lag", json::object{{"queued_bytes", t.queued_bytes}}}});
  });
  for (size_t i = 0; i < node_.upstreams().links().size(); ++i) {
    const auto& upstream = *node_.upstreams().links()[i];
    const Client::Stats stats = upstream.client->stats();
    json::array topics;
    uint64_t unconfirmed = 0;
    for (const auto& [name, loaded] : node_.hub().loaded()) {
      if (node_.upstreams().For(name) != &upstream) continue;
      topics.emplace_back(name);
      unconfirmed += upstream.client->unconfirmed(name);
    }
    links.push_back(json::object{
        {"id", "u" + std::to_string(i)},
        {"kind", "peer"},
        {"direction", "dialed"},
        {"remote", upstream.config.url},
        {"connected", upstream.client->connected()},
        {"agreed_seconds_ago",
         upstream.agreed
             ? json::value(
                   std::chrono::duration_cast<std::chrono::seconds>(now - *upstream.agreed).count())
             : json::value(nullptr)},
        {"topics", std::move(topics)},
        {"bytes", InOut(stats.traffic.bytes_in, stats.traffic.bytes_out)},
        {"frames", InOut(stats.link.frames_in, stats.link.frames_out)},
        {"commits", InOut(stats.link.commits_in, stats.link.commits_out)},
        {"refusals", InOut(stats.link.refused_in, stats.link.refused_out)},
        {"lag", json::object{{"queued_bytes", stats.traffic.queued_bytes},
                             {"unconfirmed_commits", unconfirmed}}}});
  }
  return {{"links", std::move(links)}};
}

json::object NodeAdmin::Cluster() {
  Upstreams& upstreams = node_.upstreams();
  const auto now = std::chrono::steady_clock::now();
  // Of the documents loaded here, how many each place orders ("" here).
  std::map<const Upstreams::Link*, uint64_t> homed;
  for (const auto& [name, loaded] : node_.hub().loaded()) ++homed[upstreams.For(name)];
  json::array peers;
  for (const auto& link : upstreams.links()) {
    if (!link->peer) continue;
    const bool up = link->client->connected();
    const char* state = link->self ? "self" : !up ? "down" : link->home ? "linked" : "catching-up";
    const auto since = link->self ? node_.started() : up ? link->up_since : link->down_since;
    peers.push_back(json::object{
        {"url", link->config.url},
        {"id", link->self ? node_.config().node_id : link->id},
        {"state", state},
        {"since_seconds", std::chrono::duration_cast<std::chrono::seconds>(now - since).count()},
        {"documents_homed", link->self ? homed[nullptr] : homed[link.get()]}});
  }
  const CatchUp& catch_up = node_.catch_up();
  return {{"id", node_.config().node_id},
          {"home_ready", upstreams.home_ready()},
          {"replicas", node_.config().cluster.replicas},
          {"failover_ms", node_.config().cluster.failover.count()},
          {"documents_homed_here", homed[nullptr]},
          {"documents_behind", catch_up.behind()},
          {"caught_up", catch_up.caught_up()},
          {"peers", std::move(peers)}};
}

void CountRefused(NodeMetrics& meters, std::string_view name, std::string_view peer,
                  const sync::Refused& refused) {
  const char* origin = refused.mine ? "remote" : "local";
  for (const auto& reason : refused.reasons) {
    meters.refusals.Add(1, {reason.code, origin});
    spdlog::debug("event=commit-refused doc={} peer={} seq={} origin={} reason={} detail={}",
                  Quoted{name}, peer, refused.seq, origin, Quoted{reason.code},
                  Quoted{reason.message});
  }
}

}  // namespace aweft::node
