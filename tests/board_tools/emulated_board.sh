#!/usr/bin/env bash
# The emulated board (scripts/board.sh) and the deployment (scripts/deploy_board.sh), end to end.
#
#   emulated_board.sh e2e BOARD_DIR X86_HRT AARCH64_BUILD CONVERSION_DIR DATASET_DIR
#       A board of its own in BOARD_DIR, the first free one of board216..230 (a board left
#       there by an interrupted run is stopped first; the folder is removed at the end): setup, start, deploy AARCH64_BUILD, upload the
#       converted cls model and one held-out input, `cd /userdata && ./hrt_model_exec infer
#       --enable_dump` over ssh; the downloaded outputs must be byte-identical to the x86
#       hrt_model_exec's on the same input. Checks `uname -m` on the board (aarch64 with the
#       board's busybox), then that stop leaves no netns, veth, route, mount or sshd behind.
#   emulated_board.sh up BOARD_DIR AARCH64_BUILD    the ctest fixture emulated_board: a board
#       in BOARD_DIR with the runtime deployed, named after the first free one of board200..215
#       (127.77.N.2:22: another build's fixture or a board left by a killed run keeps its name);
#       its details are in BOARD_DIR/board.env for the tests that require the fixture.
#   emulated_board.sh check BOARD_DIR X86_HRT       the fixture's board answers over ssh and runs
#       the deployed hrt_model_exec (the same version as X86_HRT's).
#   emulated_board.sh down BOARD_DIR                stops the fixture's board (and checks it is gone).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
scripts=$(cd "$here/../../scripts" && pwd)
board_sh=$scripts/board.sh deploy_sh=$scripts/deploy_board.sh
die() { echo "emulated_board.sh: $*" >&2; exit 1; }
usage="usage: emulated_board.sh e2e BOARD_DIR X86_HRT AARCH64_BUILD CONVERSION_DIR DATASET_DIR | up BOARD_DIR AARCH64_BUILD | check BOARD_DIR X86_HRT | down BOARD_DIR"
if [ "$(id -u)" -ne 0 ]; then  # ctest reports the test as skipped (SKIP_RETURN_CODE 77)
  echo "emulated_board.sh: skipped: the emulated board needs root (network namespace, mounts, chroot)" >&2
  exit 77
fi

ssh_opts() {  # the OpenSSH options for the board described by board.env ($1)
  # shellcheck disable=SC1090
  . "$1"
  opts=(-i "$BOARD_KEY" -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=yes
    -o UserKnownHostsFile="$BOARD_KNOWN_HOSTS" -o GlobalKnownHostsFile=/dev/null -o ConnectTimeout=10
    -o LogLevel=ERROR)
}
on_board() { ssh "${opts[@]}" -p "$BOARD_PORT" "$BOARD_USER@$BOARD_HOST" "$@"; }

# Nothing of the board named $1 (folder $2, sshd pid $3) is left on the host.
check_gone() {
  local name=$1 dir=$2 pid=${3:-} bad=0
  if [ -n "$name" ] && ip netns list | grep -qw "^$name"; then echo "netns $name is left" >&2; bad=1; fi
  if [ -n "$name" ] && ip link show "vb${name}h" >/dev/null 2>&1; then echo "veth vb${name}h is left" >&2; bad=1; fi
  if [ -n "$name" ] && ip route show table local | grep -q "dev vb${name}h"; then echo "a route of vb${name}h is left" >&2; bad=1; fi
  if grep -qF "$dir" /proc/self/mountinfo; then echo "mounts under $dir are left" >&2; bad=1; fi
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "sshd (pid $pid) is still running" >&2; bad=1; fi
  if [ -f "$dir/state/launcher.pid" ]; then echo "$dir/state/launcher.pid is left" >&2; bad=1; fi
  [ "$bad" = 0 ] || die "board $name was not cleaned up"
}
# The first board name boardN, N in $1..$2, whose netns and 127.77.N.0/24 no board uses now.
free_board_name() {
  local n
  for n in $(seq "$1" "$2"); do
    if ! ip netns list | grep -qw "^board$n" && ! ip route show table local | grep -q "^127\.77\.$n\.0/24 "; then
      echo "board$n"; return 0
    fi
  done
  die "no free board name in board$1..board$2"
}
sshd_pid() { local l; l=$(cat "$1/state/launcher.pid"); cat "/proc/$l/task/$l/children"; }

