#pragma once

#include <string>
#include <string_view>

#include "codec/result.h"
#include "codec/value.h"

namespace aweft::codec {

// Encodes `commit` to its one canonical spelling (format spec §6), sorting
// the deltas whatever order they are given in. Refuses what has no encoding:
// empty-commit, duplicate-slot, invalid-position, invalid-id, invalid-tag,
// missing-value, unexpected-value, non-finite-float, lone-surrogate,
// invalid-utf8.
Result<std::string> EncodeCommit(const Commit& commit);

// As above, appending to `out`; on refusal `out` is left as it was.
Result<void> EncodeCommit(const Commit& commit, std::string& out);

// Decodes one commit, refusing anything an encoder would not have written
// with the decode reason spec §7 names (never an apply-stage reason).
Result<Commit> DecodeCommit(std::string_view bytes);

// Checks that `bytes` are one valid commit without building it: the same
// refusals as DecodeCommit, and no heap allocation.
Result<void> ValidateCommit(std::string_view bytes);

}  // namespace aweft::codec
