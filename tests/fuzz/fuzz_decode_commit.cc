// Fuzzes DecodeCommit. Beyond "no crash, no sanitizer report", it checks two
// promises of codec/commit.h: an accepted commit re-encodes to exactly the
// input (there is one canonical spelling), and ValidateCommit gives the same
// verdict and the same reason as DecodeCommit.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "codec/commit.h"
#include "codec/id.h"
#include "tests/fuzz/check.h"

namespace {

namespace codec = aweft::codec;
using aweft::fuzz::CheckRefusal;
using aweft::fuzz::Fail;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  codec::Result<codec::Commit> commit = codec::DecodeCommit(input);
  codec::Result<void> valid = codec::ValidateCommit(input);

  if (commit.has_value() != valid.has_value()) {
    Fail(input, "DecodeCommit and ValidateCommit disagree",
         commit ? "ValidateCommit: " + valid.error().ToString()
                : "DecodeCommit: " + commit.error().ToString());
  }
  if (!commit) {
    if (commit.error().reason != valid.error().reason) {
      Fail(input, "DecodeCommit and ValidateCommit refuse for different reasons",
           commit.error().ToString() + " vs " + valid.error().ToString());
    }
    CheckRefusal(input, commit.error());
    return 0;
  }
  codec::Result<std::string> encoded = codec::EncodeCommit(*commit);
  if (!encoded) {
    Fail(input, "an accepted commit does not encode", encoded.error().ToString());
  }
  if (*encoded != input) {
    Fail(input, "an accepted commit re-encodes differently", "re-encoded: " + codec::Hex(*encoded));
  }
  return 0;
}
