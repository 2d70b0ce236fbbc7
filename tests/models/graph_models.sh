#!/usr/bin/env bash
# Small models made for the test (graph text, tests/models/graphs/), end to end through the
# command-line tools: hb_mapper checker / makertbin and hb_compile, then hb_model_verifier on each
# model file (the quantized model and the .bin / .hbm on the simulator, bit for bit).
#   graph_models.sh CASE GRAPH_TO_ONNX HB_MAPPER HB_COMPILE HB_MODEL_VERIFIER GRAPHS_DIR WORK_DIR
# CASE featuremap: speech_state.graph, a [1, 64] frame and a [2, 1, 16] recurrent state in and
#   out (featuremap inputs that are not 4-D), in both tools, 1 BPU subgraph; norm_type data_mean
#   on the [1, 64] input is refused naming the key, with nothing written.
# CASE float16: half_precision.graph, a float16 export; it computes in float32 (the log says
#   so), converts with its Casts gone, 1 BPU subgraph, output cosine >= 0.99.
# CASE prelu: prelu.graph, Conv → PRelu (a slope per channel) → Conv: the PRelu becomes BPU
#   operators, 1 BPU subgraph; with set_model_output_int16 the tail Conv outputs int16.
# CASE where_inf: where_inf.graph, a −inf mask (Where on the CPU) before Exp: 2 BPU subgraphs,
#   no NaN in the report (the mask's −inf is left out of the similarities), cosine >= 0.98.
set -euo pipefail
case_name=${1:?}
to_onnx=$(readlink -f "${2:?}") hb_mapper=$(readlink -f "${3:?}") hb_compile=$(readlink -f "${4:?}")
verifier=$(readlink -f "${5:?}") graphs=$(readlink -f "${6:?}")
mkdir -p "${7:?}"
work=$(readlink -f "$7")
rm -rf "${work:?}"/*
cd "$work"

fail() { echo "graph_models $case_name: $1"; [ -f "${2:-}" ] && tail -20 "$2"; exit 1; }

yaml() {  # yaml NAME MODEL MARCH INPUT_NAMES NORM_TYPES [EXTRA_INPUT_KEY]: all inputs featuremap
  local names=$4 types=featuremap layouts=NCHW dirs=cal/${4//;/;cal\/}
  while [ "$(tr -cd ';' <<< "$types")" != "$(tr -cd ';' <<< "$names")" ]; do
    types+=";featuremap" layouts+=";NCHW"
  done
  cat > "$1.yaml" <<YAML
model_parameters:
  onnx_model: '$2'
  march: '$3'
  working_dir: '$1_out'
  output_model_file_prefix: '$1'
input_parameters:
  input_name: '$names'
  input_type_train: '$types'
  input_type_rt: '$types'
  input_layout_train: '$layouts'
  norm_type: '$5'
${6:-}
calibration_parameters:
  calibration_type: 'default'
  cal_data_dir: '$dirs'
compiler_parameters:
  optimize_level: 'O2'
YAML
}

convert() {  # convert NAME TOOL [SUBGRAPHS]: converts NAME.yaml, verifies its model file and the
  # number of BPU subgraphs (default 1)
  local name=$1 tool=$2 subgraphs=${3:-1} file
  if [ "$tool" = hb_compile ]; then
    "$hb_compile" --config "$name.yaml" > "$name.out" 2>&1 || fail "$name: hb_compile failed" "$name.out"
    file=${name}_out/$name.hbm
  else
    "$hb_mapper" makertbin --config "$name.yaml" --model-type onnx > "$name.out" 2>&1 || fail "$name: makertbin failed" "$name.out"
    file=${name}_out/$name.bin
  fi
  grep -qE "in $subgraphs subgraphs?[,.]" "$name.out" || fail "$name: not $subgraphs BPU subgraph(s)" "$name.out"
  "$verifier" -q "${name}_out/${name}_quantized_model.onnx" -b "$file" > "$name.verify" 2>&1 ||
    fail "$name: hb_model_verifier failed" "$name.verify"
  local outputs
  outputs=$(grep -c "^output\[" "$name.verify")
  [ "$(grep -c 'Strict check PASSED' "$name.verify")" = "$outputs" ] || fail "$name: not every output exact" "$name.verify"
}

case "$case_name" in
featuremap)
  "$to_onnx" "$graphs/speech_state.graph" speech.onnx --samples 8 cal
  "$hb_mapper" checker --model-type onnx --march bayes-e --model speech.onnx > checker.out 2>&1 || fail "checker failed" checker.out
  grep -q "1 BPU subgraph" checker.out || fail "checker: not one BPU subgraph" checker.out
  yaml mapper speech.onnx bayes-e 'x;h' 'no_preprocess;no_preprocess'
  convert mapper hb_mapper
  grep -q "(2,1,16,)" mapper.verify || fail "the state input is not 3-D" mapper.verify
  yaml compile speech.onnx nash-e 'x;h' 'no_preprocess;no_preprocess'
  convert compile hb_compile
  yaml mean speech.onnx bayes-e 'x;h' 'data_mean;no_preprocess' "  mean_value: '0.5;0'"
  if "$hb_mapper" makertbin --config mean.yaml --model-type onnx > mean.out 2>&1; then fail "data_mean on [1, 64] accepted" mean.out; fi
  grep -q "Key 'norm_type' error: input 'x': 'data_mean' needs a 4-D input; featuremap '1x64' has rank 2" mean.out ||
    fail "data_mean on [1, 64]: not the norm_type rule" mean.out
  [ ! -e mean_out/mean.bin ] || fail "data_mean on [1, 64]: a model file was written"
  ;;
float16)
  "$to_onnx" "$graphs/half_precision.graph" half.onnx --samples 8 cal
  yaml half half.onnx bayes-e x no_preprocess
  convert half hb_mapper
  grep -q "float16_to_float32: the model computes in float16" half.out || fail "no float16 line in the log" half.out
  awk '/INFO y +[0-9.]+ /{found=1; if ($5 < 0.99) bad=1} END {exit !(found && !bad)}' half.out ||
    fail "output cosine below 0.99 (or no output table)" half.out
  ;;
prelu)
  "$to_onnx" "$graphs/prelu.graph" prelu.onnx --samples 8 cal
  yaml prelu prelu.onnx bayes-e x no_preprocess
  convert prelu hb_mapper
  grep -q "After prelu_decomposition" prelu.out || fail "PRelu was not decomposed" prelu.out
  # The tail Conv outputs int32 by default; set_model_output_int16 makes it int16, not int8.
  sed "s/calibration_type: 'default'/&\n  optimization: 'set_model_output_int16'/; s/prelu_out/out16_out/; s/'prelu'/'out16'/" \
    prelu.yaml > out16.yaml
  convert out16 hb_mapper
  grep -q "node 'y' computes in int16 (config)" out16.out || fail "set_model_output_int16: the tail is not int16" out16.out
  ;;
where_inf)
  "$to_onnx" "$graphs/where_inf.graph" where.onnx --samples 8 cal
  yaml where where.onnx bayes-e x no_preprocess
  convert where hb_mapper 2
  if grep -qiE "(^| )-?nan( |$)" where.out; then fail "NaN in the report" where.out; fi
  awk '/INFO y +[0-9.]+ /{found=1; if ($5 < 0.98) bad=1} END {exit !(found && !bad)}' where.out ||
    fail "output cosine below 0.98 (or no output table)" where.out
  ;;
*) fail "unknown case" ;;
esac
echo "graph_models $case_name: OK"
