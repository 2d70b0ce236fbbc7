#!/usr/bin/env bash
# The installed SDK as a user meets it (docs/install.md): `cmake --install` into a fresh prefix,
# which is then moved (relocatable: nothing may point back into the build or source tree);
# samples/classification built against it with plain CMake (libdnn.so, and libdnn.a with
# -DOPENBPU_STATIC=ON) and with pkg-config alone; each run on the NV12 classifier (fixture
# nv12_classifier) and its top-5 compared, class and score, with the top-5 of the installed
# hrt_model_exec's output on the same image (PNG: decoded, resized and converted to NV12 by
# hrt_model_exec's own code). With --install, the Python package imports from the moved prefix. And the sample's errors: missing files, a file that is no model,
# an image that is no image: exit 1 and a message naming the problem.
# With --prefix, an installation made otherwise (tests/sdk/debian_packages.sh: the .deb
# packages unpacked with dpkg -x) is checked the same way.
# SMALL_MODELS_DIR (fixture dnn_small_model: small.bin, chain.bin) adds samples/async_multi_model:
# the NV12 classifier at high priority on one thread, small and chain at low priority, several
# tasks in flight, on another; every run's results identical and each model's top-5 equal to
# hrt_model_exec's on the same fixed input.
#   sdk_install.sh --install BUILD_DIR | --prefix PREFIX   SOURCE_DIR WORK_DIR FIXTURE_DIR SMALL_MODELS_DIR
set -euo pipefail
usage="usage: sdk_install.sh --install BUILD_DIR | --prefix PREFIX   SOURCE_DIR WORK_DIR FIXTURE_DIR SMALL_MODELS_DIR"
mode=${1:?$usage}
from=$(readlink -f "${2:?$usage}")
source_dir=$(readlink -f "${3:?$usage}")
mkdir -p "${4:?$usage}"
work=$(readlink -f "$4")
fixture=$(readlink -f "${5:?$usage}")
small_models=$(readlink -f "${6:?$usage}")
model=$fixture/mobilenet_v1_nv12.bin
rm -rf "${work:?}"/*
failures=0
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }

if [ "$mode" = --install ]; then
  # Install, then move the tree: every path must be found from where it now is.
  build=$from
  start=$(date +%s.%N)
  cmake --install "$build" --prefix "$work/staging" > "$work/install.out"
  awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "cmake --install: %.1f s\n", b - a }'
  mv "$work/staging" "$work/sdk"
  prefix=$work/sdk
elif [ "$mode" = --prefix ]; then
  build=/nonexistent-build-dir
  prefix=$from
else
  echo "$usage" >&2
  exit 2
fi
for f in bin/hb_mapper bin/hb_compile bin/hb_model_info bin/hb_model_verifier bin/hb_perf bin/hb_pack \
         bin/hb_model_modifier bin/hb_eval_preprocess bin/hmct-debugger bin/hrt_model_exec include/dnn/hb_dnn.h include/dnn/hb_sys.h \
         include/dnn/hb_dnn_status.h include/hobot/hb_ucp.h include/hobot/hb_ucp_sys.h include/hobot/hb_ucp_status.h \
         include/hobot/dnn/hb_dnn.h include/hobot/dnn/hb_dnn_status.h include/hobot/dnn/hb_dnn_v1.h lib/libdnn.so lib/libdnn.a lib/cmake/OpenBPU/OpenBPUConfig.cmake \
         lib/cmake/OpenBPU/OpenBPUConfigVersion.cmake lib/pkgconfig/openbpu-dnn.pc \
         share/openbpu/samples/classification/CMakeLists.txt share/openbpu/samples/async_multi_model/CMakeLists.txt \
         share/openbpu/samples/ocr_pipeline/CMakeLists.txt share/openbpu/samples/ocr_pipeline/README.md \
         share/openbpu/configs/ppocr_det_nv12.yaml \
         share/openbpu/docs/install.md; do
  [ -e "$prefix/$f" ] || bad "the installation has no $f"
done
if hits=$(grep -rlF -e "$build" -e "$source_dir" -e "$work/staging" "$prefix"); then
  bad "installed files name the build or source tree: $hits"
fi
for f in "$prefix"/bin/* "$prefix"/lib/libdnn.so; do
  if readelf -d "$f" | grep -qE 'RPATH|RUNPATH'; then bad "$f has an RPATH / RUNPATH: $(readelf -d "$f" | grep -E 'RPATH|RUNPATH')"; fi
done
# The Python package (docs/python.md; cmake --install only: no .deb carries it yet), imported
# from the moved prefix by Debian's python3, and the classifier's properties through it.
if [ "$mode" = --install ]; then
  pkg=$prefix/lib/python3/dist-packages
  for f in "$pkg"/openbpu/_openbpu*.so; do
    if readelf -d "$f" | grep -qE 'RPATH|RUNPATH'; then bad "$f has an RPATH / RUNPATH"; fi
  done
  shape=$(cd "$work" && PYTHONPATH=$pkg /usr/bin/python3 -c \
    "import openbpu; print(openbpu.__file__.startswith('$pkg/'), openbpu.dnn.Model('$model').inputs[0].valid_shape)" 2>&1) ||
    bad "import openbpu from the installation failed: $shape"
  # hrt_model_exec model_info's "valid shape: (1,3,64,64,)" as Python prints the tuple.
  valid=$("$prefix/bin/hrt_model_exec" model_info --model_file "$model" | sed -n 's/^valid shape: (\(.*\),)$/\1/p' | head -1)
  [ "$shape" = "True (${valid//,/, })" ] || bad "the installed openbpu package says '$shape' (expected True (${valid//,/, }))"
fi
exported=$(nm -D --defined-only "$prefix/lib/libdnn.so" | awk '{print $3}' | grep -vE '^(hbDNN|hbSys|hbUCP|openbpuDNN)' || true)
[ -z "$exported" ] || bad "libdnn.so exports more than the C API: $(head -5 <<< "$exported")"

# shellcheck source=top5.sh
. "$(dirname "$0")/top5.sh"
# hrt_model_exec's top-5 on an image (its output 0 dequantized, as text).
for image in same resized; do
  hrt_top5 "$work/hrt_$image" "$prefix/bin/hrt_model_exec" "$model" "$fixture/images/$image.png" \
    > "$work/ref_$image.txt" || bad "hrt_model_exec infer on $image.png failed"
done

# The sample with plain CMake (libdnn.so), as its README says, and against libdnn.a.
start=$(date +%s.%N)
cmake -S "$source_dir/samples/classification" -B "$work/build_shared" -DCMAKE_PREFIX_PATH="$prefix" > "$work/build_shared.out" 2>&1 &&
  cmake --build "$work/build_shared" >> "$work/build_shared.out" 2>&1 || { cat "$work/build_shared.out"; bad "the sample does not build"; }
cmake -S "$source_dir/samples/classification" -B "$work/build_static" -DCMAKE_PREFIX_PATH="$prefix" -DOPENBPU_STATIC=ON \
  > "$work/build_static.out" 2>&1 && cmake --build "$work/build_static" >> "$work/build_static.out" 2>&1 ||
  { cat "$work/build_static.out"; bad "the sample does not build against libdnn.a"; }
awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "sample builds (shared, static): %.1f s\n", b - a }'
readelf -d "$work/build_shared/classification" | grep -q 'NEEDED.*libdnn.so.1' || bad "the shared build does not use libdnn.so.1"
readelf -d "$work/build_static/classification" | grep -q 'NEEDED.*libdnn' && bad "the static build needs libdnn.so"
# pkg-config alone (a Makefile user): compile and link, libdnn.so found through the rpath given.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
[ "$(pkg-config --modversion openbpu-dnn)" = "$(sed -nE 's/^project\(openbpu VERSION ([0-9.]+).*/\1/p' "$source_dir/CMakeLists.txt")" ] ||
  bad "pkg-config --modversion openbpu-dnn: $(pkg-config --modversion openbpu-dnn)"
