#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "codec/result.h"
#include "codec/value.h"

// The link's frames, protocol v1 (spec/README.md §6.3, behaviour.md §2.2).
// A frame is one array in the commit encoding; commits travel inside it as
// byte strings holding their canonical encoding.
namespace aweft::codec {

// The root an `open` names. The frame layer does not check the id's width
// (the reference does not); the link refuses a wrong one.
struct RootRef {
  std::string id;
  Kind kind;
  bool operator==(const RootRef&) const = default;
};

struct OpenFrame {
  uint64_t topic;
  std::string name;
  std::optional<RootRef> root;  // Absent when the sender holds nothing.
  bool want;
  bool operator==(const OpenFrame&) const = default;
};

struct StateFrame {
  uint64_t topic;
  std::optional<Commit> commit;  // Absent when the sender's document is empty.
  bool operator==(const StateFrame&) const = default;
};

struct CommitsFrame {
  uint64_t topic;
  uint64_t first;  // The sequence number of commits[0]; the rest follow.
  std::vector<Commit> commits;
  bool operator==(const CommitsFrame&) const = default;
};

// One reason a commit was refused, as it crosses the wire. `code` is a spec
// reason or one an application made up.
struct WireReason {
  std::string code;
  std::string message;
  std::optional<std::vector<std::string>> path;
  bool operator==(const WireReason&) const = default;
};

struct RefusedFrame {
  uint64_t topic;  // The refusing end's number.
  uint64_t seq;    // The number the other end gave the commit.
  std::vector<WireReason> reasons;
  bool operator==(const RefusedFrame&) const = default;
};

struct LeaveFrame {
  uint64_t topic;
  bool operator==(const LeaveFrame&) const = default;
};

struct FaultFrame {
  uint64_t topic;  // The receiver's number; 0 is the whole link.
  std::string reason;
  std::string message;
  bool operator==(const FaultFrame&) const = default;
};

using Frame =
    std::variant<OpenFrame, StateFrame, CommitsFrame, RefusedFrame, LeaveFrame, FaultFrame>;

// The name of a frame's kind: "open", "state", ...
std::string_view FrameKindName(const Frame& frame);

// Encodes `frame`. Refuses a frame that has no encoding (bad-frame for a
// structural fault such as topic 0 outside a fault or an empty list; the
// commit's own reason for a commit that cannot be encoded).
Result<std::string> EncodeFrame(const Frame& frame);

// The commits frame of `topic` from `first` whose commits are `commits`,
// given as their canonical bytes: the bytes EncodeFrame() gives for the same
// CommitsFrame, without encoding each commit again (a commit sent to many
// links is encoded once). REQUIRES: each is a commit's canonical encoding.
Result<std::string> EncodeCommitsFrame(uint64_t topic, uint64_t first,
                                       std::span<const std::string_view> commits);

// Decodes one frame: byte-layer faults keep their own reason, a commit inside
// keeps its commit reason, anything else structural is bad-frame. Numbers
// above 2^53 (which only arrive as float64) are refused as bad-frame.
Result<Frame> DecodeFrame(std::string_view bytes);

}  // namespace aweft::codec
