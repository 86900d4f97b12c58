#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

// Doubles for the exactness tests of every JSON path (codec/json.h).
namespace aweft::testing {

// How many doubles a sweep through a JSON path sends: a million, a fiftieth
// of that under a sanitizer (the plain suite runs the million).
#ifdef AWEFT_SANITIZED
inline constexpr size_t kSweepDoubles = 20'000;
#else
inline constexpr size_t kSweepDoubles = 1'000'000;
#endif

// The seed of a random sweep: $AWEFT_SEED when set (to replay a failure),
// else a fresh one. Tests print it with INFO, so a failure names it.
inline uint64_t SweepSeed() {
  if (const char* seed = std::getenv("AWEFT_SEED")) return std::stoull(seed);
  return std::random_device{}();
}

// `count` finite doubles: first the edges (±0, the smallest and largest
// subnormals, the smallest normal, the largest, 1, 0.1, whole numbers on
// both sides of ±2^53 and 2^63), then uniformly random bit patterns, so that
// every exponent, subnormals included, is as likely as any other; a
// non-finite pattern is drawn again.
inline std::vector<double> RandomDoubles(size_t count, uint64_t seed) {
  using limits = std::numeric_limits<double>;
  std::vector<double> out = {0.0,
                             -0.0,
                             limits::denorm_min(),
                             -limits::denorm_min(),
                             std::bit_cast<double>(uint64_t{0x000fffffffffffff}),
                             limits::min(),
                             limits::max(),
                             limits::lowest(),
                             1.0,
                             0.1,
                             -1.5095366070022817e+241,
                             9007199254740992.0,
                             9007199254740994.0,
                             -9007199254740992.0,
                             9223372036854775808.0,
                             -9223372036854775808.0,
                             18446744073709551616.0};
  out.resize(std::min(out.size(), count));
  std::mt19937_64 random(seed);
  while (out.size() < count) {
    const double d = std::bit_cast<double>(random());
    if (std::isfinite(d)) out.push_back(d);
  }
  return out;
}

// The bits a double keeps in the model: -0 is 0 there (spec §6.2).
inline uint64_t ModelBits(double d) { return std::bit_cast<uint64_t>(d == 0 ? 0.0 : d); }

}  // namespace aweft::testing
