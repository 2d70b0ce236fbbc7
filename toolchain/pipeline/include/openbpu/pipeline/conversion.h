// The conversion driver behind `hb_mapper makertbin`, `hb_compile` and `hb_mapper checker`: the
// linear list of stages from a config (or a fast-perf/checker request) to the stage models in
// working_dir, with the log lines users of the original toolchain know.
//
//   config      load + validate the yaml (ConfigError → every problem, then
//               "yaml file parse failed. Please double check your input"), load the model,
//               resolve the config against it, read every calibration sample once (a bad shape
//               or file fails here, before anything is written), "Dump config:"
//   stage 1     input shapes + HzPreprocess          → <prefix>_original_float_model.onnx
//   stage 2     graph passes (passes::default_pipeline) → <prefix>_optimized_float_model.onnx
//   plan        BPU/CPU placement and the tensors to calibrate (quantization::plan_quantization)
//   stage 3     calibration on the planned tensors    → <prefix>_calibrated_model.onnx
//   stage 4     quantization                          → <prefix>_quantized_model.onnx
//   report      node table and output table (float vs quantized on the first sample)
//   stage 5     BPU compiler, estimate, model file   → <prefix>_subgraph_<i>.json/.html,
//               (backend.h; not for checker)           <prefix>.bin (hb_mapper) / .hbm (hb_compile)
//
// Nothing is written before every input check has passed, and each model file is written
// atomically.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "openbpu/config/compile_config.h"
#include "openbpu/pipeline/log.h"

namespace openbpu::pipeline {

// What the command line asked for.
struct ConversionRequest {
  config::ConfigFlavour flavour = config::ConfigFlavour::kHbMapper;
  config::ModelType model_type = config::ModelType::kOnnx;
  std::string command;  // "makertbin", "hb_compile", "checker" (for messages)
  // --config (makertbin / hb_compile without --fast-perf).
  std::string config_file;
  // --fast-perf and checker: the model, march, --input-shape and --fixed-input pairs.
  bool fast_perf = false;
  bool checker = false;
  std::string model_file;
  std::string proto_file;
  std::string march;
  std::vector<std::pair<std::string, std::string>> input_shapes;  // name, "1x3x224x224"
  std::vector<std::pair<std::string, std::string>> fixed_inputs;  // name, "16000" or "1,0"
  int threads = 1;
};

// What a successful conversion produced, as data (the Python package returns it).
struct ConversionOutcome {
  struct Placement {
    std::string node, op_type;
    bool on_bpu = false;
    int subgraph = -1;   // BPU subgraph id, -1 on the CPU
    std::string reason;  // why the node is on the CPU ("" on the BPU)
  };
  std::vector<Placement> nodes;  // the optimized model's nodes, in graph order
  int subgraph_count = 0;
  std::vector<std::string> model_files;  // the stage models and the .bin / .hbm written, in order
};

// Runs the request, logging to `log`. Returns the process exit code (0 on success); every
// failure is logged as ERROR lines (the problem, then "exception in command: <command>").
// `outcome`, if given, is filled on success.
int run_conversion(const ConversionRequest& request, Log& log, ConversionOutcome* outcome = nullptr);

// The config a fast-perf or checker run uses: every input a featuremap in its training layout
// (NCHW), no preprocessing, shapes from --input-shape or the model, calibration 'skip',
// optimize_level O3 (hb_compile: O2), working_dir model_output, prefix the model file's stem;
// fast-perf also removes the Quantize / Transpose / Dequantize / Cast / Reshape nodes at the
// model's edges (remove_node_type).
config::CompileConfig fast_perf_config(const ConversionRequest& request);

}  // namespace openbpu::pipeline
