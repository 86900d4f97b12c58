#!/usr/bin/env bash
# The node at --threads 1, 2 and 3 (THREADS overrides the list) under the same
# load, one after the other in one run (benchmarks/RESULTS.md "Threads"). Needs a build with
# benchmarks (scripts/build.sh); BUILD names it (default build), DURABILITY
# the node's storage.durability (default sync).
#   benchmarks/threads.sh [AWEFT-BENCH FLAGS...]
# The flags go to aweft-bench as they are (default: --clients 300 --writers 3
# --rate 1500 --duration 8 --light); --url and --node-pid are added here.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${BUILD:-build}"
durability="${DURABILITY:-sync}"
flags=("$@")
((${#flags[@]})) || flags=(--clients 300 --writers 3 --rate 1500 --duration 8 --light)
for threads in ${THREADS:-1 2 3}; do
  data=$(mktemp -d)
  "$build/node/aweft-node" --data "$data" --listen 127.0.0.1:0 --admin off --log-level warn \
    --durability "$durability" --threads "$threads" >"$data/out" 2>&1 &
  pid=$!
  for _ in $(seq 100); do grep -q listening "$data/out" && break; sleep 0.1; done
  url=$(sed -n 's/.* listening \(ws:[^ ]*\).*/\1/p' "$data/out")
  [ -n "$url" ] || { echo "threads.sh: the node did not start:"; cat "$data/out"; exit 1; }
  echo "== --threads $threads, durability $durability: ${flags[*]}"
  "$build/benchmarks/aweft-bench" --url "$url" --node-pid "$pid" "${flags[@]}"
  kill "$pid"; wait "$pid" || true
  rm -rf "$data"
done
