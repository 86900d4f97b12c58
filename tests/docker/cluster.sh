#!/usr/bin/env bash
# The two ways to run three peers (README "Cluster"): scripts/cluster.sh starts
# three local processes that link up as peers, become ready, and stop cleanly
# on SIGTERM; docker-compose.yml is checked with `docker compose config` where
# docker compose is present (skipped, said, where it is not).
#   tests/docker/cluster.sh AWEFT_NODE AWEFTCTL
set -euo pipefail
node="$1" ctl="$2"
root="$(cd "$(dirname "$0")/../.." && pwd)"
data="$(mktemp -d)"
base=$((20000 + RANDOM % 20000))
AWEFT_NODE="$node" setsid "$root/scripts/cluster.sh" "$data" "$base" >"$data/out" 2>&1 &
script=$!
trap 'kill -TERM "$script" 2>/dev/null || true; wait "$script" 2>/dev/null || true; rm -rf "$data"' EXIT
for _ in $(seq 200); do
  grep -q "cluster: running" "$data/out" && break
  sleep 0.1
done
for i in 0 1 2; do
  admin="http://127.0.0.1:$((base + 100 + i))"
  for _ in $(seq 100); do
    "$ctl" health --node "$admin" >/dev/null 2>&1 && break
    sleep 0.2
  done
  "$ctl" health --node "$admin"
done
# Each sees the two others linked (they answer hello as home once caught up).
for _ in $(seq 100); do
  linked=$("$ctl" cluster --node "http://127.0.0.1:$((base + 100))" | grep -c $'\tlinked for' || true)
  [ "$linked" = 2 ] && break
  sleep 0.2
done
"$ctl" cluster --node "http://127.0.0.1:$((base + 100))"
[ "$linked" = 2 ] || { echo "node-a does not see both peers linked" >&2; cat "$data/out" >&2; exit 1; }
kill -TERM "$script"
status=0
wait "$script" || status=$?
trap 'rm -rf "$data"' EXIT
[ "$status" = 0 ] || { echo "scripts/cluster.sh exited $status on SIGTERM" >&2; exit 1; }
echo "scripts/cluster.sh: three peers linked, ready, stopped cleanly"

if docker compose version >/dev/null 2>&1; then
  AWEFT_TOKEN=check-only-secret docker compose -f "$root/docker-compose.yml" config -q
  echo "docker-compose.yml: docker compose config passes"
else
  echo "docker-compose.yml: not checked, docker compose is not installed here"
fi
