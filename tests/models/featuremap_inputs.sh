#!/usr/bin/env bash
# Featuremap inputs that are not 4-D (speech frames, recurrent state), end to end: a model with a
# [1, 64] frame and a [2, 1, 16] state in and out (graphs/speech_state.graph) through
#   hb_mapper checker, hb_mapper makertbin (bayes-e, calibration default on 8 samples),
#   hb_compile (nash-e), and hb_model_verifier on each model file (the quantized model and the
#   .bin / .hbm on the simulator, bit for bit);
# then the rule that keeps such an input from being normalised: norm_type data_mean on the [1, 64]
# input is refused, naming the key.
#   featuremap_inputs.sh GRAPH_TO_ONNX HB_MAPPER HB_COMPILE HB_MODEL_VERIFIER GRAPH WORK_DIR
set -euo pipefail
to_onnx=$(readlink -f "${1:?}") hb_mapper=$(readlink -f "${2:?}") hb_compile=$(readlink -f "${3:?}")
verifier=$(readlink -f "${4:?}") graph=$(readlink -f "${5:?}")
mkdir -p "${6:?}"
work=$(readlink -f "$6")
rm -rf "${work:?}"/*
cd "$work"
"$to_onnx" "$graph" speech.onnx --samples 8 cal

yaml() {  # yaml NAME MARCH NORM_TYPES [EXTRA_INPUT_KEY]
  cat > "$1.yaml" <<YAML
model_parameters:
  onnx_model: 'speech.onnx'
  march: '$2'
  working_dir: '$1_out'
  output_model_file_prefix: '$1'
input_parameters:
  input_name: 'x;h'
  input_type_train: 'featuremap;featuremap'
  input_type_rt: 'featuremap;featuremap'
  input_layout_train: 'NCHW;NCHW'
  norm_type: '$3'
${4:-}
calibration_parameters:
  calibration_type: 'default'
  cal_data_dir: 'cal/x;cal/h'
compiler_parameters:
  optimize_level: 'O2'
YAML
}
fail() { echo "featuremap_inputs: $1"; [ -f "${2:-}" ] && tail -20 "$2"; exit 1; }

"$hb_mapper" checker --model-type onnx --march bayes-e --model speech.onnx > checker.out 2>&1 ||
  fail "checker failed" checker.out
grep -q "1 BPU subgraph" checker.out || fail "checker: not one BPU subgraph" checker.out

yaml mapper bayes-e 'no_preprocess;no_preprocess'
"$hb_mapper" makertbin --config mapper.yaml --model-type onnx > mapper.out 2>&1 || fail "makertbin failed" mapper.out
grep -q "in 1 subgraph" mapper.out || fail "makertbin: not one BPU subgraph" mapper.out
"$verifier" -q mapper_out/mapper_quantized_model.onnx -b mapper_out/mapper.bin > verify_bin.out 2>&1 ||
  fail "verifier (.bin) failed" verify_bin.out
[ "$(grep -c 'Strict check PASSED' verify_bin.out)" = 2 ] || fail "verifier (.bin): not both outputs exact" verify_bin.out
grep -q "(2,1,16,)" verify_bin.out || fail "verifier (.bin): the state input is not 3-D" verify_bin.out

yaml compile nash-e 'no_preprocess;no_preprocess'
"$hb_compile" --config compile.yaml > compile.out 2>&1 || fail "hb_compile failed" compile.out
"$verifier" -q compile_out/compile_quantized_model.onnx -b compile_out/compile.hbm > verify_hbm.out 2>&1 ||
  fail "verifier (.hbm) failed" verify_hbm.out
[ "$(grep -c 'Strict check PASSED' verify_hbm.out)" = 2 ] || fail "verifier (.hbm): not both outputs exact" verify_hbm.out

yaml mean bayes-e 'data_mean;no_preprocess' "  mean_value: '0.5;0'"
if "$hb_mapper" makertbin --config mean.yaml --model-type onnx > mean.out 2>&1; then fail "data_mean on [1, 64] accepted" mean.out; fi
grep -q "Key 'norm_type' error: input 'x': 'data_mean' needs a 4-D input; featuremap '1x64' has rank 2" mean.out ||
  fail "data_mean on [1, 64]: not the norm_type rule" mean.out
[ ! -e mean_out/mean.bin ] || fail "data_mean on [1, 64]: a model file was written"
echo "featuremap_inputs: OK"
