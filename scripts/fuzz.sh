#!/usr/bin/env bash
# Fuzzes with libFuzzer: builds the targets, seeds each target's corpus from
# the conformance fixtures and the inputs kept in
# tests/fuzz/regressions/<target>/, and runs each target for SECONDS (default
# 60), one after the other. The build: a clang one in build-fuzz (or
# $AWEFT_FUZZ_BUILD_DIR) against optimized, instrumented copies of the
# libraries; with --ci, 20 s each and the targets of scripts/sanitize.sh's
# build (-O0, no second build of the project). Ends with one line per target
# (runs, corpus size). Exits non-zero when a target crashes or breaks one of
# its checks; the failing input is left in <build>/artifacts/<target>/, and
# belongs in tests/fuzz/regressions/<target>/ once the bug is fixed.
# Without --ci it also seeds from tests/fuzz/corpus/<target>/, the corpus
# long runs kept; with AWEFT_FUZZ_KEEP=1 it merges what this run found into
# it (libFuzzer -merge=1: only inputs that add coverage).
#   scripts/fuzz.sh [--ci] [SECONDS [TARGET...]]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60
ci=false
if [[ "${1:-}" == --ci ]]; then
  seconds=20
  ci=true
  shift
fi
seconds="${1:-$seconds}"
shift || true
targets=(fuzz_decode_commit fuzz_decode_frame fuzz_link_frames fuzz_requests_text
  fuzz_admin_http)
if (($# > 0)); then targets=("$@"); fi

if $ci; then
  build="${AWEFT_SANITIZE_BUILD_DIR:-build-asan}"
  scripts/sanitize.sh --build-only
else
  build="${AWEFT_FUZZ_BUILD_DIR:-build-fuzz}"
  cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAWEFT_FUZZ=ON -DAWEFT_TESTS=OFF \
    -DAWEFT_BENCHMARKS=OFF >/dev/null
  cmake --build "$build" --parallel "${AWEFT_BUILD_JOBS:-$(nproc)}" --target "${targets[@]}" \
    >"$build/build.log" 2>&1 || { tail -n 40 "$build/build.log" >&2; exit 1; }
fi

# The hex strings the JSON files $2... give as "bytes" or "hex", one a line.
fixture_hex() {
  grep -ho '"\(bytes\|hex\)": "[0-9a-f]*"' "$@" | sed 's/.*: "\(.*\)"$/\1/' | sort -u
}
# Writes stdin (hex, one input a line) to directory $1 as binary files,
# each named by its content. With $2 = frames, each line is frames separated
# by spaces, written as fuzz_link_frames reads them: a 2-byte little-endian
# length before each.
write_seeds() {
  local dir="$1" form="${2:-}" hex
  mkdir -p "$dir"
  while read -r hex; do
    perl -e 'my $form = shift;
      for (@ARGV) { my $b = pack("H*", $_);
        print $form eq "frames" ? pack("v", length $b) . $b : $b }' "$form" $hex \
      >"$dir/seed-$(printf '%s' "$hex" | sha1sum | cut -c1-16)"
  done
}
fixtures=tests/conformance
corpus="$build/corpus"
# Commits: every commit fixture (valid and invalid) and the commits that
# frames carry. Value byte strings and root ids come along; they are cheap.
fixture_hex "$fixtures"/fixtures/*.json "$fixtures"/fixtures/invalid/*.json \
  "$fixtures"/frames/*.json | write_seeds "$corpus/fuzz_decode_commit"
fixture_hex "$fixtures"/frames/*.json | write_seeds "$corpus/fuzz_decode_frame"
# Link frames: each fixture frame after the fixture open (which pairs
# "board:42"), and all the valid ones in a row.
open_hex=$(fixture_hex "$fixtures"/frames/001-open.json | head -n 1)
{
  for file in "$fixtures"/frames/*.json; do
    echo "$open_hex $(grep -o '"bytes": "[0-9a-f]*"' "$file" | sed 's/.*: "\(.*\)"$/\1/')"
  done
  grep -ho '"bytes": "[0-9a-f]*"' "$fixtures"/frames/[0-9]*.json | sed 's/.*: "\(.*\)"$/\1/' |
    tr '\n' ' '
  echo
} | write_seeds "$corpus/fuzz_link_frames" frames
for target in "${targets[@]}"; do
  mkdir -p "$corpus/$target"
  cp tests/fuzz/regressions/"$target"/* "$corpus/$target"/ 2>/dev/null || true
  if ! $ci; then cp tests/fuzz/corpus/"$target"/* "$corpus/$target"/ 2>/dev/null || true; fi
done

status=0
summary=()
for target in "${targets[@]}"; do
  artifacts="$build/artifacts/$target/"
  log="$build/$target.log"
  dict=()
  [[ -f tests/fuzz/$target.dict ]] && dict=(-dict="tests/fuzz/$target.dict")
  mkdir -p "$artifacts"
  echo "fuzz: $target for ${seconds}s from $(ls "$corpus/$target" | wc -l) corpus files"
  if "$build/tests/fuzz/$target" -max_total_time="$seconds" -max_len=4096 \
    -timeout=10 -print_final_stats=1 -artifact_prefix="$artifacts" "${dict[@]}" \
    "$corpus/$target" >"$log" 2>&1; then
    result=ok
  else
    status=1
    result="FAILED (see $log and $artifacts)"
    # The check or sanitizer that failed, the top of its stack, the input.
    echo "fuzz: $target FAILED; from $log:" >&2
    grep -E -m 20 -e 'fuzz check failed|^  [a-z]|ERROR|runtime error|SUMMARY' \
      -e '^    #[0-9] |Test unit written' "$log" >&2 || tail -n 20 "$log" >&2
  fi
  # libFuzzer's own corpus (inputs it keeps for coverage, and their size),
  # not the directory, which also holds what they superseded.
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  kept=$(grep -E '^#[0-9]+' "$log" | tail -n 1 |
    sed -n 's/.* corp: \([0-9]*\)\/\([^ ]*\).*/\1 inputs (\2)/p')
  summary+=("$target: ${runs:-?} runs in ${seconds}s, corpus ${kept:-?}, $result")
  if [[ "${AWEFT_FUZZ_KEEP:-}" == 1 ]] && ! $ci; then
    mkdir -p tests/fuzz/corpus/"$target"
    "$build/tests/fuzz/$target" -merge=1 -max_len=4096 tests/fuzz/corpus/"$target" \
      "$corpus/$target" >"$build/$target.merge.log" 2>&1 || status=1
  fi
done
printf 'fuzz: %s\n' "${summary[@]}"
exit "$status"
