#!/usr/bin/env bash
# Silero VAD v5 and v6, real models from npm (@ricky0123/vad-web), converted end to end as a user
# would: fixed_inputs binds the sample-rate input to 16000 (its If then folds, with the nested
# shape tests under it); the calibration samples are frames of a speech-and-noise stream
# (tests/vad/make_audio.py, espeak-ng; 512 samples after the previous frame's last 64, as
# vad-web feeds them) with the state the float model carried into each (stream_infer);
# makertbin for bayes-e (int16, the STFT magnitude on the CPU); hb_model_verifier on two
# samples (the .bin bit for bit); then three streams over other audio, frame by frame with the
# state fed back: onnxruntime on the original model, our float executor on the optimized model,
# and the quantized model.
# Bars: float vs onnxruntime |Δp| <= 1e-4 on every frame; speech decisions (p >= 0.5) of the
# quantized model equal to float on >= 98% of frames. Prints the BPU subgraphs and the numbers.
#   silero_vad.sh HB_MAPPER HB_MODEL_VERIFIER STREAM_INFER WORK_DIR [SECONDS] [MODELS]
# (SECONDS of evaluation audio, default 30; MODELS default "v5 v6".)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
hb_mapper=$(readlink -f "${1:?}") verifier=$(readlink -f "${2:?}") stream=$(readlink -f "${3:?}")
mkdir -p "${4:?}"
work=$(readlink -f "$4")
seconds=${5:-30}
models=${6:-v5 v6}
cache=${OPENBPU_CACHE:-$HOME/.cache/openbpu}
rm -rf "${work:?}"/*
cd "$work"

vad_dir=$("$repo/scripts/fetch_vad_models.sh")
"$repo/scripts/fetch_npm_packages.sh" > /dev/null  # onnxruntime-node
export NODE_PATH="$cache/npm/node_modules"
"$here/make_audio.py" cal.npy --seed 11 --seconds 24
"$here/make_audio.py" test.npy --seed 12 --seconds "$seconds"

failures=0
bad() { echo "silero_vad $v: $1"; [ -f "${2:-}" ] && tail -15 "$2"; failures=$((failures + 1)); }
for v in $models; do
  model=$vad_dir/silero_vad_$v.onnx
  # The config a user arrives at (docs/conversion.md): int16 everywhere, as audio models with a
  # recurrent state need, and the STFT magnitude sqrt(re² + im²) in float beside the STFT
  # convolution the CPU runs anyway (kernel 256): a linear int16 grid loses the quiet frames.
  stft='If_0_then_branch__Inline_0__/stft'
  mkdir -p "$v" && cd "$v"
  # The checker binds sr as the yaml does (--fixed-input) and places every node.
  "$hb_mapper" checker --model-type onnx --march bayes-e --model "$model" --fixed-input sr 16000 \
    --input-shape input 1x576 --input-shape state 2x1x128 > checker.out 2>&1 || bad "checker failed" checker.out
  grep -q "1 BPU subgraph" checker.out || bad "checker: not 1 BPU subgraph" checker.out
  "$stream" "$model" ../cal.npy float_cal --context 64 --optimize --fixed sr=16000 --samples-every 6 > cal.out 2>&1 ||
    { bad "calibration stream failed" cal.out; cd ..; continue; }
  cat > "$v.yaml" <<YAML
model_parameters:
  onnx_model: '$model'
  march: 'bayes-e'
  working_dir: 'out'
  output_model_file_prefix: 'silero_$v'
input_parameters:
  input_name: 'input;state'
  input_type_train: 'featuremap;featuremap'
  input_type_rt: 'featuremap;featuremap'
  input_layout_train: 'NCHW;NCHW'
  input_shape: '1x576;2x1x128'
  norm_type: 'no_preprocess;no_preprocess'
  fixed_inputs: 'sr=16000'
calibration_parameters:
  calibration_type: 'default'
  cal_data_dir: 'float_cal/cal/input;float_cal/cal/state'
  optimization: 'set_all_nodes_int16'
  run_on_cpu: '$stft/Pow;$stft/Pow_1;$stft/Add;$stft/Sqrt'
compiler_parameters:
  optimize_level: 'O3'
YAML
  "$hb_mapper" makertbin --config "$v.yaml" --model-type onnx > convert.out 2>&1 || { bad "makertbin failed" convert.out; cd ..; continue; }
  split=$(grep -oE "The model has [0-9]+ nodes: [0-9]+ on the BPU in [0-9]+ subgraphs?, [0-9]+ on the CPU" convert.out)
  for i in 0 1; do
    "$verifier" -q "out/silero_${v}_quantized_model.onnx" -b "out/silero_$v.bin" \
      -i "float_cal/cal/input/$i.npy,float_cal/cal/state/$i.npy" > "verify$i.out" 2>&1 || bad "hb_model_verifier failed" "verify$i.out"
    [ "$(grep -c 'Strict check PASSED' "verify$i.out")" = 2 ] || bad "the .bin is not bit-exact on sample $i" "verify$i.out"
  done
  node "$here/ort_stream.js" "$model" ../test.npy reference.txt || bad "onnxruntime stream failed"
  "$stream" "$model" ../test.npy float --context 64 --optimize --fixed sr=16000 > float.out 2>&1 || bad "float stream failed" float.out
  "$stream" "out/silero_${v}_quantized_model.onnx" ../test.npy quant --context 64 > quant.out 2>&1 || bad "quantized stream failed" quant.out
  metrics=$("$here/compare.py" reference.txt float/probabilities.txt quant/probabilities.txt) || { bad "$metrics"; cd ..; continue; }
  value() { grep -oP "(^| )$1=\K[0-9.e+-]+" <<< "$metrics"; }
  awk -v d="$(value float_vs_reference_max)" 'BEGIN {exit !(d <= 1e-4)}' ||
    bad "float executor differs from onnxruntime by $(value float_vs_reference_max)"
  awk -v a="$(value quantized_vs_float_agree)" 'BEGIN {exit !(a >= 98)}' ||
    bad "quantized decisions agree with float on $(value quantized_vs_float_agree)% of frames (< 98%)"
  echo "silero_vad $v: $split; $metrics"
  cd ..
done
[ "$failures" = 0 ] || { echo "silero_vad: $failures failure(s)"; exit 1; }
echo "silero_vad: OK"
