// find-fix: searches per-node choices (candidate_config.h) that bring a converted model to a
// target metric within a latency budget, converting and measuring every candidate.
//
// 1. The yaml as given is converted (its calibration samples dumped) and measured: the
//    metric, and the latency — the sum of the BPU subgraphs' timing-model latencies.
// 2. The calibrated model's node sensitivity (output cosine, each node quantized alone, on
//    `data_num` samples) orders the nodes, most sensitive first.
// 3. Greedily, node by node, each choice in cost order (int16 unless the node's activations
//    already are; then the CPU) is added to the configuration, converted and measured; it is
//    kept if the metric improves and the latency stays within the budget, dropped otherwise.
//    The search stops at the target, after `max_steps` conversions, or when the nodes run out.
// 4. The best configuration found is converted into the yaml's own working_dir, with
//    find_fix.yaml, find_fix_report.txt (a row per step) and find_fix.diff beside the models.
//
// The metric is the mean output cosine of the quantized model against the optimized float
// model on the dumped calibration samples, or a user command: `CMD <quantized model>` whose
// last line of output is the metric (higher is better).
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "openbpu/config/compile_config.h"
#include "openbpu/debugger/candidate_config.h"

namespace openbpu::debugger {

struct FixOptions {
  std::filesystem::path config_file;
  config::ConfigFlavour flavour = config::ConfigFlavour::kHbMapper;
  config::ModelType model_type = config::ModelType::kOnnx;
  std::string metric_command;  // empty: output cosine
  double target = 0.999;
  // Latency budget: at most this many µs, or this many % above the default conversion's.
  std::optional<double> budget_us, budget_percent;
  size_t data_num = 5;
  size_t max_steps = 30;
  int threads = 1;
};

struct FixStep {
  std::string change;  // "(as given)", or "<node>: <choice>"
  double metric = 0;
  double latency_us = 0;
  bool kept = false;
  std::string note;  // why a candidate was dropped
};

struct FixResult {
  bool reached = false;
  std::vector<FixStep> steps;
  CandidateEdit best;  // the node choices kept
  double metric = 0, latency_us = 0;
  std::filesystem::path working_dir;  // where the final files are
};

// Throws Error naming the file, the command or the step that failed (a failing candidate
// conversion is a dropped step, not an error; the as-given conversion failing is).
FixResult find_fix(const FixOptions& options, const std::function<void(const std::string&)>& say);

}  // namespace openbpu::debugger
