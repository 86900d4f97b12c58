#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "sync/document.h"

namespace aweft::sync {

// One commit a tracked document took part in.
struct Tracked {
  const Commit& commit;
  const Commit* undo;    // The commit that undoes it here.
  bool landed;           // True when it arrived through Receive().
  const Change& change;  // The delivery: the same commit, shared, and its bytes.
};

// Follows one document's commits, with echo suppression (behaviour.md §2.10):
// a commit applied through Receive() is reported as landed, and everything
// else, including a watcher's reaction to an arriving commit, as made here.
// Landed is told by the delivery's origin (this tracker), so a reaction,
// delivered after the received commit, ships.
// Not thread-safe; the document's thread only. Receive() must not be called
// from inside a watcher.
class Tracker {
 public:
  using Callback = std::function<void(const Tracked&)>;

  // Starts watching `document`, which must outlive the tracker.
  Tracker(Document& document, Callback on);
  ~Tracker();
  Tracker(const Tracker&) = delete;
  Tracker& operator=(const Tracker&) = delete;

  // Applies a commit made elsewhere, with this tracker as its origin
  // (Change::origin); refuses as Document::Apply() does.
  Result<void> Receive(const Commit& commit);
  // True for a delivery Receive() applied.
  bool Landed(const Change& change) const { return change.origin == this; }

  // Stops watching; no callback after this.
  void Stop();

  Document& document() const { return document_; }

 private:
  Document& document_;
  std::weak_ptr<void> lifetime_;
  Callback on_;
  uint64_t handle_ = 0;
};

}  // namespace aweft::sync
