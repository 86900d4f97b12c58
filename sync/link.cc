#include "sync/link.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "codec/commit.h"
#include "codec/id.h"
#include "sync/snapshot.h"
#include "sync/tag.h"

namespace aweft::sync {

using codec::Frame;
using codec::Reason;

namespace {

std::optional<codec::RootRef> RootOf(const Document& document) {
  return codec::RootRef{std::string(document.root().id().view()), document.root().kind()};
}

bool SameRoot(const codec::RootRef& root, const Document& document) {
  return root.id == document.root().id().view() && root.kind == document.root().kind();
}

std::string Topic(uint64_t n) { return "topic " + std::to_string(n); }

// Slots listed per topic before an ordering end stands for them all.
constexpr size_t kCrossingSlots = 4096;

// True when every slot `commit` writes already holds what it writes there
// (a remove: nothing).
bool InEffect(const Document& document, const Commit& commit) {
  return std::all_of(commit.deltas.begin(), commit.deltas.end(), [&](const codec::Delta& delta) {
    const Observable* target = document.Find(delta.id);
    const Value* value = target ? target->Get(delta.ref.key) : nullptr;
    return delta.value ? value && *value == *delta.value : value == nullptr;
  });
}

// What a trace log says of `frame`.
Link::FrameSeen Seen(bool out, const Frame& frame) {
  const auto* commits = std::get_if<codec::CommitsFrame>(&frame);
  return {out, codec::FrameKindName(frame),
          std::visit([](const auto& f) { return f.topic; }, frame),
          commits ? commits->commits.size() : 0};
}

}  // namespace

// --- Shared

bool Shared::Carried(const Change& change) const { return tracker_ && tracker_->Landed(change); }

void Shared::Resync() {
  // Once: a second ask would bring a second state, refused as unwanted.
  if (ended_ || !link_ || link_->closed_ || wanted_) return;
  wanted_ = true;
  if (live_document_) link_->SendOpen(*this);
}

void Shared::Stop() {
  if (ended_ || !link_ || link_->closed_) return;
  link_->Enqueue(codec::LeaveFrame{mine_});
  link_->End(*this, codec::Spelled(codec::Reason::kLeft), "this end stopped sharing " + name_,
             /*told=*/false);
}

bool Shared::RefuseLate(const Commit& commit, const std::vector<WireReason>& reasons) {
  if (ended_ || !link_ || link_->closed_ || !theirs_ || reasons.empty()) return false;
  for (auto it = received_.begin(); it != received_.end(); ++it) {
    if (it->second->deltas != commit.deltas) continue;  // Tagged or not.
    ++link_->stats_.refused_out;
    link_->Enqueue(codec::RefusedFrame{mine_, it->first, reasons});
    received_.erase(it);
    return true;
  }
  return false;
}

// --- Link

Link::Link(Channel& channel, Scheduler& scheduler, LinkOptions options)
    : channel_(channel),
      scheduler_(scheduler),
      options_(options),
      self_(std::make_shared<Link*>(this)) {
  receive_handle_ = channel_.Receive([this](const Frame& frame) { OnFrame(frame); });
  closed_handle_ = channel_.Closed([this] { OnChannelEnd(); });
}

Link::~Link() {
  *self_ = nullptr;
  channel_.Unsubscribe(receive_handle_);
  channel_.Unsubscribe(closed_handle_);
  for (auto& [n, topic] : mine_) topic->tracker_.reset();
}

Result<Shared*> Link::Share(const std::string& name, Document* document, ShareHandlers handlers,
                            bool want) {
  if (closed_) return codec::Refusal{Reason::kClosed, "the link is closed"};
  for (const auto& [n, topic] : mine_) {
    if (topic->name_ == name && !topic->ended_) {
      // The reference's known limit, settled: a second share would wait
      // forever for a partner.
      return codec::Refusal{Reason::kAlreadyShared,
                            "\"" + name + "\" is already shared on this link as " + Topic(n)};
    }
  }
  auto owned = std::make_unique<Shared>();
  Shared& topic = *owned;
  topic.link_ = this;
  topic.name_ = name;
  topic.mine_ = next_topic_++;
  topic.handlers_ = std::move(handlers);
  mine_.emplace(topic.mine_, std::move(owned));
  if (document) {
    Adopt(topic, *document);
    MakeReady(topic);
    topic.wanted_ = want;
  }
  if (auto it = waiting_.find(name); it != waiting_.end()) {
    codec::OpenFrame open = std::move(it->second);
    waiting_.erase(it);
    Pair(topic, open);
  } else {
    if (!document) topic.wanted_ = true;
    SendOpen(topic);
  }
  return &topic;
}

void Link::Adopt(Shared& topic, Document& document) {
  topic.live_document_ = &document;
  topic.tracker_ = std::make_unique<Tracker>(
      document, [this, &topic](const Tracked& t) { OnTracked(topic, t); });
}

void Link::MakeReady(Shared& topic) {
  if (topic.ready_ || topic.ended_) return;
  topic.ready_ = true;
  if (topic.handlers_.ready) topic.handlers_.ready(*topic.live_document_);
}

void Link::SendOpen(Shared& topic) {
  topic.opened_ = true;
  std::optional<codec::RootRef> root;
  if (topic.live_document_) root = RootOf(*topic.live_document_);
  Enqueue(codec::OpenFrame{topic.mine_, topic.name_, root, topic.wanted_});
}

void Link::Pair(Shared& topic, const codec::OpenFrame& open) {
  topic.theirs_ = open.topic;
  if (!topic.live_document_) {
    if (!open.root) {
      Refuse(topic, open.topic, codec::Spelled(codec::Reason::kNoDocument),
             "neither end holds \"" + topic.name_ + "\"");
      return;
    }
    auto minted = RootFrom(*codec::IdFromBytes(open.root->id), static_cast<int>(open.root->kind));
    topic.minted_ = std::move(*minted);
    topic.wanted_ = true;
    Adopt(topic, *topic.minted_);
  } else if (open.root && !SameRoot(*open.root, *topic.live_document_)) {
    Refuse(topic, open.topic, codec::Spelled(codec::Reason::kRootMismatch),
           "the two ends hold different roots under \"" + topic.name_ + "\"");
    return;
  }
  theirs_[open.topic] = &topic;
  topic.they_want_ = open.want;
  topic.they_hold_ = open.root.has_value();
  if (!topic.opened_) SendOpen(topic);
  GoLive(topic);
  // Both ends hold the document and neither takes the other's state: they
  // may differ from the start.
  if (options_.orders && topic.they_hold_ && !open.want && !topic.wanted_) Check(topic);
}

void Link::GoLive(Shared& topic) {
  topic.live_ = true;
  auto held = std::move(topic.held_);
  topic.held_.clear();
  if (topic.they_want_) {
    SendState(topic);  // The state subsumes what was held.
  } else {
    for (const auto& sent : held) EnqueueCommit(topic, sent);
  }
}

void Link::SendState(Shared& topic) {
  const Document& document = *topic.live_document_;
  if (topic.wanted_ && document.observable_count() == 1 && document.root().size() == 0) {
    // This end holds nothing yet: answering now would move the other end to
    // an empty document. Answer once our own state has arrived.
    topic.owe_state_ = true;
    return;
  }
  topic.they_want_ = false;
  topic.owe_state_ = false;
  // What an end holding a document writes before it applies the state may
  // cross it. (An end that held none cannot write before it arrives.)
  if (options_.orders && topic.they_hold_) topic.crossing_all_ = topic.next_seq_;
  Enqueue(codec::StateFrame{topic.mine_, AsCommit(*topic.live_document_)});
}

void Link::OnTracked(Shared& topic, const Tracked& tracked) {
  if (tracked.landed && options_.relays_refusals && topic.receiving_) {
    topic.received_.emplace_back(topic.receiving_, tracked.change.delivered.commit);
    while (topic.received_.size() > options_.window) topic.received_.pop_front();
  }
  if (tracked.landed || topic.ended_ || closed_) return;
  const Delivered& delivered = tracked.change.delivered;
  Shared::Sent sent{topic.next_seq_++, delivered.commit, delivered.undo, tracked.change.Bytes()};
  if (options_.orders) Cross(topic, *sent.commit, sent.undo.get(), topic.next_seq_);
  // What crosses: on a link that agreed tags, the commit with its tag. The
  // window keeps the commit as the document made it.
  Shared::Sent wire = sent;
  if (tags_ && delivered.undo && sent.bytes && Tag(delivered)) {
    wire.commit = delivered.tagged;
    wire.bytes = delivered.tagged_bytes;
  }
  if (topic.live_) {
    EnqueueCommit(topic, wire);
  } else {
    topic.held_.push_back(std::move(wire));
  }
  Remember(topic, std::move(sent));
}

bool Link::Tag(const Delivered& delivered) {
  // Once per delivery, however many links tag it.
  if (!delivered.tagged) {
    auto tagged = std::make_shared<Commit>(*delivered.commit);
    tagged->tag = TagOf(*tagged, *delivered.undo);
    auto encoded = codec::EncodeCommit(*tagged);
    if (!encoded) return false;  // Cannot be: the untagged one encoded.
    delivered.tagged_bytes = std::make_shared<const std::string>(std::move(*encoded));
    delivered.tagged = std::move(tagged);
  }
  return true;
}

void Link::Remember(Shared& topic, Shared::Sent sent) {
  sent.bytes.reset();  // The window needs the commit, not its bytes.
  topic.window_.push_back(std::move(sent));
  while (topic.window_.size() > options_.window) topic.window_.pop_front();
}

// --- Ordering (docs/sync.md "One order")

void Link::Cross(Shared& topic, const Commit& commit, const Commit* undo, uint64_t clock) {
  // Listed only once the other end writes; Crosses looks back then.
  if (!topic.writes_) return;
  const size_t more = commit.deltas.size() + (undo ? undo->deltas.size() : 0);
  if (topic.crossing_.size() + topic.crossing_whole_.size() + more > kCrossingSlots) {
    topic.crossing_.clear();
    topic.crossing_whole_.clear();
    topic.crossing_all_ = clock;
    return;
  }
  // An observable attached or detached: one end may have forgotten it and
  // the other attached it again by id, empty (spec §1.3), so a write into it
  // does not commute with this commit even on another slot.
  auto whole = [&](const std::optional<Value>& value) {
    if (value && IsAttach(*value)) {
      topic.crossing_whole_[std::get<codec::Reference>(*value).id] = clock;
    }
  };
  for (const codec::Delta& delta : commit.deltas) {
    topic.crossing_[SlotKey(delta)] = clock;
    whole(delta.value);
  }
  if (undo) {
    for (const codec::Delta& delta : undo->deltas) whole(delta.value);  // What it detached.
  }
}

bool Link::Crosses(Shared& topic, const Commit& theirs) {
  if (!topic.writes_) {
    // The first commit from the other end: list what the window still
    // holds, and stand for what it dropped.
    topic.writes_ = true;
    if (!topic.window_.empty() && topic.window_.front().seq > 1) {
      topic.crossing_all_ = std::max(topic.crossing_all_, topic.window_.front().seq);
    }
    for (const Shared::Sent& sent : topic.window_) {
      Cross(topic, *sent.commit, sent.undo.get(), sent.seq + 1);
    }
  }
  if (topic.crossing_all_ > 0) return true;
  for (const codec::Delta& delta : theirs.deltas) {
    if (topic.crossing_.count(SlotKey(delta)) || topic.crossing_whole_.count(delta.id)) return true;
    if (delta.value && IsAttach(*delta.value) &&
        topic.crossing_whole_.count(std::get<codec::Reference>(*delta.value).id)) {
      return true;
    }
  }
  return false;
}

void Link::Check(Shared& topic) {
  if (topic.ended_ || closed_ || !topic.live_ || !topic.live_document_) return;
  // One ask at a time: a state answers the oldest.
  if (topic.checking_ || topic.wanted_) {
    topic.check_again_ = true;
    return;
  }
  topic.checking_ = true;
  topic.check_mark_ = topic.next_seq_;
  ++stats_.checks;
  Enqueue(codec::OpenFrame{topic.mine_, topic.name_, RootOf(*topic.live_document_), true});
}

void Link::OnCheck(Shared& topic, const codec::StateFrame& state) {
  topic.checking_ = false;
  const uint64_t mark = topic.check_mark_;
  const Document& document = *topic.live_document_;
  Document there(document.root().id(), document.root().kind());
  if (state.commit) {
    if (auto built = there.Apply(*state.commit); !built) {
      Refuse(topic, state.topic, std::string(codec::Name(built.error().reason)),
             "the state for \"" + topic.name_ + "\" does not apply: " + built.error().message);
      return;
    }
  }
  // The other end applied everything sent before the ask: those slots no
  // longer cross.
  std::erase_if(topic.crossing_, [mark](const auto& slot) { return slot.second <= mark; });
  std::erase_if(topic.crossing_whole_, [mark](const auto& whole) { return whole.second <= mark; });
  if (topic.crossing_all_ <= mark) topic.crossing_all_ = 0;
  // What was sent after it reaches the other end after its state. Past the
  // window it is unknown: ask again.
  if (topic.next_seq_ > mark && (topic.window_.empty() || topic.window_.front().seq > mark)) {
    topic.check_again_ = false;
    return Check(topic);
  }
  for (const Shared::Sent& sent : topic.window_) {
    if (sent.seq >= mark) (void)there.Apply(*sent.commit);  // A refusal there changes nothing.
  }
  Result<std::optional<Commit>> move = Reconcile(there, TakeSnapshot(document));
  if (move && *move) {
    ++stats_.corrections;
    Shared::Sent sent{topic.next_seq_++, std::make_shared<const Commit>(std::move(**move)), nullptr,
                      nullptr, /*correction=*/true};
    Cross(topic, *sent.commit, nullptr, topic.next_seq_);
    EnqueueCommit(topic, sent);
    Remember(topic, std::move(sent));
  }
  if (std::exchange(topic.check_again_, false)) Check(topic);
}

Shared* Link::Theirs(uint64_t peer_topic) {
  auto it = theirs_.find(peer_topic);
  if (it != theirs_.end()) return it->second;
  Enqueue(codec::FaultFrame{peer_topic, codec::Spelled(codec::Reason::kNoTopic),
                            "nothing here is open as " + Topic(peer_topic)});
  return nullptr;
}

void Link::OnFrame(const Frame& frame) {
  if (closed_) return;
  ++stats_.frames_in;
  if (on_seen_) on_seen_(Seen(false, frame));
  std::visit(
      [this](const auto& f) {
        using F = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<F, codec::OpenFrame>) {
          OnOpenFrame(f);
        } else if constexpr (std::is_same_v<F, codec::StateFrame>) {
          OnState(f);
        } else if constexpr (std::is_same_v<F, codec::CommitsFrame>) {
          OnCommits(f);
        } else if constexpr (std::is_same_v<F, codec::RefusedFrame>) {
          OnRefused(f);
        } else if constexpr (std::is_same_v<F, codec::LeaveFrame>) {
          if (Shared* topic = Theirs(f.topic)) {
            End(*topic, codec::Spelled(codec::Reason::kLeft),
                "the other end stopped sharing " + topic->name_, true);
          }
        } else {
          OnFault(f);
        }
      },
      frame);
}

