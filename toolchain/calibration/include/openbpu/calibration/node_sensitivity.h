// Per-node sensitivity of a calibrated model: for each quantized node, the output metrics when
// only that node's calibration nodes (its activation inputs, its weights, and its output when
// that has its own point) fake-quantize and every other one passes through. The lowest cosine
// is the most sensitive node: the quantizer promotes such nodes to int16 where the march allows
// (set_node_calibration_bits). A tensor read by several nodes has one calibration node, which
// is enabled with each of them. The accuracy debugger ranks other groups of calibration nodes
// the same way (one weight or one activation at a time).
#pragma once

#include <string>
#include <vector>

#include "openbpu/calibration/calibration_points.h"
#include "openbpu/calibration/fake_quant_evaluation.h"

namespace openbpu::calibration {

struct NodeSensitivity {
  std::string node;  // the node (or the group's name)
  std::string op_type;
  OutputMetrics metrics;             // with only this node's calibration nodes enabled
  std::vector<std::string> tensors;  // its calibrated tensors
};

// Calibration nodes enabled together: one candidate of a ranking.
struct SensitivityGroup {
  std::string name;
  std::string op_type;
  std::vector<std::string> tensors;  // calibrated tensors (keys of calibration_nodes())
};

// One group per quantized node of `points` (its calibrated tensors), in node name order.
std::vector<SensitivityGroup> node_groups(const ir::Graph& graph,
                                          const std::vector<CalibrationPoint>& points);

// Most sensitive first (ascending cosine; graph order of the first calibration node on ties).
// Groups without a calibration node of the graph are left out. The calibration nodes' enabled
// flags are restored before returning.
std::vector<NodeSensitivity> rank_sensitivity(ir::Model& calibrated_model,
                                              const std::vector<SensitivityGroup>& groups,
                                              const EvaluationSet& evaluation,
                                              const executor::ExecutorOptions& options);

// rank_sensitivity() of node_groups().
std::vector<NodeSensitivity> rank_node_sensitivity(ir::Model& calibrated_model,
                                                   const std::vector<CalibrationPoint>& points,
                                                   const EvaluationSet& evaluation,
                                                   const executor::ExecutorOptions& options);

}  // namespace openbpu::calibration
