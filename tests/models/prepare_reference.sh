#!/usr/bin/env bash
# Prepares the real-model comparison: fetches the PP-OCR models and onnxruntime-node (cached,
# checksum-verified), renders text-image inputs, and runs onnxruntime-node on each of them.
#   prepare_reference.sh OUT_DIR [THREADS]
# Leaves OUT_DIR/models -> the model folder, OUT_DIR/inputs/*.npy and
# OUT_DIR/ort/<input stem>/<output>.npy.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:?usage: prepare_reference.sh OUT_DIR [THREADS]}
threads=${2:-1}
cache=${OPENBPU_CACHE:-$HOME/.cache/openbpu}

models=$("$repo/scripts/fetch_npm_packages.sh")
mkdir -p "$out"
ln -sfn "$models" "$out/models"
if [ ! -f "$out/inputs/manifest.tsv" ]; then
  "$repo/scripts/render_ocr_inputs.py" --out "$out/inputs.tmp" --det 2 --rec 4 --cls 4
  rm -rf "$out/inputs" && mv "$out/inputs.tmp" "$out/inputs"
fi
export NODE_PATH="$cache/npm/node_modules"
while IFS=$'\t' read -r file kind _; do
  case "$kind" in
    det) model=ch_PP-OCRv4_det_infer.onnx ;;
    rec) model=ch_PP-OCRv4_rec_infer.onnx ;;
    cls) model=ch_ppocr_mobile_v2.0_cls_infer.onnx ;;
    *) continue ;;
  esac
  stem=${file%.npy}
  [ -d "$out/ort/$stem" ] && continue
  node "$here/ort_run.js" --model "$models/$model" --input "x=$out/inputs/$file" \
    --output-dir "$out/ort/$stem.tmp" --threads "$threads" >/dev/null
  mv "$out/ort/$stem.tmp" "$out/ort/$stem"
done < "$out/inputs/manifest.tsv"
echo "prepare_reference: ready in $out"
