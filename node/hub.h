#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codec/frame.h"
#include "codec/result.h"
#include "node/config.h"
#include "node/durable.h"
#include "node/upstreams.h"
#include "storage/store.h"
#include "sync/document.h"
#include "sync/requests.h"

namespace aweft::node {

// Where a loop gets the documents its connections share: on the home
// thread the hub itself, on a shard that shard's replicas of home documents.
// Called on the loop's thread; answers there.
class Documents {
 public:
  using Opened = std::function<void(codec::Result<sync::Document*>, bool created)>;
  virtual ~Documents() = default;
  // Opens `open.name` for one share (Hub::Open's rules); `done` hears the
  // document or the refusal, now or on a later turn.
  virtual void Open(const codec::OpenFrame& open, bool may_write, Opened done) = 0;
  // Gives back one share.
  virtual void Release(const std::string& name) = 0;
  // Gives back the share of the opener that made the document and whose
  // state was then declined: unless something reached it meanwhile, the
  // document goes from the store, as if never made, before anyone opens the
  // name again (Hub::Open) or at the next eviction round.
  virtual void Abandon(const std::string& name) = 0;
};

// The node's documents (docs/node.md "Connections and documents"): those
// loaded and how many links share each, loading from the store, creating
// (limits.max_documents) or finding a name upstream, eviction once idle,
// whether the store can take writes now, and the durable asks that wait for
// it. Home thread only, except Unavailable().
class Hub final : public Documents {
 public:
  struct Loaded {
    sync::Document* document = nullptr;
    int shares = 0;
    std::chrono::steady_clock::time_point active;
    uint64_t watch = 0;
    // Whether the upstream that orders it has sent its state since it was
    // loaded (or taken this node's): true when none orders it. Until then
    // opens wait (docs/node.md "Clusters"), up to 5 s each.
    bool from_above = true;
    // Made here empty, with its root, to hold the place of a document an
    // upstream orders, until that upstream's state is in (a catch-up, an
    // open of a name held above).
    bool placeholder = false;
    struct Waiting {
      Opened done;
      std::chrono::steady_clock::time_point until;
    };
    std::vector<Waiting> waiting;
    bool abandoned = false;  // Its maker's state was declined (Abandon).
  };
  Hub(const Config& config, boost::asio::io_context& io, storage::Store& store,
      DurableScheduler& durable, Upstreams& upstreams);
  ~Hub() override;

  // Opens `open.name` for one share: loaded already, from the store, or,
  // for a new name, made with `open.root` when the opener holds the
  // document, does not want ours, `may_write` it, and documents.create
  // matches the name; else with the root of the upstream that holds it.
  // `done` hears the document (one share counted) and whether it was
  // created here, or the refusal. A document an upstream orders is served
  // once that upstream's state is in (never an empty copy made to hold its place), or from
  // the store while the upstream is not connected; `unavailable` after 5 s.
  void Open(const codec::OpenFrame& open, bool may_write, Opened done) override;
  // Gives back one share.
  void Release(const std::string& name) override;
  void Abandon(const std::string& name) override;
  // Loads `name` (shares unchanged), creating it with `create_root` when the
  // store has none; as a `placeholder` (Loaded) for a document an upstream
  // holds, which this node only ever fills with that upstream's state.
  codec::Result<sync::Document*> Load(const std::string& name,
                                      const std::optional<codec::RootRef>& create_root,
                                      bool placeholder = false);
  // The loaded document `name`, or null.
  const Loaded* Find(std::string_view name) const;
  const std::map<std::string, Loaded, std::less<>>& loaded() const { return loaded_; }
  // Frees the loaded, unshared document `name` (a delete follows).
  void Unload(std::string_view name);
  // A document was removed from the store.
  void Removed() { --stored_documents_; }

  // Why the store cannot take writes now (its disk fails them; they are
  // retried), or nothing. Logs when that starts and ends. Any thread.
  std::optional<std::string> Unavailable();
  // A durable ask answered on `where` once `done` is set there; while it
  // waits, a failing disk answers it `unavailable` at once instead.
  void AwaitDurable(sync::Reply reply, boost::asio::any_io_executor where,
                    std::shared_ptr<std::atomic<bool>> done);

  // Stops eviction and the stall watch; opens still under way end quietly.
  void Stop();

 private:
  struct DurableAsk {
    sync::Reply reply;
    boost::asio::any_io_executor where;
    std::shared_ptr<std::atomic<bool>> done;
  };
  void ScheduleEviction();
  // Removes the abandoned document `name` if nobody shares it and no
  // commit reached it; true if it went.
  bool DropAbandoned(const std::string& name);
  // The upstream's state of `name` is in: serves the opens waiting for it.
  void FromAbove(const std::string& name);
  // Refuses the waiting opens past their time (all of them with `all`).
  void ExpireWaiting(Loaded& loaded, const std::string& name, bool all);
  void WatchWaiting();
  // While durable asks wait for a batch, looks every 100 ms whether the
  // disk has begun to fail it; if so, answers them `unavailable` at once.
  void WatchStall();

  const Config& config_;
  storage::Store& store_;
  DurableScheduler& durable_;
  Upstreams& upstreams_;
  std::map<std::string, Loaded, std::less<>> loaded_;
  uint64_t stored_documents_ = 0;  // For limits.max_documents.
  boost::asio::steady_timer eviction_, stall_watch_, waiting_watch_;
  std::vector<DurableAsk> durable_waiting_;
  bool stall_watched_ = false, waiting_watched_ = false, stopped_ = false;
  std::atomic<bool> stalled_{false};  // The store was found stalled (for the log).
};

}  // namespace aweft::node
