#include "sync/channel.h"

namespace aweft::sync {

codec::CommitsFrame SharedCommits::ToFrame() const {
  codec::CommitsFrame frame{topic, first, {}};
  frame.commits.reserve(commits.size());
  for (const auto& commit : commits) frame.commits.push_back(*commit);
  return frame;
}

codec::Result<std::string> SharedCommits::Encode() const {
  boost::container::small_vector<std::string_view, 8> views;
  views.reserve(bytes.size());
  for (const auto& b : bytes) views.push_back(*b);
  return codec::EncodeCommitsFrame(topic, first, views);
}

size_t ManualScheduler::RunUntilIdle() {
  size_t ran = 0;
  while (RunOne()) ++ran;
  return ran;
}

bool ManualScheduler::RunOne() {
  if (queue_.empty()) return false;
  auto work = std::move(queue_.front());
  queue_.pop_front();
  work();
  return true;
}

ChannelBase::ChannelBase(Scheduler& scheduler)
    : scheduler_(scheduler), self_(std::make_shared<ChannelBase*>(this)) {}

ChannelBase::~ChannelBase() { *self_ = nullptr; }

uint64_t ChannelBase::Receive(Receiver fn) {
  receivers_.emplace(next_, std::move(fn));
  // Frames that arrived before anyone listened go to the first listener.
  auto unread = std::move(unread_);
  unread_.clear();
  for (auto& frame : unread) Deliver(std::move(frame));
  return next_++;
}

uint64_t ChannelBase::Closed(Listener fn) {
  const uint64_t handle = next_++;
  if (closing_) {  // Late subscriber: told on a later turn.
    std::weak_ptr<ChannelBase*> self = self_;
    scheduler_.Post([self, fn = std::move(fn)] {
      if (auto alive = self.lock(); alive && *alive) fn();
    });
    return handle;
  }
  listeners_.emplace(handle, std::move(fn));
  return handle;
}

void ChannelBase::Unsubscribe(uint64_t handle) {
  receivers_.erase(handle);
  listeners_.erase(handle);
}

void ChannelBase::Deliver(codec::Frame frame) {
  std::weak_ptr<ChannelBase*> self = self_;
  scheduler_.Post([self, frame = std::move(frame)] {
    auto alive = self.lock();
    if (!alive || !*alive || (*alive)->ended_) return;
    ChannelBase& channel = **alive;
    if (channel.receivers_.empty()) {
      if (channel.unread_.size() >= kUnreadLimit) return channel.End();
      channel.unread_.push_back(frame);
      return;
    }
    // A receiver may unsubscribe others (or itself) while we walk.
    for (uint64_t handle = 0;;) {
      auto it = channel.receivers_.upper_bound(handle);
      if (it == channel.receivers_.end()) break;
      handle = it->first;
      Receiver fn = it->second;
      fn(frame);
      if (!self.lock() || !*self.lock() || channel.ended_) break;
    }
  });
}

void ChannelBase::EndWith(codec::Refusal why) {
  if (!end_reason_) end_reason_ = std::move(why);
  End();
}

std::optional<codec::Refusal> ChannelBase::DeliverBytes(std::string_view bytes) {
  auto frame = codec::DecodeFrame(bytes);
  if (!frame) return frame.error();
  Deliver(std::move(*frame));
  return std::nullopt;
}

void ChannelBase::Later(std::function<void()> fn) {
  std::weak_ptr<ChannelBase*> self = self_;
  scheduler_.Post([self, fn = std::move(fn)] {
    if (auto alive = self.lock(); alive && *alive && !(*alive)->ended_) fn();
  });
}

void ChannelBase::End() {
  if (closing_) return;
  closing_ = true;
  // Frames already on their way are delivered first, then the end.
  std::weak_ptr<ChannelBase*> self = self_;
  scheduler_.Post([self] {
    auto alive = self.lock();
    if (!alive || !*alive) return;
    (*alive)->ended_ = true;
    auto listeners = std::move((*alive)->listeners_);
    (*alive)->listeners_.clear();
    for (auto& [handle, fn] : listeners) fn();
  });
}

namespace {

// One end of an in-process pair. Both ends share the pair's state, so either
// may be destroyed first.
class InProcessChannel : public TextChannel {
 public:
  explicit InProcessChannel(Scheduler& scheduler) : TextChannel(scheduler) {}
  ~InProcessChannel() override {
    if (peer_) peer_->peer_ = nullptr;
  }

  void Send(const codec::Frame& frame) override {
    if (ended() || !peer_) return;
    peer_->Deliver(frame);
  }
  void SendText(std::string text) override {
    if (ended() || !peer_) return;
    InProcessChannel* peer = peer_;
    peer->Later([peer, text = std::move(text)] { peer->DeliverText(text); });
  }
  void Close() override {
    if (ended()) return;
    End();
    if (peer_) peer_->End();
  }

  InProcessChannel* peer_ = nullptr;
};

}  // namespace

std::pair<std::unique_ptr<TextChannel>, std::unique_ptr<TextChannel>> InProcessPair(
    Scheduler& scheduler) {
  auto a = std::make_unique<InProcessChannel>(scheduler);
  auto b = std::make_unique<InProcessChannel>(scheduler);
  a->peer_ = b.get();
  b->peer_ = a.get();
  return {std::move(a), std::move(b)};
}

namespace {

// One end of a cross-thread pair. The pair's state names both ends; each
// entry is written and read on its own end's thread only (by that end, and
// by the work the other end posts there), so no lock is needed.
class CrossThreadChannel : public TextChannel {
 public:
  struct Pair {
    Scheduler* schedulers[2];
    CrossThreadChannel* ends[2] = {nullptr, nullptr};
  };

  CrossThreadChannel(std::shared_ptr<Pair> pair, int side)
      : TextChannel(*pair->schedulers[side]), pair_(std::move(pair)), side_(side) {
    pair_->ends[side_] = this;
  }
  ~CrossThreadChannel() override {
    pair_->ends[side_] = nullptr;
    Close();
  }

  void Send(const codec::Frame& frame) override {
    if (ended()) return;
    OnPeer([frame](CrossThreadChannel& peer) { peer.Deliver(frame); });
  }
  void SendText(std::string text) override {
    if (ended()) return;
    OnPeer([text = std::move(text)](CrossThreadChannel& peer) {
      if (!peer.ended()) peer.DeliverText(text);
    });
  }
  void Close() override {
    if (peer_closed_) return;
    peer_closed_ = true;
    End();
    OnPeer([](CrossThreadChannel& peer) {
      peer.peer_closed_ = true;
      peer.End();
    });
  }

 private:
  // Runs `fn` on the other end's thread, if that end still exists then.
  template <class Fn>
  void OnPeer(Fn fn) {
    const int other = 1 - side_;
    pair_->schedulers[other]->Post([pair = pair_, other, fn = std::move(fn)] {
      if (CrossThreadChannel* peer = pair->ends[other]) fn(*peer);
    });
  }

  std::shared_ptr<Pair> pair_;
  int side_;
  bool peer_closed_ = false;  // This end was closed, by itself or the other.
};

}  // namespace

std::pair<std::unique_ptr<TextChannel>, std::unique_ptr<TextChannel>> CrossThreadPair(
    Scheduler& first, Scheduler& second) {
  auto pair = std::make_shared<CrossThreadChannel::Pair>();
  pair->schedulers[0] = &first;
  pair->schedulers[1] = &second;
  return {std::make_unique<CrossThreadChannel>(pair, 0),
          std::make_unique<CrossThreadChannel>(pair, 1)};
}

}  // namespace aweft::sync