void Link::OnOpenFrame(const codec::OpenFrame& open) {
  if (open.root && open.root->id.size() != codec::kIdSize) {
    // The frame layer lets any width through; the reference then throws and
    // leaves the topic stuck. Turn it away instead.
    Enqueue(
        codec::FaultFrame{open.topic, codec::Spelled(codec::Reason::kRootMismatch),
                          "a root id is 12 bytes, not " + std::to_string(open.root->id.size())});
    return;
  }
  if (auto it = theirs_.find(open.topic); it != theirs_.end()) {
    Shared& topic = *it->second;  // A repeat: the other end asks to resync.
    if (!open.root || !SameRoot(*open.root, *topic.live_document_)) {
      Refuse(topic, open.topic, codec::Spelled(codec::Reason::kRootMismatch),
             "a repeated open names another root for \"" + topic.name_ + "\"");
      return;
    }
    topic.they_want_ = open.want;
    topic.they_hold_ = true;
    if (open.want) SendState(topic);
    return;
  }
  for (auto& [n, topic] : mine_) {
    if (topic->name_ == open.name && !topic->theirs_ && !topic->ended_) {
      Pair(*topic, open);
      return;
    }
  }
  waiting_.insert_or_assign(open.name, open);
  if (on_open_) on_open_(open);
}

