#include "codec/commit.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "codec/cbor.h"
#include "codec/id.h"

namespace aweft::codec {
namespace {

constexpr size_t kMinTag = 4;
constexpr size_t kMaxTag = 32;

// A value as the walker finds it: views into the input, nothing copied.
struct RawValue {
  Reader::Type type = Reader::Type::kNull;  // kArray means a reference.
  double number = 0;
  std::string_view data;  // Text or bytes; the id of a reference.
  Edge edge = Edge::kAttach;
  Kind kind = Kind::kObject;
};

// A delta as the walker finds it.
struct RawDelta {
  DeltaType type = DeltaType::kAdd;
  std::string_view id;
  Kind ref_kind = Kind::kObject;
  std::string_view key;
  bool has_value = false;
  RawValue value;
};

// Orders byte strings as unsigned bytes, a prefix first.
int CompareBytes(std::string_view a, std::string_view b) {
  const int order = std::memcmp(a.data(), b.data(), std::min(a.size(), b.size()));
  if (order != 0) return order;
  return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
}

Refusal InDelta(Reason reason, size_t index, std::string_view what) {
  return Refusal{reason, "delta " + std::to_string(index) + ": " + std::string(what)};
}

// Walks bytes that may be a commit and hands each delta, then the tag, to
// `sink`, refusing in the reference decoder's order (spec/README.md §5.2):
// the byte layer, the commit's shape, each delta in turn, the order of the
// deltas, the tag. Neither the walker nor the checks allocate; `sink` may.
template <typename Sink>
class Walker {
 public:
  Walker(std::string_view bytes, Sink& sink) : bytes_(bytes), in_(bytes), sink_(sink) {}

  Result<void> Run() {
    if (auto scanned = Scan(bytes_); !scanned) return scanned;
    uint64_t parts = 0;
    uint64_t count = 0;
    if (!in_.ReadArray(parts) || parts < 1 || parts > 2) {
      return Refusal{Reason::kInvalidCommit,
                     "a commit is an array of its deltas and an optional tag"};
    }
    if (!in_.ReadArray(count)) {
      return Refusal{Reason::kInvalidCommit, "the deltas are not an array"};
    }
    if (count == 0) {
      return Refusal{Reason::kEmptyCommit, "the commit carries no delta"};
    }
    sink_.Reserve(count);
    if (auto deltas = ReadDeltas(count); !deltas) return deltas;
    if (parts == 2) return ReadTag();
    return {};
  }

 private:
  // Reads every delta; an ordering fault is reported only if no delta is
  // malformed, because the reference reads all deltas before comparing.
  Result<void> ReadDeltas(uint64_t count) {
    std::string_view previous;  // The encoded (id, ref) of the last delta.
    std::optional<Reason> disorder;
    size_t disorder_at = 0;
    for (size_t i = 0; i < count; ++i) {
      RawDelta delta;
      std::string_view slot;
      if (auto read = ReadDelta(i, delta, slot); !read) return read;
      const int order = i == 0 ? -1 : CompareBytes(previous, slot);
      if (order >= 0 && !disorder) {
        disorder = order == 0 ? Reason::kDuplicateSlot : Reason::kDeltasOutOfOrder;
        disorder_at = i;
      }
      previous = slot;
      sink_.Add(delta);
    }
    if (!disorder) return {};
    return InDelta(*disorder, disorder_at,
                   *disorder == Reason::kDuplicateSlot ? "addresses the slot of the delta before it"
                                                       : "sorts before the delta before it");
  }