case "${1:-}" in
e2e)
  dir=${2:?$usage} x86=${3:?$usage} a64build=${4:?$usage}
  model=$(readlink -f "${5:?$usage}")/cls/model_output/cls.bin
  data=$(readlink -f "${6:?$usage}")
  [ -f "$model" ] || die "$model is missing (conversion_accuracy_cls did not run)"
  inputs=("$data"/evaluation/cls/input/*.npy)
  [ -f "${inputs[0]}" ] || die "no .npy under $data/evaluation/cls/input"
  npy=${inputs[0]}

  "$board_sh" --dir "$dir" stop  # a board left by an interrupted run
  rm -rf "$dir"
  name=$(free_board_name 216 230)
  work=$(mktemp -d)
  trap '"$board_sh" --dir "$dir" stop || true; rm -rf "$work" "$dir"' EXIT
  trap 'exit 1' INT TERM HUP
  export BOARD_NAME=$name

  t0=$(date +%s.%N)
  "$board_sh" --dir "$dir" setup
  t1=$(date +%s.%N)
  "$board_sh" --dir "$dir" start
  t2=$(date +%s.%N)
  "$board_sh" --dir "$dir" status
  ssh_opts "$dir/board.env"
  [ "$BOARD_HOST" = "127.77.${name#board}.2" ] || die "board.env: BOARD_HOST=$BOARD_HOST"
  "$deploy_sh" --env "$dir/board.env" "$a64build"

  machine=$(on_board 'uname -m')
  if [ -x "$dir/rootfs/opt/board/bin/busybox" ]; then
    [ "$machine" = aarch64 ] || die "uname -m on the board says '$machine'"
  else
    echo "emulated_board.sh: no aarch64 busybox on the board (uname -m says $machine)"
  fi
  [ "$(on_board hostname)" = "$name" ] || die "the board's hostname is not $name"

  # The x86 build's outputs on the same input.
  "$x86" infer --model_file="$model" --input_file="$npy" --enable_dump=true --dump_path="$work/x86" >"$work/x86.out"

  on_board 'rm -rf /userdata/cls_test && mkdir -p /userdata/cls_test/out'
  scp "${opts[@]}" -q -P "$BOARD_PORT" "$model" "$npy" "$BOARD_USER@$BOARD_HOST:/userdata/cls_test/"
  t3=$(date +%s.%N)
  on_board "cd /userdata && ./hrt_model_exec infer --model_file=cls_test/cls.bin --input_file=cls_test/$(basename "$npy") \
    --enable_dump=true --dump_path=cls_test/out" >"$work/board.out" || { cat "$work/board.out" >&2; die "infer on the board failed"; }
  t4=$(date +%s.%N)
  mkdir -p "$work/board_out"
  scp "${opts[@]}" -q -r -P "$BOARD_PORT" "$BOARD_USER@$BOARD_HOST:/userdata/cls_test/out/." "$work/board_out/"

  (cd "$work/x86" && ls) >"$work/x86.files"
  (cd "$work/board_out" && ls) >"$work/board.files"
  [ -s "$work/x86.files" ] || die "the x86 hrt_model_exec dumped nothing"
  cmp -s "$work/x86.files" "$work/board.files" || { diff "$work/x86.files" "$work/board.files" >&2; die "the board dumped other files"; }
  files=0
  while read -r f; do
    cmp "$work/x86/$f" "$work/board_out/$f" || die "$f differs between the x86 build and the board"
    files=$((files + 1))
  done <"$work/x86.files"

  pid=$(sshd_pid "$dir")
  t5=$(date +%s.%N)
  "$board_sh" --dir "$dir" stop
  t6=$(date +%s.%N)
  check_gone "$name" "$dir" "$pid"
  if "$board_sh" --dir "$dir" status >/dev/null; then die "status says running after stop"; fi
  "$board_sh" --dir "$dir" stop  # idempotent
  ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f ms", (b - a) * 1000 }'; }
  echo "emulated_board: $name ($machine): $files output(s) of cls on $(basename "$npy") byte-identical to x86;" \
    "setup $(ms "$t0" "$t1"), start $(ms "$t1" "$t2"), infer over ssh $(ms "$t3" "$t4"), stop $(ms "$t5" "$t6")"
  ;;
up)
  dir=${2:?$usage} a64build=${3:?$usage}
  "$board_sh" --dir "$dir" stop  # a board left by an interrupted run
  BOARD_NAME=$(free_board_name 200 215)
  export BOARD_NAME
  "$board_sh" --dir "$dir" setup
  "$board_sh" --dir "$dir" start
  "$deploy_sh" --env "$dir/board.env" "$a64build" || { "$board_sh" --dir "$dir" stop; exit 1; }
  ;;
check)
  dir=${2:?$usage} x86=${3:?$usage}
  [ -f "$dir/board.env" ] || die "$dir/board.env is missing: the emulated_board fixture is not up"
  ssh_opts "$dir/board.env"
  want=$("$x86" --version)
  got=$(on_board 'cd /userdata && ./hrt_model_exec --version')
  [ "$got" = "$want" ] || die "the board's hrt_model_exec --version says '$got', the x86 one '$want'"
  echo "emulated_board fixture: $BOARD_USER@$BOARD_HOST:$BOARD_PORT ($(on_board 'uname -m')), hrt_model_exec $got"
  ;;
down)
  dir=${2:?$usage}
  name=''  # the name the last start gave the board (none when up failed before start)
  if [ -f "$dir/state/board.conf" ]; then name=$(. "$dir/state/board.conf" && echo "$name"); fi
  "$board_sh" --dir "$dir" stop
  check_gone "$name" "$dir"
  ;;
*) die "$usage" ;;
esac
