#pragma once

#include <cstddef>
#include <cstdint>

#include "codec/value.h"

namespace aweft::sync {

// Fills `out` with bytes from the kernel's CSPRNG (getrandom), drawn from a
// per-thread pool refilled 4,096 bytes at a time. Never seeded, never
// replaceable (spec identity rules). Throws std::system_error if the kernel
// refuses.
void RandomBytes(uint8_t* out, size_t n);

// A fresh 12-byte id: 341 ids per refill of the pool (design 086).
codec::Id MintId();

}  // namespace aweft::sync
