// HzCalibration nodes (docs/quantized_ops.md) in the calibrated model.
//
// insert_calibration_nodes() puts one node per calibration point on the tensor:
// `<tensor>_HzCalibration` (domain horizon) reads the tensor and writes `<tensor>_calibrated`,
// and every reader of the tensor reads that instead. A tensor that is a graph output keeps its
// name on the calibrated side (the float side is renamed `<tensor>_float`), so model outputs do
// not change names. Nodes start with bits 8, enabled 1, the point's axis, no thresholds.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "openbpu/calibration/calibration_points.h"
#include "openbpu/ir/graph.h"

namespace openbpu::calibration {

inline constexpr const char* kHorizonDomain = "horizon";
inline constexpr const char* kCalibrationOp = "HzCalibration";

// The name of the calibration node of a tensor.
std::string calibration_node_name(const std::string& tensor);

// Inserts the nodes (and the horizon opset import, version 1). Returns them by tensor name.
// Throws Error if a tensor is missing or already calibrated.
std::map<std::string, ir::Node*> insert_calibration_nodes(
    ir::Model& model, const std::vector<CalibrationPoint>& points);

bool is_calibration_node(const ir::Node& node);
// The calibration nodes of a graph by the tensor they calibrate (their input's name, or for a
// graph output the name the node's output carries).
std::map<std::string, ir::Node*> calibration_nodes(const ir::Graph& graph);

// The calibration points of a calibrated model read back from its calibration nodes, in graph
// order: the tensor (as calibration_nodes() names it), kind and axis from the attributes, and
// as nodes the readers of the calibrated tensor that `rules` quantizes, or when there is none
// its producer (an output point).
std::vector<CalibrationPoint> calibration_points_of(
    const ir::Graph& graph, const CalibrationRules& rules = CalibrationRules::defaults());

// Sets thresholds (one per tensor, or one per channel along the node's axis) and the
// informative method name.
void set_calibration_thresholds(ir::Node& node, const std::vector<float>& thresholds,
                                const std::string& method);
void set_calibration_enabled(ir::Node& node, bool enabled);

// Sets `bits` (8 or 16) on the activation calibration nodes of a node's inputs and outputs: the
// quantizer's int16 promotion of a sensitive node. A tensor has one type, so other readers of
// the same tensors see the change too. Returns the calibration nodes changed; Error if the graph
// has no node of that name or bits is not 8 or 16.
std::vector<ir::Node*> set_node_calibration_bits(ir::Graph& graph, const std::string& node_name,
                                                 int bits);

}  // namespace openbpu::calibration
