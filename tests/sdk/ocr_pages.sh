# shellcheck shell=bash disable=SC2034  # sets variables for the sourcing script
# Sourced by the samples/ocr_pipeline tests (ocr_pipeline.sh, ocr_pipeline_aarch64.sh): the
# rendered pages as PPM images, the models' command-line arguments, and the turned-page check.
# bad() records a failure (the caller exits non-zero when failures > 0); seconds_since T prints
# the seconds since `date +%s.%N` gave T.
failures=0
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }
seconds_since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# ocr_page_images DATASET_DIR PAGES OUT_DIR [ROWS]: the det evaluation pages PAGES (comma-separated
# ids, or "all") as OUT_DIR/<id>.ppm, and the first one turned by 180 degrees as
# OUT_DIR/<id>_turned.ppm; with ROWS > 0 each page cut to its first ROWS rows (fewer lines, for
# the runs under qemu). Sets page_images (array) and rotated_image.
ocr_page_images() {
  local dataset=$1 pages=$2 out=$3 rows=${4:-0}
  mkdir -p "$out"
  mapfile -t page_images < <(/usr/bin/python3 - "$dataset/evaluation/det" "$pages" "$out" "$rows" <<'PY'
import json, os, sys
from PIL import Image
folder, pages, out, rows = sys.argv[1:4] + [int(sys.argv[4])]
samples = json.load(open(os.path.join(folder, "labels.json")))["samples"]
ids = [s["id"] for s in samples] if pages == "all" else pages.split(",")
by_id = {s["id"]: s for s in samples}
for i in ids:
    if i not in by_id:
        sys.exit("no page %s in %s" % (i, folder))
    image = Image.open(os.path.join(folder, by_id[i]["image"])).convert("RGB")
    if rows > 0:
        image = image.crop((0, 0, image.width, min(rows, image.height)))
    image.save(os.path.join(out, i + ".ppm"))
    if i == ids[0]:
        image.rotate(180).save(os.path.join(out, i + "_turned.ppm"))
    print(os.path.join(out, i + ".ppm"))
PY
  )
  [ "${#page_images[@]}" -gt 0 ] || { bad "no page images made"; return 1; }
  rotated_image=${page_images[0]%.ppm}_turned.ppm
}

# ocr_models CONVERSION_DIR [MODELS_DIR]: the arguments naming the converted det, cls and rec
# models: bin_models (the .bin files), quantized_models (their *_quantized_model.onnx) and, with
# MODELS_DIR (the float models), float_models with the input sizes the conversions fixed.
ocr_models() {
  local c=$1 m=${2:-}
  bin_models=(--det "$c/det/model_output/det.bin" --cls "$c/cls/model_output/cls.bin"
              --rec "$c/rec/model_output/rec.bin")
  quantized_models=(--det "$c/det/model_output/det_quantized_model.onnx"
                    --cls "$c/cls/model_output/cls_quantized_model.onnx"
                    --rec "$c/rec/model_output/rec_quantized_model.onnx")
  float_models=()
  [ -z "$m" ] || float_models=(--det "$m/ch_PP-OCRv4_det_infer.onnx" --det-size 704x960
                               --cls "$m/ch_ppocr_mobile_v2.0_cls_infer.onnx" --cls-size 48x192
                               --rec "$m/ch_PP-OCRv4_rec_infer.onnx" --rec-size 48x320)
}

# turned_check OUTPUT MIN_AGREE: in OUTPUT (the sample's format), the turned page's lines are
# turned back (angle 180) and, when OUTPUT has the upright page too, read as the upright page's:
# at least MIN_AGREE % of the upright page's texts are among the turned page's (spaces removed:
# the recogniser's spaces are the first thing a crop a pixel off changes). Non-zero otherwise.
turned_check() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import re, sys
from collections import Counter
pages, current = {}, None
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r"^image (\S+): ", line)
    if m:
        current = m.group(1)
        pages[current] = []
    elif line.startswith("box "):
        m = re.match(r"^box \d+: \S+ \S+ \S+ \S+ angle (\d+) score \S+ text (.*)$", line.rstrip("\n"))
        pages[current].append((int(m.group(1)), m.group(2).replace(" ", "")))
turned = [p for p in pages if p.endswith("_turned.ppm")][0]
upright = turned.replace("_turned.ppm", ".ppm")
t, u = pages[turned], pages.get(upright)
rotated = sum(1 for a, _ in t if a == 180)
if u is None:
    print("turned page: %d lines, %d turned back by cls" % (len(t), rotated))
    sys.exit(0 if len(t) and rotated == len(t) else 1)
common = sum((Counter(x for _, x in u) & Counter(x for _, x in t)).values())
share = 100.0 * common / max(1, len(u))
print("turned page: %d lines, %d turned back by cls; %d of the upright page's %d texts read again, "
      "spaces removed (%.1f%%)"
      % (len(t), rotated, common, len(u), share))
sys.exit(0 if len(t) and rotated == len(t) and share >= float(sys.argv[2]) else 1)
PY
}
