#pragma once

#include <string>
#include <string_view>

namespace aweft::codec {

// Why something was refused. Each reason has exactly one spelling, fixed by
// the format spec (§7) or by the reference implementation's catalogue
// (spec/behaviour.md §5); peers and tests compare that spelling, so never
// rename one. Name() is the only place a spelling is written.
enum class Reason {
  // Decoding (format spec §7): the bytes are not a valid commit.
  kMalformedHead,
  kIndefiniteLength,
  kNonCanonicalInteger,
  kTruncated,
  kTrailingBytes,
  kNestingTooDeep,
  kIntegerOutOfRange,
  kNonCanonicalFloat,
  kNonFiniteFloat,
  kInvalidUtf8,
  kUnsupportedMajor,
  kUnsupportedSimple,
  kInvalidCommit,
  kEmptyCommit,
  kInvalidTag,
  kDuplicateSlot,
  kDeltasOutOfOrder,
  kInvalidDelta,
  kUnknownDeltaType,
  kMissingValue,
  kUnexpectedValue,
  kInvalidId,
  kInvalidRef,
  kUnknownRefKind,
  kInvalidReference,
  kUnknownEdgeKind,
  kInvalidPosition,
  // Encoding values the format cannot carry.
  kLoneSurrogate,
  kInvalidHex,
  kInvalidValue,
  // Applying (format spec §7): the document refuses a well-formed commit.
  kKindConflict,
  kMultipleAttach,
  kSlotExists,
  kSlotMissing,
  kUnreachable,
  // The document model (behaviour.md §5.3).
  kDuplicateId,
  kInvalidKey,
  kInvalidWrite,
  kNotObservable,
  kSealed,
  // Frames and links (behaviour.md §5.1).
  kBadFrame,
  kNoDocument,
  kRootMismatch,
  kNoTopic,
  kUnwantedState,
  kLeft,
  kClosed,
  kAcceptThrew,
  kAlreadyShared,
  // Requests (behaviour.md §3).
  kAnswering,
  kDuplicate,
  kNotData,
  kTimeout,
  kMissing,
  kFailed,
  // Storage (behaviour.md §5.2).
  kNotOpen,
  kUnknownVersion,
  kCorrupt,
  // Node.
  kForbidden,
  kLimit,
  kInvalidName,
  kUnavailable,  // The node cannot store now (a full or read-only disk).
  kCycle,        // Linking two nodes would make a cycle of upstreams.
  kDiverged,     // A commit's integrity tag does not match this end's state.
};

// Returns the spec's spelling of `reason`, e.g. non-canonical-integer.
std::string_view Name(Reason reason);
// The same, as a string (for frames and answers that hold one).
inline std::string Spelled(Reason reason) { return std::string(Name(reason)); }

// Returns one imperative sentence saying what to do about `reason`.
std::string_view Fix(Reason reason);

// One refusal: the stable reason, plus a message for humans. Code branches on
// `reason` only; `message` is never parsed.
struct Refusal {
  Reason reason;
  std::string message;  // The detail, without the reason or the fix.

  // Renders "reason: detail. fix", the form every refusal is shown in.
  std::string ToString() const;
};

}  // namespace aweft::codec
