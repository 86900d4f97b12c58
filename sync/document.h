#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codec/result.h"
#include "codec/value.h"

namespace aweft::sync {

using codec::Commit;
using codec::Id;
using codec::Kind;
using codec::Result;
using codec::Value;

class Document;
struct Snapshot;
Result<std::unique_ptr<Document>> FromSnapshot(const Snapshot& snapshot);

// A slot's key: an object key's text, an array position's bytes, or a map
// key's 12 id bytes. Slots iterate in key order, which for an array is
// position order.
using Slots = std::map<std::string, Value, std::less<>>;

// One observable: an object, an array or a map, with a fixed id and kind.
// Owned by its Document. A pointer to one stays valid while the observable is
// in the document; a commit that detaches it (spec §1.3) frees it once the
// commit is delivered. A new observable not yet attached lives until it is
// attached, or until its document ends.
class Observable {
 public:
  Observable(const Observable&) = delete;
  Observable& operator=(const Observable&) = delete;

  const Id& id() const { return id_; }
  Kind kind() const { return kind_; }
  Document& document() const { return *document_; }

  // The value in the slot under `key`, or nullptr.
  const Value* Get(std::string_view key) const;
  size_t size() const { return slots_.size(); }
  const Slots& slots() const { return slots_; }

  // Arrays: the index-th value and its position. REQUIRES: index < size().
  const Value& At(size_t index) const;
  const std::string& PositionAt(size_t index) const;
  // Arrays: the positions in order.
  std::vector<std::string> Positions() const;

  // The observable holding this one's attach edge, and the slot key of that
  // edge; nullptr for the root and for an observable not attached. Updated
  // when a commit closes, not by writes inside an open transaction.
  Observable* parent() const { return parent_; }
  const std::string& parent_key() const { return parent_key_; }

 private:
  friend class Document;
  friend Result<std::unique_ptr<Document>> FromSnapshot(const Snapshot&);
  Observable(Document& document, const Id& id, Kind kind)
      : id_(id), kind_(kind), document_(&document) {}

  Slots::const_iterator Nth(size_t index) const;

  Id id_;
  Kind kind_;
  Document* document_;
  Slots slots_;
  Observable* parent_ = nullptr;
  std::string parent_key_;
};

// A value naming `target`: where it lives (Attach), or only a name (Alias).
codec::Reference Attach(const Observable& target);
codec::Reference Alias(const Observable& target);

// What a watcher hears: one commit the document took part in, and the commit
// that undoes it (present when the watcher asked for undo). `undo` applies to
// the state right after `commit`; undo several commits newest first.
// One delivery's commit, shared by every watcher it reaches, so that a
// watcher may keep it, or its canonical bytes, without copying (a node sends
// one commit to a thousand links). `undo` is there for watchers that asked.
struct Delivered {
  std::shared_ptr<const Commit> commit;
  std::shared_ptr<const Commit> undo;
  bool local = false;
  const void* origin = nullptr;  // Apply()'s `origin`.
  // Encoded on the first Bytes() of a change.
  mutable std::shared_ptr<const std::string> bytes;
  // The commit with its integrity tag (sync/tag.h), and encoded: made by the
  // first link that tags it, for the links after it.
  mutable std::shared_ptr<const Commit> tagged;
  mutable std::shared_ptr<const std::string> tagged_bytes;
};

struct Change {
  const Commit& commit;
  const Commit* undo;
  bool local;  // Made by a write here, not by Apply().
  // What applied it: Apply()'s `origin` (a link's topic, say), so that a
  // watcher tells what arrived over one link from the rest, however
  // deliveries queue. Null for a write here, and an Apply() that named none.
  const void* origin;
  const Delivered& delivered;
  // The commit's canonical bytes, encoded once for all watchers; null if it
  // has no encoding (a document only delivers commits that have one).
  const std::shared_ptr<const std::string>& Bytes() const;
};
using Watcher = std::function<void(const Change&)>;

// A graph of observables under one root (format spec §1): every observable
// reachable from the root has exactly one attach edge, aliases make the rest
// of the graph, and ids never change kind.
//
// Writes take effect at once; each write outside Atomic() is one commit, and
// everything written inside Atomic() is one commit, coalesced by slot (spec
// §5). A closed commit is validated exactly as Apply() validates a received
// one, then delivered to every watcher, once, in order. Delivery is
// synchronous at the end of the outermost write, except that a commit made
// while watchers are being delivered to (a watcher reacting) is queued and
// delivered after the current one: one FIFO per thread.
//
// Not thread-safe: use a document, its observables and its watchers from one
// thread (or strand) only.
class Document {
 public:
  // A document with a fresh root of `kind`.
  explicit Document(Kind kind);
  // A document whose root has the given id (a replica of another's root).
  Document(const Id& root, Kind kind);
  ~Document();
  Document(const Document&) = delete;
  Document& operator=(const Document&) = delete;

