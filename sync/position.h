#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "codec/result.h"

namespace aweft::sync {

// Returns a new array position strictly between `lower` and `upper` (an
// absent bound is open). Positions are made in the reference's layout
// (behaviour.md §1.11): an integer part (a count byte, base-254 digits stored
// as digit+1, three random bytes), then fractional levels of one digit byte
// and three random bytes. So a TypeScript client can extend them, and two
// replicas inserting at one spot get different keys. Bounds in another
// layout still get a valid position between them.
// Refuses invalid-position when lower >= upper or a bound is not a valid
// position.
codec::Result<std::string> PositionBetween(std::optional<std::string_view> lower,
                                           std::optional<std::string_view> upper);

}  // namespace aweft::sync
