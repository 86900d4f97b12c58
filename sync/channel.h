#pragma once

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

#include <boost/container/small_vector.hpp>

#include "codec/frame.h"

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
  // Why it ended, once it has ("bad-frame: ...", a socket error); empty
  // for a channel that only reports its end.
  const std::string& end_reason() const { return end_reason_; }

 protected:
  // Delivers `frame` to the receivers on a later turn.
  void Deliver(codec::Frame frame);
  // Marks the channel ended and tells the closed listeners on a later turn.
  void End();
  // As End(), keeping `reason` unless an earlier one was kept.
  void EndWith(std::string reason);
  // For channels that carry bytes: decodes one frame and delivers it.
  // Returns the refusal's text when the bytes are not a frame; the caller
  // then ends the channel and closes its socket.
  std::optional<std::string> DeliverBytes(std::string_view bytes);
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
  std::string end_reason_;
  bool closing_ = false;  // Set by End(): sending stops.
  bool ended_ = false;    // Set when the end is told: delivery stops.
};

// Two channels joined in one process: what one sends, the other receives, as
// values (no encoding). Closing either ends both.
std::pair<std::unique_ptr<Channel>, std::unique_ptr<Channel>> InProcessPair(
    Scheduler& scheduler);

// Two channels joined across threads: the first end lives on `first`'s
// thread, the second on `second`'s, and each is used (sent on, closed,
// destroyed) there only. A frame sent on one end is handed to the other's
// scheduler, in order; closing or destroying either end ends both. Both
// schedulers' Post must be callable from any thread (AsioScheduler is), and
// outlive the ends.
std::pair<std::unique_ptr<Channel>, std::unique_ptr<Channel>> CrossThreadPair(
    Scheduler& first, Scheduler& second);

}  // namespace aweft::sync
