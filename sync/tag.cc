#include "sync/tag.h"

#include <openssl/sha.h>

#include <map>
#include <optional>
#include <string>

#include "codec/commit.h"

namespace aweft::sync {
namespace {

using Prior = std::optional<Value>;  // Absent: the slot was empty.

// The prior commit's canonical bytes, hashed: a replace of each slot the
// commit writes with the value it held, or a remove where it held none.
template <class PriorOf>
std::string Tag(const Commit& commit, PriorOf prior_of) {
  Commit prior;
  prior.deltas.reserve(commit.deltas.size());
  for (const codec::Delta& delta : commit.deltas) {
    Prior value = prior_of(delta);
    prior.deltas.push_back({value ? codec::DeltaType::kReplace : codec::DeltaType::kRemove,
                            delta.id, delta.ref, std::move(value)});
  }
  std::string bytes;
  (void)codec::EncodeCommit(prior, bytes);  // Sorts into canonical order.
  unsigned char hash[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), hash);
  return std::string(reinterpret_cast<const char*>(hash), 8);
}

}  // namespace

std::string TagBefore(const Document& document, const Commit& commit) {
  return Tag(commit, [&](const codec::Delta& delta) -> Prior {
    const Observable* target = document.Find(delta.id);
    const Value* value = target ? target->Get(delta.ref.key) : nullptr;
    return value ? Prior(*value) : std::nullopt;
  });
}

std::string TagOf(const Commit& commit, const Commit& undo) {
  // The undo restores every slot the commit changed: a remove where it was
  // empty, the old value where it held one. A slot the commit wrote without
  // changing it (a replace with the same value) is not in the undo.
  std::map<std::string, const codec::Delta*> restores;
  for (const codec::Delta& delta : undo.deltas) restores[SlotKey(delta)] = &delta;
  return Tag(commit, [&](const codec::Delta& delta) -> Prior {
    auto it = restores.find(SlotKey(delta));
    if (it != restores.end()) return it->second->value;  // None for a remove.
    return delta.type == codec::DeltaType::kAdd ? std::nullopt : delta.value;
  });
}

}  // namespace aweft::sync
