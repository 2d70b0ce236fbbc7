#!/usr/bin/env bash
# hrt_model_exec and hb_model_verifier run .hbm files through the UCP API
# (openbpu/tensor_io/ucp_infer.h): model_info prints the model's description; infer's dumped
# outputs of the nash-e cls and rec models equal those ucp_ocr_app wrote (which equal the
# quantized model's); perf runs on two threads; the verifier's strict check passes.
#   hrt_ucp_hbm.sh HRT_MODEL_EXEC HB_MODEL_VERIFIER NASH_DIR DATASET_DIR UCP_OUTPUTS WORK_DIR
set -euo pipefail
tool=$(readlink -f "${1:?usage: hrt_ucp_hbm.sh HRT_MODEL_EXEC HB_MODEL_VERIFIER NASH_DIR DATASET_DIR UCP_OUTPUTS WORK_DIR}")
verifier=$(readlink -f "${2:?}") nash=$(readlink -f "${3:?}") data=$(readlink -f "${4:?}") outputs=$(readlink -f "${5:?}")
rm -rf "${6:?}" && mkdir -p "$6" && cd "$6"
for case in cls rec; do
  model=$nash/${case}_nash-e/model_output/$case.hbm
  "$tool" model_info --model_file "$model" > "$case.info"
  grep -q '^model description: {"BUILDER_VERSION": "openbpu ' "$case.info" || { echo "FAIL: $case model_info has no description"; exit 1; }
  for sample in 000 001; do
    rm -f model_infer_output_*
    "$tool" infer --model_file "$model" --input_file "$data/evaluation/$case/input/$sample.npy" --enable_dump true > "$case.infer"
    cmp model_infer_output_0_*.bin "$outputs/$case/${sample}_out0.bin" ||
      { echo "FAIL: hrt_model_exec infer of $case.hbm on $sample differs from the UCP program's output"; exit 1; }
  done
  "$tool" perf --model_file "$model" --frame_count 8 --thread_num 2 > "$case.perf"
  grep -q 'Frame count   is: 8' "$case.perf" || { echo "FAIL: $case perf"; cat "$case.perf"; exit 1; }
  "$verifier" -q "$nash/${case}_nash-e/model_output/${case}_quantized_model.onnx" -b "$model" \
    -i "$data/evaluation/$case/input/000.npy" > "$case.verify" || { cat "$case.verify"; echo "FAIL: $case verifier"; exit 1; }
  grep -q 'Strict check PASSED' "$case.verify" || { cat "$case.verify"; echo "FAIL: $case verifier"; exit 1; }
done
echo "hrt_ucp_hbm: model_info, infer (4 outputs equal), perf and hb_model_verifier through the UCP API: PASSED"
