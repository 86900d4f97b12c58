#!/usr/bin/env bash
# Starts three aweft-node processes on loopback as the peers of one cluster,
# as docker-compose.yml does in containers (docs/node.md "Peers"): each names
# all three (--peer), keeps every document (cluster.replicas = 3) and orders
# those that rank it first. Prints their URLs and runs until Ctrl-C or
# SIGTERM, then stops all three (each syncs its store and exits) and exits 0.
# If a node exits on its own, the others are stopped and the script exits 1.
#   scripts/cluster.sh DATA_DIR [BASE_PORT]
# Node i listens on ws://127.0.0.1:BASE_PORT+i/ (default 7520, 7521, 7522),
# serves admin on BASE_PORT+100+i, keeps its data in DATA_DIR/node-X and logs
# to DATA_DIR/node-X.log. Loopback needs no tokens. The binary is $AWEFT_NODE,
# else ${AWEFT_BUILD_DIR:-build}/node/aweft-node (scripts/build.sh makes it).
set -euo pipefail
data="${1:?usage: scripts/cluster.sh DATA_DIR [BASE_PORT]}"
base="${2:-7520}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${AWEFT_BUILD_DIR:-build}"
[[ "$build" = /* ]] || build="$root/$build"
node="${AWEFT_NODE:-$build/node/aweft-node}"
if [ ! -x "$node" ]; then
  echo "cluster: no aweft-node at $node; build it with scripts/build.sh" >&2
  exit 2
fi
mkdir -p "$data"
data="$(cd "$data" && pwd)"

names=(node-a node-b node-c)
pids=()
stop() {
  trap - INT TERM EXIT
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap 'echo "cluster: stopping"; stop; exit 0' INT TERM
trap stop EXIT

peers=()
for i in 0 1 2; do peers+=(--peer "ws://127.0.0.1:$((base + i))/"); done
for i in 0 1 2; do
  name="${names[$i]}" port=$((base + i)) log="$data/${names[$i]}.log"
  args=(--data "$data/$name" --listen "127.0.0.1:$port" --admin "127.0.0.1:$((base + 100 + i))"
        --node-id "$name" "${peers[@]}" --set cluster.replicas=3)
  # In a session of its own, so that Ctrl-C reaches only this script, which
  # then sends each node one SIGTERM (a second signal would cut its shutdown).
  : >"$log"
  setsid "$node" "${args[@]}" >"$log" 2>&1 &
  pids+=("$!")
  for _ in $(seq 100); do
    grep -q ' listening ws://' "$log" && break
    if ! kill -0 "${pids[$i]}" 2>/dev/null; then break; fi
    sleep 0.1
  done
  if ! grep -q ' listening ws://' "$log"; then
    echo "cluster: $name did not start; its log ($log):" >&2
    cat "$log" >&2
    exit 1
  fi
  echo "$name  ws://127.0.0.1:$port/  admin http://127.0.0.1:$((base + 100 + i))/  log $log"
done
echo "cluster: running, data in $data; Ctrl-C stops all three"

# Returns when a node exits, or at once on a signal (the trap then runs).
wait -n "${pids[@]}" || true
echo "cluster: a node exited; stopping the others (see the logs)" >&2
exit 1
