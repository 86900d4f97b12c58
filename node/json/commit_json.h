#pragma once

#include <boost/json/value.hpp>
#include <string>

#include "codec/frame.h"
#include "codec/refusal.h"
#include "codec/result.h"
#include "codec/value.h"

// Commits, frames and refusals as JSON, in exactly the shapes of the
// conformance fixtures (spec/README.md §2-3, §6.1). aweftctl speaks this, and
// so will the admin endpoint.
namespace aweft::node {

// How ids are written. Commit fixtures use the 16-character base64url text
// form; frame fixtures write every id, and every byte string, as hex.
enum class IdForm { kText, kHex };

// `{"deltas":[...],"tag"?:hex}`. Whole numbers within the int64 range become
// JSON integers, every other number a double.
boost::json::value CommitToJson(const codec::Commit& commit, IdForm form);

// One slot value as CommitToJson writes it: null, true/false, a number,
// text, {"bytes": hex} or {"ref": id, "kind": ..., "edge": ...}.
boost::json::value ValueToJson(const codec::Value& value, IdForm form);

// Reads the shape CommitToJson writes. Refuses unknown keys and wrong types
// with the matching codec reason (invalid-commit, invalid-delta, invalid-ref,
// invalid-value, invalid-id, invalid-hex, unknown-*-kind, ...). The result is
// not checked against the format: EncodeCommit does that.
codec::Result<codec::Commit> CommitFromJson(const boost::json::value& json, IdForm form);

// The frame object of a frame fixture: `{"kind":"open","topic":1,...}`.
boost::json::value FrameToJson(const codec::Frame& frame);

// Reads the shape FrameToJson writes. A structural fault is bad-frame; a
// commit inside keeps the reason CommitFromJson gives.
codec::Result<codec::Frame> FrameFromJson(const boost::json::value& json);

// `{"reason":...,"message":...,"fix":...}`; `message` is the detail alone.
boost::json::value RefusalToJson(const codec::Refusal& refusal);

}  // namespace aweft::node
