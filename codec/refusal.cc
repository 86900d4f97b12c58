#include "codec/refusal.h"

namespace aweft::codec {

// clang-format off
std::string_view Name(Reason reason) {
  switch (reason) {
    case Reason::kMalformedHead:       return "malformed-head";
    case Reason::kIndefiniteLength:    return "indefinite-length";
    case Reason::kNonCanonicalInteger: return "non-canonical-integer";
    case Reason::kTruncated:           return "truncated";
    case Reason::kTrailingBytes:       return "trailing-bytes";
    case Reason::kNestingTooDeep:      return "nesting-too-deep";
    case Reason::kIntegerOutOfRange:   return "integer-out-of-range";
    case Reason::kNonCanonicalFloat:   return "non-canonical-float";
    case Reason::kNonFiniteFloat:      return "non-finite-float";
    case Reason::kInvalidUtf8:         return "invalid-utf8";
    case Reason::kUnsupportedMajor:    return "unsupported-major";
    case Reason::kUnsupportedSimple:   return "unsupported-simple";
    case Reason::kInvalidCommit:       return "invalid-commit";
    case Reason::kEmptyCommit:         return "empty-commit";
    case Reason::kInvalidTag:          return "invalid-tag";
    case Reason::kDuplicateSlot:       return "duplicate-slot";
    case Reason::kDeltasOutOfOrder:    return "deltas-out-of-order";
    case Reason::kInvalidDelta:        return "invalid-delta";
    case Reason::kUnknownDeltaType:    return "unknown-delta-type";
    case Reason::kMissingValue:        return "missing-value";
    case Reason::kUnexpectedValue:     return "unexpected-value";
    case Reason::kInvalidId:           return "invalid-id";
    case Reason::kInvalidRef:          return "invalid-ref";
    case Reason::kUnknownRefKind:      return "unknown-ref-kind";
    case Reason::kInvalidReference:    return "invalid-reference";
    case Reason::kUnknownEdgeKind:     return "unknown-edge-kind";
    case Reason::kInvalidPosition:     return "invalid-position";
    case Reason::kLoneSurrogate:       return "lone-surrogate";
    case Reason::kInvalidHex:          return "invalid-hex";
    case Reason::kInvalidValue:        return "invalid-value";
    case Reason::kKindConflict:        return "kind-conflict";
    case Reason::kMultipleAttach:      return "multiple-attach";
    case Reason::kSlotExists:          return "slot-exists";
    case Reason::kSlotMissing:         return "slot-missing";
    case Reason::kUnreachable:         return "unreachable";
    case Reason::kDuplicateId:         return "duplicate-id";
    case Reason::kInvalidKey:          return "invalid-key";
    case Reason::kInvalidWrite:        return "invalid-write";
    case Reason::kNotObservable:       return "not-observable";
    case Reason::kSealed:              return "sealed";
    case Reason::kBadFrame:            return "bad-frame";
    case Reason::kNoDocument:          return "no-document";
    case Reason::kRootMismatch:        return "root-mismatch";
    case Reason::kNoTopic:             return "no-topic";
    case Reason::kUnwantedState:       return "unwanted-state";
    case Reason::kLeft:                return "left";
    case Reason::kClosed:              return "closed";
    case Reason::kAcceptThrew:         return "accept-threw";
    case Reason::kAlreadyShared:       return "already-shared";
    case Reason::kAnswering:           return "answering";
    case Reason::kDuplicate:           return "duplicate";
    case Reason::kNotData:             return "not-data";
    case Reason::kTimeout:             return "timeout";
    case Reason::kMissing:             return "missing";
    case Reason::kFailed:              return "failed";
    case Reason::kNotOpen:             return "not-open";
    case Reason::kUnknownVersion:      return "unknown-version";
    case Reason::kCorrupt:             return "corrupt";
    case Reason::kForbidden:           return "forbidden";
    case Reason::kLimit:               return "limit";
    case Reason::kInvalidName:         return "invalid-name";
    case Reason::kUnavailable:         return "unavailable";
    case Reason::kCycle:               return "cycle";
    case Reason::kDiverged:            return "diverged";
  }
  return "unknown-reason";  // Unreachable: -Wswitch flags a missing case.
}
// clang-format on

std::string_view Fix(Reason reason) {
  switch (reason) {
    case Reason::kMalformedHead:
      return "Re-encode with the codec; it never writes ai 28 to 30.";
    case Reason::kIndefiniteLength:
      return "Re-encode with stated lengths; there is no streaming form.";
    case Reason::kNonCanonicalInteger:
      return "Re-encode with the codec, which writes the shortest heads.";
    case Reason::kTruncated:
      return "Pass the whole message, or ask for history the log still holds "
             "(resync instead).";
    case Reason::kTrailingBytes:
      return "Pass one item per buffer and split off what follows it.";
    case Reason::kNestingTooDeep:
      return "Give nested structure observables of its own.";
    case Reason::kIntegerOutOfRange:
      return "Write a whole number beyond 2^53 as a float64.";
    case Reason::kNonCanonicalFloat:
      return "Write a whole number within 2^53 as an integer.";
    case Reason::kNonFiniteFloat:
      return "Store null for a missing number; NaN and infinity have no form.";
    case Reason::kInvalidUtf8:
      return "Encode text as well-formed UTF-8.";
    case Reason::kUnsupportedMajor:
      return "Drop the map or tag; the format has neither.";
    case Reason::kUnsupportedSimple:
      return "Write only false, true, null or a float64 as a simple value.";
    case Reason::kInvalidCommit:
      return "Encode a commit as an array: the deltas, then at most a tag (codec/FORMAT.md).";
    case Reason::kEmptyCommit:
      return "Send nothing at all instead of a commit with no delta.";
    case Reason::kInvalidTag:
      return "Make the tag 4 to 32 bytes, or leave it off.";
    case Reason::kDuplicateSlot:
      return "Merge the deltas addressing one slot into one.";
    case Reason::kDeltasOutOfOrder:
      return "Sort the deltas by id, then ref, as the canonical encoding does (codec/FORMAT.md).";
    case Reason::kInvalidDelta:
      return "Write a delta as type, id, ref and, unless removing, value.";
    case Reason::kUnknownDeltaType:
      return "Set the delta type to 0 add, 1 replace or 2 remove.";
    case Reason::kMissingValue:
      return "Give the add or replace a value, or make it a remove.";
    case Reason::kUnexpectedValue:
      return "Leave the value off the remove, or make it a replace.";
    case Reason::kInvalidId:
      return "Use an id of 12 bytes, or its 16-character text form.";
    case Reason::kInvalidRef:
      return "Key an object slot by text and other slots by bytes.";
    case Reason::kUnknownRefKind:
      return "Set the kind to 0 object, 1 array or 2 map.";
    case Reason::kInvalidReference:
      return "Write a reference as an edge, a kind and a 12-byte id.";
    case Reason::kUnknownEdgeKind:
      return "Set the edge to 0 attach or 1 alias.";
    case Reason::kInvalidPosition:
      return "Use a non-empty position that does not end in a zero byte.";
    case Reason::kLoneSurrogate:
      return "Pair the surrogate with its other half, or drop it.";
    case Reason::kInvalidHex:
      return "Write two hex digits, 0 to 9 and a to f, per byte.";
    case Reason::kInvalidValue:
      return "Store null, a boolean, a number, text, bytes or a reference.";
    case Reason::kKindConflict:
      return "Address every mention of an id as the kind it already has.";
    case Reason::kMultipleAttach:
      return "Attach the observable once and name it elsewhere by alias.";
    case Reason::kSlotExists:
      return "Replace the slot instead of adding it.";
    case Reason::kSlotMissing:
      return "Add the slot before replacing or removing it.";
    case Reason::kUnreachable:
      return "Attach the observable under the root before writing into it.";
    case Reason::kDuplicateId:
      return "Mint a fresh id for the new observable.";
    case Reason::kInvalidKey:
      return "Use a key the observable's kind accepts.";
    case Reason::kInvalidWrite:
      return "Change the observable through its own operations.";
    case Reason::kNotObservable:
      return "Pass an observable that belongs to a document.";
    case Reason::kSealed:
      return "Write outside the interceptor, once the commit has landed.";
    case Reason::kBadFrame:
      return "Send frames of protocol v1, as the reference sync package writes them.";
    case Reason::kNoDocument:
      return "Share the document from an end that holds it.";
    case Reason::kRootMismatch:
      return "Resynchronize one end, or share under another name.";
    case Reason::kNoTopic:
      return "Open the topic before sending frames about it.";
    case Reason::kUnwantedState:
      return "Send a state frame only to an end that asked for one.";
    case Reason::kLeft:
      return "Share the document again to resume replicating it.";
    case Reason::kClosed:
      return "Open a new link; this one has ended.";
    case Reason::kAcceptThrew:
      return "Make the accept handler return a verdict, not throw.";
    case Reason::kAlreadyShared:
      return "Share each name once per link, or leave it first.";
    case Reason::kAnswering:
      return "Stop the current answerer before registering another.";
    case Reason::kDuplicate:
      return "Reuse the requests channel this socket already has.";
    case Reason::kNotData:
      return "Pass only values that encode as JSON.";
    case Reason::kTimeout:
      return "Retry later, or allow the request more time.";
    case Reason::kMissing:
      return "Register an answerer at the other end before asking.";
    case Reason::kFailed:
      return "Read the message for what the other end reported.";
    case Reason::kNotOpen:
      return "Open the document again before using it.";
    case Reason::kUnknownVersion:
      return "Migrate the data with the version that wrote it.";
    case Reason::kCorrupt:
      return "Restore the data from a replica or a backup.";
    case Reason::kForbidden:
      return "Use credentials that grant this operation.";
    case Reason::kLimit:
      return "Send less at once, or raise the configured limit.";
    case Reason::kInvalidName:
      return "Use a document name the node accepts.";
    case Reason::kUnavailable:
      return "Write again later: the node stores nothing until its disk takes writes again.";
    case Reason::kCycle:
      return "Remove one of the upstreams that lead back to this node.";
    case Reason::kDiverged:
      return "Nothing to do: the ends resynchronize, and the state of the end that orders the "
             "document stands.";
  }
  return "Report this as a bug.";  // Unreachable: -Wswitch flags a missing
                                   // case.
}

std::string Refusal::ToString() const {
  std::string out(Name(reason));
  if (message.empty()) {
    out += ".";
  } else {
    out += ": ";
    out += message;
    if (out.back() != '.') out += ".";
  }
  out += " ";
  out += Fix(reason);
  return out;
}

}  // namespace aweft::codec
