#!/usr/bin/env bash
# Builds the Debian packages (docs/install.md) with CPack from a configured build folder:
#   host:     openbpu-toolchain, libopenbpu-dnn, libopenbpu-dnn-dev      (amd64; build/release)
#   --board:  openbpu-board-tools, libopenbpu-dnn, libopenbpu-dnn-dev    (arm64; build/aarch64)
# The build folder is configured (its preset) and built first when it has no build.ninja /
# is out of date. --lintian runs lintian on each package (installed with apt when missing) and
# fails on any error. Prints the packages' paths and sizes.
#   scripts/package.sh [--board] [--build-dir DIR] [--out DIR] [--lintian]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
preset=release build_dir= out= lintian=0
while [ $# -gt 0 ]; do
  case $1 in
    --board) preset=aarch64 ;;
    --build-dir) build_dir=${2:?--build-dir DIR}; shift ;;
    --out) out=${2:?--out DIR}; shift ;;
    --lintian) lintian=1 ;;
    *) echo "usage: scripts/package.sh [--board] [--build-dir DIR] [--out DIR] [--lintian]" >&2; exit 2 ;;
  esac
  shift
done
build_dir=$(readlink -f "${build_dir:-$repo/build/$preset}")
out=$(readlink -f "${out:-$build_dir/packages}")

cd "$repo"
[ -f "$build_dir/build.ninja" ] || cmake --preset "$preset" -B "$build_dir"
cmake --build "$build_dir" -j "${OPENBPU_BUILD_JOBS:-2}"
rm -rf "$out"
mkdir -p "$out"
# Files 0644 / directories 0755 in the packages whatever this shell's umask.
umask 022
(cd "$build_dir" && cpack -G DEB -B "$out/cpack" > "$out/cpack.log" 2>&1) || { cat "$out/cpack.log"; exit 1; }
mv "$out"/cpack/*.deb "$out"/
rm -rf "$out/cpack/_CPack_Packages"
for deb in "$out"/*.deb; do
  printf '%s\t%s bytes\n' "$deb" "$(stat -c %s "$deb")"
done

if [ "$lintian" = 1 ]; then
  if ! command -v lintian > /dev/null; then
    sudo_cmd=()
    [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends lintian
  fi
  errors=0
  for deb in "$out"/*.deb; do
    # lintian's exit status is 2 on errors; warnings and infos are printed, not fatal.
    lintian --tag-display-limit 0 "$deb" > "$deb.lintian" 2>&1 || true
    sed "s|^|lintian $(basename "$deb"): |" "$deb.lintian"
    if grep -q '^E: ' "$deb.lintian"; then errors=$((errors + 1)); fi
  done
  [ "$errors" = 0 ] || { echo "package.sh: lintian reports errors in $errors package(s)"; exit 1; }
  echo "package.sh: lintian: no errors"
fi
