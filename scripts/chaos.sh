#!/usr/bin/env bash
# Runs the chaos test (tests/node/node_chaos_test.cc) for SECONDS (default 60,
# at most 3600) with SEED (default 9): a three-node chain under steady writes,
# nodes killed with SIGKILL and restarted, links cut and restored, then every
# node and client must converge and keep every write confirmed durable. The
# same seed replays the same plan. Builds node_process_tests first, in
# build-chaos (or $AWEFT_CHAOS_BUILD_DIR), with one job unless
# AWEFT_BUILD_JOBS says more. Ends with the run's figures; exits non-zero when
# the test fails. ctest runs the same test for 10 s.
#   scripts/chaos.sh [SECONDS [SEED]]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
seed="${2:-9}"
[[ "$seconds" =~ ^[0-9]+$ && "$seconds" -ge 1 && "$seconds" -le 3600 ]] ||
  { echo "chaos: SECONDS must be 1 to 3600, not '$seconds'" >&2; exit 2; }
[[ "$seed" =~ ^[0-9]+$ ]] || { echo "chaos: SEED must be a number, not '$seed'" >&2; exit 2; }
build="${AWEFT_CHAOS_BUILD_DIR:-build-chaos}"

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${AWEFT_BUILD_TYPE:-RelWithDebInfo}" \
  -DAWEFT_TESTS=ON >/dev/null
cmake --build "$build" --parallel "${AWEFT_BUILD_JOBS:-1}" --target node_process_tests \
  >"$build/chaos-build.log" 2>&1 || { tail -n 40 "$build/chaos-build.log" >&2; exit 1; }

# The run itself (steps stretch when starting nodes), the settling (30 s at
# most) and the setup, with room.
limit=$((seconds * 3 + 180))
echo "chaos: ${seconds}s with seed $seed (log: $build/chaos.log)"
status=0
AWEFT_CHAOS_SECONDS="$seconds" AWEFT_CHAOS_SEED="$seed" timeout "$limit" \
  "$build/tests/node/node_process_tests" "[chaos]" >"$build/chaos.log" 2>&1 || status=$?
grep '^chaos: ' "$build/chaos.log" || true
if ((status != 0)); then
  ((status == 124)) && echo "chaos: timed out after ${limit}s" >&2
  echo "chaos: FAILED (seed $seed, ${seconds}s); from $build/chaos.log:" >&2
  grep -v '^chaos: ' "$build/chaos.log" | tail -n 60 >&2
  exit 1
fi
echo "chaos: passed"