void Link::Decline(const codec::OpenFrame& open, const std::string& reason,
                   const std::string& message) {
  if (auto it = waiting_.find(open.name); it != waiting_.end() && it->second.topic == open.topic) {
    waiting_.erase(it);
  }
  Enqueue(codec::FaultFrame{open.topic, reason, message});
}

namespace {

// What an accept hook answers; a throw is a refusal, accept-threw.
template <typename Hook, typename Arg>
std::vector<WireReason> Asked(const Hook& hook, const Arg& arg) {
  try {
    return hook(arg);
  } catch (const std::exception& e) {
    return {{codec::Spelled(codec::Reason::kAcceptThrew), e.what(), std::nullopt}};
  } catch (...) {
    return {{codec::Spelled(codec::Reason::kAcceptThrew), "accept threw a non-exception",
             std::nullopt}};
  }
}

}  // namespace

void Link::OnState(const codec::StateFrame& state) {
  Shared* found = Theirs(state.topic);
  if (!found) return;
  Shared& topic = *found;
  if (topic.checking_) return OnCheck(topic, state);  // Asked first.
  if (!topic.wanted_) {
    // A state bypasses accept, so it is only taken when asked for.
    Refuse(topic, state.topic, codec::Spelled(codec::Reason::kUnwantedState),
           "a state for \"" + topic.name_ + "\" arrived unasked");
    return;
  }
  Document& document = *topic.live_document_;
  Document scratch(document.root().id(), document.root().kind());
  Result<void> applied;
  if (state.commit) applied = scratch.Apply(*state.commit);
  if (applied && topic.handlers_.accept_state) {
    std::vector<WireReason> reasons = Asked(topic.handlers_.accept_state, scratch);
    if (!reasons.empty()) {
      return Refuse(topic, state.topic, reasons.front().code, reasons.front().message);
    }
  }
  Result<std::optional<Commit>> move = applied ? Reconcile(document, TakeSnapshot(scratch))
                                               : Result<std::optional<Commit>>(applied.error());
  if (move && *move) {
    if (topic.handlers_.landing) topic.handlers_.landing(true);
    applied = topic.tracker_->Receive(**move);
    if (topic.handlers_.landing) topic.handlers_.landing(false);
  }
  if (!move || !applied) {
    const codec::Refusal& why = move ? applied.error() : move.error();
    Refuse(topic, state.topic, std::string(codec::Name(why.reason)),
           "the state for \"" + topic.name_ + "\" does not apply: " + why.message);
    return;
  }
  topic.wanted_ = false;
  if (topic.owe_state_) SendState(topic);
  if (std::exchange(topic.check_again_, false)) Check(topic);
  MakeReady(topic);
  if (topic.handlers_.synced && !topic.ended_) topic.handlers_.synced(document);
}

