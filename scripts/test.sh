#!/usr/bin/env bash
# Installs what the project needs, builds it, and runs every test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh -DAWEFT_TESTS=ON -DAWEFT_BENCHMARKS=ON "$@"
build="${AWEFT_BUILD_DIR:-build}"
ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" --timeout 600
