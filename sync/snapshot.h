#pragma once

#include <map>
#include <memory>
#include <optional>

#include "codec/result.h"
#include "codec/value.h"
#include "sync/document.h"

namespace aweft::sync {

// One observable as a snapshot holds it.
struct SnapshotObservable {
  Kind kind;
  Slots slots;
  bool operator==(const SnapshotObservable&) const = default;
};

// The whole state of a document: its root and every observable reachable
// from it through attach edges. Canonical: two documents in the same state
// have equal snapshots, ids and positions included.
struct Snapshot {
  Id root;
  Kind root_kind = Kind::kObject;
  std::map<Id, SnapshotObservable> observables;
  bool operator==(const Snapshot&) const = default;
};

// The document's state now. REQUIRES: no Atomic() block is open.
Snapshot TakeSnapshot(const Document& document);

// Builds a document in the snapshot's state, ids and positions kept; building
// is not a commit. Refuses a snapshot that is not a document: unreachable (no
// root, an observable not attached, an attach edge to nothing, a cycle),
// kind-conflict, multiple-attach, invalid-key. An alias may name nothing.
Result<std::unique_ptr<Document>> FromSnapshot(const Snapshot& snapshot);

// The whole document as one commit of adds, every slot of every observable;
// nullopt for a document with no slots. Applied to RootFrom(root) it rebuilds
// the document.
std::optional<Commit> AsCommit(const Document& document);

// The commit that moves `document` to `target`'s state, or nullopt when they
// are equal. Applying it keeps every observable the two states share (the same
// C++ objects). Refuses root-mismatch when `target` has another root.
Result<std::optional<Commit>> Reconcile(const Document& document, const Snapshot& target);

// An empty document whose root has `id`; kind-conflict for a kind number
// other than 0 (object), 1 (array) or 2 (map).
Result<std::unique_ptr<Document>> RootFrom(const Id& id, int kind);

}  // namespace aweft::sync
