#pragma once

#include <cstdint>

namespace aweft::bench {

// How many times the global operator new has been called in this process.
// Linking allocation_counter.cc replaces operator new to count; the count is
// kept apart from the benchmarks so the compiler cannot inline the
// replacement into them.
uint64_t Allocations();

}  // namespace aweft::bench
