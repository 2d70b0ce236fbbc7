#include "openbpu/calibration/node_sensitivity.h"

#include <algorithm>
#include <map>

#include "openbpu/calibration/calibration_nodes.h"

namespace openbpu::calibration {

std::vector<NodeSensitivity> rank_node_sensitivity(ir::Model& calibrated_model,
                                                   const std::vector<CalibrationPoint>& points,
                                                   const EvaluationSet& evaluation,
                                                   const executor::ExecutorOptions& options) {
  ir::Graph& graph = *calibrated_model.graph;
  const std::map<std::string, ir::Node*> nodes = calibration_nodes(graph);

  // Quantized node -> its calibration nodes.
  std::map<std::string, std::vector<const CalibrationPoint*>> by_node;
  for (const CalibrationPoint& p : points) {
    for (const std::string& n : p.nodes) by_node[n].push_back(&p);
  }
  std::map<std::string, size_t> order;
  std::map<std::string, std::string> op_of;
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    order[graph.nodes()[i]->name()] = i;
    op_of[graph.nodes()[i]->name()] = graph.nodes()[i]->op_type();
  }

  std::map<ir::Node*, int64_t> saved;
  for (const auto& [tensor, node] : nodes) {
    saved[node] = node->attrs().get_int("enabled", 1);
    set_calibration_enabled(*node, false);
  }

  std::vector<NodeSensitivity> result;
  for (const auto& [name, node_points] : by_node) {
    NodeSensitivity s;
    s.node = name;
    s.op_type = op_of.count(name) ? op_of[name] : "";
    std::vector<ir::Node*> enabled;
    for (const CalibrationPoint* p : node_points) {
      auto it = nodes.find(p->tensor);
      if (it == nodes.end()) continue;
      s.tensors.push_back(p->tensor);
      enabled.push_back(it->second);
    }
    if (enabled.empty()) continue;
    for (ir::Node* n : enabled) set_calibration_enabled(*n, true);
    s.cosine = output_cosine(calibrated_model, evaluation, options);
    for (ir::Node* n : enabled) set_calibration_enabled(*n, false);
    result.push_back(std::move(s));
  }
  for (const auto& [node, flag] : saved) set_calibration_enabled(*node, flag != 0);

  std::stable_sort(result.begin(), result.end(), [&](const auto& a, const auto& b) {
    if (a.cosine != b.cosine) return a.cosine < b.cosine;
    return order[a.node] < order[b.node];
  });
  return result;
}

}  // namespace openbpu::calibration
