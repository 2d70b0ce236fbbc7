#!/usr/bin/env bash
# The BPU backend's bit-exact bar for one converted PP-OCR model and march:
#   bpu_bit_exact.sh CASE MARCH HB_COMPILE BPU_SEGMENT_CHECK CONVERSION_DIR DATASET_DIR OUT_DIR
# CASE is det, det_nv12, cls, cls_rgb or rec as converted by conversion_accuracy.sh (hb_mapper, march bayes-e) into
# CONVERSION_DIR/CASE; for nash-e / nash-m the same yaml is converted again by hb_compile (their
# tool; optimize_level O2, its highest) into OUT_DIR/CASE_MARCH. Then every BPU segment of the
# written model file (CASE.bin / CASE.hbm, verified on load) runs on the virtual BPU for the 20
# held-out evaluation inputs and must equal the quantized model's tensors bit for bit.
set -euo pipefail
case_name=${1:?usage: bpu_bit_exact.sh CASE MARCH HB_COMPILE BPU_SEGMENT_CHECK CONVERSION_DIR DATASET_DIR OUT_DIR}
march=${2:?} hb_compile=$(readlink -f "${3:?}") check=$(readlink -f "${4:?}")
conversion=$(readlink -f "${5:?}") data=$(readlink -f "${6:?}")
mkdir -p "${7:?}"
out=$(readlink -f "$7")

yaml=$conversion/$case_name/$case_name.yaml
model=$conversion/$case_name/model_output/${case_name}_quantized_model.onnx
bin=$conversion/$case_name/model_output/$case_name.bin
if [ ! -f "$model" ]; then
  echo "bpu_bit_exact: $model is missing (conversion_accuracy_$case_name did not run)" >&2
  exit 1
fi
if [ "$march" != bayes-e ]; then
  dir=$out/${case_name}_$march
  rm -rf "$dir"
  mkdir -p "$dir"
  sed -e "s/^  march: .*/  march: '$march'/" -e "s/^  optimize_level: .*/  optimize_level: 'O2'/" \
    "$yaml" > "$dir/$case_name.yaml"
  (cd "$dir" && "$hb_compile" --config "$case_name.yaml" > convert.out 2>&1) || {
    tail -20 "$dir/convert.out" >&2
    exit 1
  }
  model=$dir/model_output/${case_name}_quantized_model.onnx
  bin=$dir/model_output/$case_name.hbm
fi
if [ "$case_name" = det_nv12 ]; then
  # RGB pages fed as NV12: the model file's input is an NV12 image (Preprocess instruction).
  inputs=(--inputs "$data/evaluation/det/rgb_uint8" --nv12-input x)
elif [ "$case_name" = cls_rgb ]; then
  # RGB lines as bytes: the model file's input is a packed RGB image (Preprocess instruction).
  inputs=(--inputs "$data/evaluation/cls/rgb_uint8" --packed-input x)
else
  inputs=(--inputs "$data/evaluation/$case_name/input")
fi
"$check" --model "$model" --bin-model "$bin" "${inputs[@]}" --count 20 --march "$march"
