#!/usr/bin/env bash
# Installs Hocuspocus (pinned, benchmarks/peers/package-lock.json) and runs aweft-bench's
# workloads against it and against aweft-node on this machine, one after the other, then
# prints and saves a markdown table (benchmarks/peers/last-run.md; raw JSON and logs in
# benchmarks/peers/results/). See benchmarks/peers/README.md.
#
#   benchmarks/peers/run.sh [--quick] [--duration S] [--node PATH] [--bench PATH] ...
#   benchmarks/peers/run.sh --help          every flag
#
# Install flags, handled here: --reinstall (npm ci even if the stamp says it is done),
# --no-install (use node_modules as it is).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

install=auto
args=()
for arg in "$@"; do
  case "$arg" in
    --reinstall) install=always ;;
    --no-install) install=never ;;
    *) args+=("$arg") ;;
  esac
done

command -v node >/dev/null || { echo "run.sh: node (20 or later) is needed" >&2; exit 2; }
command -v npm >/dev/null || { echo "run.sh: npm is needed" >&2; exit 2; }

# npm ci builds sqlite3 from source when no prebuilt binary can be fetched: it needs make,
# a C++ compiler and Node's headers. Point node-gyp at the installed headers, if any, so it
# does not try to download them.
if [[ -z "${npm_config_nodedir:-}" ]]; then
  nodedir="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
  [[ -f "$nodedir/include/node/node.h" ]] && export npm_config_nodedir="$nodedir"
fi

stamp="node_modules/.aweft-peers-installed"
want="$(sha256sum package-lock.json | cut -d' ' -f1) $(node --version)"
if [[ "$install" == always || ( "$install" == auto && "$(cat "$stamp" 2>/dev/null || true)" != "$want" ) ]]; then
  echo "run.sh: npm ci (Hocuspocus and its SQLite extension; sqlite3 may compile for a minute)" >&2
  npm ci --no-audit --no-fund
  echo "$want" > "$stamp"
fi

# 1,000 documents x 2 clients plus aweft-bench's seeders: ~3,000 sockets per process.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

exec node "$here/run.mjs" ${args[@]+"${args[@]}"}
