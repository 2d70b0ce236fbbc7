#!/usr/bin/env bash
# Times the float executor against onnxruntime-node on the PP-OCR models (same inputs, same
# thread counts, one run) and prints Google Benchmark's table with the ratio column.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release --target model_benchmark
data=build/release/tests/models/data
tests/models/prepare_reference.sh "$data" >/dev/null
export NODE_PATH=${OPENBPU_CACHE:-$HOME/.cache/openbpu}/npm/node_modules
build/release/tests/benchmarks/model_benchmark --data-dir="$data" "$@"
