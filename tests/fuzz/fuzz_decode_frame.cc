// Fuzzes DecodeFrame. Beyond "no crash, no sanitizer report", it checks that
// an accepted frame re-encodes to exactly the input.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "codec/frame.h"
#include "codec/id.h"

namespace {

namespace codec = aweft::codec;

[[noreturn]] void Fail(std::string_view input, const char* what,
                       const std::string& detail) {
  std::fprintf(stderr, "fuzz_decode_frame: %s\n  input: %s\n  %s\n", what,
               codec::Hex(input).c_str(), detail.c_str());
  std::abort();
}

// Every refusal has a reason, a fix and a detail to show (the reference's
// fuzz test asks the same of its decoder).
void CheckRefusal(std::string_view input, const codec::Refusal& refusal) {
  if (codec::Name(refusal.reason).empty() ||
      codec::Fix(refusal.reason).empty() || refusal.message.empty()) {
    Fail(input, "a refusal without a reason, fix or message",
         refusal.ToString());
  }
}

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
    Fail(input, "an accepted frame does not encode",
         encoded.error().ToString());
  }
  if (*encoded != input) {
    Fail(input, "an accepted frame re-encodes differently",
         "re-encoded: " + codec::Hex(*encoded));
  }
  return 0;
}
