#!/usr/bin/env bash
# Formats every C++ source of the project with its .clang-format. With
# --check it changes nothing, and fails naming each file that differs (the
# `formatted` test runs it so).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(find admin benchmarks codec examples node storage sync tests \
  \( -name '*.h' -o -name '*.cc' \) -not -path 'tests/conformance/*' | sort)
if [ "${1:-}" = "--check" ]; then
  clang-format --dry-run --Werror "${files[@]}"
else
  clang-format -i "${files[@]}"
fi
