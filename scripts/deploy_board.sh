#!/usr/bin/env bash
# Copies the cross-built board runtime to a board (real or emulated) over OpenSSH and checks that
# hrt_model_exec runs there.
#
#   scripts/deploy_board.sh [--key KEY] [--known-hosts FILE] [--env BOARD_ENV] [USER@HOST[:PORT]] [BUILD_DIR]
#
# BUILD_DIR is the build folder of the aarch64 preset (default: build/aarch64 of this checkout).
# --env reads a board.env written by scripts/board.sh start (target, key and known_hosts).
# Without --known-hosts the ssh client's own configuration and known_hosts apply; with it,
# StrictHostKeyChecking=yes against that file only. BatchMode: no passwords, no prompts.
#
# On the board:
#   /app/hrt_model_exec            the board tool (statically linked)
#   /app/lib/                      libdnn.a and the static libraries it needs (libopenbpu_*.a)
#   /app/include/dnn/              the runtime's headers (hb_dnn.h ...)
#   /app/VERSION                   hrt_model_exec --version, and the deploying commit
#   /userdata/hrt_model_exec       a symlink to /app/hrt_model_exec, so that
#                                  `cd /userdata && ./hrt_model_exec ...` works as on the reference boards
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
die() { echo "deploy_board.sh: $*" >&2; exit 1; }
usage="usage: deploy_board.sh [--key KEY] [--known-hosts FILE] [--env BOARD_ENV] [USER@HOST[:PORT]] [BUILD_DIR]"

key='' known_hosts='' target='' build=''
while [ $# -gt 0 ]; do
  case "$1" in
    --key) key=${2:?$usage}; shift 2 ;;
    --known-hosts) known_hosts=${2:?$usage}; shift 2 ;;
    --env)
      [ -f "${2:?$usage}" ] || die "$2: no such board.env (is the board started?)"
      # shellcheck disable=SC1090
      . "$2"
      key=${key:-$BOARD_KEY} known_hosts=${known_hosts:-$BOARD_KNOWN_HOSTS}
      target=${target:-$BOARD_USER@$BOARD_HOST:$BOARD_PORT}
      shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1; $usage" ;;
    *)
      if [ -z "$target" ] && [[ "$1" == *@* ]]; then target=$1
      elif [ -z "$build" ]; then build=$1
      else die "$usage"; fi
      shift ;;
  esac
done
[ -n "$target" ] || die "$usage"
build=$(readlink -f "${build:-$src/build/aarch64}")

port=22 dest=$target
if [[ "$target" =~ ^(.+@[^:]+):([0-9]+)$ ]]; then dest=${BASH_REMATCH[1]} port=${BASH_REMATCH[2]}; fi

exe=$build/board_tools/hrt_model_exec/hrt_model_exec
[ -x "$exe" ] || die "$exe is missing: build the aarch64 preset (cmake --preset aarch64 && cmake --build --preset aarch64)"
# ELF e_machine (offset 18) 183 = EM_AARCH64.
[ "$(od -An -tu2 -j18 -N2 "$exe" | tr -d ' ')" = 183 ] || die "$exe is not an aarch64 executable"

opts=(-o BatchMode=yes -o ConnectTimeout=10 -o ServerAliveInterval=15 -o LogLevel=ERROR)
[ -z "$key" ] || opts+=(-i "$key" -o IdentitiesOnly=yes)
[ -z "$known_hosts" ] || opts+=(-o StrictHostKeyChecking=yes -o UserKnownHostsFile="$known_hosts" -o GlobalKnownHostsFile=/dev/null)
board() { ssh "${opts[@]}" -p "$port" "$dest" "$@"; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/app/lib" "$stage/app/include"
cp "$exe" "$stage/app/hrt_model_exec"
# libdnn and the libraries it links (format, kernels, simulator), as built: static archives.
find "$build/runtime" "$build/simulator" -name '*.a' -exec cp {} "$stage/app/lib/" \; 2>/dev/null || true
find "$build/runtime" "$build/simulator" -name '*.so*' -exec cp -P {} "$stage/app/lib/" \; 2>/dev/null || true
cp -r "$src/runtime/include/dnn" "$stage/app/include/"
commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)

echo "deploy_board.sh: $exe and $(ls "$stage/app/lib" | wc -l) libraries -> $dest:/app (port $port)"
# Only the files this script puts there are replaced (/app may be a mount point on a real board).
board 'rm -rf /app/hrt_model_exec /app/lib /app/include /app/VERSION && mkdir -p /app /userdata'
# scp speaks SFTP by default; boards without an SFTP server need the legacy protocol (-O).
if ! scp "${opts[@]}" -q -r -P "$port" "$stage/app/." "$dest:/app/" 2>"$stage/scp.err"; then
  scp "${opts[@]}" -O -q -r -P "$port" "$stage/app/." "$dest:/app/" ||
    { cat "$stage/scp.err" >&2; die "copying to $dest failed"; }
fi
# Check the tool runs on the board.
board 'set -e
  chmod 755 /app/hrt_model_exec
  ln -sfn /app/hrt_model_exec /userdata/hrt_model_exec
  v=$(/app/hrt_model_exec --version)
  printf "hrt_model_exec %s\ndeployed from commit '"$commit"'\n" "$v" >/app/VERSION
  cd /userdata && ./hrt_model_exec --help >/dev/null
  echo "board $(uname -n) ($(uname -m)): /app/hrt_model_exec --version: $v"'
