#!/usr/bin/env bash
# The Dockerfile's runtime stage installs every shared library the binaries
# load, so the image cannot lack one again (it lacked libssl3 once, then
# libboost-program-options1.81.0): each library ldd finds for BINARY is
# mapped to its Debian package (dpkg -S), which the stage after the
# Dockerfile's last FROM must install, unless debian:12-slim holds it already
# (libc6, libgcc-s1, libstdc++6).
#   tests/docker/runtime_libraries.sh DOCKERFILE BINARY...
set -euo pipefail
dockerfile="$1"
shift
# Every word of the runtime stage: the packages it installs are among them.
words=$(awk '/^FROM /{stage=""} {stage = stage "\n" $0} END {print stage}' "$dockerfile" |
  tr ' \\' '\n\n' | sort -u)
missing=0
for binary in "$@"; do
  for library in $(ldd "$binary" | awk '$3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
    package=$(dpkg -S "$library" 2>/dev/null || dpkg -S "$(readlink -f "$library")" 2>/dev/null ||
      echo "none: ")
    package="${package%%:*}"
    case "$package" in
    libc6 | libgcc-s1 | libstdc++6) continue ;;
    none)
      echo "$(basename "$binary") loads $library, which no Debian package holds" >&2
      missing=1
      continue
      ;;
    esac
    if ! grep -qx -- "$package" <<<"$words"; then
      echo "$(basename "$binary") loads $library from $package, which $dockerfile's runtime" \
        "stage does not install" >&2
      missing=1
    fi
  done
done
if ((missing == 0)); then echo "every library the binaries load is installed by $dockerfile"; fi
exit "$missing"
