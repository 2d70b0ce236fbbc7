#include "openbpu/calibration/method_search.h"

#include <cstdio>

#include "openbpu/base/thread_pool.h"
#include "openbpu/calibration/calibration_nodes.h"
#include "openbpu/common/error.h"
#include "openbpu/common/text.h"

namespace openbpu::calibration {

namespace {

void emit(const LogSink& log, const std::string& line) {
  if (log) log(line);
}

const TensorStatistics& stats_of(const ActivationCalibrations& c, const std::string& tensor) {
  auto it = c.statistics->find(tensor);
  if (it == c.statistics->end()) raise("calibration: no statistics for tensor '", tensor, "'");
  return it->second;
}

}  // namespace

std::vector<float> activation_thresholds(const TensorStatistics& stats,
                                         const ThresholdMethod& method, bool per_channel) {
  if (per_channel && !stats.channel_abs_max.empty()) return channel_thresholds(stats, method);
  return {tensor_threshold(stats, method)};
}

void apply_method(const ActivationCalibrations& calibrations, const ThresholdMethod& method) {
  const std::string name = method.name();
  std::vector<std::pair<const std::string*, ir::Node*>> items;
  for (const auto& [tensor, node] : calibrations.nodes) items.emplace_back(&tensor, node);
  // Each tensor's thresholds depend on its statistics alone: computed in parallel, set in order.
  std::vector<std::vector<float>> thresholds(items.size());
  auto compute = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      thresholds[size_t(i)] = activation_thresholds(stats_of(calibrations, *items[size_t(i)].first),
                                                    method, calibrations.per_channel);
    }
  };
  if (calibrations.threads > 1 && method.kind == ThresholdMethod::Kind::kKl) {
    base::ThreadPool pool(calibrations.threads);
    base::parallel_for(&pool, static_cast<int64_t>(items.size()), 1, compute);
  } else {
    compute(0, static_cast<int64_t>(items.size()));
  }
  for (size_t i = 0; i < items.size(); ++i) {
    set_calibration_thresholds(*items[i].second, thresholds[i], name);
  }
}

std::vector<ThresholdMethod> default_candidate_methods() {
  return {ThresholdMethod::max(), ThresholdMethod::max_percentile(0.99995), ThresholdMethod::kl(),
          ThresholdMethod::max_percentile(0.9999)};
}

ModelwiseSearchResult search_model_method(ir::Model& model,
                                          const ActivationCalibrations& calibrations,
                                          const std::vector<ThresholdMethod>& candidates,
                                          const EvaluationSet& evaluation,
                                          const executor::ExecutorOptions& options,
                                          const LogSink& log) {
  if (candidates.empty()) raise("calibration method search: no candidate methods");
  emit(log, "Run calibration model with modelwise search method.");
  ModelwiseSearchResult result;
  size_t best = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    apply_method(calibrations, candidates[i]);
    const OutputMetrics m = output_metrics(model, evaluation, options);
    result.candidates.push_back({candidates[i], m.cosine, m.score});
    emit(log, "Calibration method " + candidates[i].name() + ": output cosine similarity " +
                  fixed(m.cosine, 6) + (m.score != m.cosine ? ", score " + fixed(m.score, 6) : ""));
    if (m.score > result.candidates[best].score) best = i;
  }
  result.chosen = candidates[best];
  result.cosine = result.candidates[best].cosine;
  apply_method(calibrations, result.chosen);
  emit(log, "Select " + result.chosen.name() + " method.");
  return result;
}

LayerwiseSearchResult search_node_methods(
    ir::Model& model, const ActivationCalibrations& calibrations,
    const std::vector<ThresholdMethod>& candidates, const ThresholdMethod& start,
    const EvaluationSet& evaluation, const executor::ExecutorOptions& options, const LogSink& log) {
  emit(log, "Run calibration model with layerwise search method.");
  LayerwiseSearchResult result;
  apply_method(calibrations, start);
  for (const auto& [tensor, node] : calibrations.nodes) result.chosen[tensor] = start;
  double current = output_cosine(model, evaluation, options);
  result.cosine_before = current;

  // Graph order, so that earlier choices are settled before later nodes are tried.
  std::map<const ir::Node*, std::string> tensor_of;
  for (const auto& [tensor, node] : calibrations.nodes) tensor_of[node] = tensor;
  std::vector<std::pair<std::string, ir::Node*>> order;
  for (ir::Node* n : model.graph->nodes()) {
    auto it = tensor_of.find(n);
    if (it != tensor_of.end()) order.emplace_back(it->second, n);
  }
  for (const auto& [tensor, node] : order) {
    const TensorStatistics& stats = stats_of(calibrations, tensor);
    ThresholdMethod best = result.chosen[tensor];
    std::vector<float> best_values = node->attrs().get_floats("thresholds");
    for (const ThresholdMethod& m : candidates) {
      const std::vector<float> values = activation_thresholds(stats, m, calibrations.per_channel);
      if (values == best_values) continue;
      const std::vector<float> keep = node->attrs().get_floats("thresholds");
      const std::string keep_method = node->attrs().get_string("method", "");
      set_calibration_thresholds(*node, values, m.name());
      const double cosine = output_cosine(model, evaluation, options);
      if (cosine > current) {
        current = cosine;
        best = m;
        best_values = values;
      } else {
        set_calibration_thresholds(*node, keep, keep_method);
      }
    }
    result.chosen[tensor] = best;
  }
  result.cosine = current;

  std::map<std::string, int> counts;
  for (const auto& [tensor, m] : result.chosen) ++counts[m.name()];
  std::string summary;
  for (const auto& [name, n] : counts) {
    summary += (summary.empty() ? "" : ", ") + name + ": " + std::to_string(n);
  }
  emit(log, "Mix calibration: nodes per method (" + summary + "); output cosine similarity " +
                fixed(result.cosine_before, 6) + " -> " + fixed(result.cosine, 6));
  return result;
}

}  // namespace openbpu::calibration
