#pragma once

// Counts every allocation made through operator new in the test binary, so a
// test can show that a call made none. allocations.cc replaces the global
// operator new and delete; it is its own file so no caller can inline them.
namespace aweft::codec::testing {

long AllocationCount();

}  // namespace aweft::codec::testing