void Link::OnCommits(const codec::CommitsFrame& frame) {
  Shared* found = Theirs(frame.topic);
  if (!found) return;
  Shared& topic = *found;
  std::exception_ptr first_error;
  for (size_t i = 0; i < frame.commits.size() && !topic.ended_; ++i) {
    const Commit& commit = frame.commits[i];
    const uint64_t seq = frame.first + i;
    ++stats_.commits_in;
    // A commit this end holds in effect already is a repeat (an end that
    // resynced sends again what reached here before): taken as a no-op, not
    // refused (slot-exists, or diverged by its tag) while the first stands.
    if (options_.orders && InEffect(*topic.live_document_, commit)) continue;
    if (options_.orders && Crosses(topic, commit)) Check(topic);
    std::vector<WireReason> reasons;
    if (tags_ && commit.tag && TagBefore(*topic.live_document_, commit) != *commit.tag) {
      reasons = {{codec::Spelled(Reason::kDiverged),
                  "the commit was made on a state this end does not hold (its integrity tag "
                  "does not match)",
                  std::nullopt}};
    }
    if (reasons.empty() && topic.handlers_.accept) reasons = Asked(topic.handlers_.accept, commit);
    if (reasons.empty()) {
      try {
        if (topic.handlers_.landing) topic.handlers_.landing(true);
        topic.receiving_ = seq;
        auto landed = topic.tracker_->Receive(commit);
        topic.receiving_ = 0;
        if (topic.handlers_.landing) topic.handlers_.landing(false);
        if (!landed) {
          reasons = {{std::string(codec::Name(landed.error().reason)), landed.error().message,
                      std::nullopt}};
        }
      } catch (...) {
        topic.receiving_ = 0;
        if (topic.handlers_.landing) topic.handlers_.landing(false);
        // A watcher threw after the commit landed: not a refusal.
        if (!first_error) first_error = std::current_exception();
      }
    }
    if (reasons.empty()) continue;
    if (options_.orders) Check(topic);  // The other end keeps what we refused.
    ++stats_.refused_out;
    Enqueue(codec::RefusedFrame{topic.mine_, seq, reasons});
    if (topic.handlers_.refused) {
      topic.handlers_.refused(Refused{false, seq, reasons, commit, std::nullopt});
    }
  }
  if (first_error) std::rethrow_exception(first_error);
}