  // Reads delta `i`; `slot` is its encoded id and ref, which order deltas.
  Result<void> ReadDelta(size_t i, RawDelta& delta, std::string_view& slot) {
    uint64_t items = 0;
    uint64_t type = 0;
    if (!in_.ReadArray(items) || items < 3 || items > 4) {
      return InDelta(Reason::kInvalidDelta, i, "not an array of 3 or 4 items");
    }
    if (!in_.ReadUint(type) || type > 2) {
      return InDelta(Reason::kUnknownDeltaType, i, "type is not 0, 1 or 2");
    }
    delta.type = static_cast<DeltaType>(type);
    const char* from = in_.NextItem().data();
    if (!in_.ReadBytes(delta.id) || delta.id.size() != kIdSize) {
      return InDelta(Reason::kInvalidId, i, "id is not 12 bytes");
    }
    const std::string_view ref = in_.NextItem();
    if (auto read = ReadRef(i, delta); !read) return read;
    // The id and the ref are neighbouring items, so their encodings are one
    // run of the input.
    slot = std::string_view(from, ref.data() + ref.size() - from);
    if (delta.type == DeltaType::kRemove && items == 4) {
      return InDelta(Reason::kUnexpectedValue, i, "a remove carries a value");
    }
    if (delta.type != DeltaType::kRemove && items == 3) {
      return InDelta(Reason::kMissingValue, i, "carries no value");
    }
    delta.has_value = items == 4;
    if (delta.has_value) return ReadValue(i, delta.value);
    return {};
  }

  Result<void> ReadRef(size_t i, RawDelta& delta) {
    uint64_t items = 0;
    uint64_t kind = 0;
    if (!in_.ReadArray(items) || items != 2) {
      return InDelta(Reason::kInvalidRef, i, "ref is not a kind and a key");
    }
    if (!in_.ReadUint(kind) || kind > 2) {
      return InDelta(Reason::kUnknownRefKind, i, "ref kind is not 0, 1 or 2");
    }
    delta.ref_kind = static_cast<Kind>(kind);
    if (delta.ref_kind == Kind::kObject) {
      if (in_.ReadText(delta.key)) return {};
      return InDelta(Reason::kInvalidRef, i, "an object key is not text");
    }
    if (!in_.ReadBytes(delta.key)) {
      return InDelta(Reason::kInvalidRef, i, "an array or map key is not bytes");
    }
    if (delta.ref_kind == Kind::kArray && !ValidPosition(delta.key)) {
      return InDelta(Reason::kInvalidPosition, i, "a position is empty or ends in a zero byte");
    }
    if (delta.ref_kind == Kind::kMap && delta.key.size() != kIdSize) {
      return InDelta(Reason::kInvalidId, i, "a map key is not a 12-byte id");
    }
    return {};
  }

  Result<void> ReadValue(size_t i, RawValue& value) {
    value.type = in_.Peek();
    switch (value.type) {
      case Reader::Type::kArray:
        return ReadReference(i, value);
      case Reader::Type::kText:
        (void)in_.ReadText(value.data);
        return {};
      case Reader::Type::kBytes:
        (void)in_.ReadBytes(value.data);
        return {};
      case Reader::Type::kUint:
      case Reader::Type::kNegative:
      case Reader::Type::kFloat:
        (void)in_.ReadNumber(value.number);
        return {};
      case Reader::Type::kFalse:
      case Reader::Type::kTrue:
      case Reader::Type::kNull:
        in_.Skip();
        return {};
    }
    return {};
  }

  Result<void> ReadReference(size_t i, RawValue& value) {
    uint64_t items = 0;
    uint64_t edge = 0;
    uint64_t kind = 0;
    if (!in_.ReadArray(items) || items != 3) {
      return InDelta(Reason::kInvalidReference, i, "a reference is not an edge, a kind and an id");
    }
    if (!in_.ReadUint(edge) || edge > 1) {
      return InDelta(Reason::kUnknownEdgeKind, i, "edge is not 0 or 1");
    }
    if (!in_.ReadUint(kind) || kind > 2) {
      return InDelta(Reason::kUnknownRefKind, i, "reference kind is not 0, 1 or 2");
    }
    value.edge = static_cast<Edge>(edge);
    value.kind = static_cast<Kind>(kind);
    if (!in_.ReadBytes(value.data)) {
      return InDelta(Reason::kInvalidReference, i, "reference id is not bytes");
    }
    if (value.data.size() != kIdSize) {
      return InDelta(Reason::kInvalidId, i, "reference id is not 12 bytes");
    }
    return {};
  }

