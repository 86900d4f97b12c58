#include "sync/track.h"

namespace aweft::sync {

Tracker::Tracker(Document& document, Callback on)
    : document_(document), lifetime_(document.lifetime()), on_(std::move(on)) {
  handle_ = document_.Watch(
      [this](const Change& change) {
        on_(Tracked{change.commit, change.undo, Landed(change), change});
      },
      /*undo=*/true);
}

Tracker::~Tracker() { Stop(); }

void Tracker::Stop() {
  if (handle_ == 0) return;
  if (!lifetime_.expired()) document_.Unwatch(handle_);
  handle_ = 0;
}

Result<void> Tracker::Receive(const Commit& commit) { return document_.Apply(commit, this); }

}  // namespace aweft::sync
