#!/usr/bin/env bash
# Caffe models through the command lines (--model-type caffe): a small classifier written by
# caffe_fixture goes through `hb_mapper checker --proto`, then `hb_mapper makertbin` with a yaml
# naming prototxt / caffe_model (calibration max on 20 random .npy samples); the quantized model
# must agree with the stage-1 float model on 10 other inputs (cosine ≥ 0.99 each, same top-1 on 9+).
#   caffe_conversion.sh CAFFE_FIXTURE HB_MAPPER WORK_DIR
set -euo pipefail
fixture=$(readlink -f "${1:?}") hb_mapper=$(readlink -f "${2:?}")
mkdir -p "${3:?}"
work=$(readlink -f "$3")
rm -rf "${work:?}"/*
cd "$work"
"$fixture" model > /dev/null

"$hb_mapper" checker --model-type caffe --march bayes-e --proto model/net.prototxt \
  --model model/net.caffemodel > checker.out 2>&1 || { tail -20 checker.out; exit 1; }
grep -q "Caffe model model/net.prototxt + model/net.caffemodel read" checker.out || { echo "checker: no Caffe line"; exit 1; }
grep -q "End to check the model" checker.out || { tail -20 checker.out; exit 1; }

/usr/bin/python3 - <<'PY'
import os, numpy as np
rng = np.random.default_rng(11)
os.makedirs("cal", exist_ok=True); os.makedirs("eval", exist_ok=True)
for i in range(20):
    np.save(f"cal/{i:02d}.npy", rng.normal(0, 1, (1, 3, 32, 32)).astype(np.float32))
for i in range(10):
    np.save(f"eval/{i:02d}.npy", rng.normal(0, 1, (1, 3, 32, 32)).astype(np.float32))
PY
cat > net.yaml <<YAML
model_parameters:
  prototxt: 'model/net.prototxt'
  caffe_model: 'model/net.caffemodel'
  march: 'bayes-e'
  output_model_file_prefix: 'net'
  working_dir: 'net_out'
input_parameters:
  input_type_train: 'featuremap'
  input_type_rt: 'featuremap'
  input_layout_train: 'NCHW'
  norm_type: 'no_preprocess'
calibration_parameters:
  cal_data_dir: 'cal'
  calibration_type: 'max'
compiler_parameters:
  optimize_level: 'O3'
YAML
"$hb_mapper" makertbin --config net.yaml --model-type caffe > makertbin.out 2>&1 || { tail -20 makertbin.out; exit 1; }
for stage in original_float quantized; do
  [ -f "net_out/net_${stage}_model.onnx" ] || { echo "missing net_${stage}_model.onnx"; exit 1; }
  for i in 00 01 02 03 04 05 06 07 08 09; do
    "$hb_mapper" infer --model-file "net_out/net_${stage}_model.onnx" --input "data=eval/$i.npy" \
      --output-dir "out_${stage}/$i" > /dev/null
  done
done
/usr/bin/python3 - <<'PY'
import numpy as np
agree = 0
for i in range(10):
    a = np.load(f"out_original_float/{i:02d}/prob.npy").ravel()
    b = np.load(f"out_quantized/{i:02d}/prob.npy").ravel()
    cos = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
    assert cos >= 0.99, (i, cos)
    agree += int(a.argmax() == b.argmax())
assert agree >= 9, agree
print(f"caffe: quantized vs float on 10 inputs: every cosine >= 0.99, top-1 equal on {agree}")
PY
