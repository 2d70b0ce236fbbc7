#!/usr/bin/env bash
# samples/ocr_pipeline for the board (its README.md): `cmake --install` of the aarch64 build
# into a fresh prefix (moved; with --prefix first, an installation made otherwise, e.g. the arm64
# .deb packages unpacked by tests/sdk/debian_packages.sh), the sample cross-compiled against it
# with the project's toolchain file (OpenBPU_DIR, libdnn.a), then run with the converted det, cls and rec models (fixtures
# converted_*) on IMAGES: "pages", the rendered evaluation pages PAGES and the first one turned
# by 180 degrees, or "turned", that turned page only; ROWS > 0 cuts the pages to their first
# ROWS rows (qemu runs the BPU simulator ~50x slower: each text line costs ~2 s there):
#   --qemu            under qemu-user on this machine;
#   --board BOARD_ENV on the emulated board of the fixture emulated_board (board.env of
#                     tests/board_tools/emulated_board.sh up; the runtime deployed there by
#                     scripts/deploy_board.sh): the program, models, dictionary and pages copied
#                     to /userdata/ocr_pipeline with scp, run there over ssh.
# The output must equal, byte for byte, what the x86 sample prints: the pipeline with the
# *_quantized_model.onnx on the float executor (tests/accuracy/ocr_pipeline_reference), which
# sdk_ocr_pipeline checks the x86 sample against.
#   ocr_pipeline_aarch64.sh [--prefix] --qemu | --board BOARD_ENV   AARCH64_BUILD_DIR|PREFIX
#                           SOURCE_DIR WORK_DIR CONVERSION_DIR DATASET_DIR REFERENCE_TOOL PAGES IMAGES ROWS
set -euo pipefail
usage="usage: ocr_pipeline_aarch64.sh [--prefix] --qemu | --board BOARD_ENV   AARCH64_BUILD_DIR|PREFIX SOURCE_DIR WORK_DIR CONVERSION_DIR DATASET_DIR REFERENCE_TOOL PAGES IMAGES ROWS"
given_prefix=0
if [ "${1:-}" = --prefix ]; then
  given_prefix=1
  shift
fi
mode=${1:?$usage}
board_env=
if [ "$mode" = --board ]; then
  board_env=$(readlink -f "${2:?$usage}")
  shift
  if [ "$(id -u)" -ne 0 ]; then  # ctest reports the test as skipped (SKIP_RETURN_CODE 77)
    echo "ocr_pipeline_aarch64: skipped: the emulated board needs root" >&2
    exit 77
  fi
elif [ "$mode" != --qemu ]; then
  echo "$usage" >&2
  exit 2
