#include "openbpu/debugger/analyses.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "openbpu/common/error.h"

namespace openbpu::debugger {

using calibration::CalibrationKind;
using calibration::NodeSensitivity;

Granularity parse_granularity(std::string_view name) {
  if (name == "node") return Granularity::kNode;
  if (name == "weight") return Granularity::kWeight;
  if (name == "activation") return Granularity::kActivation;
  raise("node type '", name, "': expected node, weight or activation");
}

namespace {

// The candidates of a sensitivity ranking, narrowed to `interested` (each must name one).
std::vector<calibration::SensitivityGroup> sensitivity_groups(const DebugModel& m,
                                                              const SensitivityOptions& o) {
  std::vector<calibration::SensitivityGroup> groups;
  if (o.granularity == Granularity::kNode) {
    groups = calibration::node_groups(*m.model.graph, m.points);
  } else {
    const CalibrationKind kind = o.granularity == Granularity::kWeight
                                     ? CalibrationKind::kWeight
                                     : CalibrationKind::kActivation;
    for (const calibration::CalibrationPoint& p : m.points) {
      if (p.kind != kind) continue;
      groups.push_back({m.calibration.at(p.tensor)->name(),
                        kind == CalibrationKind::kWeight ? "weight" : "activation",
                        {p.tensor}});
    }
  }
  if (o.interested.empty()) return groups;
  std::vector<calibration::SensitivityGroup> chosen;
  for (const std::string& name : o.interested) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
      return g.name == name || (g.tensors.size() == 1 && g.tensors[0] == name);
    });
    if (it == groups.end()) {
      raise("-i ", name,
            ": not a candidate of this node type (a quantized node, or a weight / "
            "activation calibration node)");
    }
    chosen.push_back(*it);
  }
  return chosen;
}

// The values of one tensor over the samples, with the model as it is configured now; `visit`
// receives each sample's tensor (float32).
template <typename Visit>
void observe(DebugModel& m, const std::vector<Sample>& samples, const std::string& tensor,
             const executor::ExecutorOptions& options, Visit&& visit) {
  if (!samples.empty() && samples.front().count(tensor)) {  // a model input
    for (const Sample& s : samples) visit(calibration::as_float32(s.at(tensor)));
    return;
  }
  executor::FloatExecutor ex(m.model, options);
  executor::RunOptions run;
  run.observer = [&](const ir::Node&, const ir::Value& v, const Tensor& t) {
    if (v.name() == tensor) visit(t);
  };
  for (const Sample& s : samples) ex.run(s, run);
}

// What a distribution shows for a name: a calibration node's tensor, or a node's first output.
struct Subject {
  std::string tensor, kind;
  std::vector<float> thresholds;
  int bits = 8, axis = 1;
  const Tensor* constant = nullptr;  // a weight's data
};

Subject subject_of(const DebugModel& m, const std::string& name) {
  Subject s;
  if (const ir::Node* cal = find_calibration_node(m, name)) {
    s.tensor = cal->input(0)->name();
    s.kind = cal->attrs().get_string("kind", "activation");
    s.thresholds = cal->attrs().get_floats("thresholds", {});
    s.bits = static_cast<int>(cal->attrs().get_int("bits", 8));
    s.axis = static_cast<int>(cal->attrs().get_int("axis", 1));
    s.constant = cal->input(0)->constant();
    return s;
  }
  for (const ir::Node* n : m.model.graph->nodes()) {
    if (n->name() == name && !n->outputs().empty() && n->output(0) != nullptr) {
      s.tensor = n->output(0)->name();
      s.kind = "output";
      return s;
    }
  }
  raise("the model has no calibration node, calibrated tensor or node named '", name, "'");
}

// Calls visit(values) with float32 data of the subject: the weight once, or each sample's
// tensor from the float model.
template <typename Visit>
void subject_values(DebugModel& m, const std::vector<Sample>& samples, const Subject& s,
                    const executor::ExecutorOptions& options, Visit&& visit) {
  if (s.constant != nullptr) {
    visit(calibration::as_float32(*s.constant));
    return;
  }
  const EnabledFlagsGuard restore(m);
  enable_only(m, {});
  observe(m, samples, s.tensor, options, [&](const Tensor& t) {
    if (t.dtype() == kernels::DataType::kFloat32) visit(t);
  });
}

