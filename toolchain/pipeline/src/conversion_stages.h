// The conversion's stages (conversion.cc runs them in order, timing each and running the IR
// verifier on every model a stage returns). Each stage is a function from what the earlier
// stages produced to its own result; the files it writes are the reference's stage models.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "openbpu/calibration/calibration_dataset.h"
#include "openbpu/calibration/calibrator.h"
#include "openbpu/calibration/qdq_thresholds.h"
#include "openbpu/compiler/compiler.h"
#include "openbpu/pipeline/conversion.h"
#include "openbpu/quantization/quantizer.h"
#include "openbpu/simulator/march.h"

namespace openbpu::pipeline::stages {

// What the stages would otherwise each decide again from the config, derived once
// (derive_options) before the first stage.
struct Options {
  // calibration_type, max_percentile, per_channel (quant_config's activation settings win); the
  // type is skip when the samples are random (load keeps its type).
  calibration::CalibrationOptions calibration;
  // No data set (calibration_type skip, or no cal_data_dir): calibration and the comparison
  // tables use random samples.
  bool random_samples = false;
  compiler::CompileOptions compile;  // compiler_parameters, for the march
};
Options derive_options(const config::CompileConfig& cfg, const simulator::MarchSpec& march);

// What every stage reads: the request, the checked config, the options derived from it, the
// march, the log, where stage models go.
struct Context {
  const ConversionRequest& request;
  const config::CompileConfig& cfg;
  const Options& options;
  const simulator::MarchSpec& march;
  Log& log;
  bool fast = false;   // checker / fast-perf: random data, no comparison tables
  bool write = false;  // stage models are written (not by the checker)
  std::filesystem::path dir;
  std::string prefix;  // output_model_file_prefix
  // Writes `model` as dir/prefix + suffix when `write`.
  void save(const ir::Model& model, const std::string& suffix) const;
};

// The model file as errors name it: the ONNX file, or the Caffe weights.
std::string model_origin(const config::CompileConfig& cfg);

struct Inputs {
  std::optional<calibration::CalibrationDataset> dataset;
  calibration::SampleStream samples;                   // views `dataset`: Inputs never moves
  std::map<std::string, kernels::Tensor> first_feeds;  // for the comparison tables
};

// Stage 1. Thresholds of a QDQ model (calibration_type load), output_nodes, HzPreprocess; the
// calibration samples, checked against the inputs they feed before anything is written;
// working_dir; *_original_float_model.onnx.
struct Prepared {
  ir::Model model;
  std::unique_ptr<Inputs> inputs;
  std::map<std::string, calibration::LoadedThreshold> loaded;
};
Prepared prepare(const Context& cx, ir::Model model);

// Stage 2. The optimizer passes on prepared.model (taken); loaded thresholds of tensors whose
// values the passes changed are dropped; *_optimized_float_model.onnx.
ir::Model optimize(const Context& cx, Prepared& prepared);

// The quantization plan: placement (with the reasons of CPU nodes logged) and the tensors the
// quantized model stores as integers.
struct Plan {
  quantization::QuantizeOptions options;
  quantization::QuantizationPlan plan;
};
Plan plan(const Context& cx, const ir::Model& optimized);

// Stage 3. Calibration, int16 promotion, bias correction; *_calibrated_model.onnx (hb_compile
// also *_ptq_model.onnx).
ir::Model calibrate(const Context& cx, const ir::Model& optimized, const Plan& plan, const Prepared& prepared);

// Stage 4. The integer model.
quantization::QuantizeResult quantize(const Context& cx, const ir::Model& calibrated, const Plan& plan);

// The node and output tables (the checker's without similarities).
void report(const Context& cx, const ir::Model& optimized, const quantization::QuantizeResult& quantized,
            const Inputs& inputs);

// remove_node_type / remove_node_name and input_batch (they change the model's interface, so
// after the report); *_quantized_model.onnx.
void finish_quantized_model(const Context& cx, ir::Model& quantized);

// Stage 5. The model file (.bin / .hbm) and its reports.
void compile(const Context& cx, const ir::Model& quantized);

}  // namespace openbpu::pipeline::stages