void Link::OnRefused(const codec::RefusedFrame& frame) {
  Shared* found = Theirs(frame.topic);
  if (!found) return;
  ++stats_.refused_in;
  Refused report{true, frame.seq, frame.reasons, std::nullopt, std::nullopt};
  bool correction = false;
  for (const auto& sent : found->window_) {
    if (sent.seq != frame.seq) continue;
    report.commit = *sent.commit;
    if (sent.undo) report.undo = *sent.undo;
    correction = sent.correction;
  }
  // The other end kept its own: check it. A refused correction is the
  // link's own business, not the application's.
  if (options_.orders) Check(*found);
  if (!correction && found->handlers_.refused) found->handlers_.refused(report);
}

void Link::OnFault(const codec::FaultFrame& fault) {
  // The frame layer takes an empty reason, but a topic's end reason is what
  // the application branches on: a fault that names none is a bad frame.
  const std::string reason =
      fault.reason.empty() ? std::string(codec::Name(Reason::kBadFrame)) : fault.reason;
  const std::string message = fault.reason.empty()
                                  ? "the other end sent a fault with no reason: " + fault.message
                                  : fault.message;
  if (fault.topic == 0) {  // The whole link.
    for (auto& [n, topic] : mine_) End(*topic, reason, message, true);
    closed_ = true;
    channel_.Close();
    return;
  }
  auto it = mine_.find(fault.topic);  // A fault carries the receiver's number.
  if (it != mine_.end()) End(*it->second, reason, message, true);
}

