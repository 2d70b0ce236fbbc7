#!/usr/bin/env bash
# Compiling the same inputs twice gives byte-identical model files: converts the yaml of
# conversion_accuracy_CASE twice (hb_mapper makertbin, two fresh working dirs) and compares the
# .bin files and every subgraph JSON byte for byte.
#   model_file_determinism.sh CASE HB_MAPPER CONVERSION_DIR OUT_DIR
set -euo pipefail
case_name=${1:?usage: model_file_determinism.sh CASE HB_MAPPER CONVERSION_DIR OUT_DIR}
hb_mapper=$(readlink -f "${2:?}") conversion=$(readlink -f "${3:?}")
mkdir -p "${4:?}"
out=$(readlink -f "$4")
for run in a b; do
  dir=$out/${case_name}_$run
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$conversion/$case_name/$case_name.yaml" "$dir/"
  (cd "$dir" && "$hb_mapper" makertbin --config "$case_name.yaml" --model-type onnx > makertbin.out 2>&1) || {
    tail -20 "$dir/makertbin.out" >&2
    exit 1
  }
done
a=$out/${case_name}_a/model_output b=$out/${case_name}_b/model_output
cmp "$a/$case_name.bin" "$b/$case_name.bin"
for json in "$a"/*_subgraph_*.json; do cmp "$json" "$b/$(basename "$json")"; done
echo "model_file_determinism $case_name: $(stat -c %s "$a/$case_name.bin") bytes, identical in two conversions"