  Result<void> ReadTag() {
    std::string_view tag;
    if (!in_.ReadBytes(tag)) {
      return Refusal{Reason::kInvalidTag, "the tag is not a byte string"};
    }
    if (tag.size() < kMinTag || tag.size() > kMaxTag) {
      return Refusal{Reason::kInvalidTag,
                     "the tag is " + std::to_string(tag.size()) + " bytes, not 4 to 32"};
    }
    sink_.Tag(tag);
    return {};
  }

  std::string_view bytes_;
  Reader in_;
  Sink& sink_;
};

// Keeps nothing: ValidateCommit's sink.
struct CheckOnly {
  void Reserve(uint64_t) {}
  void Add(const RawDelta&) {}
  void Tag(std::string_view) {}
};

// Builds the Commit: DecodeCommit's sink.
struct Build {
  void Reserve(uint64_t count) { commit.deltas.reserve(count); }
  void Tag(std::string_view tag) { commit.tag = std::string(tag); }

  void Add(const RawDelta& raw) {
    codec::Delta& delta = commit.deltas.emplace_back();
    delta.type = raw.type;
    std::memcpy(delta.id.bytes.data(), raw.id.data(), kIdSize);
    delta.ref = Ref{raw.ref_kind, std::string(raw.key)};
    if (raw.has_value) delta.value = MakeValue(raw.value);
  }

  static codec::Value MakeValue(const RawValue& raw) {
    switch (raw.type) {
      case Reader::Type::kArray: {
        Reference reference{raw.edge, raw.kind, {}};
        std::memcpy(reference.id.bytes.data(), raw.data.data(), kIdSize);
        return reference;
      }
      case Reader::Type::kText:
        return std::string(raw.data);
      case Reader::Type::kBytes:
        return Bytes{std::string(raw.data)};
      case Reader::Type::kUint:
      case Reader::Type::kNegative:
      case Reader::Type::kFloat:
        return raw.number;
      case Reader::Type::kFalse:
        return false;
      case Reader::Type::kTrue:
        return true;
      case Reader::Type::kNull:
        break;
    }
    return std::monostate{};
  }

