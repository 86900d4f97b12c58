#!/usr/bin/env bash
# Installs what building and running aweft-node needs (scripts/deps.sh run:
# no test tools), builds it, and starts it with its embedded defaults.
# Arguments go to aweft-node; it runs where you stand, so a relative --data
# or --config is yours, and ./aweft-data is made here.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/deps.sh" run
build="${AWEFT_BUILD_DIR:-build}"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
AWEFT_BUILD_DIR="$build" "$root/scripts/build.sh" -DAWEFT_TESTS=OFF -DAWEFT_BENCHMARKS=OFF
exec "$build/node/aweft-node" "$@"
