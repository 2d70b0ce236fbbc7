// calibration_type 'default' (one method for the whole model) and 'mix' (a method per
// calibration node), chosen by the calibrated model's output cosine with the float model.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "openbpu/calibration/fake_quant_evaluation.h"
#include "openbpu/calibration/tensor_statistics.h"
#include "openbpu/calibration/threshold_methods.h"

namespace openbpu::calibration {

// The activation calibration nodes of a calibrated model with their statistics.
struct ActivationCalibrations {
  std::map<std::string, ir::Node*> nodes;                     // by tensor
  const std::map<std::string, TensorStatistics>* statistics;  // by tensor
  bool per_channel = false;
  int threads = 1;  // computing the tensors' thresholds (KL: a search per tensor) in parallel
};

// Thresholds of one activation by a method (per tensor, or per channel when asked).
std::vector<float> activation_thresholds(const TensorStatistics& stats,
                                         const ThresholdMethod& method, bool per_channel);
// Sets every activation calibration node's thresholds by `method`.
void apply_method(const ActivationCalibrations& calibrations, const ThresholdMethod& method);

// The candidates of 'default': max, max-percentile 0.99995, kl, max-percentile 0.9999.
std::vector<ThresholdMethod> default_candidate_methods();

struct CandidateScore {
  ThresholdMethod method;
  double cosine = 0;
  double score = 0;  // OutputMetrics::score, which chooses
};

struct ModelwiseSearchResult {
  ThresholdMethod chosen;
  double cosine = 0;
  std::vector<CandidateScore> candidates;  // in candidate order
};

using LogSink = std::function<void(const std::string&)>;

// Scores each candidate applied to every activation and keeps the best by OutputMetrics::score
// (the cosine; the decision margins on class outputs), the first on ties;
// the model is left calibrated with it. Logs each score and "Select <method> method.".
ModelwiseSearchResult search_model_method(ir::Model& model,
                                          const ActivationCalibrations& calibrations,
                                          const std::vector<ThresholdMethod>& candidates,
                                          const EvaluationSet& evaluation,
                                          const executor::ExecutorOptions& options,
                                          const LogSink& log);

struct LayerwiseSearchResult {
  std::map<std::string, ThresholdMethod> chosen;  // by tensor
  double cosine_before = 0;                       // everything at `start`
  double cosine = 0;                              // after the search
};

// 'mix': starting from `start` for every activation, visits the activation calibration nodes in
// graph order and, for each, keeps the candidate whose thresholds give the best output cosine
// with the other nodes at their current choice (greedy). Candidates whose thresholds equal the
// current ones are not re-run. Logs the counts per method and the cosine before and after.
LayerwiseSearchResult search_node_methods(
    ir::Model& model, const ActivationCalibrations& calibrations,
    const std::vector<ThresholdMethod>& candidates, const ThresholdMethod& start,
    const EvaluationSet& evaluation, const executor::ExecutorOptions& options, const LogSink& log);

}  // namespace openbpu::calibration