void Link::OnChannelEnd() {
  if (closed_) return;
  closed_ = true;
  for (auto& [n, topic] : mine_) {
    End(*topic, codec::Spelled(codec::Reason::kClosed), "the channel under the link ended",
        /*told=*/true);
  }
  waiting_.clear();
}

void Link::Refuse(Shared& topic, uint64_t peer_topic, const std::string& reason,
                  const std::string& message) {
  Enqueue(codec::FaultFrame{peer_topic, reason, message});
  End(topic, reason, message, /*told=*/true);
}

void Link::End(Shared& topic, const std::string& reason, const std::string& message, bool told) {
  if (topic.ended_) return;
  topic.ended_ = true;
  topic.live_ = false;
  topic.end_reason_ = reason;
  if (topic.tracker_) topic.tracker_->Stop();
  if (topic.theirs_) {
    auto it = theirs_.find(*topic.theirs_);
    if (it != theirs_.end() && it->second == &topic) theirs_.erase(it);
  }
  if (told && topic.handlers_.fault) topic.handlers_.fault(reason, message);
}

void Link::Close() {
  if (closed_) return;
  Flush();
  closed_ = true;
  for (auto& [n, topic] : mine_)
    End(*topic, codec::Spelled(codec::Reason::kClosed), "the link was closed", false);
  waiting_.clear();
  channel_.Close();
}

