#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "codec/id.h"
#include "codec/refusal.h"

// What every fuzz target does when one of its checks fails: says which, with
// the input in hex, and aborts, so that libFuzzer keeps the input as a crash
// and the replay test fails.
namespace aweft::fuzz {

[[noreturn]] inline void Fail(std::string_view input, std::string_view what,
                              const std::string& detail) {
  std::fprintf(stderr, "fuzz check failed: %.*s\n  input: %s\n  %s\n",
               static_cast<int>(what.size()), what.data(), codec::Hex(input).c_str(),
               detail.c_str());
  std::abort();
}

// Every refusal has a reason, a fix and a detail to show (the reference's
// fuzz test asks the same of its decoder).
inline void CheckRefusal(std::string_view input, const codec::Refusal& refusal) {
  if (codec::Name(refusal.reason).empty() || codec::Fix(refusal.reason).empty() ||
      refusal.message.empty()) {
    Fail(input, "a refusal without a reason, fix or message", refusal.ToString());
  }
}

}  // namespace aweft::fuzz