  Observable& root() { return *root_; }
  const Observable& root() const { return *root_; }

  // The observable with `id` in the document, or a new one not yet attached;
  // nullptr if neither.
  Observable* Find(const Id& id) const;
  // How many observables the document holds (root included).
  size_t observable_count() const { return index_.size(); }
  // The size of the document's state encoded as one commit of adds (spec
  // §6), counted as it changes: SlotBytes() summed over every slot. An upper
  // bound on that encoding, within 8 bytes a number.
  uint64_t bytes() const { return bytes_; }
  const std::unordered_map<Id, std::unique_ptr<Observable>, codec::IdHash>& index() const {
    return index_;
  }

  // A new observable, owned by this document but not part of it until a
  // write attaches it; its slots may be written before that.
  Observable& Create(Kind kind);
  Observable& Create(Kind kind, const Id& id);  // Refuses nothing: the caller
                                                // keeps ids unique.

  // --- Local writes. Each refuses, changing nothing, with invalid-write when
  // the observable is of the wrong kind or the index is out of range, with
  // the codec's value reasons for a value that cannot be encoded, with
  // not-observable/kind-conflict for a reference naming nothing here; and,
  // when its commit closes, with what Apply() would refuse.

  // Objects: set or remove the slot `key`.
  Result<void> Set(Observable& object, std::string_view key, Value value);
  Result<void> Remove(Observable& object, std::string_view key);

  // Arrays: insert at `index` (0..size) at a fresh position, append,
  // insert at a caller-chosen position (slot-exists if taken), replace or
  // remove the value at `index`.
  Result<void> Insert(Observable& array, size_t index, Value value);
  Result<void> Push(Observable& array, Value value);
  Result<void> InsertAt(Observable& array, std::string_view position, Value value);
  Result<void> Replace(Observable& array, size_t index, Value value);
  Result<void> RemoveAt(Observable& array, size_t index);

  // Maps: set or remove the entry keyed by `key`; Add files `target` under
  // its own id (an attach edge).
  Result<void> SetEntry(Observable& map, const Id& key, Value value);
  Result<void> RemoveEntry(Observable& map, const Id& key);
  Result<void> Add(Observable& map, Observable& target);

  // Any kind: writes the slot under a raw key (an object key's text, a
  // position's bytes, a map key's id bytes); no value removes it.
  Result<void> WriteSlot(Observable& target, std::string_view key, std::optional<Value> value);

  // Runs `fn`; everything it writes is one commit. If `fn` refuses (or
  // throws), or the commit is refused when it closes, every write is rolled
  // back and nothing is delivered. Nested calls join the outermost.
  Result<void> Atomic(const std::function<Result<void>()>& fn);

  // --- Receiving.

  // Applies a commit made elsewhere: validates every delta (kind-conflict,
  // multiple-attach, unreachable, slot-exists, slot-missing, and the wire
  // rules for an in-process commit), then writes them all, then delivers
  // once, naming `origin` (Change::origin). On refusal the document is
  // untouched. A commit that changes nothing delivers nothing. REQUIRES: no
  // Atomic() block is open.
  Result<void> Apply(const Commit& commit, const void* origin = nullptr);

  // --- Watching.

