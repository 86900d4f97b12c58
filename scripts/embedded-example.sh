#!/usr/bin/env bash
# Installs a built tree into a temporary prefix, builds examples/embedded
# against it as an outside project would (find_package(aweft)), and runs it.
# Exits non-zero if the install, the example's build or the example fails.
#   scripts/embedded-example.sh [BUILD_DIR] [CMAKE_ARG...]
# BUILD_DIR defaults to ./build ($AWEFT_BUILD_DIR); the CMAKE_ARGs go to the
# example's configure step (ctest passes the compiler and build type).
set -euo pipefail
build="$(realpath "${1:-${AWEFT_BUILD_DIR:-build}}")"
shift || true
cd "$(dirname "$0")/.."
if [ ! -f "$build/cmake_install.cmake" ]; then
  echo "embedded-example: $build is not a configured build; run scripts/build.sh first" >&2
  exit 2
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S examples/embedded -B "$tmp/build" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_COMPILE_WARNING_AS_ERROR=ON "$@" >/dev/null
found="$(sed -n 's/^aweft_DIR:PATH=//p' "$tmp/build/CMakeCache.txt")"
if [ "$found" != "$tmp/prefix/lib/cmake/aweft" ]; then
  echo "embedded-example: found the package in $found, not in the temporary prefix" >&2
  exit 1
fi
cmake --build "$tmp/build"
"$tmp/build/embedded"