# shellcheck disable=SC2046
cc -std=c99 -Wall -Wextra -Werror -o "$work/classification_pc" "$source_dir/samples/classification/classification.c" \
  $(pkg-config --cflags --libs openbpu-dnn) -Wl,-rpath,"$(pkg-config --variable=libdir openbpu-dnn)" -lm ||
  bad "the sample does not compile with pkg-config's flags"

for program in "$work/build_shared/classification" "$work/build_static/classification" "$work/classification_pc"; do
  for input in same.ppm same.npy resized.ppm resized.npy; do
    what="$(basename "$(dirname "$program")")/$(basename "$program") $input"
    if ! "$program" "$model" "$fixture/images/$input" > "$work/run.out" 2>&1; then
      cat "$work/run.out"; bad "$what failed"; continue
    fi
    sample_top5 < "$work/run.out" > "$work/ours.txt"
    compare_top5 "$work/ours.txt" "$work/ref_${input%.*}.txt" "$what"
  done
done
# A PPM with a comment in its header (as GIMP writes them) reads as the same image.
{ printf 'P6\n# written by sdk_install.sh\n'; tail -c +4 "$fixture/images/same.ppm"; } > "$work/comment.ppm"
"$work/build_shared/classification" "$model" "$work/comment.ppm" > "$work/run.out" 2>&1 || { cat "$work/run.out"; bad "comment.ppm failed"; }
sample_top5 < "$work/run.out" > "$work/ours.txt"
compare_top5 "$work/ours.txt" "$work/ref_same.txt" "classification comment.ppm"
echo "--- the sample's output (same.ppm):"
"$work/build_shared/classification" "$model" "$fixture/images/same.ppm"
grep -q 'input\[0\] .*: type NV12' "$work/run.out" || bad "the model's input is not reported as NV12"

