#include "openbpu/calibration/calibrator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <random>
#include <set>

#include "openbpu/calibration/calibration_nodes.h"
#include "openbpu/calibration/threshold_methods.h"
#include "openbpu/calibration/zero_thresholds.h"
#include "openbpu/common/error.h"
#include "openbpu/common/text.h"

namespace openbpu::calibration {

using config::CalibrationType;
using kernels::DataType;

namespace {

bool needs_histograms(const CalibrationOptions& o) {
  switch (o.type) {
    case CalibrationType::kDefault:
    case CalibrationType::kMix:
    case CalibrationType::kKl: return true;
    case CalibrationType::kMax: return o.max_percentile < 1.0;
    case CalibrationType::kLoad:
    case CalibrationType::kSkip: return false;
  }
  return true;
}

}  // namespace

CalibrationOptions calibration_options(const config::CompileConfig& config) {
  CalibrationOptions o;
  o.type = config.calibration.calibration_type;
  o.max_percentile = config.calibration.max_percentile;
  o.per_channel = config.calibration.per_channel;
  if (config.calibration.quant_config) {
    const auto& a = config.calibration.quant_config->model_config.activation;
    if (a.calibration_type) o.type = *a.calibration_type;
    if (a.max_percentile) o.max_percentile = *a.max_percentile;
    if (a.per_channel) o.per_channel = *a.per_channel;
  }
  return o;
}

size_t evaluation_sample_count(const ir::Graph& graph,
                               const std::vector<CalibrationPoint>& points) {
  double elements = 0;
  std::set<std::string> nodes;
  for (const CalibrationPoint& p : points) {
    if (p.kind != CalibrationKind::kActivation) continue;
    nodes.insert(p.nodes.begin(), p.nodes.end());
    const ir::Value* v = graph.find_value(p.tensor);
    const std::optional<kernels::Shape> shape =
        v != nullptr ? v->type().static_shape() : std::nullopt;
    if (!shape) continue;
    double n = 1;
    for (int64_t d : *shape) n *= static_cast<double>(d);
    elements += n;
  }
  const double work = elements * static_cast<double>(std::max<size_t>(1, nodes.size()));
  if (work <= 0) return 1;
  return static_cast<size_t>(std::clamp(std::floor(kEvaluationWork / work), 1.0, 16.0));
}

SampleStream dataset_samples(const CalibrationDataset& dataset) {
  return {dataset.size(), [&dataset](size_t i) { return dataset.model_feeds(i); }};
}

SampleStream random_samples(const ir::Model& model, size_t count, uint64_t seed) {
  std::vector<std::pair<std::string, ir::TensorType>> inputs;
  for (const ir::Value* v : model.graph->inputs()) {
    if (!v->is_constant()) inputs.emplace_back(v->name(), v->type());
  }
  for (const auto& [name, type] : inputs) {
    if (!type.static_shape()) {
      raise("random calibration data: input '", name, "' has no static shape (", type.to_string(),
            "); give input_shape");
    }
  }
  return {count, [inputs, seed](size_t index) {
            std::mt19937_64 rng(seed + index);
            std::map<std::string, Tensor> feeds;
            for (const auto& [name, type] : inputs) {
              Tensor t(type.dtype, *type.static_shape());
              const int64_t n = t.element_count();
              switch (type.dtype) {
                case DataType::kInt8:
                  for (int64_t i = 0; i < n; ++i) {
                    t.data<int8_t>()[i] = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
                  }
                  break;
                case DataType::kUint8:
                  for (int64_t i = 0; i < n; ++i)
                    t.data<uint8_t>()[i] = static_cast<uint8_t>(rng() % 256);
                  break;
                case DataType::kFloat32:
                  for (int64_t i = 0; i < n; ++i) {
                    const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
                    t.data<float>()[i] = static_cast<float>(2 * u - 1);
                  }
                  break;
                default: break;
              }
              feeds.emplace(name, std::move(t));
            }
            return feeds;
          }};
}

CalibrationReport calibrate(ir::Model& model, const SampleStream* samples,
                            const CalibrationOptions& options) {
  auto log = [&](const std::string& line) {
    if (options.log) options.log(line);
  };
  CalibrationReport report;
  report.points = options.points ? *options.points : find_calibration_points(*model.graph, options.rules);
  std::vector<std::string> activations;
  size_t weight_count = 0;
  for (const CalibrationPoint& p : report.points) {
    if (p.kind == CalibrationKind::kActivation) {
      activations.push_back(p.tensor);
    } else {
      ++weight_count;
    }
  }

  SampleStream random;
  const bool random_data = options.type == CalibrationType::kSkip || samples == nullptr;
  if (random_data) {
    if (options.type != CalibrationType::kSkip && options.type != CalibrationType::kLoad) {
      raise("calibration_type '", config::to_string(options.type),
            "' needs calibration samples (cal_data_dir)");
    }
    random = random_samples(model, options.random_sample_count, options.random_seed);
    samples = &random;
    log("Calibration uses " + std::to_string(random.count) + " random sample(s).");
  }
  if (samples->count == 0) raise("calibration: the data set has no samples");
  report.sample_count = samples->count;
  log("There are " + std::to_string(samples->count) + " samples in the data set.");
  log("Calibrating " + std::to_string(activations.size()) + " activations and " +
      std::to_string(weight_count) + " weights.");

  const bool per_channel = options.per_channel && options.type != CalibrationType::kDefault;
  const size_t evaluation_count =
      random_data ? 0
                  : std::min(options.evaluation_samples
                                 ? *options.evaluation_samples
                                 : evaluation_sample_count(*model.graph, report.points),
                             samples->count);
  if (evaluation_count > 1)
    log("Calibrated models are scored on " + std::to_string(evaluation_count) + " samples.");
  StatisticsOptions stat_options;
  stat_options.per_channel = per_channel;
  stat_options.histograms = needs_histograms(options);
  stat_options.reference_samples = evaluation_count;
  stat_options.observer = options.observer;
  CollectedStatistics collected;
  collected = collect_statistics(model, options.executor, activations, *samples, stat_options);
  EvaluationSet evaluation;
  for (size_t i = 0; i < evaluation_count; ++i) evaluation.feeds.push_back(samples->feeds(i));
  evaluation.reference_outputs = std::move(collected.reference_outputs);
  evaluation.classes = evaluation_classes(model);
  report.statistics = std::move(collected.tensors);

  const std::map<std::string, ir::Node*> nodes = insert_calibration_nodes(model, report.points);
  ActivationCalibrations calibrations{{}, &report.statistics, per_channel,
                                      options.executor.threads};
  for (const CalibrationPoint& p : report.points) {
    ir::Node* node = nodes.at(p.tensor);
    if (p.kind == CalibrationKind::kWeight) {
      const ir::Value* w = model.graph->find_value(node->input(0)->name());
      set_calibration_thresholds(*node, per_channel_abs_max(*w->constant(), p.axis), "max");
    } else {
      calibrations.nodes[p.tensor] = node;
    }
  }

  std::optional<double> max_cosine;  // 'kl': the output cosine with max instead
  std::optional<double> scored_cosine;  // 'default': the chosen method's score
  switch (options.type) {
    case CalibrationType::kMax: {
      const ThresholdMethod m = options.max_percentile < 1.0
                                    ? ThresholdMethod::max_percentile(options.max_percentile)
                                    : ThresholdMethod::max();
      apply_method(calibrations, m);
      report.method = m.name();
      break;
    }
    case CalibrationType::kKl:
      if (evaluation_count > 0) {  // max's score, for the warning below
        apply_method(calibrations, ThresholdMethod::max());
        max_cosine = output_cosine(model, evaluation, options.executor);
      }
      apply_method(calibrations, ThresholdMethod::kl());
      report.method = "kl";
      break;
    case CalibrationType::kSkip:
      apply_method(calibrations, ThresholdMethod::max());
      report.method = "skip";
      break;
    case CalibrationType::kDefault:
    case CalibrationType::kMix: {
      const ModelwiseSearchResult search = search_model_method(
          model, calibrations, default_candidate_methods(), evaluation, options.executor, log);
      report.candidates = search.candidates;
      report.method = search.chosen.name();
      if (options.type == CalibrationType::kDefault && evaluation_count > 0) {
        scored_cosine = search.cosine;  // the thresholds now set are the ones it scored
      }
      if (options.type == CalibrationType::kMix) {
        const LayerwiseSearchResult mix =
            search_node_methods(model, calibrations, default_candidate_methods(), search.chosen,
                                evaluation, options.executor, log);
        report.node_methods = mix.chosen;
        report.method = "mix";
      }
      break;
    }
    case CalibrationType::kLoad: {
      apply_method(calibrations, ThresholdMethod::max());
      std::vector<std::string> missing;
      for (const auto& [tensor, node] : calibrations.nodes) {
        auto it = options.loaded.find(tensor);
        if (it == options.loaded.end()) {
          missing.push_back(tensor);
          continue;
        }
        set_calibration_thresholds(*node, it->second.values, "load");
        node->attrs().set("axis", int64_t{it->second.axis});
        node->attrs().set("bits", int64_t{it->second.bits});
      }
      log("Loaded thresholds for " + std::to_string(calibrations.nodes.size() - missing.size()) +
          " of " + std::to_string(calibrations.nodes.size()) + " activations.");
      if (!missing.empty()) {
        std::string names;
        for (size_t i = 0; i < missing.size() && i < 5; ++i) {
          names += (i ? ", " : "") + missing[i];
        }
        log("No loaded threshold for " + std::to_string(missing.size()) + " activations (" + names +
            (missing.size() > 5 ? ", ..." : "") + "): they use max.");
      }
      report.method = "load";
      break;
    }
  }
  if (options.type != CalibrationType::kDefault && options.type != CalibrationType::kMix) {
    log("Calibration method: " + report.method + ".");
  }
  if (options.type != CalibrationType::kLoad) {
    std::vector<std::vector<float>> before;
    for (const auto& [tensor, node] : calibrations.nodes) before.push_back(node->attrs().get_floats("thresholds", {}));
    report.warnings = replace_zero_thresholds(calibrations.nodes, report.statistics, report.sample_count);
    size_t k = 0;
    for (const auto& [tensor, node] : calibrations.nodes) {
      if (node->attrs().get_floats("thresholds", {}) != before[k++]) scored_cosine.reset();
    }
  }

  if (evaluation_count > 0) {
    // The model the search scored last with the chosen thresholds computes the same again.
    report.output_cosine = scored_cosine ? *scored_cosine : output_cosine(model, evaluation, options.executor);
    log("Calibrated model output cosine similarity: " + fixed(*report.output_cosine, 6));
    // kl keeps the bulk of a distribution and clips its tail, which in some trained networks
    // carries the signal. Clearly worse than max: at least twice its output error, 0.001 apart.
    const double kl = *report.output_cosine;
    if (max_cosine && 1 - kl > 2 * (1 - *max_cosine) && *max_cosine - kl > 0.001) {
      report.warnings.push_back("calibration_type kl: output cosine similarity " + fixed(kl, 6) +
                                " on the first sample against max's " + fixed(*max_cosine, 6) +
                                " (kl clipped activations that carry the output); calibration_type "
                                "default scores both and keeps the better");
    }
    if (options.rank_sensitivity) {
      report.sensitivity =
          rank_node_sensitivity(model, report.points, evaluation, options.executor);
      const size_t shown = std::min(options.sensitivity_log_count, report.sensitivity.size());
      if (shown > 0) {
        log("Most sensitive nodes (output score with only the node quantized: decision margins on "
            "class scores, cosine elsewhere):");
      }
      for (size_t i = 0; i < shown; ++i) {
        const NodeSensitivity& s = report.sensitivity[i];
        log("  " + s.node + " (" + s.op_type + "): " + fixed(s.metrics.score, 6));
      }
    }
  }
  return report;
}

}  // namespace openbpu::calibration
