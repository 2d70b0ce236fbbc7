#!/usr/bin/env bash
# The UCP generation's program on the board (issue 29): `cmake --install` of the aarch64 build
# into a fresh prefix, tests/runtime/ucp_app/ucp_ocr_app.c compiled against it as a user would
# (aarch64-linux-gnu-gcc, the installed headers and libdnn.a, static), run on the nash-e PP-OCR
# models CASES (of det, cls, rec) on the first COUNT samples, and every output file compared
# byte for byte with the x86 run's (ucp_bit_exact_ocr_nash-e wrote X86_OUTPUTS; those equal the
# quantized model's):
#   --qemu            under qemu-user on this machine;
#   --board BOARD_ENV on the emulated board (fixture emulated_board): copied there with scp,
#                     run over ssh with the flush check on.
#   ucp_aarch64.sh --qemu | --board BOARD_ENV  AARCH64_BUILD_DIR SOURCE_DIR WORK_DIR NASH_DIR DATASET_DIR
#                  X86_OUTPUTS COUNT CASES...
set -euo pipefail
usage="usage: ucp_aarch64.sh --qemu | --board BOARD_ENV  AARCH64_BUILD_DIR SOURCE_DIR WORK_DIR NASH_DIR DATASET_DIR X86_OUTPUTS COUNT CASES..."
mode=${1:?$usage}
board_env=
if [ "$mode" = --board ]; then
  board_env=$(readlink -f "${2:?$usage}")
  shift
  if [ "$(id -u)" -ne 0 ]; then  # ctest reports the test as skipped (SKIP_RETURN_CODE 77)
    echo "ucp_aarch64: skipped: the emulated board needs root" >&2
    exit 77
  fi
elif [ "$mode" != --qemu ]; then
  echo "$usage" >&2
  exit 2
fi
build=$(readlink -f "${2:?$usage}") source_dir=$(readlink -f "${3:?$usage}")
mkdir -p "${4:?$usage}"
work=$(readlink -f "$4") nash=$(readlink -f "${5:?$usage}") data=$(readlink -f "${6:?$usage}")
x86=$(readlink -f "${7:?$usage}") count=${8:?$usage}
shift 8
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
rm -rf "${work:?}"/*
[ -f "$build/build.ninja" ] || { echo "ucp_aarch64: $build is not built: cmake --preset aarch64 && cmake --build --preset aarch64" >&2; exit 1; }
cmake --install "$build" --prefix "$work/sdk" > "$work/install.out"
program=$work/run/ucp_ocr_app
mkdir -p "$work/run/out"
aarch64-linux-gnu-gcc -std=gnu11 -O2 -Wall -Wextra -Werror -static -o "$program" "$source_dir/tests/runtime/ucp_app/ucp_ocr_app.c" \
  -I"$work/sdk/include" "$work/sdk/lib/libdnn.a" -lstdc++ -lm -lpthread
[ "$(od -An -tu2 -j18 -N2 "$program" | tr -d ' ')" = 183 ] || { echo "FAIL: ucp_ocr_app is not an aarch64 program"; exit 1; }
# Models and the first COUNT inputs of each, named relatively (the same paths here and on the board).
args=()
for case in "$@"; do
  cp "$nash/${case}_nash-e/model_output/$case.hbm" "$work/run/"
  mkdir -p "$work/run/$case"
  mapfile -t samples < <(find "$data/evaluation/$case/input" -name '*.npy' | sort)
  cp "${samples[@]:0:$count}" "$work/run/$case/"
  args+=("$case.hbm" "$case")
done
start=$(date +%s)
if [ "$mode" = --qemu ]; then
  where="under qemu-user"
  qemu=$(command -v qemu-aarch64-static || true)
  [ -n "$qemu" ] || { echo "ucp_aarch64: qemu-aarch64-static is missing (scripts/install_deps.sh installs it)" >&2; exit 1; }
  (cd "$work/run" && OPENBPU_UCP_CHECK_FLUSH=1 "$qemu" ./ucp_ocr_app out "$count" "${args[@]}") > "$work/run.out" 2>&1 ||
    { cat "$work/run.out"; echo "FAIL: ucp_ocr_app failed $where"; exit 1; }
else
  where="on the emulated board"
  # shellcheck disable=SC1090
  . "$board_env"
  opts=(-i "$BOARD_KEY" -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=yes
    -o UserKnownHostsFile="$BOARD_KNOWN_HOSTS" -o GlobalKnownHostsFile=/dev/null -o ConnectTimeout=10 -o LogLevel=ERROR)
  on_board() { ssh "${opts[@]}" -p "$BOARD_PORT" "$BOARD_USER@$BOARD_HOST" "$@"; }
  on_board 'rm -rf /userdata/ucp && mkdir -p /userdata/ucp'
  scp "${opts[@]}" -q -r -P "$BOARD_PORT" "$work/run"/* "$BOARD_USER@$BOARD_HOST:/userdata/ucp/" || { echo "FAIL: copying to the board"; exit 1; }
  on_board "uname -m" | grep -qx aarch64 || { echo "FAIL: the board is not aarch64"; exit 1; }
  # shellcheck disable=SC2029  # plain relative names, expanded here on purpose
  on_board "cd /userdata/ucp && OPENBPU_UCP_CHECK_FLUSH=1 ./ucp_ocr_app out $count ${args[*]}" > "$work/run.out" 2>&1 ||
    { cat "$work/run.out"; echo "FAIL: ucp_ocr_app failed $where"; exit 1; }
  rm -rf "$work/run/out" && mkdir -p "$work/run/out"
  scp "${opts[@]}" -q -r -P "$BOARD_PORT" "$BOARD_USER@$BOARD_HOST:/userdata/ucp/out/*" "$work/run/out/" || { echo "FAIL: copying back"; exit 1; }
  on_board 'rm -rf /userdata/ucp'
fi
echo "ucp_ocr_app $where on $* ($count sample(s) each): $(( $(date +%s) - start )) s"
compared=0
for case in "$@"; do
  for f in "$work/run/out/$case"/*.bin; do
    want=$x86/$case/$(basename "$f")
    [ -f "$want" ] || { echo "FAIL: $want (the x86 run's) is missing"; exit 1; }
    cmp -s "$f" "$want" || { echo "FAIL: $case/$(basename "$f") $where differs from the x86 run's"; exit 1; }
    compared=$((compared + 1))
  done
done
[ "$compared" -ge $(( $# * count )) ] || { echo "FAIL: $compared output files, expected $(( $# * count ))"; exit 1; }
echo "ucp_aarch64: $compared output files $where equal the x86 run's, byte for byte: PASSED"
rm -rf "$work/sdk"
