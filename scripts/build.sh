#!/usr/bin/env bash
# Configures and builds the project into ./build (or $AWEFT_BUILD_DIR).
# Extra arguments go to cmake's configure step, e.g. -DAWEFT_SANITIZE=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${AWEFT_BUILD_DIR:-build}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${AWEFT_BUILD_TYPE:-RelWithDebInfo}" "$@"
cmake --build "$build" --parallel "$(nproc)"
