#!/usr/bin/env bash
# Installs what the project needs, builds it, and starts aweft-node with its
# embedded defaults. Arguments go to aweft-node.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh -DAWEFT_TESTS=OFF -DAWEFT_BENCHMARKS=OFF
exec "${AWEFT_BUILD_DIR:-build}/node/aweft-node" "$@"
