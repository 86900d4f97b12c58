#include "node/loop.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/json/value.hpp>

#include "codec/commit.h"
#include "node/catch_up.h"
#include "node/log.h"
#include "node/messages.h"
#include "node/quorum.h"
#include "storage/format.h"
#include "sync/tag.h"

namespace aweft::node {

namespace asio = boost::asio;
namespace json = boost::json;
using codec::Reason;
using codec::Refusal;
using codec::Spelled;

// Frames a link may hold unsent while the store is stalled before its peer
// is read no more (docs/reliability.md "Memory").
constexpr size_t kHeldFrames = 1024;

Loop::Loop(size_t index, LoopContext& node, asio::io_context::executor_type executor,
           sync::Scheduler& sends, ForwardScheduler* forward)
    : index_(index),
      node_(node),
      config_(node.config),
      executor_(executor),
      sends_(sends),
      forward_(forward) {}

Loop::~Loop() { DropLinks(); }

void Loop::DropLinks() {
  for (auto& [id, connection] : connections_) connection->link.reset();
}

void Loop::Accept(std::unique_ptr<sync::TextChannel> channel) {
  if (node_.stopping) return;
  auto connection = std::make_unique<Connection>();
  Connection& c = *connection;
  c.id = node_.connection_ids++;
  c.remote = channel->handshake().remote;
  c.channel = std::move(channel);
  c.channel->Closed([this, id = c.id] {
    // Dropped on a later turn: the channel's other listeners run first.
    asio::post(executor_, [this, id] {
      if (auto it = connections_.find(id); it != connections_.end()) Drop(*it->second);
    });
  });
  connections_.emplace(c.id, std::move(connection));
  if (auto arrived = node_.access.Arrive(c.remote); !arrived) return Refuse(c, arrived.error());
  auto token = node_.access.Authenticate(c.channel->handshake());
  if (!token) return Refuse(c, token.error());
  if (auto origin = node_.access.CheckOrigin(c.channel->handshake()); !origin) {
    return Refuse(c, origin.error());
  }
  c.token = *token;
  // The node orders the documents it shares: its clients, and nodes below,
  // follow (docs/sync.md "One order").
  c.link = std::make_unique<sync::Link>(*c.channel, sends_,
                                        sync::LinkOptions{.orders = true, .relays_refusals = true});
  c.link->OnOpen([this, &c](const codec::OpenFrame& open) { OnOpen(c, open); });
  // While the store is stalled the link's frames wait to be sent; a peer
  // whose answers pile up past a bound is read no more until they go.
  c.channel->HoldReading([&c, &hub = node_.hub] {
    return c.link->unsent() >= kHeldFrames && hub.Unavailable().has_value();
  });
  c.link->OnFrameSeen(FrameTracer(c.remote));
  if (auto requests = sync::Requests::Open(*c.channel, executor_)) {
    c.requests.emplace(std::move(*requests));
    (void)c.requests->Answer(
        [this, &c](const std::string& name, const json::value& args, sync::Reply reply) {
          Answer(c, name, args, std::move(reply));
        });
  }
  node_.meters.connections.Add(1);
  spdlog::info("event=connect peer={} connection={}", c.remote, c.id);
}

void Loop::Refuse(Connection& c, const Refusal& why) {
  const std::string reason = Spelled(why.reason);
  spdlog::warn("event=refused peer={} reason={} detail={}", c.remote, reason, Quoted{why.message});
  node_.meters.faults.Add(1, {reason, "local"});
  c.channel->Send(codec::FaultFrame{0, reason, why.message});
  c.channel->Close();
}

void Loop::Answer(Connection& c, const std::string& request, const json::value& args,
                  sync::Reply reply) {
  std::erase_if(c.answering, [](const sync::Reply& r) { return r.answered(); });
  if (c.answering.size() >= config_.limits.max_requests_in_flight) {
    const std::string why = std::to_string(c.answering.size()) +
                            " requests are unanswered on this link; wait for their answers "
                            "(limits.max_requests_in_flight)";
    spdlog::debug("event=request-refused peer={} request={} reason={} detail={}", c.remote,
                  Quoted{request}, Spelled(Reason::kLimit), Quoted{why});
    return reply.SendError({Spelled(Reason::kLimit), why, {}});
  }
  c.answering.push_back(reply);
  if (request == "durable") return AnswerDurable(c, args, std::move(reply));
  if (request == "has") return AnswerHas(c, args, std::move(reply));
  if (request == "hello") return AnswerHello(c, args, std::move(reply));
  if (request == "digest") return AnswerDigest(c, args, std::move(reply));
  if (request == "tags") return AnswerTags(c, args, std::move(reply));
  if (request == "names") return AnswerNames(c, args, std::move(reply));
  if (request == "keep") return AnswerKeep(c, args, std::move(reply));
  reply.SendError({Spelled(Reason::kMissing), "nothing here answers " + request, {}});
}

void Loop::AnswerTags(Connection& c, const json::value& args, sync::Reply reply) {
  const std::vector<std::string> offered = ParseTagsAsk(args);
  const bool agreed =
      std::find(offered.begin(), offered.end(), sync::kTagAlgorithm) != offered.end();
  // On before the answer leaves: the asker checks tags once it has it, and
  // ignores them before.
  if (agreed) c.link->UseTags();
  reply.SendResult(TagsAnswerJson(agreed));
}

void Loop::AnswerDigest(Connection& c, const json::value& args, sync::Reply reply) {
  auto ask = ParseHasAsk(args, "digest");
  if (!ask) return reply.SendError({Spelled(ask.error().reason), ask.error().message, {}});
  // Of the document as this link shares it: what the asker is kept in step
  // with.
  std::optional<std::string> digest;
  auto it = c.shared.find(ask->name);
  if (it != c.shared.end() && it->second->ready() && it->second->document()) {
    digest = Digest(*it->second->document());
  }
  // Sent after every frame queued before it (they wait for the store).
  sends_.Post([reply, digest] { reply.SendResult(DigestAnswerJson(digest)); });
}

void Loop::AnswerHas(Connection& c, const json::value& args, sync::Reply reply) {
  auto ask = ParseHasAsk(args);
  if (!ask) return reply.SendError({Spelled(ask.error().reason), ask.error().message, {}});
  if (!Access::CanRead(c.token, ask->name)) {
    return reply.SendError(
        {Spelled(Reason::kForbidden), "this token has no right to \"" + ask->name + "\"", {}});
  }
  // Answered from the home thread's state, sent from this one.
  auto tell = [this, id = c.id, reply](std::optional<Held> held) {
    FromHome(id, [reply, held](Connection&) { reply.SendResult(HasAnswerJson(held)); });
  };
  ToHome([this, name = std::move(ask->name), tell] {
    if (const Hub::Loaded* loaded = node_.hub.Find(name)) {
      return tell(Held{loaded->document->root().id(), loaded->document->root().kind()});
    }
    if (auto info = node_.store.Info(name); info && info->damage.empty()) {
      return tell(Held{info->root, info->kind});
    }
    // Not here: perhaps a node above holds it.
    if (Upstreams::Link* upstream = node_.upstreams.For(name)) {
      return upstream->client->Probe(name, [tell](auto found) {
        if (!found) return tell(std::nullopt);
        tell(Held{found->first, found->second});
      });
    }
    tell(std::nullopt);
  });
}

void Loop::AnswerHello(Connection& c, const json::value& args, sync::Reply reply) {
  c.peer = true;  // Only nodes say hello.
  ToHome([this, id = c.id, ask = ParseHelloAsk(args), remote = c.remote, reply] {
    if (ask.peer && ask.id) node_.quorum.Joined(*ask.id, *this, id);
    std::vector<std::string> path = node_.upstreams.Path();
    std::optional<sync::RequestError> cycle;
    const std::optional<std::string>& asker = ask.id;
    if (asker && !ask.peer && std::find(path.begin(), path.end(), *asker) != path.end()) {
      spdlog::error(
          "event=cycle node={} peer={} detail={}", config_.node_id, remote,
          Quoted{*asker + " is already upstream of " + config_.node_id + ": " + JoinedPath(path)});
      cycle = sync::RequestError{Spelled(Reason::kCycle),
                                 "node " + *asker + " is already upstream of " + config_.node_id +
                                     " (" + JoinedPath(path) + "); linking them makes a cycle",
                                 {}};
    }
    const HelloAnswer hello{std::move(path), node_.upstreams.home_ready()};
    FromHome(id, [reply, cycle, answer = ToJson(hello)](Connection&) {
      if (cycle) return reply.SendError(*cycle);
      reply.SendResult(answer);
    });
  });
}

void Loop::AnswerNames(Connection& c, const json::value& args, sync::Reply reply) {
  ToHome([this, id = c.id, token = c.token, ask = ParseNamesAsk(args), reply] {
    // Pages the token may read none of are passed over (the asker pages on
    // from the last name it got, and may not learn others).
    NamesAnswer answer;
    for (std::string after = ask.after; answer.documents.empty();) {
      const auto listed = node_.store.List({}, after, ask.limit);
      answer.more = listed.size() == ask.limit;
      for (const storage::DocumentInfo& info : listed) {
        if (info.damage.empty() && Access::CanRead(token, info.name)) {
          answer.documents.push_back({info.name, {info.root, info.kind}});
        }
      }
      if (!answer.more) break;
      after = listed.back().name;
    }
    FromHome(id, [reply, json = ToJson(answer)](Connection&) { reply.SendResult(json); });
  });
}

void Loop::AnswerKeep(Connection& c, const json::value& args, sync::Reply reply) {
  std::optional<Listed> keep = ParseListed(args);
  if (!keep) {
    return reply.SendError({Spelled(Reason::kInvalidName),
                            R"(keep takes {"name": N, "held": true, "root": ID, "kind": K})",
                            {}});
  }
  if (!Access::CanRead(c.token, keep->name)) {
    return reply.SendError(
        {Spelled(Reason::kForbidden), "this token has no right to \"" + keep->name + "\"", {}});
  }
  ToHome([this, keep = std::move(*keep)] { node_.catch_up.Keep(keep); });
  reply.SendResult(json::object{});
}

void Loop::OnOpen(Connection& c, const codec::OpenFrame& open) {
  const std::string& name = open.name;
  // Before the name reaches a log line or a key.
  if (auto checked = storage::format::CheckName(name); !checked) {
    spdlog::info("event=decline peer={} reason=invalid-name", c.remote);
    return Decline(c, open, Refusal{Reason::kInvalidName, checked.error().message});
  }
  // Opens still on their way count: on a shard, the home thread answers
  // them on a later turn, and a burst would pass the bound. Another node's
  // link carries every document it shares with this one (a peer, each it
  // keeps that is homed here): it is not held to it.
  if (!c.peer && c.shared.size() + c.opening >= config_.limits.max_topics_per_link) {
    return Decline(c, open,
                   Refusal{Reason::kLimit, std::to_string(c.shared.size() + c.opening) +
                                               " documents are shared or being opened on this "
                                               "link already (limits.max_topics_per_link)"});
  }
  if (!Access::CanRead(c.token, name)) {
    spdlog::warn("event=refused doc={} peer={} reason=forbidden", Quoted{name}, c.remote);
    return Decline(c, open,
                   Refusal{Reason::kForbidden, "this token has no right to \"" + name + "\""});
  }
  ++c.opening;
  documents_->Open(open, Access::CanWrite(c.token, name),
                   [this, id = c.id, open](codec::Result<sync::Document*> document, bool created) {
                     auto it = connections_.find(id);
                     if (it != connections_.end()) --it->second->opening;
                     if (!document) {
                       spdlog::info("event=decline doc={} peer={} reason={}", Quoted{open.name},
                                    it == connections_.end() ? "gone" : it->second->remote,
                                    codec::Name(document.error().reason));
                       if (it != connections_.end()) Decline(*it->second, open, document.error());
                       return;
                     }
                     if (it == connections_.end() || node_.stopping)
                       return documents_->Release(open.name);
                     Serve(*it->second, open, **document, created);
                   });
}

void Loop::Serve(Connection& c, const codec::OpenFrame& open, sync::Document& document,
                 bool created) {
  const std::string& name = open.name;
  sync::ShareHandlers handlers;
  handlers.accept = [this, &c, &document, name, writes = Access::CanWrite(c.token, name)](
                        const codec::Commit& commit) -> std::vector<codec::WireReason> {
    if (!writes) {
      return {
          {Spelled(Reason::kForbidden), "this token may only read \"" + name + "\"", std::nullopt}};
    }
    if (auto why = node_.hub.Unavailable()) {
      return {{Spelled(Reason::kUnavailable), *why, std::nullopt}};
    }
    // A node below confirmed this commit to its writer once it had checked
    // it against its own limits (or took it as a state, or made it in a
    // resync): refused here, it would be lost there. Its frame is still
    // bounded by documents.max_frame_bytes (docs/node.md "Clusters").
    if (c.peer) return {};
    return Oversized(document, commit);
  };
  // A document the client makes here with its state: bounded as it would be
  // by commits. Declined, the document made for it goes (Abandon).
  auto declined = std::make_shared<bool>(false);
  handlers.accept_state = [this, &c, declined](const sync::Document& state) {
    auto why = c.peer ? std::vector<codec::WireReason>{}
                      : TooLarge(0, static_cast<int64_t>(state.bytes()));
    *declined = !why.empty();
    return why;
  };
  handlers.refused = [this, &c, name](const sync::Refused& refused) {
    CountRefused(node_.meters, name, c.remote, refused);
  };
  if (forward_) {
    // What a client sends a replica must be stored at home before the
    // shard's links send anything more (docs/node.md "Threads").
    handlers.landing = [forward = forward_](bool starts) {
      if (starts) forward->Dirty();
    };
  }
  handlers.fault = [this, &c, name, created, declined](const std::string& reason,
                                                       const std::string&) {
    node_.meters.TopicEnded(reason, "remote");
    spdlog::info("event=end doc={} peer={} reason={}", Quoted{name}, c.remote, Quoted{reason});
    if (!c.shared.erase(name)) return;
    if (created && *declined) return documents_->Abandon(name);
    documents_->Release(name);
  };
  // A document the client just made here: ask it for its state.
  auto shared = c.link->Share(name, &document, std::move(handlers), /*want=*/created);
  if (!shared) {
    documents_->Release(name);
    return Decline(c, open, shared.error());
  }
  c.shared.emplace(name, *shared);
  spdlog::info("event=share doc={} peer={} created={}", Quoted{name}, c.remote, created);
}

void Loop::Decline(Connection& c, const codec::OpenFrame& open, const Refusal& why) {
  const std::string reason = Spelled(why.reason);
  node_.meters.faults.Add(1, {reason, "local"});
  c.link->Decline(open, reason, why.message);
}

std::vector<codec::WireReason> Loop::TooLarge(uint64_t bytes, int64_t growth) const {
  const uint64_t most = config_.limits.max_document_bytes;
  if (growth <= 0) return {};  // What does not grow a document is taken, whatever its size.
  const uint64_t after = bytes + static_cast<uint64_t>(growth);
  if (after <= most) return {};
  return {{Spelled(Reason::kLimit),
           "the document would be " + std::to_string(after) + " bytes, over " +
               std::to_string(most) + " (limits.max_document_bytes)",
           std::nullopt}};
}

std::vector<codec::WireReason> Loop::Oversized(const sync::Document& document,
                                               const codec::Commit& commit) const {
  const Limits& limits = config_.limits;
  if (commit.deltas.size() > limits.max_deltas_per_commit) {
    return {{Spelled(Reason::kLimit),
             "a commit of " + std::to_string(commit.deltas.size()) + " deltas is over " +
                 std::to_string(limits.max_deltas_per_commit) + " (limits.max_deltas_per_commit)",
             std::nullopt}};
  }
  std::string bytes;
  if (codec::EncodeCommit(commit, bytes) && bytes.size() > limits.max_commit_bytes) {
    return {{Spelled(Reason::kLimit),
             "a commit of " + std::to_string(bytes.size()) + " bytes is over " +
                 std::to_string(limits.max_commit_bytes) + " (limits.max_commit_bytes)",
             std::nullopt}};
  }
  return TooLarge(document.bytes(), sync::Growth(document, commit));
}

void Loop::StopTopics(const std::string& name) {
  for (auto& [id, c] : connections_) {
    auto it = c->shared.find(name);
    if (it == c->shared.end()) continue;
    it->second->Stop();
    c->shared.erase(it);
    documents_->Release(name);
  }
}

void Loop::RefuseLate(const std::string& name, const codec::Commit& commit,
                      const std::vector<codec::WireReason>& reasons) {
  for (auto& [id, c] : connections_) {
    auto it = c->shared.find(name);
    if (it != c->shared.end() && it->second->RefuseLate(commit, reasons)) {
      spdlog::info("event=refused-late doc={} peer={}", Quoted{name}, c->remote);
    }
  }
}

void Loop::Drop(Connection& c) {
  const std::optional<Refusal>& why = c.channel->end_reason();
  spdlog::info("event=disconnect peer={} connection={} reason={}", c.remote, c.id,
               Quoted{why ? why->ToString() : ""});
  // Bytes that were not a frame, or a peer past a limit (a send queue it
  // does not drain, a text message too long): the channel ended it.
  if (why && (why->reason == Reason::kBadFrame || why->reason == Reason::kLimit)) {
    node_.meters.faults.Add(1, {Spelled(why->reason), "local"});
  }
  ToHome([&meters = node_.meters, link = c.link ? std::optional(c.link->stats()) : std::nullopt,
          traffic = c.channel->traffic()] {
    if (link) meters.retired_link += *link;
    AddTraffic(meters.retired_traffic, traffic);
  });
  for (const auto& [name, topic] : c.shared) documents_->Release(name);
  c.shared.clear();
  node_.access.Leave(c.remote);
  connections_.erase(c.id);
}

void Loop::CloseAll() {
  for (auto& [id, connection] : connections_) {
    if (connection->link) {
      connection->link->Close();
    } else {
      connection->channel->Close();
    }
  }
}

}  // namespace aweft::node