# async_multi_model: three models, two threads, priorities; each model's top-5 against
# hrt_model_exec's on the sample's fixed input.
cmake -S "$source_dir/samples/async_multi_model" -B "$work/build_async" -DCMAKE_PREFIX_PATH="$prefix" \
  > "$work/build_async.out" 2>&1 && cmake --build "$work/build_async" >> "$work/build_async.out" 2>&1 ||
  { cat "$work/build_async.out"; bad "async_multi_model does not build"; }
write_async_inputs "$work/async_inputs"
async_models=("$model" "$small_models/small.bin" "$small_models/chain.bin")
if "$work/build_async/async_multi_model" --rounds 10 --in-flight 4 "${async_models[@]}" > "$work/async.out" 2>&1; then
  sed -n '/^model \|^wall/p' "$work/async.out"
  [ "$(grep -c 'results identical in every run' "$work/async.out")" = 3 ] || bad "async_multi_model: $(cat "$work/async.out")"
  grep -q 'model mobilenet_v1_nv12: thread urgent, priority 200, 40 inferences' "$work/async.out" ||
    bad "async_multi_model: the urgent thread's line is missing"
  compare_async_models "$prefix/bin/hrt_model_exec" "$work" async_multi_model "${async_models[@]}"
else
  cat "$work/async.out"; bad "async_multi_model failed"
fi

# Bad input: exit 1 and a clear message.
program=$work/build_shared/classification
expect_error() {
  local pattern=$1; shift
  local code=0
  "$program" "$@" > "$work/error.out" 2>&1 || code=$?
  if [ "$code" != 1 ] || ! grep -qE "$pattern" "$work/error.out"; then
    bad "$(basename "$program") $*: exit $code, expected 1 and /$pattern/; it printed: $(cat "$work/error.out")"
  fi
}
printf 'not a model' > "$work/not_a_model.bin"
printf 'P3\n2 2\n255\n' > "$work/text.ppm"
expect_error 'hbDNNInitializeFromFiles.*failed' "$work/missing.bin" "$fixture/images/same.ppm"
expect_error 'hbDNNInitializeFromFiles.*failed' "$work/not_a_model.bin" "$fixture/images/same.ppm"
expect_error "cannot open '$work/missing.ppm'" "$model" "$work/missing.ppm"
expect_error 'is not a binary 8-bit PPM' "$model" "$work/text.ppm"
head -c 100 "$fixture/images/same.ppm" > "$work/truncated.ppm"
expect_error 'truncated PPM image' "$model" "$work/truncated.ppm"
expect_error 'usage: classification' "$model"
expect_error "unknown option '--fast'" "$model" "$fixture/images/same.ppm" --fast
program=$work/build_async/async_multi_model
expect_error 'hbDNNInitializeFromFiles.*failed' "$model" "$work/missing.bin"
expect_error '1 model in the file\(s\); this sample runs two or more' "$model"
expect_error 'hbDNNInitializeFromFiles.*failed' "$model" "$model"
expect_error 'usage: async_multi_model'

[ "$failures" = 0 ] || { echo "sdk_install: $failures failure(s)"; exit 1; }
# Passed: the installed tree and the sample builds go (they are most of the disk this takes);
# a failure keeps everything for a look.
[ "$mode" = --install ] && rm -rf "$prefix"
rm -rf "$work"/build*
echo "sdk_install: PASSED"
