// Fuzzes DecodeCommit. Beyond "no crash, no sanitizer report", it checks two
// promises of codec/commit.h: an accepted commit re-encodes to exactly the
// input (there is one canonical spelling), and ValidateCommit gives the same
// verdict and the same reason as DecodeCommit.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "codec/commit.h"
#include "codec/id.h"

namespace {

namespace codec = aweft::codec;

[[noreturn]] void Fail(std::string_view input, const char* what,
                       const std::string& detail) {
  std::fprintf(stderr, "fuzz_decode_commit: %s\n  input: %s\n  %s\n", what,
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
  codec::Result<codec::Commit> commit = codec::DecodeCommit(input);
  codec::Result<void> valid = codec::ValidateCommit(input);

  if (commit.has_value() != valid.has_value()) {
    Fail(input, "DecodeCommit and ValidateCommit disagree",
         commit ? "ValidateCommit: " + valid.error().ToString()
                : "DecodeCommit: " + commit.error().ToString());
  }
  if (!commit) {
    if (commit.error().reason != valid.error().reason) {
      Fail(input,
           "DecodeCommit and ValidateCommit refuse for different reasons",
           commit.error().ToString() + " vs " + valid.error().ToString());
    }
    CheckRefusal(input, commit.error());
    return 0;
  }
  codec::Result<std::string> encoded = codec::EncodeCommit(*commit);
  if (!encoded) {
    Fail(input, "an accepted commit does not encode",
         encoded.error().ToString());
  }
  if (*encoded != input) {
    Fail(input, "an accepted commit re-encodes differently",
         "re-encoded: " + codec::Hex(*encoded));
  }
  return 0;
}
