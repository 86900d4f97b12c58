#include "sync/snapshot.h"

#include <algorithm>

#include "codec/cbor.h"
#include "codec/id.h"

namespace aweft::sync {

using codec::Delta;
using codec::DeltaType;
using codec::Reason;
using codec::Reference;
using codec::Refusal;

namespace {

void SortDeltas(Commit& commit) {
  std::sort(commit.deltas.begin(), commit.deltas.end(),
            [](const Delta& a, const Delta& b) { return codec::CompareSlots(a, b) < 0; });
}

Result<void> CheckSnapshot(const Snapshot& s) {
  auto root = s.observables.find(s.root);
  if (root == s.observables.end()) {
    return Refusal{Reason::kUnreachable, "the snapshot has no root observable"};
  }
  if (root->second.kind != s.root_kind) {
    return Refusal{Reason::kKindConflict, "the root's kind disagrees"};
  }
  std::map<Id, Id> homes;
  for (const auto& [id, node] : s.observables) {
    for (const auto& [key, value] : node.slots) {
      if ((node.kind == Kind::kArray && !codec::ValidPosition(key)) ||
          (node.kind == Kind::kMap && key.size() != codec::kIdSize) ||
          (node.kind == Kind::kObject && !codec::CheckText(key))) {
        return Refusal{Reason::kInvalidKey,
                       "a slot key of " + codec::IdText(id) + " is not valid for its kind"};
      }
      const auto* ref = std::get_if<Reference>(&value);
      if (!ref) continue;
      auto target = s.observables.find(ref->id);
      if (target == s.observables.end()) {
        if (ref->edge == codec::Edge::kAlias) continue;  // An alias may dangle.
        return Refusal{Reason::kUnreachable,
                       "an attach edge names " + codec::IdText(ref->id) + ", which is absent"};
      }
      if (target->second.kind != ref->kind) {
        return Refusal{Reason::kKindConflict,
                       "a reference disagrees about the kind of " + codec::IdText(ref->id)};
      }
      if (ref->edge != codec::Edge::kAttach) continue;
      if (ref->id == s.root || !homes.emplace(ref->id, id).second) {
        return Refusal{Reason::kMultipleAttach,
                       codec::IdText(ref->id) + " has more than one attach edge"};
      }
    }
  }
  // Every observable but the root is attached, and the edges lead to the
  // root without a cycle.
  for (const auto& [id, node] : s.observables) {
    Id at = id;
    for (size_t steps = 0; at != s.root; ++steps) {
      auto home = homes.find(at);
      if (home == homes.end() || steps > s.observables.size()) {
        return Refusal{Reason::kUnreachable,
                       codec::IdText(id) + " has no attach path from the root"};
      }
      at = home->second;
    }
  }
  return {};
}

}  // namespace

Snapshot TakeSnapshot(const Document& document) {
  Snapshot s{document.root().id(), document.root().kind(), {}};
  for (const auto& [id, node] : document.index()) {
    s.observables.emplace(id, SnapshotObservable{node->kind(), node->slots()});
  }
  return s;
}

Result<std::unique_ptr<Document>> FromSnapshot(const Snapshot& snapshot) {
  if (auto checked = CheckSnapshot(snapshot); !checked) return checked.error();
  auto document = std::make_unique<Document>(snapshot.root, snapshot.root_kind);
  for (const auto& [id, node] : snapshot.observables) {
    if (id == snapshot.root) continue;
    auto made = std::unique_ptr<Observable>(new Observable(*document, id, node.kind));
    document->index_.emplace(id, std::move(made));
  }
  for (const auto& [id, node] : snapshot.observables) {
    Observable& parent = *document->index_.at(id);
    parent.slots_ = node.slots;
    for (const auto& [key, value] : node.slots) document->bytes_ += SlotBytes(key, value);
    for (const auto& [key, value] : node.slots) {
      if (!IsAttach(value)) continue;
      Observable& child = *document->index_.at(std::get<Reference>(value).id);
      child.parent_ = &parent;
      child.parent_key_ = key;
    }
  }
  return document;
}

std::optional<Commit> AsCommit(const Document& document) {
  Commit commit;
  for (const auto& [id, node] : document.index()) {
    for (const auto& [key, value] : node->slots()) {
      commit.deltas.push_back({DeltaType::kAdd, id, {node->kind(), key}, value});
    }
  }
  if (commit.deltas.empty()) return std::nullopt;
  SortDeltas(commit);
  return commit;
}

Result<std::optional<Commit>> Reconcile(const Document& document, const Snapshot& target) {
  const Observable& root = document.root();
  if (target.root != root.id() || target.root_kind != root.kind()) {
    return Refusal{Reason::kRootMismatch, "the target's root " + codec::IdText(target.root) +
                                              " is not this document's root " +
                                              codec::IdText(root.id())};
  }
  Commit commit;
  auto emit = [&](DeltaType type, const Id& id, Kind kind, const std::string& key,
                  std::optional<Value> value) {
    commit.deltas.push_back({type, id, {kind, key}, std::move(value)});
  };
  for (const auto& [id, wanted] : target.observables) {
    auto it = document.index().find(id);
    if (it == document.index().end()) {  // New here: all its slots.
      for (const auto& [key, value] : wanted.slots) {
        emit(DeltaType::kAdd, id, wanted.kind, key, value);
      }
      continue;
    }
    const Observable& node = *it->second;
    if (node.kind() != wanted.kind) {
      return Refusal{Reason::kKindConflict,
                     "the target disagrees about the kind of " + codec::IdText(id)};
    }
    for (const auto& [key, value] : wanted.slots) {
      const Value* now = node.Get(key);
      if (!now) {
        emit(DeltaType::kAdd, id, node.kind(), key, value);
      } else if (!(*now == value)) {
        emit(DeltaType::kReplace, id, node.kind(), key, value);
      }
    }
    for (const auto& [key, value] : node.slots()) {
      if (!wanted.slots.count(key)) {
        emit(DeltaType::kRemove, id, node.kind(), key, std::nullopt);
      }
    }
  }
  // An observable the target drops may hold the attach edge of one the target
  // keeps elsewhere: remove that edge too, or the move would leave it with two
  // (the reference's reconcile is refused as multiple-attach here).
  for (const auto& [id, node] : document.index()) {
    if (target.observables.count(id)) continue;
    for (const auto& [key, value] : node->slots()) {
      if (IsAttach(value) && target.observables.count(std::get<Reference>(value).id)) {
        emit(DeltaType::kRemove, id, node->kind(), key, std::nullopt);
      }
    }
  }
  if (commit.deltas.empty()) return std::optional<Commit>();
  SortDeltas(commit);
  return std::optional<Commit>(std::move(commit));
}

Result<std::unique_ptr<Document>> RootFrom(const Id& id, int kind) {
  if (kind < 0 || kind > 2) {
    return Refusal{
        Reason::kKindConflict,
        "a root is an object (0), an array (1) or a map (2), not " + std::to_string(kind)};
  }
  return std::make_unique<Document>(id, static_cast<Kind>(kind));
}

}  // namespace aweft::sync
