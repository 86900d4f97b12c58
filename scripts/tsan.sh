#!/usr/bin/env bash
# Builds what runs on more than one thread with ThreadSanitizer (AWEFT_TSAN,
# clang at -O0, where sync/websocket.cc compiles in 64 s, not 145 s as at -O1)
# into build-tsan (or $AWEFT_TSAN_BUILD_DIR) and runs the tests that cross
# threads: the store's batches written and their snapshots built on another
# thread, a link across threads, and the node process suite at --threads 3
# (docs/reliability.md). A data race ends the
# process it is in, so the test fails. Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
build="${AWEFT_TSAN_BUILD_DIR:-build-tsan}"
cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O0 -gline-tables-only" -DAWEFT_TESTS=ON -DAWEFT_BENCHMARKS=OFF \
  -DAWEFT_TSAN=ON >/dev/null
cmake --build "$build" --parallel "$(nproc)" --target storage_tests node_process_tests node_shard_tests aweft-node
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp"
ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" --timeout 900 \
  -R 'thread' "$@"
