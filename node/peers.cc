// The cluster half of Upstreams (docs/node.md "Clusters"): which peers are
// live, their ids, and moving documents when a home changes.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "node/log.h"
#include "node/placement.h"
#include "node/upstreams.h"

namespace aweft::node {

bool Upstreams::Live(const Link& peer, std::chrono::steady_clock::time_point now) const {
  return peer.home &&
         (peer.client->connected() || now - peer.down_since < config_.cluster.failover);
}

void Upstreams::SetHomeReady() {
  if (home_ready_) return;
  home_ready_ = true;
  relink_due_ = true;
  spdlog::info("event=home-ready node={}", config_.node_id);
  Relink();
}

std::vector<std::string> Upstreams::Keepers(std::string_view name) const {
  if (config_.peers.empty()) return {};
  std::vector<std::string> ids{config_.node_id};
  for (const auto& link : links_) {
    if (link->peer && !link->self && !link->id.empty()) ids.push_back(link->id);
  }
  return Replicas(name, std::move(ids), config_.cluster.replicas);
}

bool Upstreams::Keeps(std::string_view name) const {
  const std::vector<std::string> keepers = Keepers(name);
  return std::find(keepers.begin(), keepers.end(), config_.node_id) != keepers.end();
}

void Upstreams::AskToKeep(const std::string& name, const sync::Document& document) {
  const std::vector<std::string> keepers = Keepers(name);
  const Listed keep{name, {document.root().id(), document.root().kind()}};
  for (const auto& link : links_) {
    if (link->self || link->id.empty() || !link->client->connected() ||
        std::find(keepers.begin(), keepers.end(), link->id) == keepers.end()) {
      continue;
    }
    link->client->Ask("keep", ToJson(keep), [url = link->config.url](sync::AskResult answer) {
      if (!answer) {
        spdlog::debug("event=keep-asked url={} detail={}", url,
                      Quoted{answer.error().reason + ": " + answer.error().message});
      }
    });
  }
}

void Upstreams::LearnedId(Link& link, const std::string& id) {
  if (id == config_.node_id) {
    // The list names this node too: it is one of the peers, not a link.
    link.self = true;
    link.id = id;
    link.client->Close();
    spdlog::info("event=peer-self url={} node={}", link.config.url, id);
    return Relink();
  }
  if (id == link.id) {
    if (relink_due_) Relink();
    return;
  }
  spdlog::info("event=peer-id url={} node={}{}", link.config.url, id,
               link.id.empty() ? "" : " was=" + link.id);
  link.id = id;
  SavePeerIds();
  Relink();
}

std::vector<std::string> Upstreams::View() const {
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::string> view;
  for (const auto& link : links_) {
    if (link->peer && !link->self && !link->id.empty() && Live(*link, now))
      view.push_back(link->id);
  }
  std::sort(view.begin(), view.end());
  return view;
}

void Upstreams::Relink() {
  std::vector<std::string> view = View();
  if (view == view_ && !relink_due_) return;
  view_ = std::move(view);
  relink_due_ = false;
  // Found first, then moved: a move may call back into this (a document
  // served to its waiting opens may be given back and forgotten).
  std::vector<std::string> moving;
  for (const auto& [name, shared] : shared_) {
    if (For(name) != shared.link) moving.push_back(name);
  }
  size_t moved = 0;
  for (const std::string& name : moving) {
    auto it = shared_.find(name);
    if (it == shared_.end()) continue;
    SharedDocument& shared = it->second;
    Link* home = For(name);
    if (home == shared.link) continue;
    ++moved;
    spdlog::debug("event=relink doc={} from={} to={}", Quoted{name},
                  shared.link ? shared.link->config.url : "here", home ? home->config.url : "here");
    if (shared.link) shared.link->client->Forget(name);
    shared.link = home;
    if (home) {
      ShareWith(*home, name, *shared.document, shared.ready);
    } else if (auto ready = shared.ready) {
      ready();  // This node orders it now: its copy is the state.
    }
  }
  spdlog::info("event=peers live={} documents_moved={}", view_.size(), moved);
}

// DATA/peer-ids, one "url id" per line: after a restart the node places
// documents as before from the start, without waiting for every hello.
void Upstreams::LoadPeerIds() {
  std::ifstream in(config_.data + "/peer-ids");
  std::string url, id;
  while (in >> url >> id) {
    for (auto& link : links_) {
      if (link->peer && link->config.url == url) link->id = id;
    }
  }
}

void Upstreams::SavePeerIds() {
  const std::string path = config_.data + "/peer-ids";
  {
    std::ofstream out(path + ".new", std::ios::trunc);
    for (const auto& link : links_) {
      if (link->peer && !link->id.empty()) out << link->config.url << " " << link->id << "\n";
    }
    if (!out) return spdlog::warn("event=peer-ids detail=\"cannot write {}\"", path);
  }
  std::filesystem::rename(path + ".new", path);
}

}  // namespace aweft::node
