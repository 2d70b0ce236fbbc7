// The accuracy debugger's analyses of a calibrated model (hmct-debugger's subcommands; the
// plots are in plots.h). All run the float executor on the given samples.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "openbpu/calibration/node_sensitivity.h"
#include "openbpu/debugger/debug_model.h"
#include "openbpu/debugger/metrics.h"

namespace openbpu::debugger {

// get-sensitivity-of-nodes: candidates are quantized nodes (all their calibration nodes), or
// single weight / activation calibration nodes; each is quantized alone and the compared
// tensors scored by every metric. Sorted most sensitive first by `sort_metric`.
enum class Granularity { kNode, kWeight, kActivation };
Granularity parse_granularity(std::string_view name);  // "node", "weight", "activation"

struct SensitivityOptions {
  Granularity granularity = Granularity::kNode;
  Metric sort_metric = Metric::kCosine;
  std::string output_node;              // compared: this node's outputs ("" = model outputs)
  std::vector<std::string> interested;  // only these candidates ("" = all)
  executor::ExecutorOptions executor;
};
std::vector<calibration::NodeSensitivity> node_sensitivity(DebugModel& m,
                                                           const std::vector<Sample>& samples,
                                                           const SensitivityOptions& options);

// plot-acc-error: for one set of quantized calibration nodes, the metric of every node's first
// float output against the float model's, averaged over samples, in graph order.
struct QuantizedSet {
  std::string label;
  std::vector<std::string> tensors;  // calibrated tensors enabled
};
struct AccumulatedError {
  std::vector<std::string> nodes;  // graph order (calibration nodes left out)
  struct Curve {
    std::string label;
    std::vector<double> values;  // per node
  };
  std::vector<Curve> curves;  // per QuantizedSet
};
AccumulatedError accumulated_error(DebugModel& m, const std::vector<Sample>& samples,
                                   const std::vector<QuantizedSet>& sets, Metric metric,
                                   const executor::ExecutorOptions& options);

// plot-distribution: the values of a calibrated tensor (a weight, or an activation over the
// samples) or of a node's first output, as a histogram over [min, max].
struct ValueDistribution {
  std::string name;    // as asked
  std::string tensor;  // the tensor whose values these are
  std::string kind;    // "weight", "activation" or "output"
  double min = 0, max = 0;
  std::vector<double> edges;      // bins + 1
  std::vector<uint64_t> counts;   // bins
  std::vector<float> thresholds;  // the calibration node's (empty for a node's output)
  int bits = 8;
};
ValueDistribution value_distribution(DebugModel& m, const std::vector<Sample>& samples,
                                     const std::string& name, int bins,
                                     const executor::ExecutorOptions& options);

// get-channelwise-data-distribution: per channel along `axis` (-1: the calibration node's
// axis), the minimum, quartiles and maximum of a calibrated tensor's values.
struct ChannelDistribution {
  std::string name, tensor, kind;
  int axis = 1;
  struct Channel {
    double min = 0, q1 = 0, median = 0, q3 = 0, max = 0;
  };
  std::vector<Channel> channels;
  std::vector<float> thresholds;  // one, or one per channel
  int bits = 8;
};
ChannelDistribution channel_distribution(DebugModel& m, const std::vector<Sample>& samples,
                                         const std::string& name, int axis,
                                         const executor::ExecutorOptions& options);

// sensitivity-analysis: with every calibration node enabled, the compared tensors' metric as
// the `ranking`'s first k nodes are left float, k = 0 .. count.
struct SensitivityCurve {
  std::vector<std::string> nodes;  // the nodes left float, in order
  std::vector<double> values;      // nodes.size() + 1 values: k = 0 (all quantized) .. count
};
SensitivityCurve sensitivity_analysis(DebugModel& m, const std::vector<Sample>& samples,
                                      const std::vector<calibration::NodeSensitivity>& ranking,
                                      size_t count, Metric metric, const std::string& output_node,
                                      const executor::ExecutorOptions& options);

}  // namespace openbpu::debugger
