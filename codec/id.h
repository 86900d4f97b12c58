#pragma once

#include <string>
#include <string_view>

#include "codec/result.h"
#include "codec/value.h"

namespace aweft::codec {

// The 16-character unpadded base64url text form of an id.
std::string IdText(const Id& id);

// Parses the text form; refuses anything else with invalid-id.
Result<Id> IdFromText(std::string_view text);

// Takes exactly 12 bytes; refuses any other length with invalid-id.
Result<Id> IdFromBytes(std::string_view bytes);

// Lowercase hex of `bytes`.
std::string Hex(std::string_view bytes);

// Parses hex (either case, even length); refuses anything else with
// invalid-hex.
Result<std::string> FromHex(std::string_view hex);

}  // namespace aweft::codec
