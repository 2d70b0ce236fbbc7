// The conversion options shared by hb_mapper (checker, makertbin) and hb_compile: CLI11 wiring
// for --config/--model-type/--fast-perf/--model/--proto/--march/--input-shape/--fixed-input, and
// the run with
// the log file in the current directory.
#pragma once

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <thread>

#include "openbpu/pipeline/conversion.h"

namespace openbpu::cli {

struct ConversionOptions {
  pipeline::ConversionRequest request;
  std::string model_type = "onnx";
};

inline void add_model_options(CLI::App& cmd, ConversionOptions& o, bool model_required) {
  auto* model = cmd.add_option("-m,--model", o.request.model_file, "the float model (.onnx, or .caffemodel)");
  if (model_required) model->required();
  cmd.add_option("--proto", o.request.proto_file, "Caffe prototxt (with --model-type caffe)");
  cmd.add_option("-i,--input-shape", o.request.input_shapes,
                 "NAME SHAPE, e.g. --input-shape data 1x3x224x224 (repeatable; overrides the model's shape)")
      ->allow_extra_args(false);
  cmd.add_option("--fixed-input", o.request.fixed_inputs,
                 "NAME VALUES, e.g. --fixed-input sr 16000 (repeatable; the input becomes that constant, as the "
                 "yaml's fixed_inputs)")
      ->allow_extra_args(false);
}

inline void add_model_type_option(CLI::App& cmd, ConversionOptions& o) {
  cmd.add_option("--model-type", o.model_type, "onnx or caffe")
      ->check(CLI::IsMember({"onnx", "caffe"}))
      ->capture_default_str();
}

// Runs the request with its log file; returns the exit code.
inline int run_with_log(ConversionOptions& o, const std::string& log_file) {
  o.request.model_type = o.model_type == "caffe" ? config::ModelType::kCaffe : config::ModelType::kOnnx;
  o.request.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  try {
    pipeline::Log log(log_file);
    return pipeline::run_conversion(o.request, log);
  } catch (const std::exception& e) {  // the log file itself cannot be written
    std::cerr << "ERROR " << e.what() << "\n";
    return 1;
  }
}

}  // namespace openbpu::cli