fi
build=$(readlink -f "${2:?$usage}")
source_dir=$(readlink -f "${3:?$usage}")
mkdir -p "${4:?$usage}"
work=$(readlink -f "$4")
conversion=$(readlink -f "${5:?$usage}")
dataset=$(readlink -f "${6:?$usage}")
reference_tool=$(readlink -f "${7:?$usage}")
pages=${8:?$usage}
which_images=${9:?$usage}
rows=${10:?$usage}
rm -rf "${work:?}"/*
# shellcheck source=ocr_pages.sh
. "$(dirname "$0")/ocr_pages.sh"
models=$("$source_dir/scripts/fetch_npm_packages.sh")
qemu=$(command -v qemu-aarch64-static || true)
[ -n "$qemu" ] || { echo "ocr_pipeline_aarch64: qemu-aarch64-static is missing (scripts/install_deps.sh installs it)" >&2; exit 1; }
if [ "$given_prefix" = 1 ]; then
  prefix=$build
else
  [ -f "$build/build.ninja" ] || { echo "ocr_pipeline_aarch64: $build is not built: cmake --preset aarch64 && cmake --build --preset aarch64" >&2; exit 1; }
  cmake --install "$build" --prefix "$work/staging" > "$work/install.out"
  mv "$work/staging" "$work/sdk"
  prefix=$work/sdk
fi
start=$(date +%s.%N)
cmake -S "$source_dir/samples/ocr_pipeline" -B "$work/build" \
  -DCMAKE_TOOLCHAIN_FILE="$source_dir/toolchains/cmake/aarch64-linux-gnu.cmake" \
  -DOpenBPU_DIR="$prefix/lib/cmake/OpenBPU" -DOPENBPU_STATIC=ON > "$work/build.out" 2>&1 &&
  cmake --build "$work/build" >> "$work/build.out" 2>&1 || { cat "$work/build.out"; echo "FAIL: the sample does not cross-compile"; exit 1; }
echo "cross build: $(seconds_since "$start") s"
program=$work/build/ocr_pipeline
[ "$(od -An -tu2 -j18 -N2 "$program" | tr -d ' ')" = 183 ] || bad "the cross-compiled sample is not an aarch64 program"
readelf -d "$program" | grep -q NEEDED && bad "the cross-compiled sample is not static"

# Everything the program reads in one folder, named relatively, so that the header lines
# ("image NAME: ...") are the same here, under qemu and on the board.
run=$work/run
ocr_page_images "$dataset" "$pages" "$run" "$rows"
cp "$conversion/det/model_output/det.bin" "$conversion/cls/model_output/cls.bin" \
   "$conversion/rec/model_output/rec.bin" "$models/ppocr_keys_v1.txt" "$run/"
images=()
[ "$which_images" = turned ] || for image in "${page_images[@]}"; do images+=("$(basename "$image")"); done
images+=("$(basename "$rotated_image")")
ocr_models "$conversion"
(cd "$run" && "$reference_tool" "${quantized_models[@]}" --keys ppocr_keys_v1.txt --threads 2 "${images[@]}") \
  > "$work/expected.txt" 2> "$work/expected.err" || { cat "$work/expected.err"; bad "the quantized reference failed"; }
args=(--det det.bin --cls cls.bin --rec rec.bin --keys ppocr_keys_v1.txt "${images[@]}")

start=$(date +%s.%N)
if [ "$mode" = --qemu ]; then
  where="under qemu-user"
  (cd "$run" && "$qemu" "$program" "${args[@]}") > "$work/aarch64.txt" 2> "$work/aarch64.err" ||
    { cat "$work/aarch64.err"; bad "the aarch64 sample failed $where"; }
else
  where="on the emulated board"
  # shellcheck disable=SC1090
  . "$board_env"
  opts=(-i "$BOARD_KEY" -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=yes
    -o UserKnownHostsFile="$BOARD_KNOWN_HOSTS" -o GlobalKnownHostsFile=/dev/null -o ConnectTimeout=10
    -o LogLevel=ERROR)
  on_board() { ssh "${opts[@]}" -p "$BOARD_PORT" "$BOARD_USER@$BOARD_HOST" "$@"; }
  cp "$program" "$run/"
  on_board 'rm -rf /userdata/ocr_pipeline && mkdir -p /userdata/ocr_pipeline'
  scp "${opts[@]}" -q -P "$BOARD_PORT" "$run"/* "$BOARD_USER@$BOARD_HOST:/userdata/ocr_pipeline/" ||
    bad "copying to the board failed"
  on_board "uname -m" | grep -qx aarch64 || bad "the board is not aarch64"
  # shellcheck disable=SC2029  # the arguments are plain file names, expanded here on purpose
  on_board "cd /userdata/ocr_pipeline && ./ocr_pipeline ${args[*]}" > "$work/aarch64.txt" 2> "$work/aarch64.err" ||
    { cat "$work/aarch64.err"; bad "the aarch64 sample failed $where"; }
  on_board 'rm -rf /userdata/ocr_pipeline'
fi
echo "aarch64 sample $where on ${images[*]}: $(seconds_since "$start") s"
if cmp -s "$work/aarch64.txt" "$work/expected.txt"; then
  echo "the aarch64 sample $where prints the x86 output ($(grep -c '^box' "$work/aarch64.txt") lines)"
else
  bad "the aarch64 sample's output $where differs from the x86 one's: $(diff "$work/expected.txt" "$work/aarch64.txt" | head -20)"
fi
grep -q '^box' "$work/aarch64.txt" || bad "the aarch64 sample found no text"
turned_check "$work/aarch64.txt" 0 || bad "the turned page's lines were not turned back $where"

[ "$failures" = 0 ] || { echo "ocr_pipeline_aarch64: $failures failure(s)"; exit 1; }
rm -rf "$work/sdk" "$work/build" "$run"
echo "ocr_pipeline_aarch64: PASSED"