double quantile(std::vector<float>& v, double q) {
  if (v.empty()) return 0;
  const size_t k = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

std::vector<NodeSensitivity> node_sensitivity(DebugModel& m, const std::vector<Sample>& samples,
                                              const SensitivityOptions& o) {
  const std::vector<calibration::SensitivityGroup> groups = sensitivity_groups(m, o);
  const calibration::EvaluationSet set =
      evaluation_set(m, samples, compared_tensors(m, o.output_node), o.executor);
  std::vector<NodeSensitivity> ranked =
      calibration::rank_sensitivity(m.model, groups, set, o.executor);
  std::stable_sort(ranked.begin(), ranked.end(), [&](const auto& a, const auto& b) {
    return worse(o.sort_metric, metric_value(a.metrics, o.sort_metric),
                 metric_value(b.metrics, o.sort_metric));
  });
  return ranked;
}

AccumulatedError accumulated_error(DebugModel& m, const std::vector<Sample>& samples,
                                   const std::vector<QuantizedSet>& sets, Metric metric,
                                   const executor::ExecutorOptions& options) {
  AccumulatedError result;
  std::map<std::string, size_t> watched;  // first float output -> node position
  for (const ir::Node* n : m.model.graph->nodes()) {
    if (calibration::is_calibration_node(*n) || n->outputs().empty() || n->output(0) == nullptr)
      continue;
    watched[n->output(0)->name()] = result.nodes.size();
    result.nodes.push_back(n->name());
  }
  const EnabledFlagsGuard restore(m);
  // Executors read the calibration nodes' attributes when prepared.
  enable_only(m, {});
  executor::FloatExecutor float_model(m.model, options);
  std::vector<std::unique_ptr<executor::FloatExecutor>> quantized;
  for (const QuantizedSet& s : sets) {
    enable_only(m, s.tensors);
    quantized.push_back(std::make_unique<executor::FloatExecutor>(m.model, options));
  }

  std::vector<std::vector<double>> sums(sets.size(), std::vector<double>(result.nodes.size(), 0));
  std::vector<std::vector<size_t>> counts(sets.size(), std::vector<size_t>(result.nodes.size(), 0));
  for (const Sample& sample : samples) {
    std::vector<Tensor> reference(result.nodes.size());
    executor::RunOptions keep;
    keep.observer = [&](const ir::Node&, const ir::Value& v, const Tensor& t) {
      auto it = watched.find(v.name());
      if (it != watched.end() && t.dtype() == kernels::DataType::kFloat32)
        reference[it->second] = t.clone();
    };
    float_model.run(sample, keep);
    for (size_t k = 0; k < sets.size(); ++k) {
      executor::RunOptions compare;
      compare.observer = [&](const ir::Node&, const ir::Value& v, const Tensor& t) {
        auto it = watched.find(v.name());
        if (it == watched.end() || reference[it->second].element_count() != t.element_count() ||
            t.dtype() != kernels::DataType::kFloat32) {
          return;
        }
        const double value =
            metric_value(calibration::output_metrics(t, reference[it->second]), metric);
        if (!std::isfinite(value)) return;
        sums[k][it->second] += value;
        ++counts[k][it->second];
      };
      quantized[k]->run(sample, compare);
    }
  }
  for (size_t k = 0; k < sets.size(); ++k) {
    AccumulatedError::Curve curve{sets[k].label, {}};
    for (size_t i = 0; i < result.nodes.size(); ++i) {
      curve.values.push_back(counts[k][i] ? sums[k][i] / static_cast<double>(counts[k][i])
                                          : std::numeric_limits<double>::quiet_NaN());
    }
    result.curves.push_back(std::move(curve));
  }
  return result;
}

ValueDistribution value_distribution(DebugModel& m, const std::vector<Sample>& samples,
                                     const std::string& name, int bins,
                                     const executor::ExecutorOptions& options) {
  if (bins < 1) raise("histogram bins must be positive, not ", bins);
  const Subject s = subject_of(m, name);
  ValueDistribution d{name, s.tensor, s.kind, 0, 0, {}, {}, s.thresholds, s.bits};
  std::vector<float> values;
  subject_values(m, samples, s, options, [&](const Tensor& t) {
    const float* p = t.data<float>();
    for (int64_t i = 0; i < t.element_count(); ++i) {
      if (std::isfinite(p[i])) values.push_back(p[i]);
    }
  });
  if (values.empty()) raise("'", name, "': no finite values in tensor '", s.tensor, "'");
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  d.min = *lo;
  d.max = *hi;
  const double width = d.max > d.min ? (d.max - d.min) / bins : 1.0;
  for (int b = 0; b <= bins; ++b) d.edges.push_back(d.min + width * b);
  d.counts.assign(static_cast<size_t>(bins), 0);
  for (float v : values) {
    const int b = std::min(bins - 1, static_cast<int>((v - d.min) / width));
    ++d.counts[static_cast<size_t>(std::max(0, b))];
  }
  return d;
}

ChannelDistribution channel_distribution(DebugModel& m, const std::vector<Sample>& samples,
                                         const std::string& name, int axis,
                                         const executor::ExecutorOptions& options) {
  const Subject s = subject_of(m, name);
  ChannelDistribution d{name, s.tensor, s.kind, axis < 0 ? s.axis : axis, {}, s.thresholds, s.bits};
  std::vector<std::vector<float>> channels;
  subject_values(m, samples, s, options, [&](const Tensor& t) {
    const int rank = static_cast<int>(t.shape().size());
    const int a = d.axis < 0 ? d.axis + rank : d.axis;
    if (a < 0 || a >= rank) {
      raise("'", name, "': axis ", d.axis, " is outside tensor '", s.tensor, "' of rank ", rank);
    }
    const int64_t c = t.shape()[static_cast<size_t>(a)];
    int64_t inner = 1;
    for (int k = a + 1; k < rank; ++k) inner *= t.shape()[static_cast<size_t>(k)];
    if (channels.empty()) channels.resize(static_cast<size_t>(c));
    if (static_cast<int64_t>(channels.size()) != c) {
      raise("'", name, "': ", c, " channels in one sample, ", channels.size(), " in another");
    }
    const float* p = t.data<float>();
    for (int64_t i = 0; i < t.element_count(); ++i) {
      if (std::isfinite(p[i])) channels[static_cast<size_t>((i / inner) % c)].push_back(p[i]);
    }
  });
  for (std::vector<float>& v : channels) {
    ChannelDistribution::Channel ch;
    if (!v.empty()) {
      const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      ch.min = *lo;
      ch.max = *hi;
      ch.q1 = quantile(v, 0.25);
      ch.median = quantile(v, 0.5);
      ch.q3 = quantile(v, 0.75);
    }
    d.channels.push_back(ch);
  }
  return d;
}

SensitivityCurve sensitivity_analysis(DebugModel& m, const std::vector<Sample>& samples,
                                      const std::vector<NodeSensitivity>& ranking, size_t count,
                                      Metric metric, const std::string& output_node,
                                      const executor::ExecutorOptions& options) {
  const calibration::EvaluationSet set =
      evaluation_set(m, samples, compared_tensors(m, output_node), options);
  const EnabledFlagsGuard restore(m);
  SensitivityCurve curve;
  std::set<std::string> left_float;
  count = std::min(count, ranking.size());
  for (size_t k = 0; k <= count; ++k) {
    if (k > 0) {
      curve.nodes.push_back(ranking[k - 1].node);
      left_float.insert(ranking[k - 1].tensors.begin(), ranking[k - 1].tensors.end());
    }
    std::vector<std::string> enabled;
    for (const std::string& t : all_calibrated(m)) {
      if (!left_float.count(t)) enabled.push_back(t);
    }
    enable_only(m, enabled);
    curve.values.push_back(
        metric_value(calibration::output_metrics(m.model, set, options), metric));
  }
  return curve;
}

}  // namespace openbpu::debugger