void Link::Enqueue(Frame frame) {
  if (closed_) return;
  outbox_.push_back(std::move(frame));
  PostFlush();
}

void Link::EnqueueCommit(const Shared& topic, const Shared::Sent& sent) {
  if (closed_) return;
  if (!sent.bytes) {  // No encoding: the channel refuses it, as a frame.
    return Enqueue(codec::CommitsFrame{topic.mine_, sent.seq, {*sent.commit}});
  }
  // Commits that directly follow commits of the same topic, numbered on,
  // join that frame: commits made in one turn travel together.
  if (!outbox_.empty()) {
    if (auto* last = std::get_if<SharedCommits>(&outbox_.back());
        last && last->topic == topic.mine_ && last->first + last->commits.size() == sent.seq) {
      last->commits.push_back(sent.commit);
      last->bytes.push_back(sent.bytes);
      return;
    }
  }
  outbox_.push_back(SharedCommits{topic.mine_, sent.seq, {sent.commit}, {sent.bytes}});
  PostFlush();
}

void Link::PostFlush() {
  if (flush_posted_) return;
  flush_posted_ = true;
  std::weak_ptr<Link*> self = self_;
  scheduler_.Post([self] {
    if (auto alive = self.lock(); alive && *alive) (*alive)->Flush();
  });
}

void Link::Flush() {
  flush_posted_ = false;
  // Frames sent from here on (a send can end the link, and its ending send
  // more) join the next flush.
  Outbox frames;
  frames.swap(outbox_);
  outbox_.swap(spare_);
  for (const auto& out : frames) {
    ++stats_.frames_out;
    if (const auto* commits = std::get_if<SharedCommits>(&out)) {
      stats_.commits_out += commits->commits.size();
      if (on_seen_) on_seen_({true, "commits", commits->topic, commits->commits.size()});
      channel_.SendCommits(*commits);
      continue;
    }
    const Frame& frame = std::get<Frame>(out);
    if (const auto* c = std::get_if<codec::CommitsFrame>(&frame)) {
      stats_.commits_out += c->commits.size();
    }
    if (on_seen_) on_seen_(Seen(true, frame));
    channel_.Send(frame);
  }
  frames.clear();
  if (spare_.capacity() == 0) spare_.swap(frames);
}

// --- Mirror

Mirror::Mirror(Document& source, Scheduler& scheduler)
    : owned_(std::make_unique<Document>(source.root().id(), source.root().kind())),
      target_(owned_.get()) {
  Start(source, scheduler);
}

Mirror::Mirror(Document& source, Document& target, Scheduler& scheduler) : target_(&target) {
  Start(source, scheduler);
}

void Mirror::Start(Document& source, Scheduler& scheduler) {
  auto [a, b] = InProcessPair(scheduler);
  a_ = std::move(a);
  b_ = std::move(b);
  source_link_ = std::make_unique<Link>(*a_, scheduler);
  target_link_ = std::make_unique<Link>(*b_, scheduler);
  (void)source_link_->Share("mirror", &source);
  auto shared = target_link_->Share("mirror", target_);
  if (shared) (*shared)->Resync();
}

Mirror::~Mirror() { Stop(); }

void Mirror::Stop() {
  if (source_link_) source_link_->Close();
  if (target_link_) target_link_->Close();
}

}  // namespace aweft::sync
