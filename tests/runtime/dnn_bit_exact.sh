#!/usr/bin/env bash
# The runtime's bit-exact bar for one converted PP-OCR model and march:
#   dnn_bit_exact.sh CASE MARCH DNN_MODEL_CHECK CONVERSION_DIR NASH_DIR DATASET_DIR
# CASE is det, det_nv12, cls, cls_rgb or rec. bayes-e models are those conversion_accuracy.sh
# wrote into CONVERSION_DIR/CASE (hb_mapper, .bin); other marches those bpu_bit_exact.sh
# converted with hb_compile into NASH_DIR/CASE_MARCH (.hbm). The model file runs through the
# hbDNN C API on 20 held-out evaluation inputs (4 tasks in flight) and every output must equal
# the quantized model's, bit for bit.
set -euo pipefail
case_name=${1:?usage: dnn_bit_exact.sh CASE MARCH DNN_MODEL_CHECK CONVERSION_DIR NASH_DIR DATASET_DIR}
march=${2:?} check=$(readlink -f "${3:?}")
conversion=$(readlink -f "${4:?}") nash=${5:?} data=$(readlink -f "${6:?}")
if [ "$march" = bayes-e ]; then
  dir=$conversion/$case_name/model_output
  bin=$dir/$case_name.bin
else
  dir=$nash/${case_name}_$march/model_output
  bin=$dir/$case_name.hbm
fi
model=$dir/${case_name}_quantized_model.onnx
for f in "$model" "$bin"; do
  if [ ! -f "$f" ]; then
    echo "dnn_bit_exact: $f is missing (its conversion test did not run)" >&2
    exit 1
  fi
done
case "$case_name" in
  det_nv12) inputs=(--inputs "$data/evaluation/det/rgb_uint8" --nv12-input x) ;;
  cls_rgb) inputs=(--inputs "$data/evaluation/cls/rgb_uint8" --packed-input x) ;;
  *) inputs=(--inputs "$data/evaluation/$case_name/input") ;;
esac
"$check" --model "$model" --bin-model "$bin" "${inputs[@]}" --count 20 --tasks 4
