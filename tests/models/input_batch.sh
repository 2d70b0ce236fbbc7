#!/usr/bin/env bash
# input_batch / separate_batch end to end on the real models (calibration_type skip: the batch
# does not depend on the thresholds):
# 1. hb_mapper makertbin, PP-OCRv4 rec, input_batch 4: the run checks every item of a batched run
#    against the item alone and logs it; the quantized model's input is [4,3,48,320].
# 2. hb_compile, PP-OCR cls, input_batch 3 + separate_batch: the quantized model takes x_0..x_2;
#    `hb_mapper infer` on three different items gives, item by item, the outputs of the input_batch 1
#    model run on each item alone.
#   input_batch.sh HB_MAPPER HB_COMPILE MODELS_DIR WORK_DIR
set -euo pipefail
hb_mapper=$(readlink -f "${1:?}") hb_compile=$(readlink -f "${2:?}") models=$(readlink -f "${3:?}")
mkdir -p "${4:?}"
work=$(readlink -f "$4")
rm -rf "${work:?}"/*
cd "$work"

yaml() {  # yaml NAME MODEL SHAPE MARCH LEVEL EXTRA_INPUT_KEYS
  cat > "$1.yaml" <<YAML
model_parameters:
  onnx_model: '$models/$2'
  march: '$4'
  output_model_file_prefix: '$1'
  working_dir: '$1_out'
input_parameters:
  input_type_train: 'featuremap'
  input_type_rt: 'featuremap'
  input_layout_train: 'NCHW'
  input_shape: '$3'
  norm_type: 'no_preprocess'
$6
calibration_parameters:
  calibration_type: 'skip'
compiler_parameters:
  optimize_level: '$5'
YAML
}

yaml rec4 ch_PP-OCRv4_rec_infer.onnx 1x3x48x320 bayes-e O3 "  input_batch: 4"
"$hb_mapper" makertbin --config rec4.yaml --model-type onnx > rec4.out 2>&1 || { tail -20 rec4.out; exit 1; }
grep -q "input_batch 4: input 'x' is now float32\[4,3,48,320\]" rec4.out || { echo "rec: no batch line"; exit 1; }
grep -q "input_batch 4: each item of a batched run equals the item run alone" rec4.out || { echo "rec: no check line"; exit 1; }

yaml cls3 ch_ppocr_mobile_v2.0_cls_infer.onnx 1x3x48x192 nash-e O2 "  input_batch: 3
  separate_batch: True"
yaml cls1 ch_ppocr_mobile_v2.0_cls_infer.onnx 1x3x48x192 nash-e O2 ""
for m in cls3 cls1; do
  "$hb_compile" --config $m.yaml > $m.out 2>&1 || { tail -20 $m.out; exit 1; }
done
grep -q "separate_batch: 3 inputs x_0 ... x_2 of float32\[1,3,48,192\]" cls3.out || { echo "cls: no separate line"; exit 1; }
/usr/bin/python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(3)
for i in range(3):
    np.save(f"item{i}.npy", rng.uniform(-1, 1, (1, 3, 48, 192)).astype(np.float32))
PY
"$hb_mapper" infer --model-file cls3_out/cls3_quantized_model.onnx --input x_0=item0.npy \
  --input x_1=item1.npy --input x_2=item2.npy --output-dir out3 > infer3.out
for i in 0 1 2; do
  "$hb_mapper" infer --model-file cls1_out/cls1_quantized_model.onnx --input x=item$i.npy \
    --output-dir out1_$i > infer1_$i.out
done
/usr/bin/python3 - <<'PY'
import glob, os, numpy as np
for f in glob.glob("out3/*.npy"):
    batched = np.load(f)
    assert batched.shape[0] == 3, (f, batched.shape)
    for i in range(3):
        alone = np.load(os.path.join(f"out1_{i}", os.path.basename(f)))
        assert np.array_equal(batched[i:i + 1], alone), (f, i, np.abs(batched[i:i + 1] - alone).max())
print("separate_batch: every item equals the input_batch 1 model on that item")
PY