  // Registers `watcher` for every commit from now on; with `undo`, each
  // Change carries the commit that undoes it. Returns a handle for Unwatch.
  uint64_t Watch(Watcher watcher, bool undo = false);
  void Unwatch(uint64_t handle);

  // Expires when the document is destroyed: lets a watcher that may outlive
  // it (a link's tracker) know not to unwatch.
  std::weak_ptr<void> lifetime() const { return lifetime_; }

 private:
  friend Result<std::unique_ptr<Document>> FromSnapshot(const Snapshot&);

  Result<void> Write(Observable& target, std::string key, std::optional<Value> value);
  Result<void> CheckLocalValue(const Value& value) const;
  Result<void> Close();
  void Rollback();
  std::optional<Commit> BuildCommit();
  Result<void> ApplyCommit(const Commit& commit, bool local, const void* origin = nullptr);
  // ApplyCommit's phases (sync/apply.cc), in order. The checks read the
  // document only; `Homes` maps each child a commit attaches to its new
  // parent.
  using Homes = std::unordered_map<Id, Id, codec::IdHash>;
  struct Written {                             // What a valid commit changed, delta by delta.
    std::vector<std::optional<Value>> priors;  // Each slot before it.
    std::vector<Observable*> targets;          // Null: the delta changed nothing.
    std::unordered_set<const Observable*> created;
    size_t effective = 0;  // Deltas that changed something.
  };
  using Delta = codec::Delta;
  Result<void> CheckKinds(const std::vector<Delta>& deltas) const;
  Result<Homes> CheckEdges(const std::vector<Delta>& deltas) const;
  Result<void> CheckReachable(const std::vector<Delta>& deltas, const Homes& homes) const;
  Result<void> CheckSlots(const std::vector<Delta>& deltas) const;
  Written WriteSlots(const std::vector<Delta>& deltas);
  // Moves attach edges; returns the observables that lost theirs.
  std::vector<Observable*> MoveEdges(const std::vector<Delta>& deltas, const Written& written);
  // What lost its edge and got no other, with its attached subtree.
  std::vector<Observable*> Leaving(const std::vector<Observable*>& lost) const;
  std::shared_ptr<Commit> UndoOf(const std::vector<Delta>& deltas, const Written& written,
                                 const std::vector<Observable*>& leaving) const;
  // The value in the slot `delta` names, or null.
  const Value* Current(const Delta& delta) const;
  Observable* Materialize(const Id& id, Kind kind);
  void Deliver(std::shared_ptr<const Commit> commit, std::shared_ptr<const Commit> undo, bool local,
               const void* origin);

  std::shared_ptr<void> lifetime_ = std::make_shared<char>();
  Observable* root_;
  std::unordered_map<Id, std::unique_ptr<Observable>, codec::IdHash> index_;
  std::unordered_map<Id, std::unique_ptr<Observable>, codec::IdHash> fresh_;
  uint64_t bytes_ = 0;  // bytes(): kept by ApplyCommit and FromSnapshot.

  // The open block: depth of nested Atomic() calls, and the value each
  // touched slot held before the block (first touch wins).
  int depth_ = 0;
  std::map<std::pair<Observable*, std::string>, std::optional<Value>> touched_;

  struct Registration {
    std::shared_ptr<const Watcher> watcher;  // Shared: survives an Unwatch inside.
    bool undo;
  };
  std::map<uint64_t, Registration> watchers_;
  uint64_t next_watch_ = 1;
  bool any_undo_ = false;
};

// True when `value` names an observable through an attach edge.
bool IsAttach(const Value& value);

// What one slot adds to Document::bytes(): its add delta's encoding, with a
// number counted at its longest (9 bytes).
uint64_t SlotBytes(std::string_view key, const Value& value);
// How much `commit` would grow `document` by, by the slots it writes (what
// it detaches is not taken off): an upper bound, 0 or less for a commit that
// only shrinks it. For refusing a commit before it is applied.
int64_t Growth(const Document& document, const Commit& commit);

// The slot a delta writes, as one string: the observable's id bytes, the
// ref's kind and its key. Two deltas write the same slot when these match.
std::string SlotKey(const codec::Delta& delta);

}  // namespace aweft::sync
