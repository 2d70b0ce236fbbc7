#!/usr/bin/env bash
# Fixture nv12_classifier: the zoo's MobileNet v1 (tests/zoo/build_zoo.py, 64x64, 100 classes)
# converted for an NV12 input (input_type_rt nv12, trained on RGB bytes, mean 128 and scale
# 1/64 in HzPreprocess), the model the classification sample runs; and test images of it:
# one at the model's size and one that needs resizing, each as PNG (hrt_model_exec), PPM and
# uint8 (H, W, 3) .npy (the sample).
#   nv12_classifier.sh HB_MAPPER WORK_DIR
# Writes WORK_DIR/mobilenet_v1_nv12.bin and WORK_DIR/images/{same,resized}.{png,ppm,npy}.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
hb_mapper=$(readlink -f "${1:?usage: nv12_classifier.sh HB_MAPPER WORK_DIR}")
mkdir -p "${2:?}"
work=$(readlink -f "$2")
rm -rf "${work:?}"/*
/usr/bin/python3 "$here/../zoo/build_zoo.py" "$work/zoo" --only mobilenet_v1 --calibration 8 --tests 0 > /dev/null
cd "$work"
/usr/bin/python3 - "$work" <<'PY'
import os, sys
import numpy as np
from PIL import Image
work = sys.argv[1]
# Calibration images: the zoo's float samples (about [-2, 2]) as the RGB bytes they stand for.
src = os.path.join(work, "zoo/mobilenet_v1/cal/input")
os.makedirs(os.path.join(work, "cal_rgb"))
for f in sorted(os.listdir(src)):
    x = np.load(os.path.join(src, f))
    np.save(os.path.join(work, "cal_rgb", f), np.clip(np.rint(x * 64 + 128), 0, 255).astype(np.uint8))
# Test images: smooth colour fields, one at 64x64 and one at 96x80 (resized by the readers).
os.makedirs(os.path.join(work, "images"))
rng = np.random.default_rng(7)
for name, (h, w) in {"same": (64, 64), "resized": (80, 96)}.items():
    ys, xs = np.mgrid[0:h, 0:w]
    rgb = np.stack([128 + 100 * np.sin(xs / (5 + 3 * c) + ys / (7 + 2 * c) + c) for c in range(3)], axis=-1)
    rgb = np.clip(np.rint(rgb + rng.normal(0, 8, rgb.shape)), 0, 255).astype(np.uint8)
    base = os.path.join(work, "images", name)
    Image.fromarray(rgb, "RGB").save(base + ".png")
    Image.fromarray(rgb, "RGB").save(base + ".ppm")
    np.save(base + ".npy", rgb)
PY
cat > mobilenet_v1_nv12.yaml <<YAML
model_parameters:
  onnx_model: 'zoo/mobilenet_v1/mobilenet_v1.onnx'
  march: 'bayes-e'
  working_dir: 'model_output'
  output_model_file_prefix: 'mobilenet_v1_nv12'
input_parameters:
  input_type_train: 'rgb'
  input_type_rt: 'nv12'
  input_layout_train: 'NCHW'
  norm_type: 'data_mean_and_scale'
  mean_value: 128
  scale_value: 0.015625
calibration_parameters:
  calibration_type: 'default'
  cal_data_dir: 'cal_rgb'
compiler_parameters:
  optimize_level: 'O3'
YAML
"$hb_mapper" makertbin --config mobilenet_v1_nv12.yaml --model-type onnx > convert.out 2>&1 || {
  tail -30 convert.out; echo "nv12_classifier: conversion failed" >&2; exit 1; }
cp model_output/mobilenet_v1_nv12.bin .
echo "nv12_classifier: $work/mobilenet_v1_nv12.bin ($(stat -c %s mobilenet_v1_nv12.bin) bytes)"
