#!/usr/bin/env bash
# Installs, by name, every Debian 12 package the project builds, tests and
# runs with. Safe to run again; does nothing when all are present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  librocksdb-dev libzstd-dev
  libboost1.81-dev libboost-json1.81-dev libboost-program-options1.81-dev libboost-url1.81-dev
  libssl-dev libtomlplusplus-dev libspdlog-dev libfmt-dev
  catch2 libbenchmark-dev
  clang libclang-rt-14-dev lld clang-format
  chromium
  gnuplot-nox
)

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
