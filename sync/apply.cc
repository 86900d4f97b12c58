// Applying a commit: the one path every commit takes, local or received.
// Validate every delta (format spec §1.1-1.3, §2.1, §7), then write them all,
// then move attach edges, drop what left the document, build the undo and
// deliver once.

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_set>

#include "codec/cbor.h"
#include "codec/id.h"
#include "sync/document.h"

namespace aweft::sync {

using codec::Delta;
using codec::DeltaType;
using codec::Reason;
using codec::Reference;
using codec::Refusal;

namespace {

const Reference* AttachOf(const std::optional<Value>& value) {
  if (!value) return nullptr;
  const auto* ref = std::get_if<Reference>(&*value);
  return ref && ref->edge == codec::Edge::kAttach ? ref : nullptr;
}

std::string Name(const Id& id) { return codec::IdText(id); }

// The rules the decoder enforces, for a commit that never was bytes.
Result<void> CheckWire(const Commit& commit) {
  for (const Delta& d : commit.deltas) {
    if (d.type == DeltaType::kRemove && d.value) {
      return Refusal{Reason::kUnexpectedValue, "a remove carries no value"};
    }
    if (d.type != DeltaType::kRemove && !d.value) {
      return Refusal{Reason::kMissingValue, "an add or replace carries a value"};
    }
    switch (d.ref.kind) {
      case Kind::kObject:
        if (auto r = codec::CheckText(d.ref.key); !r) return r;
        break;
      case Kind::kArray:
        if (!codec::ValidPosition(d.ref.key)) {
          return Refusal{Reason::kInvalidPosition,
                         "a position is non-empty and does not end in zero"};
        }
        break;
      case Kind::kMap:
        if (d.ref.key.size() != codec::kIdSize) {
          return Refusal{Reason::kInvalidId, "a map key is a 12-byte id"};
        }
        break;
    }
    if (!d.value) continue;
    if (const auto* n = std::get_if<double>(&*d.value); n && !std::isfinite(*n)) {
      return Refusal{Reason::kNonFiniteFloat, "a number must be finite"};
    }
    if (const auto* t = std::get_if<std::string>(&*d.value)) {
      if (auto r = codec::CheckText(*t); !r) return r;
    }
  }
  auto before = [](const Delta& a, const Delta& b) { return codec::CompareSlots(a, b) < 0; };
  if (!std::is_sorted(commit.deltas.begin(), commit.deltas.end(), before)) {
    std::vector<const Delta*> order;
    for (const Delta& d : commit.deltas) order.push_back(&d);
    std::sort(order.begin(), order.end(),
              [&](const Delta* a, const Delta* b) { return before(*a, *b); });
    for (size_t i = 1; i < order.size(); ++i) {
      if (codec::CompareSlots(*order[i - 1], *order[i]) == 0) {
        return Refusal{Reason::kDuplicateSlot, "two deltas address one slot"};
      }
    }
  } else {
    for (size_t i = 1; i < commit.deltas.size(); ++i) {
      if (codec::CompareSlots(commit.deltas[i - 1], commit.deltas[i]) == 0) {
        return Refusal{Reason::kDuplicateSlot, "two deltas address one slot"};
      }
    }
  }
  return {};
}

}  // namespace

Observable* Document::Materialize(const Id& id, Kind kind) {
  std::unique_ptr<Observable> node;
  if (auto it = fresh_.find(id); it != fresh_.end() && it->second->kind() == kind) {
    // A new observable made here joins: the commit describes all its slots.
    node = std::move(it->second);
    fresh_.erase(it);
    node->slots_.clear();
  } else {
    node = std::unique_ptr<Observable>(new Observable(*this, id, kind));
  }
  Observable* raw = node.get();
  index_.emplace(id, std::move(node));
  return raw;
}

const Value* Document::Current(const Delta& d) const {
  auto it = index_.find(d.id);
  return it == index_.end() ? nullptr : it->second->Get(d.ref.key);
}

Result<void> Document::ApplyCommit(const Commit& commit, bool local, const void* origin) {
  const std::vector<Delta>& deltas = commit.deltas;
  if (deltas.empty()) return Refusal{Reason::kEmptyCommit, "the commit has no delta"};
  if (!local) {
    if (auto wire = CheckWire(commit); !wire) return wire;
  }
  if (auto kinds = CheckKinds(deltas); !kinds) return kinds;
  Result<Homes> homes = CheckEdges(deltas);
  if (!homes) return homes.error();
  if (auto reachable = CheckReachable(deltas, *homes); !reachable) return reachable;
  if (auto slots = CheckSlots(deltas); !slots) return slots;

  // Valid: write everything.
  const Written written = WriteSlots(deltas);
  if (written.effective == 0) return {};  // A replace of what is there: nothing.
  const std::vector<Observable*> leaving = Leaving(MoveEdges(deltas, written));
  std::shared_ptr<Commit> undo = any_undo_ ? UndoOf(deltas, written, leaving) : nullptr;

  std::vector<std::unique_ptr<Observable>> freed;
  for (Observable* node : leaving) {
    for (const auto& [key, value] : node->slots_) bytes_ -= SlotBytes(key, value);
    auto it = index_.find(node->id_);
    node->parent_ = nullptr;
    freed.push_back(std::move(it->second));
    index_.erase(it);
  }

  // Delivered without its integrity tag: the tag says what one link's sender
  // held before it (sync/tag.h), which is no claim about any other link; a
  // link that tags makes its own.
  std::shared_ptr<Commit> delivered;
  if (written.effective == deltas.size()) {
    delivered = std::make_shared<Commit>(commit);
    delivered->tag.reset();
  } else {
    delivered = std::make_shared<Commit>();
    for (size_t i = 0; i < deltas.size(); ++i) {
      if (written.targets[i]) delivered->deltas.push_back(deltas[i]);
    }
  }
  if (!watchers_.empty()) Deliver(std::move(delivered), std::move(undo), local, origin);
  return {};
}

// Every mention of an id agrees on its kind (spec §1.2).
Result<void> Document::CheckKinds(const std::vector<Delta>& deltas) const {
  std::unordered_map<Id, Kind, codec::IdHash> kinds;
  auto agrees = [&](const Id& id, Kind kind) {
    if (auto it = index_.find(id); it != index_.end()) return it->second->kind() == kind;
    auto [it, inserted] = kinds.try_emplace(id, kind);
    return inserted || it->second == kind;
  };
  for (const Delta& d : deltas) {
    const auto* ref = d.value ? std::get_if<Reference>(&*d.value) : nullptr;
    const Id* clash = !agrees(d.id, d.ref.kind)            ? &d.id
                      : ref && !agrees(ref->id, ref->kind) ? &ref->id
                                                           : nullptr;
    if (clash) {
      return Refusal{Reason::kKindConflict,
                     "two mentions of " + Name(*clash) + " disagree about its kind"};
    }
  }
  return {};
}

// At most one attach edge each (spec §1.1): edges the commit overwrites are
// subtracted before those it writes are added, so order does not matter.
Result<Document::Homes> Document::CheckEdges(const std::vector<Delta>& deltas) const {
  std::unordered_map<Id, int, codec::IdHash> edges;
  auto count = [&](const Id& id) -> int& {
    auto [it, inserted] = edges.try_emplace(id, 0);
    if (inserted) it->second = index_.count(id) ? 1 : 0;  // The root counts.
    return it->second;
  };
  for (const Delta& d : deltas) {
    if (d.type == DeltaType::kAdd) continue;
    if (const Value* v = Current(d); v && IsAttach(*v)) {
      --count(std::get<Reference>(*v).id);
    }
  }
  Homes homes;
  for (const Delta& d : deltas) {
    if (const Reference* ref = AttachOf(d.value)) {
      ++count(ref->id);
      homes[ref->id] = d.id;
    }
  }
  for (const auto& [id, n] : edges) {
    if (n > 1) {
      return Refusal{Reason::kMultipleAttach, Name(id) + " would have a second attach edge"};
    }
  }
  return homes;
}

// Every target has a path of attach edges from the root: in the document
// before the commit (edges it removes still count), or through the edges it
// adds (spec §1.1); and no observable is attached inside its own subtree.
Result<void> Document::CheckReachable(const std::vector<Delta>& deltas, const Homes& homes) const {
  auto reachable = [&](Id id) {
    for (size_t steps = 0; steps <= homes.size(); ++steps) {
      if (index_.count(id)) return true;
      auto it = homes.find(id);
      if (it == homes.end()) return false;
      id = it->second;
    }
    return false;
  };
  for (const Delta& d : deltas) {
    if (!reachable(d.id)) {
      return Refusal{Reason::kUnreachable, Name(d.id) + " has no attach path from the root"};
    }
  }
  if (homes.empty()) return {};
  // An observable attached inside its own subtree would be cut off with it:
  // follow each new edge upwards through the state after the commit.
  std::set<std::pair<Id, std::string_view>> cut;
  for (const Delta& d : deltas) {
    if (d.type != DeltaType::kAdd) cut.emplace(d.id, d.ref.key);
  }
  auto parent_after = [&](const Id& id) -> std::optional<Id> {
    if (auto it = homes.find(id); it != homes.end()) return it->second;
    auto it = index_.find(id);
    if (it == index_.end() || !it->second->parent_) return std::nullopt;
    const Observable& node = *it->second;
    if (cut.count({node.parent_->id(), node.parent_key_})) return std::nullopt;
    return node.parent_->id();
  };
  const size_t limit = index_.size() + homes.size() + 1;
  for (const auto& [child, parent] : homes) {
    std::optional<Id> at = parent;
    for (size_t steps = 0; at && *at != root_->id() && steps < limit; ++steps) {
      if (*at == child) {
        return Refusal{Reason::kUnreachable,
                       Name(child) + " would be attached inside its own subtree"};
      }
      at = parent_after(*at);
    }
  }
  return {};
}

// The slot is there for replace and remove, and free for add (spec §2.1).
Result<void> Document::CheckSlots(const std::vector<Delta>& deltas) const {
  for (const Delta& d : deltas) {
    const Value* v = Current(d);
    if (d.type == DeltaType::kAdd && v) {
      return Refusal{Reason::kSlotExists,
                     "an add names a slot of " + Name(d.id) + " that is already taken"};
    }
    if (d.type != DeltaType::kAdd && !v) {
      return Refusal{Reason::kSlotMissing, "a " + std::string(codec::DeltaTypeName(d.type)) +
                                               " names a slot of " + Name(d.id) +
                                               " that is not there"};
    }
  }
  return {};
}

Document::Written Document::WriteSlots(const std::vector<Delta>& deltas) {
  Written written;
  auto node_for = [&](const Id& id, Kind kind) {
    if (auto it = index_.find(id); it != index_.end()) return it->second.get();
    Observable* node = Materialize(id, kind);
    written.created.insert(node);
    return node;
  };
  written.priors.resize(deltas.size());
  written.targets.assign(deltas.size(), nullptr);
  for (size_t i = 0; i < deltas.size(); ++i) {
    const Delta& d = deltas[i];
    Observable* target = node_for(d.id, d.ref.kind);
    if (const Reference* ref = AttachOf(d.value)) node_for(ref->id, ref->kind);
    auto it = target->slots_.find(d.ref.key);
    if (d.type == DeltaType::kReplace && it->second == *d.value) continue;
    written.targets[i] = target;
    ++written.effective;
    if (it != target->slots_.end()) {
      bytes_ -= SlotBytes(d.ref.key, it->second);
      written.priors[i] = std::move(it->second);
      if (d.type == DeltaType::kRemove) {
        target->slots_.erase(it);
      } else {
        it->second = *d.value;
      }
    } else {
      target->slots_.emplace(d.ref.key, *d.value);
    }
    if (d.value) bytes_ += SlotBytes(d.ref.key, *d.value);
  }
  return written;
}

// First every edge the commit overwrote, then the new.
std::vector<Observable*> Document::MoveEdges(const std::vector<Delta>& deltas,
                                             const Written& written) {
  std::vector<Observable*> lost;
  for (size_t i = 0; i < deltas.size(); ++i) {
    if (!written.targets[i]) continue;
    if (const Reference* ref = AttachOf(written.priors[i])) {
      Observable* child = index_.at(ref->id).get();
      if (child->parent_ == written.targets[i] && child->parent_key_ == deltas[i].ref.key) {
        child->parent_ = nullptr;
        lost.push_back(child);
      }
    }
  }
  for (size_t i = 0; i < deltas.size(); ++i) {
    if (!written.targets[i]) continue;
    if (const Reference* ref = AttachOf(deltas[i].value)) {
      Observable* child = index_.at(ref->id).get();
      child->parent_ = written.targets[i];
      child->parent_key_ = deltas[i].ref.key;
    }
  }
  return lost;
}

// What lost its edge and got no other leaves the document, with its
// attached subtree (spec §1.3).
std::vector<Observable*> Document::Leaving(const std::vector<Observable*>& lost) const {
  std::vector<Observable*> leaving;
  std::unordered_set<const Observable*> seen;
  for (Observable* top : lost) {
    if (top->parent_ || top == root_ || !seen.insert(top).second) continue;
    leaving.push_back(top);
    for (size_t k = leaving.size() - 1; k < leaving.size(); ++k) {
      Observable* node = leaving[k];
      for (const auto& [key, value] : node->slots_) {
        if (!IsAttach(value)) continue;
        auto it = index_.find(std::get<Reference>(value).id);
        if (it != index_.end() && it->second->parent_ == node &&
            seen.insert(it->second.get()).second) {
          leaving.push_back(it->second.get());
        }
      }
    }
  }
  return leaving;
}

std::shared_ptr<Commit> Document::UndoOf(const std::vector<Delta>& deltas, const Written& written,
                                         const std::vector<Observable*>& leaving) const {
  auto undo = std::make_shared<Commit>();
  std::unordered_set<const Observable*> dropped;
  for (Observable* node : leaving) {
    if (!written.created.count(node)) dropped.insert(node);
  }
  for (size_t i = 0; i < deltas.size(); ++i) {
    if (!written.targets[i] || dropped.count(written.targets[i])) continue;
    const Delta& d = deltas[i];
    switch (d.type) {
      case DeltaType::kAdd:
        undo->deltas.push_back({DeltaType::kRemove, d.id, d.ref, std::nullopt});
        break;
      case DeltaType::kRemove:
        undo->deltas.push_back({DeltaType::kAdd, d.id, d.ref, written.priors[i]});
        break;
      case DeltaType::kReplace:
        undo->deltas.push_back({DeltaType::kReplace, d.id, d.ref, written.priors[i]});
        break;
    }
  }
  // A dropped observable comes back described as it was before the commit.
  for (const Observable* node : dropped) {
    Slots before = node->slots_;
    for (size_t i = 0; i < deltas.size(); ++i) {
      if (written.targets[i] != node) continue;
      if (written.priors[i]) {
        before.insert_or_assign(deltas[i].ref.key, *written.priors[i]);
      } else {
        before.erase(deltas[i].ref.key);
      }
    }
    for (auto& [key, value] : before) {
      undo->deltas.push_back({DeltaType::kAdd, node->id_, {node->kind_, key}, std::move(value)});
    }
  }
  std::sort(undo->deltas.begin(), undo->deltas.end(),
            [](const Delta& a, const Delta& b) { return codec::CompareSlots(a, b) < 0; });
  return undo;
}

}  // namespace aweft::sync
