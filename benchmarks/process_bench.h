#pragma once

#include <chrono>
#include <cstdlib>
#include <string>

// What the benchmarks that drive aweft-node processes share: milliseconds of
// a duration, and an integer flag's value.
namespace aweft::bench {

using Clock = std::chrono::steady_clock;

inline double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// The value after `flag` in argv, or `fallback`.
inline int Arg(int argc, char** argv, const std::string& flag, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == flag) return std::atoi(argv[i + 1]);
  }
  return fallback;
}

}  // namespace aweft::bench
