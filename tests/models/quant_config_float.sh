#!/usr/bin/env bash
# quant_config qtype float32 / float16 and activation.asymmetric through hb_compile on PP-OCR cls
# (calibration_type skip): the named Conv and every GlobalAveragePool stay in float on the CPU
# with a log line each, the node table shows them on the CPU, asymmetric gives a warning; the
# stage files are hb_compile's (calibrated, ptq and quantized models).
#   quant_config_float.sh HB_COMPILE MODELS_DIR WORK_DIR
set -euo pipefail
hb_compile=$(readlink -f "${1:?}") models=$(readlink -f "${2:?}")
mkdir -p "${3:?}"
cd "$3"
rm -rf out ./*.log ./*.yaml
cat > cls.yaml <<YAML
model_parameters:
  onnx_model: '$models/ch_ppocr_mobile_v2.0_cls_infer.onnx'
  march: 'nash-e'
  output_model_file_prefix: 'cls'
  working_dir: 'out'
input_parameters:
  input_type_train: 'featuremap'
  input_type_rt: 'featuremap'
  input_layout_train: 'NCHW'
  input_shape: '1x3x48x192'
  norm_type: 'no_preprocess'
calibration_parameters:
  calibration_type: 'skip'
  quant_config: '{"model_config": {"activation": {"asymmetric": true}}, "op_config": {"GlobalAveragePool": {"qtype": "float16"}}, "node_config": {"p2o.Conv.0": {"qtype": "float32"}}}'
compiler_parameters:
  optimize_level: 'O2'
YAML
"$hb_compile" --config cls.yaml > run.out 2>&1 || { tail -20 run.out; exit 1; }
fail() { echo "quant_config_float: $1"; exit 1; }
grep -q "INFO node 'p2o.Conv.0' (Conv) stays in float on the CPU (quant_config qtype float32)" run.out || fail "no float32 line"
pools=$(grep -c "(GlobalAveragePool) stays in float on the CPU (quant_config qtype float16, computed in float32" run.out)
[ "$pools" -ge 1 ] || fail "no float16 line"
grep -Eq "INFO p2o.Conv.0 +CPU +-- +Conv " run.out || fail "p2o.Conv.0 not on the CPU in the node table"
[ "$(grep -Ec "INFO p2o.GlobalAveragePool.[0-9]+ +CPU +-- +GlobalAveragePool " run.out)" -eq "$pools" ] || fail "pools not on the CPU in the node table"
grep -q "WARNING quant_config activation asymmetric: true is not supported" run.out || fail "no asymmetric warning"
for f in original_float optimized_float calibrated ptq quantized; do
  [ -s "out/cls_${f}_model.onnx" ] || fail "out/cls_${f}_model.onnx missing"
done
echo "quant_config_float: Conv float32 and $pools GlobalAveragePool float16 on the CPU, asymmetric warned"
