#pragma once

#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "codec/frame.h"
#include "codec/refusal.h"

namespace aweft::sync {

// Runs work later, on the thread (or strand) that owns the documents: the C++
// counterpart of the reference's microtask. Everything posted runs in order.
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual void Post(std::function<void()> work) = 0;
};

// A Scheduler run by hand: tests and single-threaded embedders call
// RunUntilIdle() to drain it.
class ManualScheduler : public Scheduler {
 public:
  void Post(std::function<void()> work) override { queue_.push_back(std::move(work)); }
  // Runs posted work, including work it posts, until none is left. Returns
  // how many items ran.
  size_t RunUntilIdle();
  // Runs the oldest posted item, if any; returns whether one ran.
  bool RunOne();
  size_t pending() const { return queue_.size(); }

 private:
  std::deque<std::function<void()>> queue_;
};

// A commits frame whose commits are shared, not copied, with their
// canonical bytes: the same commit goes to every link of its document.
// REQUIRES: bytes[i] is commits[i]'s encoding; at least one commit.
struct SharedCommits {
  uint64_t topic = 0;
  uint64_t first = 0;
  // Most frames carry a few commits: up to four are held inline, without
  // allocating.
  boost::container::small_vector<std::shared_ptr<const codec::Commit>, 4> commits;
  boost::container::small_vector<std::shared_ptr<const std::string>, 4> bytes;
  // The frame it stands for (a copy of each commit).
  codec::CommitsFrame ToFrame() const;
  // That frame's bytes, from the commits' bytes.
  codec::Result<std::string> Encode() const;
};

// A duplex carrier of frames (behaviour.md §2.1): delivers every frame it is
// given, in order, or ends. Never delivers inside Send(); sending on an ended
// channel does nothing; Close() twice is fine; a Closed() listener added
// after the end is told on a later turn. Undecodable bytes end a channel
// that reads bytes, never the process.
class Channel {
 public:
  using Receiver = std::function<void(const codec::Frame&)>;
  using Listener = std::function<void()>;

  virtual ~Channel() = default;
  virtual void Send(const codec::Frame& frame) = 0;
  // Sends the commits frame `commits` stands for. The default copies it into
  // a CommitsFrame for Send(); a channel that carries bytes sends the
  // commits' bytes as they are.
  virtual void SendCommits(const SharedCommits& commits) { Send(commits.ToFrame()); }
  // Registers `fn` for every frame; returns a handle for Unsubscribe.
  virtual uint64_t Receive(Receiver fn) = 0;
  // Registers `fn` for the channel's end; returns a handle for Unsubscribe.
  virtual uint64_t Closed(Listener fn) = 0;
  virtual void Unsubscribe(uint64_t handle) = 0;
  virtual void Close() = 0;
};

// The listener bookkeeping every channel shares: receivers, closed
// listeners, the ended flag, and telling them all on the scheduler.
class ChannelBase : public Channel {
 public:
  explicit ChannelBase(Scheduler& scheduler);
  ~ChannelBase() override;

  uint64_t Receive(Receiver fn) override;
  uint64_t Closed(Listener fn) override;
  void Unsubscribe(uint64_t handle) override;

  // True once the channel is ending: nothing more is sent.
  bool ended() const { return closing_; }
  // Why it ended, once it has: bytes that were not a frame (the decoder's
  // reason, bad-frame or a decoding one), `limit`, or `closed` for a socket
  // that ended (its message says how). Empty for a channel that only
  // reports its end, and for one this end closed.
  const std::optional<codec::Refusal>& end_reason() const { return end_reason_; }

 protected:
  // Delivers `frame` to the receivers on a later turn.
  void Deliver(codec::Frame frame);
  // Marks the channel ended and tells the closed listeners on a later turn.
  void End();
  // As End(), keeping `why` unless an earlier reason was kept.
  void EndWith(codec::Refusal why);
  // For channels that carry bytes: decodes one frame and delivers it.
  // Returns the decoder's refusal when the bytes are not a frame; the
  // caller then ends the channel and closes its socket.
  std::optional<codec::Refusal> DeliverBytes(std::string_view bytes);
  // Runs `fn` on a later turn, in order with deliveries, unless the channel
  // is destroyed or its end has been told by then.
  void Later(std::function<void()> fn);
  Scheduler& scheduler() { return scheduler_; }

 private:
  Scheduler& scheduler_;
  std::shared_ptr<ChannelBase*> self_;  // Reset when destroyed: posted work checks it.
  std::map<uint64_t, Receiver> receivers_;
  std::map<uint64_t, Listener> listeners_;
  uint64_t next_ = 1;
  // Frames that arrived before the first receiver, kept for it.
  static constexpr size_t kUnreadLimit = 1024;
  std::deque<codec::Frame> unread_;
  std::optional<codec::Refusal> end_reason_;
  bool closing_ = false;  // Set by End(): sending stops.
  bool ended_ = false;    // Set when the end is told: delivery stops.
};

// A channel that also carries text messages beside its frames, as a
// WebSocket does (requests ride on them, behaviour.md §3), and says who
// opened it. Text is delivered in order with the frames, on a later turn.
class TextChannel : public ChannelBase {
 public:
  // The accepting end's view of the request that opened it.
  struct Handshake {
    std::string target;         // The request target, e.g. "/?token=abc".
    std::string authorization;  // The Authorization header, if any.
    std::string remote;         // The peer's address and port.
    std::string origin;         // The Origin header a browser sends, if any.
  };
  // Bytes of message payload (frames and text alike), for metrics.
  // `queued_bytes` were handed to the channel and not yet written out: how
  // far behind the other end is.
  struct Traffic {
    uint64_t bytes_in = 0, bytes_out = 0, queued_bytes = 0;
  };

  using ChannelBase::ChannelBase;

  virtual void SendText(std::string text) = 0;
  // The handler for text that arrives (one at a time).
  void OnText(std::function<void(const std::string&)> fn) { on_text_ = std::move(fn); }
  virtual Traffic traffic() const { return {}; }
  // While `hold` answers true, the channel reads nothing more from its
  // socket (asked before each read, on the channel's thread), so what
  // arrives waits in the other end's and the kernel's buffers, not here.
  // Channels without a socket read everything. Default: none.
  virtual void HoldReading(std::function<bool()> hold) { (void)hold; }

  // For an accepted channel, the request that opened it; empty for a
  // dialed one.
  const Handshake& handshake() const { return handshake_; }
  void set_handshake(Handshake handshake) { handshake_ = std::move(handshake); }

 protected:
  void DeliverText(const std::string& text) {
    if (on_text_) on_text_(text);
  }

 private:
  std::function<void(const std::string&)> on_text_;
  Handshake handshake_;
};

// Two channels joined in one process: what one sends, the other receives, as
// values (no encoding; text as text). Closing either ends both.
std::pair<std::unique_ptr<TextChannel>, std::unique_ptr<TextChannel>> InProcessPair(
    Scheduler& scheduler);

// Two channels joined across threads: the first end lives on `first`'s
// thread, the second on `second`'s, and each is used (sent on, closed,
// destroyed) there only. A frame or text sent on one end is handed to the
// other's scheduler, in order; closing or destroying either end ends both. Both
// schedulers' Post must be callable from any thread (AsioScheduler is), and
// outlive the ends.
std::pair<std::unique_ptr<TextChannel>, std::unique_ptr<TextChannel>> CrossThreadPair(
    Scheduler& first, Scheduler& second);

}  // namespace aweft::sync
