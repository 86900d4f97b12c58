#pragma once

#include "storage/store.h"

namespace aweft::storage::testing {

// The crash writer's options, also used to reopen its store: sync mode,
// group commit, and snapshots and truncation often enough to be crashed in.
inline Options CrashOptions() {
  Options options;
  options.durability = Durability::kSync;
  options.sync_every_commit = false;
  options.snapshot_every_commits = 40;
  options.history_commits = 15;
  return options;
}

}  // namespace aweft::storage::testing
