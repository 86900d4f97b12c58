#include "sync/document.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <deque>
#include <exception>

#include "codec/cbor.h"
#include "codec/commit.h"
#include "sync/position.h"
#include "sync/random.h"

namespace aweft::sync {

using codec::Reason;
using codec::Refusal;

// --- Delivery: one FIFO per thread, as the reference's process-wide queue.
// A commit closed while the queue drains is delivered after the current one.

namespace {

struct Job {
  Document* document;
  uint64_t handle;
  std::shared_ptr<const Delivered> delivered;
};

struct DeliveryQueue {
  std::deque<Job> jobs;
  bool draining = false;
};

thread_local DeliveryQueue delivery;

}  // namespace

// --- Observable

const Value* Observable::Get(std::string_view key) const {
  auto it = slots_.find(key);
  return it == slots_.end() ? nullptr : &it->second;
}

Slots::const_iterator Observable::Nth(size_t index) const {
  assert(index < slots_.size());
  auto it = slots_.begin();
  if (index <= slots_.size() / 2) {
    std::advance(it, index);
  } else {
    it = slots_.end();
    std::advance(it, -static_cast<ptrdiff_t>(slots_.size() - index));
  }
  return it;
}

const Value& Observable::At(size_t index) const { return Nth(index)->second; }

const std::string& Observable::PositionAt(size_t index) const { return Nth(index)->first; }

std::vector<std::string> Observable::Positions() const {
  std::vector<std::string> out;
  out.reserve(slots_.size());
  for (const auto& [key, value] : slots_) out.push_back(key);
  return out;
}

codec::Reference Attach(const Observable& target) {
  return {codec::Edge::kAttach, target.kind(), target.id()};
}

codec::Reference Alias(const Observable& target) {
  return {codec::Edge::kAlias, target.kind(), target.id()};
}

std::string SlotKey(const codec::Delta& delta) {
  std::string key(delta.id.view());
  key += static_cast<char>(delta.ref.kind);
  key += delta.ref.key;
  return key;
}

namespace {

// A CBOR head: the major type and a count or length.
uint64_t HeadBytes(uint64_t n) {
  return n < 24 ? 1 : n <= 0xff ? 2 : n <= 0xffff ? 3 : n <= 0xffffffff ? 5 : 9;
}

}  // namespace

uint64_t SlotBytes(std::string_view key, const Value& value) {
  // [type, id, [kind, key], value]: heads, the type, the id, the ref.
  uint64_t bytes = 1 + 1 + (1 + codec::kIdSize) + 1 + 1 + HeadBytes(key.size()) + key.size();
  if (const auto* text = std::get_if<std::string>(&value)) {
    return bytes + HeadBytes(text->size()) + text->size();
  }
  if (const auto* data = std::get_if<codec::Bytes>(&value)) {
    return bytes + HeadBytes(data->data.size()) + data->data.size();
  }
  if (std::holds_alternative<codec::Reference>(value)) return bytes + 3 + 1 + codec::kIdSize;
  if (std::holds_alternative<double>(value)) return bytes + 9;
  return bytes + 1;  // null, a boolean
}

int64_t Growth(const Document& document, const Commit& commit) {
  int64_t growth = 0;
  for (const codec::Delta& d : commit.deltas) {
    const Observable* target = document.Find(d.id);
    const Value* now = target ? target->Get(d.ref.key) : nullptr;
    if (now) growth -= static_cast<int64_t>(SlotBytes(d.ref.key, *now));
    if (d.value) growth += static_cast<int64_t>(SlotBytes(d.ref.key, *d.value));
  }
  return growth;
}

bool IsAttach(const Value& value) {
  const auto* ref = std::get_if<codec::Reference>(&value);
  return ref && ref->edge == codec::Edge::kAttach;
}

// --- Document

Document::Document(Kind kind) : Document(MintId(), kind) {}

Document::Document(const Id& root, Kind kind) {
  auto node = std::unique_ptr<Observable>(new Observable(*this, root, kind));
  root_ = node.get();
  index_.emplace(root, std::move(node));
}

Document::~Document() {
  // Jobs still queued for this document must not outlive it.
  std::erase_if(delivery.jobs, [this](const Job& j) { return j.document == this; });
}

Observable* Document::Find(const Id& id) const {
  if (auto it = index_.find(id); it != index_.end()) return it->second.get();
  if (auto it = fresh_.find(id); it != fresh_.end()) return it->second.get();
  return nullptr;
}

Observable& Document::Create(Kind kind) { return Create(kind, MintId()); }

Observable& Document::Create(Kind kind, const Id& id) {
  auto node = std::unique_ptr<Observable>(new Observable(*this, id, kind));
  Observable& ref = *node;
  fresh_[id] = std::move(node);
  return ref;
}

Result<void> Document::CheckLocalValue(const Value& value) const {
  if (const auto* number = std::get_if<double>(&value)) {
    if (!std::isfinite(*number)) {
      return Refusal{Reason::kNonFiniteFloat, "a number must be finite"};
    }
  } else if (const auto* text = std::get_if<std::string>(&value)) {
    return codec::CheckText(*text);
  } else if (const auto* ref = std::get_if<codec::Reference>(&value)) {
    const Observable* target = Find(ref->id);
    if (!target) {
      return Refusal{Reason::kNotObservable, "the reference names no observable of this document"};
    }
    if (target->kind() != ref->kind) {
      return Refusal{Reason::kKindConflict, "the reference's kind is not its target's kind"};
    }
  }
  return {};
}

Result<void> Document::Write(Observable& target, std::string key, std::optional<Value> value) {
  if (&target.document() != this) {
    return Refusal{Reason::kInvalidWrite, "the observable is of another document"};
  }
  if (value) {
    if (auto checked = CheckLocalValue(*value); !checked) return checked;
    if (const auto* number = std::get_if<double>(&*value); number && *number == 0) {
      *value = 0.0;  // Negative zero is zero (spec §6.2).
    }
  }
  auto it = target.slots_.find(key);
  const bool present = it != target.slots_.end();
  if (!present && !value) return {};
  if (present && value && it->second == *value) return {};  // No change.

  const bool implicit = depth_ == 0;
  if (implicit) depth_ = 1;
  auto [touch, first] = touched_.try_emplace({&target, key});
  if (first && present) touch->second = it->second;
  if (value) {
    target.slots_.insert_or_assign(std::move(key), std::move(*value));
  } else {
    target.slots_.erase(it);
  }
  if (!implicit) return {};
  depth_ = 0;
  return Close();
}

namespace {

Result<void> WrongKind(const Observable& target, std::string_view what) {
  return Refusal{Reason::kInvalidWrite, std::string(what) + " is not a write for an " +
                                            std::string(codec::KindName(target.kind()))};
}

}  // namespace

Result<void> Document::Set(Observable& object, std::string_view key, Value value) {
  if (object.kind() != Kind::kObject) return WrongKind(object, "Set");
  if (auto checked = codec::CheckText(key); !checked) return checked;
  return Write(object, std::string(key), std::move(value));
}

Result<void> Document::Remove(Observable& object, std::string_view key) {
  if (object.kind() != Kind::kObject) return WrongKind(object, "Remove");
  return Write(object, std::string(key), std::nullopt);
}

Result<void> Document::Insert(Observable& array, size_t index, Value value) {
  if (array.kind() != Kind::kArray) return WrongKind(array, "Insert");
  if (index > array.size()) {
    return Refusal{Reason::kInvalidWrite,
                   "index " + std::to_string(index) + " is past the end of the array"};
  }
  std::optional<std::string_view> lower, upper;
  if (index > 0) lower = array.PositionAt(index - 1);
  if (index < array.size()) upper = array.PositionAt(index);
  auto position = PositionBetween(lower, upper);
  if (!position) return position.error();
  return Write(array, std::move(*position), std::move(value));
}

Result<void> Document::Push(Observable& array, Value value) {
  return Insert(array, array.size(), std::move(value));
}

Result<void> Document::InsertAt(Observable& array, std::string_view position, Value value) {
  if (array.kind() != Kind::kArray) return WrongKind(array, "InsertAt");
  if (!codec::ValidPosition(position)) {
    return Refusal{Reason::kInvalidPosition,
                   "a position is non-empty and does not end in a zero byte"};
  }
  if (array.Get(position)) {
    return Refusal{Reason::kSlotExists, "the position is taken"};
  }
  return Write(array, std::string(position), std::move(value));
}

Result<void> Document::Replace(Observable& array, size_t index, Value value) {
  if (array.kind() != Kind::kArray) return WrongKind(array, "Replace");
  if (index >= array.size()) {
    return Refusal{Reason::kInvalidWrite,
                   "index " + std::to_string(index) + " is not in the array"};
  }
  return Write(array, array.PositionAt(index), std::move(value));
}

Result<void> Document::RemoveAt(Observable& array, size_t index) {
  if (array.kind() != Kind::kArray) return WrongKind(array, "RemoveAt");
  if (index >= array.size()) {
    return Refusal{Reason::kInvalidWrite,
                   "index " + std::to_string(index) + " is not in the array"};
  }
  return Write(array, array.PositionAt(index), std::nullopt);
}

Result<void> Document::SetEntry(Observable& map, const Id& key, Value value) {
  if (map.kind() != Kind::kMap) return WrongKind(map, "SetEntry");
  return Write(map, std::string(key.view()), std::move(value));
}

Result<void> Document::RemoveEntry(Observable& map, const Id& key) {
  if (map.kind() != Kind::kMap) return WrongKind(map, "RemoveEntry");
  return Write(map, std::string(key.view()), std::nullopt);
}

Result<void> Document::Add(Observable& map, Observable& target) {
  return SetEntry(map, target.id(), Attach(target));
}

Result<void> Document::WriteSlot(Observable& target, std::string_view key,
                                 std::optional<Value> value) {
  switch (target.kind()) {
    case Kind::kObject:
      if (auto checked = codec::CheckText(key); !checked) return checked;
      break;
    case Kind::kArray:
      if (!codec::ValidPosition(key)) {
        return Refusal{Reason::kInvalidPosition,
                       "a position is non-empty and does not end in a zero byte"};
      }
      break;
    case Kind::kMap:
      if (key.size() != codec::kIdSize) {
        return Refusal{Reason::kInvalidId, "a map key is a 12-byte id"};
      }
      break;
  }
  return Write(target, std::string(key), std::move(value));
}

Result<void> Document::Atomic(const std::function<Result<void>()>& fn) {
  ++depth_;
  Result<void> result;
  try {
    result = fn();
  } catch (...) {
    if (--depth_ == 0) Rollback();
    throw;
  }
  if (--depth_ > 0) return result;  // The outermost block closes.
  if (!result) {
    Rollback();
    return result;
  }
  return Close();
}

void Document::Rollback() {
  auto touched = std::move(touched_);
  touched_.clear();
  for (auto& [slot, prior] : touched) {
    auto& [node, key] = slot;
    if (prior) {
      node->slots_.insert_or_assign(key, std::move(*prior));
    } else {
      node->slots_.erase(key);
    }
  }
}

std::optional<Commit> Document::BuildCommit() {
  Commit commit;
  std::vector<Observable*> joining;
  auto join = [&](const Value& value) {
    if (!IsAttach(value)) return;
    const Id& id = std::get<codec::Reference>(value).id;
    if (auto it = fresh_.find(id); it != fresh_.end()) joining.push_back(it->second.get());
  };
  for (const auto& [slot, prior] : touched_) {
    const auto& [node, key] = slot;
    auto it = index_.find(node->id());
    if (it == index_.end() || it->second.get() != node) continue;
    const Value* now = node->Get(key);
    if (!prior && !now) continue;
    if (prior && now && *prior == *now) continue;
    codec::Delta delta{!prior ? codec::DeltaType::kAdd
                       : !now ? codec::DeltaType::kRemove
                              : codec::DeltaType::kReplace,
                       node->id(),
                       {node->kind(), key},
                       std::nullopt};
    if (now) {
      delta.value = *now;
      join(*now);
    }
    commit.deltas.push_back(std::move(delta));
  }
  // A new observable joins with its whole content, as adds.
  std::unordered_map<Id, bool, codec::IdHash> joined;
  while (!joining.empty()) {
    Observable* node = joining.back();
    joining.pop_back();
    if (!joined.emplace(node->id(), true).second) continue;
    for (const auto& [key, value] : node->slots_) {
      commit.deltas.push_back({codec::DeltaType::kAdd, node->id(), {node->kind(), key}, value});
      join(value);
    }
  }
  if (commit.deltas.empty()) return std::nullopt;
  std::sort(
      commit.deltas.begin(), commit.deltas.end(),
      [](const codec::Delta& a, const codec::Delta& b) { return codec::CompareSlots(a, b) < 0; });
  return commit;
}

Result<void> Document::Close() {
  std::optional<Commit> commit = BuildCommit();
  auto touched = std::move(touched_);
  touched_.clear();
  // Put the document back as it was before the block; the commit then goes
  // through the same validation and writing as a received one.
  for (auto& [slot, prior] : touched) {
    auto& [node, key] = slot;
    auto it = index_.find(node->id());
    if (it == index_.end() || it->second.get() != node) continue;
    if (prior) {
      node->slots_.insert_or_assign(key, *prior);
    } else {
      node->slots_.erase(key);
    }
  }
  if (!commit) return {};
  Result<void> applied = ApplyCommit(*commit, /*local=*/true);
  if (!applied) {
    // Refused: new observables written in the block go back as well.
    for (auto& [slot, prior] : touched) {
      auto& [node, key] = slot;
      if (!fresh_.count(node->id())) continue;
      if (prior) {
        node->slots_.insert_or_assign(key, std::move(*prior));
      } else {
        node->slots_.erase(key);
      }
    }
  }
  return applied;
}

Result<void> Document::Apply(const Commit& commit, const void* origin) {
  if (depth_ > 0) {
    return Refusal{Reason::kInvalidWrite, "a commit cannot be applied inside an open transaction"};
  }
  return ApplyCommit(commit, /*local=*/false, origin);
}

// --- Watching and delivery

uint64_t Document::Watch(Watcher watcher, bool undo) {
  const uint64_t handle = next_watch_++;
  watchers_.emplace(handle,
                    Registration{std::make_shared<const Watcher>(std::move(watcher)), undo});
  any_undo_ = any_undo_ || undo;
  return handle;
}

void Document::Unwatch(uint64_t handle) {
  watchers_.erase(handle);
  any_undo_ =
      std::any_of(watchers_.begin(), watchers_.end(), [](const auto& w) { return w.second.undo; });
}

const std::shared_ptr<const std::string>& Change::Bytes() const {
  if (!delivered.bytes) {
    std::string bytes;
    if (codec::EncodeCommit(commit, bytes)) {
      delivered.bytes = std::make_shared<const std::string>(std::move(bytes));
    }
  }
  return delivered.bytes;
}

void Document::Deliver(std::shared_ptr<const Commit> commit, std::shared_ptr<const Commit> undo,
                       bool local, const void* origin) {
  auto delivered = std::make_shared<const Delivered>(
      Delivered{std::move(commit), std::move(undo), local, origin, nullptr, nullptr, nullptr});
  for (const auto& [handle, registration] : watchers_) {
    delivery.jobs.push_back({this, handle, delivered});
  }
  if (delivery.draining) return;
  delivery.draining = true;
  std::exception_ptr first;
  while (!delivery.jobs.empty()) {
    Job job = std::move(delivery.jobs.front());
    delivery.jobs.pop_front();
    auto it = job.document->watchers_.find(job.handle);
    if (it == job.document->watchers_.end()) continue;  // Unwatched since.
    std::shared_ptr<const Watcher> watcher = it->second.watcher;
    const Delivered& d = *job.delivered;
    try {
      (*watcher)(Change{*d.commit, it->second.undo ? d.undo.get() : nullptr, d.local, d.origin, d});
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  delivery.draining = false;
  if (first) std::rethrow_exception(first);
}

}  // namespace aweft::sync
