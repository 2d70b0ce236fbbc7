#!/usr/bin/env bash
# The UCP generation's bar on PP-OCR (issue 29): ucp_ocr_app, a C program written against
# hobot/hb_ucp.h and hobot/dnn/hb_dnn.h only, runs the nash-e det, cls and rec .hbm models
# (one task of three sub-tasks per sample, two threads, callbacks; with the flush check on), and
# every output it wrote must equal the quantized model's, bit for bit:
#   ucp_bit_exact.sh APP DNN_MODEL_CHECK NASH_DIR DATASET_DIR OUT_DIR COUNT [RUNNER...]
# NASH_DIR holds bpu_bit_exact.sh's hb_compile conversions (<case>_nash-e/model_output);
# RUNNER (e.g. qemu-aarch64) runs APP when given.
set -euo pipefail
app=$(readlink -f "${1:?usage: ucp_bit_exact.sh APP DNN_MODEL_CHECK NASH_DIR DATASET_DIR OUT_DIR COUNT [RUNNER...]}")
check=$(readlink -f "${2:?}") nash=$(readlink -f "${3:?}") data=$(readlink -f "${4:?}") out=${5:?} count=${6:?}
shift 6
args=()
for case in det cls rec; do
  dir=$nash/${case}_nash-e/model_output
  for f in "$dir/$case.hbm" "$dir/${case}_quantized_model.onnx"; do
    [ -f "$f" ] || { echo "ucp_bit_exact: $f is missing (its conversion test did not run)" >&2; exit 1; }
  done
  args+=("$dir/$case.hbm" "$data/evaluation/$case/input")
done
rm -rf "$out" && mkdir -p "$out"
OPENBPU_UCP_CHECK_FLUSH=1 "$@" "$app" "$out" "$count" "${args[@]}"
for case in det cls rec; do
  dir=$nash/${case}_nash-e/model_output
  "$check" --model "$dir/${case}_quantized_model.onnx" --bin-model "$dir/$case.hbm" \
    --inputs "$data/evaluation/$case/input" --count "$count" --ucp-outputs "$out"
done
