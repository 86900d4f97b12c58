#!/usr/bin/env bash
# Installs, by name, the Debian 12 packages the project needs. Safe to run
# again; does nothing when all are present.
#   scripts/deps.sh        everything: build, run, test, sanitize, fuzz, bench
#   scripts/deps.sh run    only what building and running aweft-node needs
#   --list after either: print the packages, install nothing
set -euo pipefail
mode="all"
list=false
for arg in "$@"; do
  case "$arg" in
    run) mode="run" ;;
    --list) list=true ;;
    *) echo "deps: unknown argument '$arg' (run, --list)" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake ninja-build pkg-config git
  librocksdb-dev libzstd-dev
  libboost1.81-dev libboost-json1.81-dev libboost-program-options1.81-dev libboost-url1.81-dev
  libssl-dev libtomlplusplus-dev libspdlog-dev libfmt-dev
)
if [ "$mode" != "run" ]; then
  packages+=(
    catch2 libbenchmark-dev
    clang libclang-rt-14-dev lld clang-format
    chromium
    gnuplot-nox
    prometheus
  )
fi

if $list; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
