#include "benchmarks/allocation_counter.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace aweft::bench {
namespace {

std::atomic<uint64_t> allocations{0};

}  // namespace

uint64_t Allocations() { return allocations.load(std::memory_order_relaxed); }

}  // namespace aweft::bench

// new[] and the nothrow forms call this one in libstdc++, so they count too.
void* operator new(std::size_t size) {
  aweft::bench::allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
