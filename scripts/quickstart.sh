#!/usr/bin/env bash
# The main job on the bundled default: installs dependencies, builds hb_mapper and the accuracy
# harness, fetches the PP-OCR models, renders the OCR calibration/evaluation sets, converts
# PP-OCRv4 det with `hb_mapper makertbin` (calibration_type default, march bayes-e) and measures
# the quantized model against the float model on the held-out pages.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target hb_mapper ocr_accuracy

work=${OPENBPU_QUICKSTART_DIR:-build/quickstart}
tests/accuracy/render_dataset.sh "$work"
tests/accuracy/conversion_accuracy.sh det build/release/toolchain/cli/hb_mapper \
  build/release/tests/accuracy/ocr_accuracy "$work/data" "$work/conversion"
echo
echo "config, log and stage models: $work/conversion/det/ (det.yaml, hb_mapper_makertbin.log, model_output/)"
