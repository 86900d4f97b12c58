#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "sync/document.h"

// Seeded random edits of a document through its local API, for property
// tests: object slots, array inserts/replaces/removes, map entries, new
// nested observables, aliases and moves.
namespace aweft::sync::testing {

// One slot write, as the edit made it: replayable on another document that
// holds the same observables.
struct SlotWrite {
  Id target;
  std::string key;
  std::optional<Value> value;
  std::optional<Kind> create;  // Set: create `target` of this kind first.
};
using Edit = std::vector<SlotWrite>;

class Editor {
 public:
  explicit Editor(uint64_t seed) : rng_(seed) {}

  // Makes one random edit to `document` (within whatever block is open) and
  // returns the slot writes it made. An edit the document refuses changes
  // nothing and returns an empty list.
  Edit RandomEdit(Document& document);

  // Replays `edit` on `document`: creates what it created, writes what it
  // wrote, in one Atomic() block.
  static Result<void> Replay(Document& document, const Edit& edit);

  std::mt19937_64& rng() { return rng_; }

 private:
  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  Value Primitive();
  Observable& AnyObservable(Document& document);

  std::mt19937_64 rng_;
};

}  // namespace aweft::sync::testing
