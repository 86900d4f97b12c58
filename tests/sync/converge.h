#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sync/channel.h"
#include "sync/snapshot.h"

// The convergence scenario (behaviour.md §7 item 30), over any carrier: a
// handful of ends joined in a chain or a star make seeded random edits (list
// splices, per-end slots, random edits of a per-end subtree, a contended
// slot, and one "sealed" slot that end 0 refuses and end 1 yields with the
// undo); leaf links may be cut and the leaf re-shared as an empty end. At the
// end every end must hold the same document.
namespace aweft::sync::testing {

// How a run joins two ends and lets time pass.
class Network {
 public:
  virtual ~Network() = default;
  virtual Scheduler& scheduler() = 0;
  // Two channels joined to each other; frames may be sent on both at once.
  virtual std::pair<std::unique_ptr<Channel>, std::unique_ptr<Channel>> Join() = 0;
  // Lets a little of what is pending happen (about `steps` pieces of work).
  virtual void Step(size_t steps) = 0;
  // Runs until nothing is pending and `quiet` holds; false if that never
  // comes within the carrier's bound.
  virtual bool Settle(const std::function<bool()>& quiet) = 0;
};

struct Shape {
  uint64_t seed;
  bool star;   // Every end joined to end 0; else a chain 0-1-2-...
  int size;    // Ends: 3 to 5.
  int rounds;  // Rounds of edits.
  bool cuts;   // Now and then cut a leaf's link and re-share it empty.
};

// "seed 7, star of 5, cuts".
std::string Describe(const Shape& shape);

struct Outcome {
  std::vector<std::string> failures;  // Empty when every end converged.
  size_t commits = 0;                 // Local edits made.
  size_t refusals = 0;                // Sealed writes end 0 turned away.
  size_t yields = 0;                  // Undos the writer applied.
  size_t cuts = 0;                    // Leaves cut and re-shared empty.
  size_t resyncs = 0;                 // Ends resynced at the end (contended slot).
};

Outcome Converge(Network& network, const Shape& shape);

// Where two snapshots differ, briefly: observables missing, extra, or with
// other slots.
std::string Difference(const Snapshot& want, const Snapshot& got);

}  // namespace aweft::sync::testing
