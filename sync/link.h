#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "codec/frame.h"
#include "sync/channel.h"
#include "sync/document.h"
#include "sync/track.h"

namespace aweft::sync {

using codec::WireReason;

// One commit that did not apply, at whichever end refused it.
struct Refused {
  bool mine;  // True at the end that sent it, false at the end that refused.
  uint64_t seq;
  std::vector<WireReason> reasons;
  std::optional<Commit> commit;  // At the refusing end always; at the sender
  std::optional<Commit> undo;    // while it is in the window (undo: sender).
};

// What an application says about one shared document. Every handler is
// optional.
struct ShareHandlers {
  // Returns the reasons to refuse an arriving commit; empty accepts. A throw
  // refuses with accept-threw.
  std::function<std::vector<WireReason>(const Commit&)> accept = {};
  // Returns the reasons to refuse a state this end asked for, given the
  // document it would make (before it is reconciled into this end's); empty
  // takes it. A refused state ends the topic with the first reason; a throw
  // refuses with accept-threw.
  std::function<std::vector<WireReason>(const Document&)> accept_state = {};
  std::function<void(const Refused&)> refused = {};
  // The topic ended for `reason` (no-document, root-mismatch, left, closed,
  // unwanted-state, no-topic or the peer's own), told by the other end or the
  // channel. Not called for an end this side asked for (Stop, Link::Close).
  std::function<void(const std::string& reason, const std::string& message)> fault = {};
  // The document is ready: at once for an end that shared one, after the
  // other end's state for an end that shared none.
  std::function<void(Document&)> ready = {};
  // A state this end asked for (by sharing none, or Resync) has been applied.
  std::function<void(Document&)> synced = {};
  // Called with true just before a commit from the other end is applied,
  // and with false just after (to tell what arrived over this link from
  // the rest, Shared::Carried() is simpler).
  std::function<void(bool)> landing = {};
};

struct LinkOptions {
  // Sent commits remembered for `refused` reports with commit and undo.
  // Default: 256.
  size_t window = 256;
  // This end orders the documents it shares, and the other end follows
  // (docs/sync.md "One order"): a node towards its clients. When a commit
  // from the other end may have crossed one of ours on the same slot, or
  // either end refuses a commit, this end asks for the other's state (an
  // open with want, which every protocol-v1 end answers) and sends it the
  // ordinary commit that moves that state, plus what is still on its way
  // there, to this end's own. Default: false (a bare end, behaviour.md
  // §2.9: same-slot races stay swapped).
  bool orders = false;
  // This end remembers the last `window` commits it took from the other
  // end, so that one refused later by a place this end forwarded it to can
  // be refused to its writer too (Shared::RefuseLate): a node towards its
  // clients and the nodes below. Default: false.
  bool relays_refusals = false;
};

class Link;

// One document shared on a link: the handle Link::Share returns. Valid until
// its link is destroyed.
class Shared {
 public:
  const std::string& name() const { return name_; }
  // This end's number for the topic.
  uint64_t mine_topic() const { return mine_; }
  // The document, or nullptr while an end that shared none waits for state.
  Document* document() const { return live_document_; }
  bool ready() const { return ready_; }
  // The other end has answered the open: a commit made now is posted to
  // send at once, not held.
  bool live() const { return live_; }
  bool ended() const { return ended_; }
  // Why it ended, once it has.
  const std::string& end_reason() const { return end_reason_; }

  // True for a delivery of the document that this topic applied: what
  // arrived over the link (a commit, or the move to the other end's state).
  bool Carried(const Change& change) const;
  // Asks the other end for its state: this end's document moves to it by
  // reconcile (identity kept). Nothing more while one asked for is on its
  // way.
  void Resync();
  // Leaves the topic: the other end hears `left`; other topics carry on.
  void Stop();
  // Refuses, after the fact, a commit this topic took from the other end
  // and forwarded, which a place that orders the document has since refused
  // (LinkOptions::relays_refusals): the other end hears `refused` for it
  // with `reasons`, as if this end had. The document is not changed here;
  // the correction that undoes it arrives as an ordinary commit. False if
  // the commit is not among the last taken (or was refused once already).
  bool RefuseLate(const Commit& commit, const std::vector<WireReason>& reasons);

 private:
  friend class Link;
  struct Sent {  // Shared with the delivery: never copied.
    uint64_t seq;
    std::shared_ptr<const Commit> commit;
    std::shared_ptr<const Commit> undo;
    std::shared_ptr<const std::string> bytes;
    bool correction = false;  // Made by the link, not the document.
  };

