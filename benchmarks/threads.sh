#!/usr/bin/env bash
# The node at --threads 1 and --threads 2 under the same load, one after the
# other in one run (benchmarks/RESULTS.md "Threads"). Needs a build with
# benchmarks (scripts/build.sh); BUILD names it (default build).
#   benchmarks/threads.sh [CLIENTS WRITERS RATE SECONDS [DURABILITY]]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${BUILD:-build}"
clients="${1:-300}" writers="${2:-3}" rate="${3:-1500}" seconds="${4:-8}" durability="${5:-sync}"
for threads in 1 2; do
  data=$(mktemp -d)
  "$build/node/aweft-node" --data "$data" --listen 127.0.0.1:0 --admin off --log-level warn \
    --durability "$durability" --threads "$threads" >"$data/out" 2>&1 &
  pid=$!
  for _ in $(seq 100); do grep -q listening "$data/out" && break; sleep 0.1; done
  url=$(sed -n 's/.* listening \(ws:[^ ]*\).*/\1/p' "$data/out")
  echo "== --threads $threads: $clients clients, $writers writers, $rate commits/s, ${seconds}s, $durability"
  "$build/benchmarks/aweft-bench" --url "$url" --clients "$clients" --writers "$writers" \
    --rate "$rate" --duration "$seconds" --light --node-pid "$pid"
  kill "$pid"; wait "$pid" || true
  rm -rf "$data"
done
