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
// Landed is told by counting deliveries, not by a flag held across the call,
// so a reaction (delivered after the received commit) ships.
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

  // Applies a commit made elsewhere; refuses as Document::Apply() does.
  Result<void> Receive(const Commit& commit);

  // Stops watching; no callback after this.
  void Stop();

  Document& document() const { return document_; }

 private:
  Document& document_;
  std::weak_ptr<void> lifetime_;
  Callback on_;
  uint64_t handle_ = 0;
  int arriving_ = 0;  // 1 while Receive() applies; the first delivery is it.
};

}  // namespace aweft::sync
