#!/usr/bin/env bash
# The main job on the bundled default: installs dependencies, builds hb_mapper, the accuracy
# harness and hrt_model_exec, fetches the PP-OCR models, renders the OCR calibration/evaluation
# sets, converts PP-OCRv4 det with `hb_mapper makertbin` (calibration_type default, march
# bayes-e) to the stage models and det.bin, measures the quantized model against the float model
# on the held-out pages, prints the model file with hb_model_info, then runs det.bin on the
# simulator with hrt_model_exec: infer on a held-out page (its output compared byte for byte
# with `hb_mapper infer` on the quantized ONNX model) and perf on 2 threads.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target hb_mapper ocr_accuracy hb_model_info hrt_model_exec

work=${OPENBPU_QUICKSTART_DIR:-build/quickstart}
tests/accuracy/render_dataset.sh "$work"
tests/accuracy/conversion_accuracy.sh det build/release/toolchain/cli/hb_mapper \
  build/release/tests/accuracy/ocr_accuracy "$work/data" "$work/conversion"
out=$work/conversion/det/model_output
echo
build/release/toolchain/cli/hb_model_info "$out/det.bin"

hrt=build/release/board_tools/hrt_model_exec/hrt_model_exec
pages=("$work"/data/evaluation/det/input/*.npy)
page=${pages[0]}
echo
echo "== hrt_model_exec infer (det.bin on the simulator, one held-out page)"
"$hrt" infer --model_file="$out/det.bin" --input_file="$page" --enable_dump --dump_path="$work/infer"
build/release/toolchain/cli/hb_mapper infer --model-file "$out/det_quantized_model.onnx" --input "x=$page" \
  --output-dir "$work/infer/quantized_onnx" >/dev/null
ref=$work/infer/quantized_onnx/sigmoid_0.tmp_0.npy
header=$((10 + $(od -An -tu2 -j8 -N2 "$ref" | tr -d ' ')))  # .npy: magic 6, version 2, length 2, header
if tail -c +$((header + 1)) "$ref" | cmp -s - "$work/infer/model_infer_output_0_sigmoid_0.tmp_0.bin"; then
  echo "det.bin through hbDNNInfer: output bit-identical to hb_mapper infer on det_quantized_model.onnx"
else
  echo "det.bin through hbDNNInfer differs from hb_mapper infer on det_quantized_model.onnx" >&2
  exit 1
fi
echo
echo "== hrt_model_exec perf (10 frames, 2 threads)"
"$hrt" perf --model_file="$out/det.bin" --frame_count=10 --thread_num=2
echo
echo "config, log, stage models, det.bin and the subgraph estimate: $work/conversion/det/ (det.yaml, hb_mapper_makertbin.log, model_output/)"
echo "hrt_model_exec dumps: $work/infer/"
