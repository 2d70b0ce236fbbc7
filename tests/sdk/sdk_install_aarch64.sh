#!/usr/bin/env bash
# The board installation (docs/install.md): `cmake --install` of the aarch64 build into a fresh
# prefix, which is then moved; its layout (hrt_model_exec, libdnn.so.1 and libdnn.a for aarch64,
# headers, CMake package, pkg-config file; no host tool); samples/classification cross-compiled
# against it with the project's toolchain file (OpenBPU_DIR, libdnn.a: the toolchain file links
# statically) and run under qemu-user on the NV12 classifier (fixture nv12_classifier): its
# top-5 equals the x86 hrt_model_exec's, and so does the installed aarch64 hrt_model_exec's;
# samples/async_multi_model likewise (three models, two threads; fixture dnn_small_model).
# With --prefix, an installation made otherwise (tests/sdk/debian_packages.sh: the arm64 .deb
# packages unpacked with dpkg -x) is checked the same way.
#   sdk_install_aarch64.sh --install AARCH64_BUILD_DIR | --prefix PREFIX   SOURCE_DIR WORK_DIR FIXTURE_DIR SMALL_MODELS_DIR X86_HRT_MODEL_EXEC
set -euo pipefail
usage="usage: sdk_install_aarch64.sh --install AARCH64_BUILD_DIR | --prefix PREFIX   SOURCE_DIR WORK_DIR FIXTURE_DIR SMALL_MODELS_DIR X86_HRT_MODEL_EXEC"
mode=${1:?$usage}
from=$(readlink -f "${2:?$usage}")
source_dir=$(readlink -f "${3:?$usage}")
mkdir -p "${4:?$usage}"
work=$(readlink -f "$4")
fixture=$(readlink -f "${5:?$usage}")
small_models=$(readlink -f "${6:?$usage}")
x86_hrt=$(readlink -f "${7:?$usage}")
model=$fixture/mobilenet_v1_nv12.bin
qemu=$(command -v qemu-aarch64-static || true)
[ -n "$qemu" ] || { echo "sdk_install_aarch64: qemu-aarch64-static is missing (scripts/install_deps.sh installs it)" >&2; exit 1; }
rm -rf "${work:?}"/*
failures=0
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }
# shellcheck source=top5.sh
. "$(dirname "$0")/top5.sh"

if [ "$mode" = --install ]; then
  build=$from
  [ -f "$build/build.ninja" ] || { echo "sdk_install_aarch64: $build is not built: cmake --preset aarch64 && cmake --build --preset aarch64" >&2; exit 1; }
  cmake --install "$build" --prefix "$work/staging" > "$work/install.out"
  mv "$work/staging" "$work/sdk"
  prefix=$work/sdk
elif [ "$mode" = --prefix ]; then
  build=/nonexistent-build-dir
  prefix=$from
else
  echo "$usage" >&2
  exit 2
fi
is_aarch64() { [ "$(od -An -tu2 -j18 -N2 "$1" | tr -d ' ')" = 183 ]; }  # ELF e_machine EM_AARCH64
for f in bin/hrt_model_exec lib/libdnn.so.1 include/dnn/hb_dnn.h include/dnn/hb_sys.h include/dnn/hb_dnn_status.h \
         include/hobot/hb_ucp.h include/hobot/dnn/hb_dnn.h \
         lib/libdnn.a lib/cmake/OpenBPU/OpenBPUConfig.cmake lib/pkgconfig/openbpu-dnn.pc \
         share/openbpu/samples/classification/classification.c share/openbpu/samples/ocr_pipeline/ocr_pipeline.cc; do
  [ -e "$prefix/$f" ] || bad "the board installation has no $f"
done
is_aarch64 "$prefix/bin/hrt_model_exec" || bad "bin/hrt_model_exec is not an aarch64 program"
is_aarch64 "$prefix/lib/libdnn.so.1" || bad "lib/libdnn.so.1 is not an aarch64 library"
readelf -d "$prefix/bin/hrt_model_exec" | grep -q NEEDED && bad "bin/hrt_model_exec is not static"
[ -e "$prefix/bin/hb_mapper" ] && bad "the board installation has host tools"
if hits=$(grep -rlF -e "$build" -e "$source_dir" -e "$work/staging" "$prefix"); then
  bad "installed files name the build or source tree: $hits"
fi

# The reference: the x86 build's hrt_model_exec; then the installed aarch64 one under qemu.
for image in same resized; do
  for side in x86 aarch64; do
    hrt=$x86_hrt runner=()
    [ "$side" = aarch64 ] && hrt=$prefix/bin/hrt_model_exec runner=("$qemu")
    hrt_top5 "$work/hrt_${side}_$image" "$hrt" "$model" "$fixture/images/$image.png" "${runner[@]}" \
      > "$work/ref_${side}_$image.txt" || bad "$side hrt_model_exec infer on $image.png failed"
  done
  cmp -s "$work/ref_x86_$image.txt" "$work/ref_aarch64_$image.txt" ||
    bad "$image.png: the aarch64 hrt_model_exec's top-5 differs from the x86 one's: $(paste -d'|' "$work/ref_x86_$image.txt" "$work/ref_aarch64_$image.txt")"
done

# The sample, cross-compiled as its README says.
cmake -S "$source_dir/samples/classification" -B "$work/build" \
  -DCMAKE_TOOLCHAIN_FILE="$source_dir/toolchains/cmake/aarch64-linux-gnu.cmake" \
  -DOpenBPU_DIR="$prefix/lib/cmake/OpenBPU" -DOPENBPU_STATIC=ON > "$work/build.out" 2>&1 &&
  cmake --build "$work/build" >> "$work/build.out" 2>&1 || { cat "$work/build.out"; bad "the sample does not cross-compile"; }
program=$work/build/classification
is_aarch64 "$program" || bad "the cross-compiled sample is not an aarch64 program"
for input in same.ppm resized.npy; do
  if ! "$qemu" "$program" "$model" "$fixture/images/$input" > "$work/run.out" 2>&1; then
    cat "$work/run.out"; bad "the aarch64 sample on $input failed"; continue
  fi
  sample_top5 < "$work/run.out" > "$work/ours.txt"
  compare_top5 "$work/ours.txt" "$work/ref_x86_${input%.*}.txt" "aarch64 classification $input (qemu)"
done
# async_multi_model: three models on two threads under qemu, each model's top-5 against the x86
# hrt_model_exec's on the sample's fixed inputs.
cmake -S "$source_dir/samples/async_multi_model" -B "$work/build_async" \
  -DCMAKE_TOOLCHAIN_FILE="$source_dir/toolchains/cmake/aarch64-linux-gnu.cmake" \
  -DOpenBPU_DIR="$prefix/lib/cmake/OpenBPU" -DOPENBPU_STATIC=ON > "$work/build_async.out" 2>&1 &&
  cmake --build "$work/build_async" >> "$work/build_async.out" 2>&1 ||
  { cat "$work/build_async.out"; bad "async_multi_model does not cross-compile"; }
write_async_inputs "$work/async_inputs"
async_models=("$model" "$small_models/small.bin" "$small_models/chain.bin")
if "$qemu" "$work/build_async/async_multi_model" --rounds 3 --in-flight 2 "${async_models[@]}" > "$work/async.out" 2>&1; then
  [ "$(grep -c 'results identical in every run' "$work/async.out")" = 3 ] || bad "async_multi_model: $(cat "$work/async.out")"
  compare_async_models "$x86_hrt" "$work" "aarch64 async_multi_model (qemu)" "${async_models[@]}"
else
  cat "$work/async.out"; bad "the aarch64 async_multi_model failed"
fi

code=0
"$qemu" "$program" "$work/missing.bin" "$fixture/images/same.ppm" > "$work/error.out" 2>&1 || code=$?
[ "$code" = 1 ] && grep -q 'hbDNNInitializeFromFiles.*failed' "$work/error.out" ||
  bad "the aarch64 sample on a missing model: exit $code, $(cat "$work/error.out")"

[ "$failures" = 0 ] || { echo "sdk_install_aarch64: $failures failure(s)"; exit 1; }
# Passed: the installed tree and the sample builds go (they are most of the disk this takes);
# a failure keeps everything for a look.
[ "$mode" = --install ] && rm -rf "$prefix"
rm -rf "$work"/build*
echo "sdk_install_aarch64: PASSED"
