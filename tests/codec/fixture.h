#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "codec/cbor.h"
#include "codec/frame.h"
#include "codec/value.h"

// Reading the conformance fixtures (tests/conformance, described in
// spec/README.md §2-6) into codec values. Test code: a malformed fixture
// throws std::runtime_error, which Catch reports.
namespace aweft::codec::testing {

// How a fixture writes ids: commit fixtures use the base64url text form,
// frame fixtures plain hex.
enum class IdForm { kText, kHex };

// The JSON files directly in AWEFT_CONFORMANCE_DIR/`folder` whose names
// start with `prefix` (empty for all), sorted by name.
std::vector<std::string> FixtureFiles(std::string_view folder, std::string_view prefix = "");

// The file's name without its folder, for messages.
std::string BaseName(const std::string& path);

boost::json::value ReadJson(const std::string& path);

// Hex to bytes; throws on bad hex.
std::string Unhex(std::string_view hex);

// A JSON number as IEEE-754 double, however Boost.JSON stored it.
double NumberOf(const boost::json::value& json);

// `{"deltas":[...],"tag"?:hex}` to a Commit, deltas in the order given.
Commit CommitFromJson(const boost::json::value& json, IdForm form);

// A frame fixture's `frame` object to a Frame.
Frame FrameFromJson(const boost::json::value& json);

// Writes a frame fixture's `wire` array with `writer`: numbers, text,
// booleans and null as themselves, {"hex": ...} as a byte string.
void WriteWire(Writer& writer, const boost::json::value& wire);

}  // namespace aweft::codec::testing

namespace aweft::codec::testing {

// A fixture's value (primitive, {"bytes"} or {"ref","kind","edge"}).
Value ValueFromJson(const boost::json::value& json, IdForm form);

}  // namespace aweft::codec::testing
