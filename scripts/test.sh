#!/usr/bin/env bash
# Installs what the project needs, builds it, and runs every test suite.
# AWEFT_CTEST_EXCLUDE, if set, is a regular expression of test names to leave
# out (ctest -E): .ci/run leaves out the node process suite's second pass at
# --threads 3 here, since scripts/tsan.sh runs that pass under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh -DAWEFT_TESTS=ON -DAWEFT_BENCHMARKS=ON "$@"
build="${AWEFT_BUILD_DIR:-build}"
ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" --timeout 600 \
  ${AWEFT_CTEST_EXCLUDE:+-E "$AWEFT_CTEST_EXCLUDE"}
