#!/usr/bin/env bash
# The aarch64 build of hrt_model_exec under qemu-user gives the same bits as the x86 build:
#   aarch64_qemu.sh CASE X86_HRT_MODEL_EXEC AARCH64_HRT_MODEL_EXEC CONVERSION_DIR DATASET_DIR COUNT
# For the first COUNT held-out inputs of CASE (det / cls / rec), both builds run
# `hrt_model_exec infer --dump_intermediate=1` on the converted .bin (the runtime writes every
# layer's outputs, HB_DNN_DUMP_PATH). Every dump must be byte-identical: the BPU segments' outputs
# (the bar), and also the CPU layers' (float kernels; the aarch64 build does not contract a*b+c
# into fused multiply-adds) and the model outputs.
# qemu runs the simulator some 50x slower than native: keep COUNT small.
set -euo pipefail
usage="usage: aarch64_qemu.sh CASE X86_HRT AARCH64_HRT CONVERSION_DIR DATASET_DIR COUNT"
case_name=${1:?$usage} x86=${2:?$usage} a64=${3:?$usage}
model=$(readlink -f "${4:?$usage}")/$case_name/model_output/$case_name.bin
data=$(readlink -f "${5:?$usage}") count=${6:?$usage}

qemu=$(command -v qemu-aarch64-static || true)
[ -n "$qemu" ] || { echo "aarch64_qemu.sh: qemu-aarch64-static is missing (apt install qemu-user-static; scripts/install_deps.sh does)" >&2; exit 1; }
[ -x "$a64" ] || { echo "aarch64_qemu.sh: $a64 is missing: build the aarch64 preset first (cmake --preset aarch64 && cmake --build --preset aarch64)" >&2; exit 1; }
[ -f "$model" ] || { echo "aarch64_qemu.sh: $model is missing (conversion_accuracy_$case_name did not run)" >&2; exit 1; }
# ELF e_machine (offset 18) 183 = EM_AARCH64.
[ "$(od -An -tu2 -j18 -N2 "$a64" | tr -d ' ')" = 183 ] || { echo "aarch64_qemu.sh: $a64 is not an aarch64 executable" >&2; exit 1; }

inputs=("$data"/evaluation/"$case_name"/input/*.npy)
[ -f "${inputs[0]}" ] || { echo "aarch64_qemu.sh: no .npy under $data/evaluation/$case_name/input" >&2; exit 1; }
[ "${#inputs[@]}" -ge "$count" ] || { echo "aarch64_qemu.sh: only ${#inputs[@]} inputs, $count asked" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

bpu=0 other=0
for ((i = 0; i < count; ++i)); do
  npy=${inputs[$i]}
  for build in x86 a64; do
    exe=$x86 runner=()
    if [ "$build" = a64 ]; then exe=$a64 runner=("$qemu"); fi
    if ! "${runner[@]}" "$exe" infer --model_file="$model" --input_file="$npy" --enable_dump \
        --dump_intermediate=1 --dump_path="$work/$build/$i" >"$work/$build.out" 2>&1; then
      echo "the $build build failed on $npy:" >&2
      cat "$work/$build.out" >&2
      exit 1
    fi
  done
  (cd "$work/x86/$i" && ls) >"$work/x86.files"
  (cd "$work/a64/$i" && ls) >"$work/a64.files"
  cmp -s "$work/x86.files" "$work/a64.files" || { echo "the builds dumped different files:" >&2; diff "$work/x86.files" "$work/a64.files" >&2; exit 1; }
  while read -r f; do
    cmp "$work/x86/$i/$f" "$work/a64/$i/$f" || { echo "$f differs between x86 and aarch64 (input $npy)" >&2; exit 1; }
    case "$f" in
      *_BPU_*) bpu=$((bpu + 1)) ;;
      *) other=$((other + 1)) ;;
    esac
  done <"$work/x86.files"
done
echo "aarch64_qemu $case_name: $count inputs; bit-identical: $bpu BPU segment outputs, $other CPU layer /" \
  "input / model output dumps"