  Link* link_ = nullptr;
  std::string name_;
  uint64_t mine_ = 0;
  std::optional<uint64_t> theirs_;
  ShareHandlers handlers_;
  std::unique_ptr<Document> minted_;  // For an end that shared none.
  Document* live_document_ = nullptr;
  std::unique_ptr<Tracker> tracker_;
  bool opened_ = false, live_ = false, ended_ = false, ready_ = false;
  bool wanted_ = false;     // This end asked for the other's state.
  bool they_want_ = false;  // The other end asked for ours.
  bool owe_state_ = false;  // Asked while we wait for theirs: send after.
  uint64_t next_seq_ = 1;
  std::deque<Sent> window_;
  std::vector<Sent> held_;  // Made before the topic went live.
  // LinkOptions::relays_refusals: commits taken from the other end, by its
  // seq; `receiving_` is the seq of the one being applied.
  std::deque<std::pair<uint64_t, std::shared_ptr<const Commit>>> received_;
  uint64_t receiving_ = 0;
  std::string end_reason_;

  // Ordering (LinkOptions::orders). The clock is next_seq_: a commit sent
  // leaves it at seq + 1. `crossing_` holds the slots of commits sent since
  // the other end's last state, each with the clock after the last one, and
  // `crossing_whole_` the observables they attached or detached (a write
  // anywhere in one crosses); `crossing_all_` stands for everything up to
  // its clock (a state sent, or too much to list). Listed once the other
  // end writes.
  std::unordered_map<std::string, uint64_t> crossing_;
  std::unordered_map<Id, uint64_t, codec::IdHash> crossing_whole_;
  uint64_t crossing_all_ = 0;
  bool writes_ = false;
  bool they_hold_ = false;    // The other end held a document when it asked.
  bool checking_ = false;     // Asked for the other end's state to check it.
  bool check_again_ = false;  // Another check is due after that one.
  uint64_t check_mark_ = 0;   // The clock when the check was asked.
};

// A link over one channel, carrying any number of documents by name (the
// aweft sync protocol v1, behaviour.md §2). Both ends run this same code.
// Frames a turn produces are batched: commits made in one turn travel in one
// frame. Not thread-safe: the scheduler's thread only.
class Link {
 public:
  // `channel` and `scheduler` must outlive the link.
  Link(Channel& channel, Scheduler& scheduler, LinkOptions options = {});
  ~Link();
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  // Shares `document` (or, with none, asks the other end for its own) under
  // `name`. With `want`, an end that holds a document asks for the other's
  // state at once (as Resync() would, in the first open). Refuses
  // already-shared when the name is already shared here and not ended.
  // `document` must outlive the topic.
  Result<Shared*> Share(const std::string& name, Document* document = nullptr,
                        ShareHandlers handlers = {}, bool want = false);

  // Called when an `open` arrives for a name not shared here, before it is
  // kept waiting for a Share: the place a node decides to load, create or
  // refuse the document (by calling Share, now or later).
  void OnOpen(std::function<void(const codec::OpenFrame&)> fn) { on_open_ = std::move(fn); }

  // One frame, as a trace log tells it (OnFrameSeen).
  struct FrameSeen {
    bool out;               // Sent, or received.
    std::string_view kind;  // "open", "state", "commits", "refused", "leave", "fault"
    uint64_t topic;         // The receiver's number (0: the whole link)
    size_t commits;         // In a commits frame; else 0.
  };
  // Optional: hears each frame received and sent. For trace logs: set it
  // only when they are wanted, as it costs a call per frame.
  void OnFrameSeen(std::function<void(const FrameSeen&)> fn) { on_seen_ = std::move(fn); }

  // Turns away an `open` that OnOpen heard, with a fault for that topic
  // (e.g. no-document, forbidden); the link carries on.
  void Decline(const codec::OpenFrame& open, const std::string& reason, const std::string& message);

  // Sends what is queued, ends every topic without telling it, and closes the
  // channel. No leave frames are sent.
  void Close();
  bool closed() const { return closed_; }

  // From now on, integrity tags (sync/tag.h) on the commits this end sends
  // (not on corrections), and a tagged commit that does not match this end's
  // state refused as `diverged`. Both ends agree to it first (the node's
  // `tags` request): a peer that never did sends no tags and is not
  // checked.
  void UseTags() { tags_ = true; }
  bool tags() const { return tags_; }

