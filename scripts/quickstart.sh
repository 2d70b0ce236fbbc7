#!/usr/bin/env bash
# The main job on the bundled default: installs dependencies, builds hb_mapper and the accuracy
# harness, fetches the PP-OCR models, renders the OCR calibration/evaluation sets, converts
# PP-OCRv4 det with `hb_mapper makertbin` (calibration_type default, march bayes-e) to the
# stage models and det.bin, measures the quantized model against the float model on the
# held-out pages, prints the model file with hb_model_info, and runs every BPU segment of it on
# the virtual BPU against the quantized model (bit for bit, 20 pages).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target hb_mapper ocr_accuracy hb_model_info bpu_segment_check

work=${OPENBPU_QUICKSTART_DIR:-build/quickstart}
tests/accuracy/render_dataset.sh "$work"
tests/accuracy/conversion_accuracy.sh det build/release/toolchain/cli/hb_mapper \
  build/release/tests/accuracy/ocr_accuracy "$work/data" "$work/conversion"
echo
build/release/toolchain/cli/hb_model_info "$work/conversion/det/model_output/det.bin"
echo
build/release/tests/simulator/bpu_segment_check --model "$work/conversion/det/model_output/det_quantized_model.onnx" \
  --bin-model "$work/conversion/det/model_output/det.bin" --inputs "$work/data/evaluation/det/input" --count 20 \
  --march bayes-e
echo
echo "config, log, stage models, det.bin and the subgraph estimate: $work/conversion/det/ (det.yaml, hb_mapper_makertbin.log, model_output/)"
