#!/usr/bin/env bash
# A chain of nodes under load: node 1 takes the writes, each next node has the
# one before as its upstream, and the readers are on the last, so every
# delivery crosses every link (docs/benchmarks.md). "durable" is node 1's
# confirmation; the CPU and memory printed are the last node's. Needs a build with
# benchmarks (scripts/build.sh); BUILD names it (default build).
#   benchmarks/chain.sh [NODES CLIENTS WRITERS RATE SECONDS [DURABILITY]]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${BUILD:-build}"
nodes="${1:-3}" clients="${2:-100}" writers="${3:-1}" rate="${4:-500}" seconds="${5:-8}"
durability="${6:-sync}"
root=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait || true; rm -rf "$root"' EXIT
upstream=() urls=()
for n in $(seq "$nodes"); do
  mkdir "$root/$n"
  "$build/node/aweft-node" --data "$root/$n" --listen 127.0.0.1:0 --admin off --log-level warn \
    --durability "$durability" "${upstream[@]}" >"$root/$n.out" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do grep -q listening "$root/$n.out" && break; sleep 0.1; done
  url=$(sed -n 's/.* listening \(ws:[^ ]*\).*/\1/p' "$root/$n.out")
  [ -n "$url" ] || { echo "chain.sh: node $n did not start:"; cat "$root/$n.out"; exit 1; }
  urls+=("$url")
  upstream=(--upstream "$url")
done
echo "== chain of $nodes nodes: $clients clients ($writers writers on node 1, readers on node $nodes), $rate commits/s, ${seconds}s, $durability"
"$build/benchmarks/aweft-bench" --url "${urls[0]}" --read-url "${urls[$((nodes - 1))]}" \
  --clients "$clients" --writers "$writers" --rate "$rate" --duration "$seconds" --light \
  --node-pid "${pids[$((nodes - 1))]}"
