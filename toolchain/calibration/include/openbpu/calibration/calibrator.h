// Stage 3 of the conversion: the optimized float model becomes the calibrated model
// (*_calibrated_model.onnx) with HzCalibration nodes whose thresholds come from
// calibration_type:
//   max      abs max (or max-percentile when max_percentile < 1)
//   kl       entropy calibration on 2048-bin histograms
//   default  the best of max, max-percentile 0.99995, kl, max-percentile 0.9999 by output cosine
//   mix      default, then a per-node greedy choice among the same candidates
//   load     thresholds from a QDQ model (load_qdq_thresholds); tensors it lacks use max
//   skip     max over random data (for performance evaluation only)
// Weights always get per-output-channel abs max. Then, where samples allow, the calibrated
// model's output cosine and the per-node sensitivity ranking (node_sensitivity.h).
// docs/calibration.md describes the rules and the log.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "openbpu/calibration/calibration_dataset.h"
#include "openbpu/calibration/calibration_points.h"
#include "openbpu/calibration/method_search.h"
#include "openbpu/calibration/node_sensitivity.h"
#include "openbpu/calibration/qdq_thresholds.h"
#include "openbpu/calibration/tensor_statistics.h"
#include "openbpu/config/compile_config.h"

namespace openbpu::calibration {

struct CalibrationOptions {
  config::CalibrationType type = config::CalibrationType::kDefault;
  double max_percentile = 1.0;  // 'max'
  bool per_channel = false;     // activations per channel along axis 1 (not with 'default')
  CalibrationRules rules = CalibrationRules::defaults();
  // The tensors to calibrate, when the caller has planned them (the conversion passes the
  // quantization plan's targets); unset: find_calibration_points(graph, rules).
  std::optional<std::vector<CalibrationPoint>> points;
  executor::ExecutorOptions executor;
  // Samples (from the first) on which calibrated models are scored against the float model
  // (method search, sensitivity ranking); unset: evaluation_sample_count().
  std::optional<size_t> evaluation_samples;
  bool rank_sensitivity = true;
  size_t sensitivity_log_count = 10;              // most sensitive nodes written to the log
  std::map<std::string, LoadedThreshold> loaded;  // 'load'
  uint64_t random_seed = 0;                       // 'skip' (and 'load' without samples)
  size_t random_sample_count = 1;
  SampleObserver* observer = nullptr;  // sees the statistics' first pass (not owned)
  LogSink log;
};

// How many samples score calibrated models when the caller does not say: as many as a fixed
// amount of work allows (kEvaluationWork element visits for a sensitivity ranking: the
// ranked nodes × the activation elements of one sample, from the graph's static shapes), 1 to
// 16. Small models are scored on more samples, so that a decision between two classes is
// judged on more than one margin; the count depends on the model only (conversions stay
// reproducible).
inline constexpr double kEvaluationWork = 4.0e9;
size_t evaluation_sample_count(const ir::Graph& graph, const std::vector<CalibrationPoint>& points);

// calibration_type, max_percentile and per_channel of calibration_parameters, overridden by
// quant_config's model_config.activation where given.
CalibrationOptions calibration_options(const config::CompileConfig& config);

struct CalibrationReport {
  std::string method;  // "kl", "max", "max-percentile:percentile=0.99995", "mix", "load", "skip"
  size_t sample_count = 0;
  std::vector<CalibrationPoint> points;
  std::vector<CandidateScore> candidates;               // 'default' / 'mix'
  std::map<std::string, ThresholdMethod> node_methods;  // 'mix': by tensor
  std::optional<double> output_cosine;                  // of the calibrated model, when scored
  std::vector<NodeSensitivity> sensitivity;             // most sensitive first, when ranked
  std::map<std::string, TensorStatistics> statistics;   // activations, by tensor
  std::vector<std::string> warnings;  // tensors 0 on every sample and the threshold they took
};

// The samples of a dataset (read one at a time).
SampleStream dataset_samples(const CalibrationDataset& dataset);
// Deterministic random feeds for every graph input: int8 uniform in [-128, 127], float32
// uniform in [-1, 1), uint8 uniform in [0, 255] (mt19937_64 from `seed`); other types zero.
// Inputs need static shapes.
SampleStream random_samples(const ir::Model& model, size_t count, uint64_t seed);

// Turns `model` (a float model) into the calibrated model in place. `samples` may be null only
// for 'skip' and 'load'. Throws Error (a missing tensor, a mistyped feed, no samples, ...).
CalibrationReport calibrate(ir::Model& model, const SampleStream* samples,
                            const CalibrationOptions& options);

}  // namespace openbpu::calibration
