// Fuzzes DecodeFrame. Beyond "no crash, no sanitizer report", it checks that
// an accepted frame re-encodes to exactly the input.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "codec/frame.h"
#include "codec/id.h"
#include "tests/fuzz/check.h"

namespace {

namespace codec = aweft::codec;
using aweft::fuzz::CheckRefusal;
using aweft::fuzz::Fail;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  codec::Result<codec::Frame> frame = codec::DecodeFrame(input);
  if (!frame) {
    CheckRefusal(input, frame.error());
    return 0;
  }
  codec::Result<std::string> encoded = codec::EncodeFrame(*frame);
  if (!encoded) {
    Fail(input, "an accepted frame does not encode", encoded.error().ToString());
  }
  if (*encoded != input) {
    Fail(input, "an accepted frame re-encodes differently", "re-encoded: " + codec::Hex(*encoded));
  }
  return 0;
}
