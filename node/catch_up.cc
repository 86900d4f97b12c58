#include "node/catch_up.h"

#include <spdlog/spdlog.h>

#include "node/log.h"

namespace aweft::node {
namespace {

constexpr size_t kAtOnce = 16;  // Documents brought in at once.
constexpr auto kEvery = std::chrono::seconds(10);
constexpr auto kGiveUp = std::chrono::seconds(30);  // One document; a later round retries.

}  // namespace

CatchUp::CatchUp(const Config& config, boost::asio::io_context& io, Hub& hub, Upstreams& upstreams,
                 storage::Store& store)
    : config_(config),
      hub_(hub),
      upstreams_(upstreams),
      store_(store),
      timer_(io),
      started_(std::chrono::steady_clock::now()) {
  if (config_.peers.empty()) return;
  // What this node stores first: it may hold writes the others lack.
  for (const storage::DocumentInfo& info : store_.List()) Want(info.name, std::nullopt);
  Tick();
}

void CatchUp::Stop() {
  stopped_ = true;
  timer_.cancel();
}

void CatchUp::Tick() {
  // While documents are behind, the next are brought in as soon as one is
  // in (at most kAtOnce at a time); else ten looks a second.
  timer_.expires_after(std::chrono::milliseconds(behind() > 0 ? 5 : 100));
  timer_.async_wait([this](boost::system::error_code ec) {
    if (ec || stopped_) return;
    const auto now = std::chrono::steady_clock::now();
    std::erase_if(under_way_, [&](const auto& entry) {
      const Hub::Loaded* loaded = hub_.Find(entry.first);
      if (loaded && loaded->from_above) return ++caught_up_, true;
      if (loaded && now - entry.second < kGiveUp) return false;
      spdlog::warn(
          "event=catch-up-slow doc={} detail=\"its home's state is not in after 30 s; "
          "the next round tries again\"",
          Quoted{entry.first});
      return true;
    });
    BringIn();
    // Long work says how far it is, every 10 s.
    if (behind() > 0 && now >= next_progress_) {
      if (next_progress_ != std::chrono::steady_clock::time_point{}) {
        spdlog::info("event=catch-up behind={} caught_up={}", behind(), caught_up_);
      }
      next_progress_ = now + kEvery;
    }
    if (listing_ == 0 && now >= next_round_) {
      // The first round waits for every peer to answer, or to be given up
      // on as failover does.
      bool settled = true;
      for (const auto& link : upstreams_.links()) {
        settled = settled && (link->self || link->client->connected() ||
                              now - started_ >= config_.cluster.failover);
      }
      if (round_ > 0 || settled) {
        ++round_;
        next_round_ = now + kEvery;
        for (const auto& link : upstreams_.links()) {
          if (link->self || link->id.empty() || !link->client->connected()) continue;
          ++listing_;
          List(*link, "", round_);
        }
      }
    }
    if (round_ > 0 && listing_ == 0 && queue_.empty() && under_way_.empty() && !done()) {
      spdlog::info("event=catch-up-done documents={} seconds={:.1f}", caught_up_,
                   std::chrono::duration<double>(now - started_).count());
      upstreams_.SetHomeReady();
    }
    Tick();
  });
}

void CatchUp::List(Upstreams::Link& link, const std::string& after, uint64_t round) {
  link.client->Ask(
      "names", ToJson(NamesAsk{after, 1000}), [this, &link, round](sync::AskResult answer) {
        if (stopped_ || round != round_) return;
        auto names = answer ? ParseNamesAnswer(*answer)
                            : codec::Result<NamesAnswer>(
                                  codec::Refusal{codec::Reason::kFailed, answer.error().message});
        if (!names) {
          spdlog::warn("event=catch-up-list url={} detail={}", link.config.url,
                       Quoted{names.error().message});
          --listing_;
          return;
        }
        for (const Listed& listed : names->documents) Want(listed.name, listed.held);
        if (names->more && !names->documents.empty()) {
          return List(link, names->documents.back().name, round);
        }
        --listing_;
      });
}

void CatchUp::Want(const std::string& name, std::optional<Held> held) {
  if (hub_.Find(name) || under_way_.count(name) || !queued_.insert(name).second) return;
  queue_.emplace_back(name, held);
}

void CatchUp::BringIn() {
  while (under_way_.size() < kAtOnce && !queue_.empty()) {
    auto [name, held] = std::move(queue_.front());
    queue_.pop_front();
    queued_.erase(name);
    if (hub_.Find(name) || !upstreams_.Keeps(name)) continue;
    // Never an empty copy without a home to fill it: one made here would
    // be served as the document (a later round tries again).
    const bool stored = store_.Info(name).has_value();
    if (!stored && (!held || !upstreams_.For(name))) continue;
    std::optional<codec::RootRef> root;
    if (!stored) root = codec::RootRef{std::string(held->root.view()), held->kind};
    if (auto loaded = hub_.Load(name, root, /*placeholder=*/true); !loaded) {
      spdlog::warn("event=catch-up-load doc={} detail={}", Quoted{name},
                   Quoted{loaded.error().ToString()});
      continue;
    }
    under_way_[name] = std::chrono::steady_clock::now();
  }
}

}  // namespace aweft::node
