#include "node/upstreams.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <filesystem>
#include <fstream>

#include "node/access.h"
#include "node/log.h"
#include "node/messages.h"
#include "node/placement.h"

namespace aweft::node {
std::string JoinedPath(const std::vector<std::string>& path) {
  std::string out;
  for (const auto& id : path) out += (out.empty() ? "" : " > ") + id;
  return out;
}

Upstreams::Upstreams(const Config& config, boost::asio::io_context& io, storage::Store& store,
                     sync::Scheduler& links, std::shared_ptr<boost::asio::ssl::context> tls,
                     NodeMetrics& meters)
    : config_(config),
      store_(store),
      meters_(meters),
      hello_(io),
      home_ready_(config.peers.empty()) {
  LoadConfirmed();
  for (const Upstream& upstream : config_.upstreams) Dial(upstream, false, io, links, tls);
  for (const Upstream& peer : config_.peers) Dial(peer, true, io, links, tls);
  LoadPeerIds();
  // Paths change as the nodes above connect: ask again now and then, so a
  // cycle made by nodes starting together is still found.
  if (!links_.empty()) ScheduleHello();
}

void Upstreams::Dial(const Upstream& upstream, bool peer, boost::asio::io_context& io,
                     sync::Scheduler& links, std::shared_ptr<boost::asio::ssl::context> tls) {
  auto link = std::make_unique<Link>();
  Link* raw = link.get();
  link->config = upstream;
  link->peer = peer;
  link->down_since = std::chrono::steady_clock::now();
  const char* kind = peer ? "peer" : "upstream";
  Client::Options options;
  options.url = upstream.url;
  options.token = upstream.token;
  options.tls = tls;
  options.link_scheduler = &links;  // Stored before sent upstream too.
  // No integrity tags between nodes: the node above orders and corrects
  // this one (docs/sync.md "One order"); tagged, a resync races into
  // storms of diverged refusals (docs/reliability.md "Open").
  options.tags = false;
  // A client below waits for these answers (Loop::AnswerDurable): ask
  // within 2 ms, one question at a time, rather than every 20 ms.
  options.confirm_every = std::chrono::milliseconds(2);
  options.mark = [this](const std::string& name) { return store_.Head(name); };
  options.confirmed = [this, url = upstream.url](const std::string& name, uint64_t seq,
                                                 Level level) {
    // `replicas` implies `local`; only `local` marks are kept for a restart
    // (they say what to send again).
    if (level == Level::kReplicas) {
      uint64_t& replicated = replicated_[{url, name}];
      replicated = std::max(replicated, seq);
    }
    uint64_t& mark = confirmed_[{url, name}];
    if (seq > mark) {
      mark = seq;
      SaveConfirmed();
    }
    Settle(/*expire=*/false);
  };
  options.answers_durable = true;  // A peer that orders asks, for `replicas` (node/quorum.h).
  options.broken = [this, url = upstream.url, kind](const codec::Refusal& why) {
    meters_.faults.Add(1, {codec::Spelled(why.reason), "remote"});
    spdlog::warn(
        "event={}-broken url={} reason={} detail=\"the {}'s answer was malformed; dialing "
        "again\"",
        kind, url, codec::Name(why.reason), kind);
  };
  // Up at info; lost at warn once, then each failed dial at debug.
  options.changed = [raw, kind, was = std::optional<bool>()](bool up,
                                                             const std::string& detail) mutable {
    if (up) {
      spdlog::info("event={}-connected url={}", kind, raw->config.url);
    } else {
      if (was != false) raw->down_since = std::chrono::steady_clock::now();
      spdlog::log(was == false ? spdlog::level::debug : spdlog::level::warn,
                  "event={}-lost url={} detail={}", kind, raw->config.url, Quoted{detail});
    }
    was = up;
  };
  options.frames = FrameTracer(upstream.url);
  link->client = std::make_unique<Client>(io.get_executor(), options);
  link->client->OnConnected([this, raw] {
    raw->home = false;  // Until it says so again: it may have restarted.
    raw->up_since = std::chrono::steady_clock::now();
    Hello(*raw);
    // After the resyncs of a new connection, compare.
    raw->next_digests = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    raw->agreed.reset();
  });
  spdlog::info("event={} url={} names={}", kind, upstream.url, upstream.names.size());
  links_.push_back(std::move(link));
}

Upstreams::Link* Upstreams::For(std::string_view name) {
  if (!config_.peers.empty()) {
    const auto now = std::chrono::steady_clock::now();
    // While this node catches up, it is no candidate: the best live peer
    // orders, or (none) this node does meanwhile.
    // One weight per peer (Rank's order: the higher weight, then the
    // lesser id): this runs on every open, `has` and `durable`.
    Link* home = nullptr;
    Weighed best = Weigh(name, config_.node_id);
    for (auto& link : links_) {
      if (link->self || link->id.empty() || !Live(*link, now)) continue;
      const Weighed it = Weigh(name, link->id);
      if ((!home_ready_ && !home) || it.Before(best)) home = link.get(), best = it;
    }
    return home;
  }
  for (auto& link : links_) {
    if (!link->cycle && AnyMatches(link->config.names, name)) return link.get();
  }
  return nullptr;
}

std::vector<std::string> Upstreams::Path() const {
  std::vector<std::string> path{config_.node_id};
  for (const auto& link : links_) {
    if (!link->cycle) path.insert(path.end(), link->path.begin(), link->path.end());
  }
  return path;
}

void Upstreams::Share(const std::string& name, sync::Document& document,
                      std::function<void()> ready, bool placeholder) {
  Link* link = For(name);
  shared_[name] = {link, &document, ready, placeholder};
  if (!config_.peers.empty() && View() != view_) relink_due_ = true;
  if (link) return ShareWith(*link, name, document, std::move(ready));
  if (!config_.peers.empty()) AskToKeep(name, document);
}

void Upstreams::ShareWith(Link& target, const std::string& name, sync::Document& document,
                          std::function<void()> ready) {
  Link* link = &target;
  // What the upstream has not confirmed (it may have been lost with a
  // restart of either node) is re-applied after the upstream's state.
  std::deque<codec::Commit> unconfirmed;
  auto it = confirmed_.find({link->config.url, name});
  const uint64_t mark = it == confirmed_.end() ? 0 : it->second;
  if (auto since = store_.Since(name, mark)) {
    for (auto& entry : *since) unconfirmed.push_back(std::move(entry.commit));
  } else {
    spdlog::warn("event=upstream-history doc={} detail={}", Quoted{name},
                 Quoted{since.error().ToString()});
  }
  sync::ShareHandlers handlers;
  handlers.refused = [this, name, url = link->config.url](const sync::Refused& refused) {
    CountRefused(meters_, name, url, refused);
    if (!refused.mine) return;
    // The upstream orders the document: its correction undoes it here, and
    // the link's clients follow. Said, not passed over.
    // The reason is the upstream's text: only a reason's letters reach the log.
    for (const auto& reason : refused.reasons) {
      std::string code = reason.code.substr(0, 40);
      std::erase_if(code, [](char ch) { return !(std::islower(ch) || ch == '-'); });
      spdlog::warn("event=upstream-refused doc={} reason={}", Quoted{name}, code);
    }
    if (on_refused_ && refused.commit) on_refused_(name, *refused.commit, refused.reasons);
  };
  handlers.fault = [this](const std::string& reason, const std::string&) {
    meters_.TopicEnded(reason, "remote");
  };
  handlers.ready = [this, name, ready = std::move(ready)](sync::Document&) {
    if (auto it = shared_.find(name); it != shared_.end()) it->second.placeholder = false;
    if (ready) ready();
  };
  auto shared = shared_.find(name);
  const bool placeholder = shared != shared_.end() && shared->second.placeholder;
  (void)link->client->Share(name, document, std::move(handlers), std::move(unconfirmed),
                            placeholder);
}

bool Upstreams::Confirmed(const Link& link, const std::string& name, Level level,
                          uint64_t seq) const {
  const auto& marks = level == Level::kReplicas ? replicated_ : confirmed_;
  auto it = marks.find({link.config.url, name});
  return it != marks.end() && it->second >= seq;
}

void Upstreams::AwaitConfirmed(const std::vector<std::string>& names, Level level,
                               ConfirmedFn done) {
  Awaiting wait{{}, level, std::move(done), std::chrono::steady_clock::now() + kConfirmWithin};
  for (const std::string& name : names) {
    Link* link = For(name);
    if (!link) continue;  // This node orders it.
    if (closed_ || !link->client->connected()) {
      return wait.done(NotConfirmed(*link, name, "is not connected"));
    }
    const uint64_t head = store_.Head(name);
    if (Confirmed(*link, name, level, head)) continue;
    wait.marks.push_back({link, name, head});
    link->client->Confirm(level);
  }
  if (wait.marks.empty()) return wait.done(std::nullopt);
  awaiting_.push_back(std::move(wait));
}

void Upstreams::Settle(bool expire) {
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::pair<ConfirmedFn, std::optional<codec::Refusal>>> answers;
  std::erase_if(awaiting_, [&](Awaiting& wait) {
    std::erase_if(wait.marks, [&](const Awaiting::Mark& mark) {
      return Confirmed(*mark.link, mark.name, wait.level, mark.seq);
    });
    std::optional<codec::Refusal> why;
    if (!wait.marks.empty()) {
      const Awaiting::Mark& mark = wait.marks.front();
      if (!expire) return false;
      if (closed_ || !mark.link->client->connected()) {
        why = NotConfirmed(*mark.link, mark.name, "is not connected");
      } else if (now >= wait.until) {
        // Its last refusal says why (a majority of replicas not reached).
        const std::string& error = mark.link->client->confirm_error();
        why = NotConfirmed(*mark.link, mark.name,
                           "has not confirmed it within 5 s" +
                               (error.empty() ? std::string() : " (" + error + ")"));
      } else {
        return false;
      }
    }
    answers.emplace_back(std::move(wait.done), std::move(why));
    return true;
  });
  for (auto& [done, why] : answers) done(std::move(why));
}

codec::Refusal Upstreams::NotConfirmed(const Link& link, const std::string& name,
                                       const std::string& because) {
  return {codec::Reason::kUnavailable,
          "\"" + name + "\" is stored on this node, but the node above that orders it (" +
              link.config.url + ") " + because +
              ", so it is not confirmed yet. Ask again: it is once that node has it"};
}

void Upstreams::Forget(const std::string& name) {
  for (auto& link : links_) link->client->Forget(name);
  shared_.erase(name);
}

void Upstreams::Close() {
  closed_ = true;
  hello_.cancel();
  for (auto& link : links_) link->client->Close();
  Settle(/*expire=*/true);
}

void Upstreams::ScheduleHello() {
  hello_.expires_after(std::chrono::seconds(1));
  hello_.async_wait([this](boost::system::error_code ec) {
    if (ec || closed_) return;
    Settle(/*expire=*/true);
    const auto now = std::chrono::steady_clock::now();
    Relink();
    for (auto& link : links_) {
      if (link->cycle || link->self) continue;
      Hello(*link);
      if (link->config.digest_every.count() > 0 && link->client->connected() &&
          now >= link->next_digests) {
        link->next_digests = now + link->config.digest_every;
        Digests(*link);
      }
    }
    ScheduleHello();
  });
}

void Upstreams::Hello(Link& link) {
  link.client->Ask(
      "hello", ToJson(HelloAsk{config_.node_id, link.peer}), [this, &link](sync::AskResult answer) {
        if (link.cycle || link.self) return;
        std::vector<std::string> path;
        if (answer) {
          auto hello = ParseHelloAnswer(*answer);
          if (!hello) return link.client->Break(hello.error());
          path = std::move(hello->path);
        }
        if (link.peer) {
          if (!answer || path.empty()) return;  // Asked again in a second.
          auto hello = ParseHelloAnswer(*answer);
          const bool home = hello && hello->home;
          if (home != link.home) {
            link.home = home;
            spdlog::info("event=peer-home url={} home={}", link.config.url, home);
            relink_due_ = true;
          }
          return LearnedId(link, path.front());
        }
        const bool loops = std::find(path.begin(), path.end(), config_.node_id) != path.end();
        const bool refused = !answer && answer.error().reason == codec::Name(codec::Reason::kCycle);
        if (refused || loops || path.size() > 64) {
          link.cycle = true;
          const std::string detail = answer ? JoinedPath(path) : answer.error().message;
          spdlog::error(
              "event=cycle node={} upstream={} detail={} fix=\"remove one of these upstreams\"",
              config_.node_id, link.config.url, Quoted{"dialing it would make a cycle: " + detail});
          link.client->Close();
          return;
        }
        if (answer) link.path = std::move(path);
      });
}

void Upstreams::Digests(Link& link) {
  struct Round {
    size_t pending = 0;
    bool agreed = true;
  };
  const std::vector<std::string> names = link.client->names();
  if (names.empty()) {
    link.agreed = std::chrono::steady_clock::now();
    return;
  }
  auto round = std::make_shared<Round>();
  round->pending = names.size();
  for (const std::string& name : names) {
    link.client->Compare(name, [this, &link, name, round](std::optional<bool> same) {
      if (same == true) {
        link.apart.erase(name);
      } else {
        round->agreed = false;
        // Apart once may be a race the upstream is correcting now; apart
        // twice, rounds apart, is divergence.
        if (same == false && ++link.apart[name] >= 2) {
          link.apart.erase(name);
          meters_.healed.Add(1, {"digest"});
          spdlog::warn(
              "event=divergence doc={} upstream={} detail=\"its state differs from the "
              "upstream's in two digest rounds; taking the upstream's state\"",
              Quoted{name}, link.config.url);
          link.client->Resync(name);
        }
      }
      if (--round->pending == 0 && round->agreed) link.agreed = std::chrono::steady_clock::now();
    });
  }
}

// The marks live in DATA/upstream-confirmed, one "url seq name" per line
// (the name last: it may hold spaces). Losing the file only means replaying
// more after a restart.
void Upstreams::LoadConfirmed() {
  std::ifstream in(config_.data + "/upstream-confirmed");
  std::string url, name;
  uint64_t seq;
  while (in >> url >> seq && std::getline(in >> std::ws, name)) confirmed_[{url, name}] = seq;
}

void Upstreams::SaveConfirmed() {
  const std::string path = config_.data + "/upstream-confirmed";
  {
    std::ofstream out(path + ".new", std::ios::trunc);
    for (const auto& [key, seq] : confirmed_) {
      out << key.first << " " << seq << " " << key.second << "\n";
    }
    if (!out) return spdlog::warn("event=upstream-marks detail=\"cannot write {}\"", path);
  }
  std::filesystem::rename(path + ".new", path);
}

}  // namespace aweft::node
