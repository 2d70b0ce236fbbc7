// Per-node sensitivity of a calibrated model: for each quantized node, the output cosine when
// only that node's calibration nodes (its activation inputs, its weights, and its output when
// that has its own point) fake-quantize and every other one passes through. The lowest cosine
// is the most sensitive node: the quantizer promotes such nodes to int16 where the march allows
// (set_node_calibration_bits). A tensor read by several nodes has one calibration node, which
// is enabled with each of them.
#pragma once

#include <string>
#include <vector>

#include "openbpu/calibration/calibration_points.h"
#include "openbpu/calibration/fake_quant_evaluation.h"

namespace openbpu::calibration {

struct NodeSensitivity {
  std::string node;
  std::string op_type;
  double cosine = 1.0;               // output cosine with only this node quantized
  std::vector<std::string> tensors;  // its calibrated tensors
};

// Most sensitive first (ascending cosine; graph order on ties). The calibration nodes' enabled
// flags are restored before returning.
std::vector<NodeSensitivity> rank_node_sensitivity(ir::Model& calibrated_model,
                                                   const std::vector<CalibrationPoint>& points,
                                                   const EvaluationSet& evaluation,
                                                   const executor::ExecutorOptions& options);

}  // namespace openbpu::calibration
