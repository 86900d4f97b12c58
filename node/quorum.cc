// The `durable` request's two halves on a loop (Loop::AnswerDurable, and
// Loop::AskStored for a home asking its replicas), and the home's count of
// replicas for the `replicas` level (Quorum).
#include "node/quorum.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>

#include "node/loop.h"
#include "node/messages.h"

namespace aweft::node {

namespace asio = boost::asio;
using codec::Reason;
using codec::Refusal;
using codec::Spelled;

constexpr std::string_view kNotShared = "does not share it with this node";

void Loop::AnswerDurable(Connection& c, const boost::json::value& args, sync::Reply reply) {
  auto level = ParseDurableAsk(args);
  if (!level) return reply.SendError({Spelled(level.error().reason), level.error().message, {}});
  // The disk fails writes: say so now rather than answer once it is back.
  if (auto why = node_.hub.Unavailable()) {
    return reply.SendError({Spelled(Reason::kUnavailable), *why, {}});
  }
  // Runs after every frame this connection sent before the request, with
  // the store synced first: all they carried is stored. Then each document
  // a node above orders must be confirmed there too (Upstreams::
  // AwaitConfirmed), at `replicas` each this node orders must be on a
  // majority of its replicas (Quorum), and the answer leaves behind any
  // refusal it relayed meanwhile (RefuseLate). If the disk fails the batch,
  // the hub answers.
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::vector<std::string> names;
  for (const auto& [name, topic] : c.shared) names.push_back(name);
  auto answer = [this, reply, done](std::optional<Refusal> why) {
    asio::dispatch(executor_, [this, reply, done, why] {
      sends_.Post([reply, done, why] {
        if (done->exchange(true)) return;  // The hub answered: the disk failed.
        if (why) return reply.SendError({Spelled(why->reason), why->message, {}});
        reply.SendResult(DurableAnswerJson());
      });
    });
  };
  sends_.Post([this, names = std::move(names), level = *level, answer] {
    ToHome([this, names, level, answer] {
      node_.upstreams.AwaitConfirmed(names, level, [this, names, level, answer](auto why) {
        if (why || level == Level::kLocal) return answer(why);
        node_.quorum.Await(names, answer);
      });
    });
  });
  ToHome([this, reply, done] { node_.hub.AwaitDurable(reply, executor_, done); });
}

void Loop::AskStored(uint64_t id, const std::string& name,
                     std::function<void(std::optional<std::string> why)> done) {
  auto tell = [this, done](std::optional<std::string> why) {
    ToHome([done, why = std::move(why)] { done(why); });
  };
  auto ask = [this, id, name, tell] {
    auto it = connections_.find(id);
    if (it == connections_.end() || !it->second->requests) return tell("not connected");
    if (!it->second->shared.contains(name)) return tell(std::string(kNotShared));
    // Posted behind the frames the link sends through the same scheduler,
    // so the question leaves after what this node stored before it.
    sends_.Post([this, id, tell] {
      auto it = connections_.find(id);
      if (it == connections_.end() || !it->second->requests) return tell("not connected");
      sync::AskOptions options;
      options.timeout = Upstreams::kConfirmWithin;
      it->second->requests->Ask("durable", nullptr, options, [tell](sync::AskResult answer) {
        if (!answer) return tell(answer.error().reason + ": " + answer.error().message);
        if (auto durable = ParseDurableAnswer(*answer); !durable) {
          return tell(durable.error().message);
        }
        tell(std::nullopt);
      });
    });
  };
  // On a shard, what home stored reaches this thread's replica over a
  // channel that delivers on the shard's next turn, and the replica's
  // links queue it on the turn after (docs/node.md "Threads"): the
  // question waits those two turns.
  asio::dispatch(executor_, [this, ask] {
    if (index_ == 0) return ask();
    asio::post(executor_, [this, ask] { asio::post(executor_, ask); });
  });
}

struct Quorum::Wait {
  explicit Wait(asio::io_context& io) : timer(io) {}
  struct Count {
    size_t of = 0, need = 0, have = 0, asked = 0;
    std::vector<std::string> lacking;  // "id: why".
  };
  std::map<std::string, Count> names;
  Upstreams::ConfirmedFn done;
  asio::steady_timer timer;
};

Quorum::Quorum(const Config& config, asio::io_context& io, Upstreams& upstreams)
    : config_(config), io_(io), upstreams_(upstreams) {}

void Quorum::Joined(const std::string& id, Loop& loop, uint64_t connection) {
  peers_[id] = {&loop, connection};
}

void Quorum::Await(const std::vector<std::string>& names, Upstreams::ConfirmedFn done) {
  auto wait = std::make_shared<Wait>(io_);
  wait->done = std::move(done);
  // Counted whole before the first ask, whose answer may come at once.
  std::vector<std::pair<std::string, std::string>> asks;  // (name, id)
  for (const std::string& name : names) {
    if (upstreams_.For(name)) continue;  // Its home confirmed it (AwaitConfirmed).
    const std::vector<std::string> keepers = upstreams_.Keepers(name);
    if (keepers.empty()) continue;  // No peers: `local` is all there is.
    Wait::Count& count = wait->names[name];
    count.of = keepers.size();
    count.need = keepers.size() / 2 + 1;
    for (const std::string& id : keepers) {
      if (id == config_.node_id) {
        ++count.have;  // Stored before this was asked.
        continue;
      }
      auto peer = peers_.find(id);
      if (peer == peers_.end()) {
        count.lacking.push_back(id + ": not connected");
        continue;
      }
      ++count.asked;
      asks.emplace_back(name, id);
    }
  }
  for (const auto& [name, id] : asks) Ask(wait, name, id);
  wait->timer.expires_after(Upstreams::kConfirmWithin);
  wait->timer.async_wait([wait](boost::system::error_code ec) {
    if (!ec) Decide(*wait, true);
  });
  Decide(*wait, false);
}

void Quorum::Ask(std::shared_ptr<Wait> wait, const std::string& name, const std::string& id) {
  auto peer = peers_.find(id);
  if (!wait->done || peer == peers_.end()) return;
  peer->second.loop->AskStored(
      peer->second.connection, name, [this, wait, name, id](std::optional<std::string> why) {
        // A peer that keeps a document it does not share yet is bringing
        // it in (`keep`): it is asked again, within the 5 s.
        if (why == kNotShared && wait->done) {
          auto again = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(100));
          return again->async_wait([this, again, wait, name, id](boost::system::error_code ec) {
            if (!ec) Ask(wait, name, id);
          });
        }
        Wait::Count& count = wait->names[name];
        --count.asked;
        if (why) {
          count.lacking.push_back(id + ": " + *why);
        } else {
          ++count.have;
        }
        Decide(*wait, false);
      });
}

void Quorum::Decide(Wait& wait, bool expired) {
  if (!wait.done) return;  // Answered.
  for (auto& [name, count] : wait.names) {
    if (count.have >= count.need) continue;
    if (!expired && count.have + count.asked >= count.need) return;  // Answers to come.
    std::string lacking;
    for (const std::string& why : count.lacking) lacking += (lacking.empty() ? "" : "; ") + why;
    if (count.asked > 0) {
      lacking += (lacking.empty() ? "" : "; ") + std::to_string(count.asked) +
                 " did not store it within 5 s";
    }
    auto done = std::move(wait.done);
    wait.done = nullptr;
    wait.timer.cancel();
    return done(Refusal{Reason::kUnavailable,
                        "\"" + name + "\" is stored on " + std::to_string(count.have) + " of its " +
                            std::to_string(count.of) + " replicas, and the replicas level needs " +
                            std::to_string(count.need) + " (" + lacking +
                            "). Ask again once they are back, or at the local level"});
  }
  auto done = std::move(wait.done);
  wait.done = nullptr;
  wait.timer.cancel();
  done(std::nullopt);
}

}  // namespace aweft::node
