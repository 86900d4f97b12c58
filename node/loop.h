#pragma once

#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codec/frame.h"
#include "codec/result.h"
#include "node/access.h"
#include "node/admin_source.h"
#include "node/config.h"
#include "node/durable.h"
#include "node/hub.h"
#include "node/upstreams.h"
#include "sync/channel.h"
#include "sync/link.h"
#include "sync/requests.h"

namespace aweft::node {

// What every loop of a node shares. Hub, upstreams and store are the home
// thread's: a loop uses them in work it posts there (Hub::Unavailable()
// excepted, which any thread may call).
class CatchUp;
class Quorum;

struct LoopContext {
  const Config& config;
  Access& access;       // Any thread.
  NodeMetrics& meters;  // Any thread.
  boost::asio::io_context::executor_type home;
  Hub& hub;
  Upstreams& upstreams;
  Quorum& quorum;
  CatchUp& catch_up;
  storage::Store& store;
  const std::atomic<bool>& stopping;
  std::atomic<uint64_t>& connection_ids;  // Unique over all loops.
};

// The connections of one thread (docs/node.md "Connections and documents",
// "Threads"): the home thread's is loop 0, each shard's another, all alike.
// A loop takes a connection the listener placed on its thread, checks its
// address count and token, runs its link and requests, opens, serves and
// declines what it shares, answers has, hello and durable, and drops it
// when it ends. Everything here runs on the loop's thread.
//
// Durable before forwarded rests on one barrier, `sends`: work posted to it
// runs only once every commit that entered a document on this thread before
// the Post is stored (the home thread's DurableScheduler, a shard's
// ForwardScheduler over it). The links send through it, and the `durable`
// answer is posted to it, so a client told `durable` and a client sent a
// commit both wait for the same stored batch.
class Loop {
 public:
  struct Connection {
    uint64_t id = 0;
    std::unique_ptr<sync::TextChannel> channel;
    std::unique_ptr<sync::Link> link;
    std::optional<sync::Requests> requests;
    const Token* token = nullptr;                 // Null when no tokens are configured.
    std::map<std::string, sync::Shared*> shared;  // What this connection shares now.
    size_t opening = 0;                           // Opens asked of the documents, not yet answered.
    std::string remote;
    bool peer = false;                   // Another node (it asked `hello`), not a client.
    std::vector<sync::Reply> answering;  // Requests taken, some answered since.
    std::chrono::steady_clock::time_point since = std::chrono::steady_clock::now();
  };

  // `forward`: a shard's scheduler, told of each commit a client sends
  // (null on the home thread, where `sends` stores it anyway).
  Loop(size_t index, LoopContext& node, boost::asio::io_context::executor_type executor,
       sync::Scheduler& sends, ForwardScheduler* forward);
  ~Loop();
  Loop(const Loop&) = delete;
  Loop& operator=(const Loop&) = delete;

  // Set once, before the first Accept.
  void set_documents(Documents& documents) { documents_ = &documents; }

  size_t index() const { return index_; }
  bool running_here() const { return executor_.running_in_this_thread(); }
  boost::asio::io_context::executor_type executor() const { return executor_; }
  const std::map<uint64_t, std::unique_ptr<Connection>>& connections() const {
    return connections_;
  }

  void Accept(std::unique_ptr<sync::TextChannel> channel);
  // Stops every topic sharing `name` here: its clients hear `left` and may
  // open it again (its replica ended).
  void StopTopics(const std::string& name);
  // Tells the writer of `commit` to `name`, on whichever connection here
  // sent it, that a place ordering the document refused it after this node
  // took it (Shared::RefuseLate); its correction follows as a commit.
  void RefuseLate(const std::string& name, const codec::Commit& commit,
                  const std::vector<codec::WireReason>& reasons);
  // Closes every connection after sending what is queued (shutdown).
  void CloseAll();
  // Home thread: asks the peer on connection `id` whether it has stored
  // `name` up to what this node sent it so far (node/quorum.h); `done`
  // hears, on the home thread, nullopt or why not.
  void AskStored(uint64_t id, const std::string& name,
                 std::function<void(std::optional<std::string> why)> done);
  // Frees the links, which share documents, while those still exist.
  void DropLinks();

 private:
  // Runs `fn` on the home thread: now if this is it, else posted there
  // (asio::dispatch, the node's one way to run work on another thread).
  template <class Fn>
  void ToHome(Fn fn) {
    boost::asio::dispatch(node_.home, std::move(fn));
  }
  // Runs `fn` with connection `id` on this thread, if it is still open then
  // (dispatched; called from the home thread).
  template <class Fn>
  void FromHome(uint64_t id, Fn fn) {
    boost::asio::dispatch(executor_, [this, id, fn = std::move(fn)]() mutable {
      if (auto it = connections_.find(id); it != connections_.end()) fn(*it->second);
    });
  }

  // Ends a connection at once with a link fault.
  void Refuse(Connection& connection, const codec::Refusal& why);
  void Answer(Connection& connection, const std::string& request, const boost::json::value& args,
              sync::Reply reply);
  void AnswerHas(Connection& connection, const boost::json::value& args, sync::Reply reply);
  void AnswerHello(Connection& connection, const boost::json::value& args, sync::Reply reply);
  void AnswerNames(Connection& connection, const boost::json::value& args, sync::Reply reply);
  void AnswerKeep(Connection& connection, const boost::json::value& args, sync::Reply reply);
  void AnswerDurable(Connection& connection, const boost::json::value& args, sync::Reply reply);
  void AnswerTags(Connection& connection, const boost::json::value& args, sync::Reply reply);
  void AnswerDigest(Connection& connection, const boost::json::value& args, sync::Reply reply);
  void OnOpen(Connection& connection, const codec::OpenFrame& open);
  void Serve(Connection& connection, const codec::OpenFrame& open, sync::Document& document,
             bool created);
  void Decline(Connection& connection, const codec::OpenFrame& open, const codec::Refusal& why);
  void Drop(Connection& connection);
  // The `limit` reasons a commit from a client earns (limits.max_*).
  // Refusals for a commit past a limit on its own size or, applied to
  // `document`, the document's (limits.max_document_bytes).
  std::vector<codec::WireReason> Oversized(const sync::Document& document,
                                           const codec::Commit& commit) const;
  // Refuses a document of `bytes` growing by `growth` past
  // limits.max_document_bytes; what does not grow it is taken (a document
  // stored before the limit was lowered can still shrink).
  std::vector<codec::WireReason> TooLarge(uint64_t bytes, int64_t growth) const;

  const size_t index_;
  LoopContext& node_;
  const Config& config_;
  const boost::asio::io_context::executor_type executor_;
  sync::Scheduler& sends_;
  ForwardScheduler* const forward_;
  Documents* documents_ = nullptr;
  std::map<uint64_t, std::unique_ptr<Connection>> connections_;
};

}  // namespace aweft::node