  Commit commit;
};

// --- Encoding --------------------------------------------------------------

Refusal OnId(Reason reason, const Delta& delta, std::string_view what) {
  return Refusal{reason, std::string(what) + " (delta on " + IdText(delta.id) + ")"};
}

Result<void> WriteRef(Writer& out, const Delta& delta) {
  const Ref& ref = delta.ref;
  if (static_cast<uint8_t>(ref.kind) > 2) {
    return OnId(Reason::kUnknownRefKind, delta, "ref kind is not 0, 1 or 2");
  }
  if (ref.kind == Kind::kObject) {
    if (auto text = CheckText(ref.key); !text) return text;
  } else if (ref.kind == Kind::kArray && !ValidPosition(ref.key)) {
    return OnId(Reason::kInvalidPosition, delta, "a position is empty or ends in a zero byte");
  } else if (ref.kind == Kind::kMap && ref.key.size() != kIdSize) {
    return OnId(Reason::kInvalidId, delta, "a map key is not a 12-byte id");
  }
  out.Array(2);
  out.Uint(static_cast<uint8_t>(ref.kind));
  if (ref.kind == Kind::kObject) {
    out.Text(ref.key);
  } else {
    out.Bytes(ref.key);
  }
  return {};
}

Result<void> WriteValue(Writer& out, const Delta& delta) {
  const codec::Value& value = *delta.value;
  if (const auto* number = std::get_if<double>(&value)) {
    if (!std::isfinite(*number)) {
      return OnId(Reason::kNonFiniteFloat, delta, "NaN or an infinity");
    }
    out.Number(*number);
  } else if (const auto* text = std::get_if<std::string>(&value)) {
    if (auto checked = CheckText(*text); !checked) return checked;
    out.Text(*text);
  } else if (const auto* bytes = std::get_if<Bytes>(&value)) {
    out.Bytes(bytes->data);
  } else if (const auto* flag = std::get_if<bool>(&value)) {
    out.Bool(*flag);
  } else if (const auto* reference = std::get_if<Reference>(&value)) {
    if (static_cast<uint8_t>(reference->edge) > 1) {
      return OnId(Reason::kUnknownEdgeKind, delta, "edge is not 0 or 1");
    }
    if (static_cast<uint8_t>(reference->kind) > 2) {
      return OnId(Reason::kUnknownRefKind, delta, "kind is not 0, 1 or 2");
    }
    out.Array(3);
    out.Uint(static_cast<uint8_t>(reference->edge));
    out.Uint(static_cast<uint8_t>(reference->kind));
    out.Bytes(reference->id.view());
  } else {
    out.Null();
  }
  return {};
}

Result<void> WriteDelta(Writer& out, const Delta& delta) {
  if (static_cast<uint8_t>(delta.type) > 2) {
    return OnId(Reason::kUnknownDeltaType, delta, "type is not 0, 1 or 2");
  }
  const bool removes = delta.type == DeltaType::kRemove;
  if (removes && delta.value) {
    return OnId(Reason::kUnexpectedValue, delta, "a remove carries a value");
  }
  if (!removes && !delta.value) {
    return OnId(Reason::kMissingValue, delta, "an add or replace has no value");
  }
  out.Array(removes ? 3 : 4);
  out.Uint(static_cast<uint8_t>(delta.type));
  out.Bytes(delta.id.view());
  if (auto ref = WriteRef(out, delta); !ref) return ref;
  if (delta.value) return WriteValue(out, delta);
  return {};
}

// The deltas of `commit` in canonical order, as pointers, so the caller's
// commit stays as it was given.
std::vector<const Delta*> Sorted(const Commit& commit) {
  std::vector<const Delta*> sorted;
  sorted.reserve(commit.deltas.size());
  for (const Delta& delta : commit.deltas) sorted.push_back(&delta);
  std::sort(sorted.begin(), sorted.end(),
            [](const Delta* a, const Delta* b) { return CompareSlots(*a, *b) < 0; });
  return sorted;
}

}  // namespace

Result<void> EncodeCommit(const Commit& commit, std::string& out) {
  if (commit.deltas.empty()) {
    return Refusal{Reason::kEmptyCommit, "the commit carries no delta"};
  }
  if (commit.tag && (commit.tag->size() < kMinTag || commit.tag->size() > kMaxTag)) {
    return Refusal{Reason::kInvalidTag,
                   "the tag is " + std::to_string(commit.tag->size()) + " bytes, not 4 to 32"};
  }
  const std::vector<const Delta*> sorted = Sorted(commit);
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (CompareSlots(*sorted[i - 1], *sorted[i]) == 0) {
      return OnId(Reason::kDuplicateSlot, *sorted[i], "two deltas address one slot");
    }
  }
  const size_t mark = out.size();
  Writer writer(out);
  writer.Array(commit.tag ? 2 : 1);
  writer.Array(sorted.size());
  for (const Delta* delta : sorted) {
    if (auto written = WriteDelta(writer, *delta); !written) {
      out.resize(mark);
      return written;
    }
  }
  if (commit.tag) writer.Bytes(*commit.tag);
  return {};
}

Result<std::string> EncodeCommit(const Commit& commit) {
  std::string out;
  if (auto written = EncodeCommit(commit, out); !written) {
    return written.error();
  }
  return out;
}

Result<Commit> DecodeCommit(std::string_view bytes) {
  Build sink;
  if (auto walked = Walker<Build>(bytes, sink).Run(); !walked) {
    return walked.error();
  }
  return std::move(sink.commit);
}

Result<void> ValidateCommit(std::string_view bytes) {
  CheckOnly sink;
  return Walker<CheckOnly>(bytes, sink).Run();
}

}  // namespace aweft::codec