  // Counters, for metrics.
  struct Stats {
    uint64_t frames_in = 0, frames_out = 0, commits_in = 0, commits_out = 0;
    uint64_t refused_in = 0, refused_out = 0;
    // LinkOptions::orders: the other end's state asked for, and corrections
    // sent (a check that found it differed).
    uint64_t checks = 0, corrections = 0;
    Stats& operator+=(const Stats& more) {
      frames_in += more.frames_in;
      frames_out += more.frames_out;
      commits_in += more.commits_in;
      commits_out += more.commits_out;
      refused_in += more.refused_in;
      refused_out += more.refused_out;
      checks += more.checks;
      corrections += more.corrections;
      return *this;
    }
  };
  const Stats& stats() const { return stats_; }
  // Frames queued and not yet handed to the channel: they wait for the
  // scheduler (a node's: until what they carry is stored).
  size_t unsent() const { return outbox_.size(); }

 private:
  friend class Shared;

  void OnFrame(const codec::Frame& frame);
  void OnOpenFrame(const codec::OpenFrame& open);
  void OnState(const codec::StateFrame& state);
  void OnCommits(const codec::CommitsFrame& commits);
  void OnRefused(const codec::RefusedFrame& refused);
  void OnFault(const codec::FaultFrame& fault);
  void OnChannelEnd();

  void Pair(Shared& topic, const codec::OpenFrame& open);
  void Adopt(Shared& topic, Document& document);
  void GoLive(Shared& topic);
  void SendState(Shared& topic);
  void SendOpen(Shared& topic);
  void OnTracked(Shared& topic, const Tracked& tracked);
  void Refuse(Shared& topic, uint64_t peer_topic, const std::string& reason,
              const std::string& message);
  void End(Shared& topic, const std::string& reason, const std::string& message, bool told);
  void MakeReady(Shared& topic);
  Shared* Theirs(uint64_t peer_topic);

  // Ordering (LinkOptions::orders).
  void Cross(Shared& topic, const Commit& commit, const Commit* undo, uint64_t clock);
  bool Crosses(Shared& topic, const Commit& theirs);
  void Check(Shared& topic);
  void OnCheck(Shared& topic, const codec::StateFrame& state);
  void Remember(Shared& topic, Shared::Sent sent);
  // Makes the delivery's commit with its integrity tag, and its encoding,
  // unless another link did; false if it does not encode.
  static bool Tag(const Delivered& delivered);

  void Enqueue(codec::Frame frame);
  // Queues one commit of `topic`, joining the commits frame before it when
  // it follows on.
  void EnqueueCommit(const Shared& topic, const Shared::Sent& sent);
  void PostFlush();
  void Flush();

  Channel& channel_;
  Scheduler& scheduler_;
  LinkOptions options_;
  std::shared_ptr<Link*> self_;  // Posted work checks it is still alive.
  uint64_t receive_handle_ = 0, closed_handle_ = 0;
  std::map<uint64_t, std::unique_ptr<Shared>> mine_;  // Every topic ever shared.
  std::map<uint64_t, Shared*> theirs_;                // Paired, by peer number.
  std::map<std::string, codec::OpenFrame> waiting_;   // Opens before a Share.
  std::function<void(const codec::OpenFrame&)> on_open_;
  std::function<void(const FrameSeen&)> on_seen_;
  uint64_t next_topic_ = 1;
  using Outbox = std::vector<std::variant<codec::Frame, SharedCommits>>;
  Outbox outbox_;
  Outbox spare_;  // Empty, keeping its capacity from flush to flush.
  bool flush_posted_ = false;
  bool closed_ = false;
  bool tags_ = false;
  Stats stats_;
};

// A second document kept in step with `source` through an in-process link:
// the target starts by asking for the source's state, so it starts from it,
// and then every commit crosses on the scheduler's next turn, both ways.
class Mirror {
 public:
  // The target is made here, from the source's root.
  Mirror(Document& source, Scheduler& scheduler);
  // The target is `target`, which must outlive the mirror: whatever it holds
  // is moved to the source's state (reconcile: its ids kept where the
  // source's match), then the two are equal ends. A target of another root
  // (id or kind) ends the mirror's topic with root-mismatch, as a link would.
  Mirror(Document& source, Document& target, Scheduler& scheduler);
  ~Mirror();
  Document& document() { return *target_; }
  void Stop();

 private:
  void Start(Document& source, Scheduler& scheduler);

  std::unique_ptr<Channel> a_, b_;
  std::unique_ptr<Document> owned_;  // The target, when made here.
  Document* target_;
  std::unique_ptr<Link> source_link_, target_link_;
};

}  // namespace aweft::sync
