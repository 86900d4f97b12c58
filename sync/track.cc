#include "sync/track.h"

namespace aweft::sync {

Tracker::Tracker(Document& document, Callback on)
    : document_(document), lifetime_(document.lifetime()), on_(std::move(on)) {
  handle_ = document_.Watch(
      [this](const Change& change) {
        const bool landed = arriving_ == 1 && !change.local;
        if (landed) arriving_ = 0;
        on_(Tracked{change.commit, change.undo, landed, change});
      },
      /*undo=*/true);
}

Tracker::~Tracker() { Stop(); }

void Tracker::Stop() {
  if (handle_ == 0) return;
  if (!lifetime_.expired()) document_.Unwatch(handle_);
  handle_ = 0;
}

Result<void> Tracker::Receive(const Commit& commit) {
  arriving_ = 1;
  Result<void> result;
  try {
    result = document_.Apply(commit);
  } catch (...) {
    arriving_ = 0;
    throw;
  }
  // A commit that changed nothing delivered nothing: don't let the count
  // swallow the next local commit.
  arriving_ = 0;
  return result;
}

}  // namespace aweft::sync
