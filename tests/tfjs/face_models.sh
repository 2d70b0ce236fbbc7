#!/usr/bin/env bash
# Four trained classifiers from npm (@vladmandic/human's TensorFlow.js models: emotion, a
# mini-Xception over 64x64 grayscale, 7 classes; antispoof and liveness, small CNNs with a
# sigmoid / 2-way softmax; faceres, a MobileNetV1 at 224x224 with gender, age and a 1024-value
# embedding), converted end to end as a user with a tf2onnx export would: tfjs_to_onnx.py gives
# the ONNX model (NHWC input); the float executor must reproduce TensorFlow.js on it; checker;
# makertbin for bayes-e with calibration default on 36 faces (every third face of
# screenshot-facematch.jpg's grid); hb_model_verifier on a held-out face (the .bin bit for bit);
# then float vs quantized on two held-out sets (make_inputs.py): "faces", the grid's other 72
# faces and their mirror images (the inputs these models are for), and "crops", TESTS random
# crops of four other pictures (out of the calibration's domain; reported, with a low floor;
# none when TESTS is 0). The sets run through the openbpu package's Session when it imports
# (tests/zoo/run_set.py, one process per set), else through hb_mapper infer per input.
# Bars: float vs TensorFlow.js max |Δ| / max |ref| <= 1e-4 on REFERENCE faces; 1 BPU subgraph;
# on the faces output cosine mean >= 0.99, decisions (arg-max, sigmoid >= 0.5) equal to float on
# >= FLOOR % of them and on >= 99 % of those float decides clearly (compare.py); on the crops
# decisions equal on >= 85 %. Prints the numbers of docs/conversion.md.
#   face_models.sh HB_MAPPER HB_MODEL_VERIFIER WORK_DIR [TESTS] [REFERENCE] [FLOOR] [MODELS]
# (defaults 100 crops, 4 faces through TensorFlow.js, floor 96 %, all four models.)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
hb_mapper=$(readlink -f "${1:?}") verifier=$(readlink -f "${2:?}")
mkdir -p "${3:?}"
work=$(readlink -f "$3")
tests=${4:-100} reference=${5:-4} floor=${6:-96} models=${7:-emotion antispoof liveness faceres}
cache=${OPENBPU_CACHE:-$HOME/.cache/openbpu}
rm -rf "${work:?}"/*
cd "$work"

src=$("$repo/scripts/fetch_face_models.sh")
export NODE_PATH="$cache/npm/tfjs-4.22.0/node_modules"
failures=0
# hb_mapper infer per input unless the build has the Python package (PYTHONPATH, as ctest sets).
session=no
/usr/bin/python3 -c "import openbpu" > /dev/null 2>&1 && session=yes
bad() { echo "face_models $m: $1"; [ -f "${2:-}" ] && tail -15 "$2"; failures=$((failures + 1)); }
for m in $models; do
  mkdir -p "$m" && cd "$m"
  /usr/bin/python3 "$here/tfjs_to_onnx.py" "$src/$m.json" "$m.onnx" > import.out 2>&1 || { bad "tfjs_to_onnx failed" import.out; cd ..; continue; }
  input=$(/usr/bin/python3 -c "import onnx; print(onnx.load('$m.onnx').graph.input[0].name)")
  /usr/bin/python3 "$here/make_inputs.py" "$m" cal --faces "$src/screenshot-facematch.jpg" cal
  /usr/bin/python3 "$here/make_inputs.py" "$m" faces --faces "$src/screenshot-facematch.jpg" test
  sets=faces
  if [ "$tests" -gt 0 ]; then
    sets="faces crops"
    /usr/bin/python3 "$here/make_inputs.py" "$m" crops "$tests" 8 "$src/samples.jpg" "$src"/screenshot-{facedetect,faceid,vrm}.jpg
  fi
  run() {  # run MODEL SET OUT_DIR: the model with our executor on every input of a held-out set
    if [ "$session" = yes ]; then  # one process for the set (the openbpu package's Session)
      /usr/bin/python3 "$repo/tests/zoo/run_set.py" "$1" "$2" "$3" > run.out 2>&1 || bad "$1 on $2 failed" run.out
      return
    fi
    local n
    n=$(find "$2" -name '*.npy' | wc -l)
    for ((i = 0; i < n; i++)); do
      "$hb_mapper" infer --model-file "$1" --input "$input=$2/$i.npy" --output-dir "$3/$i" > /dev/null 2>&1 || bad "$1 on $2/$i failed"
    done
  }
  run "$m.onnx" faces float_faces
  [ "$tests" = 0 ] || run "$m.onnx" crops float_crops
  mapfile -t refs < <(for ((i = 0; i < reference; i++)); do echo "faces/$i.npy"; done)
  node "$here/tfjs_run.js" "$src/$m.json" tfjs "${refs[@]}" > tfjs.out 2>&1 || bad "TensorFlow.js run failed" tfjs.out
  mkdir -p float_ref && for ((i = 0; i < reference; i++)); do cp -r "float_faces/$i" float_ref/; done
  against=$(/usr/bin/python3 "$here/compare.py" tfjs float_ref 2>&1) || bad "comparison with TensorFlow.js failed: $against"
  awk '{split($2, d, "="); if (d[2] + 0 > 1e-4) exit 1}' <<< "$against" || bad "float executor differs from TensorFlow.js: $against"
  "$hb_mapper" checker --model-type onnx --march bayes-e --model "$m.onnx" > checker.out 2>&1 || bad "checker failed" checker.out
  cat > "$m.yaml" <<YAML
model_parameters:
  onnx_model: '$m.onnx'
  march: 'bayes-e'
  working_dir: 'out'
  output_model_file_prefix: '$m'
input_parameters:
  input_name: '$input'
  input_type_train: 'featuremap'
  input_type_rt: 'featuremap'
  input_layout_train: 'NCHW'
  norm_type: 'no_preprocess'
calibration_parameters:
  calibration_type: 'default'
  cal_data_dir: 'cal'
compiler_parameters:
  optimize_level: 'O3'
YAML
  start=$(date +%s.%N)
  "$hb_mapper" makertbin --config "$m.yaml" --model-type onnx > convert.out 2>&1 || { bad "makertbin failed" convert.out; cd ..; continue; }
  seconds=$(echo "$(date +%s.%N) - $start" | bc)
  split=$(grep -oE "The model has [0-9]+ nodes: [0-9]+ on the BPU in [0-9]+ subgraphs?, [0-9]+ on the CPU" convert.out)
  grep -q "in 1 subgraph," <<< "$split" || bad "not 1 BPU subgraph: $split"
  "$verifier" -q "out/${m}_quantized_model.onnx" -b "out/$m.bin" -i faces/0.npy > verify.out 2>&1 || bad "hb_model_verifier failed" verify.out
  [ "$(grep -c 'Strict check PASSED' verify.out)" = "$(grep -c '^output\[' verify.out)" ] || bad "not bit-exact" verify.out
  printf 'face_models %s: %s; %.1f s; TensorFlow.js vs float: %s\n' "$m" "$split" "$seconds" "$(tr '\n' ' ' <<< "$against")"
  for set in $sets; do
    run "out/${m}_quantized_model.onnx" "$set" "quant_$set"
    metrics=$(/usr/bin/python3 "$here/compare.py" "float_$set" "quant_$set" 2>&1) || { bad "comparison failed: $metrics"; continue; }
    bar=85 && [ "$set" = faces ] && bar=$floor
    while read -r output rel cosine decision clear; do
      mean=${cosine#cosine=}; mean=${mean%/*} agree=${decision#decision=} sure=${clear#clear=}; sure=${sure%/*}
      [ "$set" = crops ] || awk -v c="$mean" 'BEGIN {exit !(c >= 0.99)}' || bad "$set, $output: mean output cosine $mean < 0.99"
      [ "$agree" = - ] || awk -v a="$agree" -v f="$bar" 'BEGIN {exit !(a >= f)}' ||
        bad "$set, $output: decisions equal to float on $agree% (< $bar%)"
      [ "$set" = crops ] || [ "$sure" = - ] || awk -v a="$sure" 'BEGIN {exit !(a >= 99)}' ||
        bad "$set, $output: clear decisions equal to float on $sure% (< 99%)"
    done <<< "$metrics"
    sed "s/^/  $set: /" <<< "$metrics"
  done
  cd ..
done
[ "$failures" = 0 ] || { echo "face_models: $failures failure(s)"; exit 1; }
echo "face_models: OK"
