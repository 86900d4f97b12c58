#!/usr/bin/env bash
# Fuzzes the codec's decoders with libFuzzer: configures a clang build in
# build-fuzz (or $AWEFT_FUZZ_BUILD_DIR), seeds each target's corpus with the
# conformance fixtures' bytes, and runs each target for SECONDS (default 60).
# Exits non-zero when a target crashes or breaks one of its checks; the
# failing input is left in <build>/artifacts/<target>/.
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
build="${AWEFT_FUZZ_BUILD_DIR:-build-fuzz}"
targets=(fuzz_decode_commit fuzz_decode_frame)

cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAWEFT_FUZZ=ON -DAWEFT_TESTS=OFF \
  -DAWEFT_BENCHMARKS=OFF >/dev/null
cmake --build "$build" --target "${targets[@]}"

# Writes each hex string that the JSON files give as "bytes" or "hex" to
# one binary seed file in directory $1, named by its content.
seed() {
  local dir="$1" hex
  shift
  mkdir -p "$dir"
  grep -ho '"\(bytes\|hex\)": "[0-9a-f]*"' "$@" | sed 's/.*: "\(.*\)"$/\1/' |
    sort -u | while read -r hex; do
      perl -e 'print pack("H*", $ARGV[0])' "$hex" \
        >"$dir/seed-$(printf '%s' "$hex" | sha1sum | cut -c1-16)"
    done
}
fixtures=tests/conformance
# Commits: every commit fixture (valid and invalid) and the commits that
# frames carry. Value byte strings and root ids come along; they are cheap.
seed "$build/corpus/fuzz_decode_commit" "$fixtures"/fixtures/*.json \
  "$fixtures"/fixtures/invalid/*.json "$fixtures"/frames/*.json
seed "$build/corpus/fuzz_decode_frame" "$fixtures"/frames/*.json

status=0
for target in "${targets[@]}"; do
  corpus="$build/corpus/$target"
  artifacts="$build/artifacts/$target/"
  log="$build/$target.log"
  mkdir -p "$artifacts"
  echo "fuzz: $target for ${seconds}s, $(ls "$corpus" | wc -l) corpus files"
  if "$build/tests/fuzz/$target" -max_total_time="$seconds" -max_len=4096 \
    -timeout=10 -print_final_stats=1 -artifact_prefix="$artifacts" \
    "$corpus" >"$log" 2>&1; then
    grep -E '^Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss_mb' "$log" |
      sed "s/^/fuzz: $target: /"
  else
    status=1
    echo "fuzz: $target FAILED; the end of $log:" >&2
    tail -n 40 "$log" >&2
  fi
done
exit "$status"
