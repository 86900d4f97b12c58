#!/usr/bin/env bash
# Builds the whole project with AddressSanitizer and UndefinedBehaviorSanitizer
# (AWEFT_SANITIZE) into build-asan (or $AWEFT_SANITIZE_BUILD_DIR) and runs
# every test suite there but the node process suite's second pass at
# --threads 3 ("threads=3:", which scripts/tsan.sh runs under ThreadSanitizer,
# and scripts/test.sh unsanitized). A leak, an out-of-bounds access or undefined
# behaviour fails the test it happens in. The build holds the libFuzzer
# targets too (AWEFT_FUZZ), for scripts/fuzz.sh --ci. Extra arguments go to
# ctest, e.g.
#   scripts/sanitize.sh -R storage
# With --build-only as the first argument, it builds and runs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
build="${AWEFT_SANITIZE_BUILD_DIR:-build-asan}"
# clang at -O0: the sanitized build takes 4.5 minutes on two cores, where GCC
# at -O2 took over 20 (Beast's templates in sync/websocket.cc); the tests are
# bound by sockets and the disk, not by the code's speed.
AWEFT_BUILD_DIR="$build" AWEFT_BUILD_TYPE=Debug scripts/build.sh -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS_DEBUG="-O0 -gline-tables-only" -DAWEFT_TESTS=ON -DAWEFT_BENCHMARKS=OFF \
  -DAWEFT_SANITIZE=ON -DAWEFT_FUZZ=ON
if [[ "${1:-}" == --build-only ]]; then exit 0; fi
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" --timeout 900 \
  -E '^threads=3:' "$@"
