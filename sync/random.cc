#include "sync/random.h"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <system_error>

namespace aweft::sync {
namespace {

constexpr size_t kPoolSize = 4096;

struct Pool {
  std::array<uint8_t, kPoolSize> bytes;
  size_t used = kPoolSize;  // Empty until first use.

  void Refill() {
    size_t filled = 0;
    while (filled < bytes.size()) {
      ssize_t n = getrandom(bytes.data() + filled, bytes.size() - filled, 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw std::system_error(errno, std::generic_category(), "getrandom");
      }
      filled += static_cast<size_t>(n);
    }
    used = 0;
  }
};

thread_local Pool pool;

}  // namespace

void RandomBytes(uint8_t* out, size_t n) {
  while (n > 0) {
    if (pool.used == kPoolSize) pool.Refill();
    size_t take = std::min(n, kPoolSize - pool.used);
    std::memcpy(out, pool.bytes.data() + pool.used, take);
    pool.used += take;
    out += take;
    n -= take;
  }
}

codec::Id MintId() {
  codec::Id id;
  RandomBytes(id.bytes.data(), id.bytes.size());
  return id;
}

}  // namespace aweft::sync
