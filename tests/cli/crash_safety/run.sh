#!/usr/bin/env bash
# kill -9 of a conversion at 10 moments across its stages (tests/cli/crash_safety/conversion_kill.cc):
# every file left in working_dir is complete under its final name, nothing else is there, and a
# rerun gives the uninterrupted run's outputs byte for byte. The model is tests/models/graphs/
# prelu.graph (Conv, PRelu, Conv; 8 calibration samples): every stage, about 0.2 s a run.
#   run.sh hb_mapper|hb_compile GRAPH_TO_ONNX TOOL CONVERSION_KILL GRAPHS_DIR WORK_DIR
# The moments are events of the run (a log line written, a file appearing in working_dir), in
# the order of the run; `over:` moments start with working_dir holding a previous run's outputs,
# the others with it empty (docs/testing.md, "Crash safety").
set -euo pipefail
tool_name=${1:?} to_onnx=$(readlink -f "${2:?}") tool=$(readlink -f "${3:?}") driver=$(readlink -f "${4:?}")
graphs=$(readlink -f "${5:?}")
mkdir -p "${6:?}"
work=$(readlink -f "$6")
rm -rf "${work:?}"/*
cd "$work"
"$to_onnx" "$graphs/prelu.graph" prelu.onnx --samples 8 cal > /dev/null

if [ "$tool_name" = hb_mapper ]; then march=bayes-e; else march=nash-e; fi
cat > prelu.yaml <<YAML
model_parameters:
  onnx_model: '$work/prelu.onnx'
  march: '$march'
  working_dir: 'out'
  output_model_file_prefix: 'prelu'
input_parameters:
  input_name: 'x'
  input_type_train: 'featuremap'
  input_type_rt: 'featuremap'
  input_layout_train: 'NCHW'
  norm_type: 'no_preprocess'
calibration_parameters:
  calibration_type: 'default'
  cal_data_dir: '$work/cal/x'
compiler_parameters:
  optimize_level: 'O2'
YAML

if [ "$tool_name" = hb_mapper ]; then
  # parsing, parsing, prepare (writing), optimisation, calibration x2, calibration (writing),
  # quantisation, compilation, writing the model file
  exec "$driver" --dir runs --log hb_mapper_makertbin.log --working-dir out \
    --at 'line:validating config file' \
    --at 'over:line:num of calibration data' \
    --at 'file:_original_float_model.onnx' \
    --at 'over:line:Start to optimize the onnx model' \
    --at 'line:Start to calibrate the model' \
    --at 'over:line:Calibration method kl' \
    --at 'file:_calibrated_model.onnx' \
    --at 'line:Start to quantize the model' \
    --at 'over:line:Compile submodel' \
    --at 'file:prelu.bin' \
    -- "$tool" makertbin --config "$work/prelu.yaml" --model-type onnx
else
  # parsing, parsing (config dump), optimisation (writing), calibration x2, calibration (writing
  # the ptq model), quantisation (writing), compilation (writing the subgraph report),
  # writing the model file x2
  exec "$driver" --dir runs --log hb_compile.log --working-dir out \
    --at 'over:line:validating config file' \
    --at 'line:Dump config' \
    --at 'file:_optimized_float_model.onnx' \
    --at 'line:Calibration method max:' \
    --at 'over:line:Most sensitive nodes' \
    --at 'file:_ptq_model.onnx' \
    --at 'over:line:Saving model to: out/prelu_quantized_model.onnx' \
    --at 'file:_subgraph_0.json' \
    --at 'line:start convert to' \
    --at 'file:prelu.hbm' \
    -- "$tool" --config "$work/prelu.yaml"
fi
