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

  // Everything before a node's first calibration node computes as in the float model, so each
  // node's run resumes from one float run advanced to that step: nodes in step order, the
  // float run advanced between them. Same results as running each model from its inputs.
  executor::FloatExecutor reference(calibrated_model, options);
  struct Candidate {
    NodeSensitivity s;
    std::vector<ir::Node*> enabled;
    size_t first_step = 0;
  };
  std::vector<Candidate> candidates;
  for (const auto& [name, node_points] : by_node) {
    Candidate c;
    c.s.node = name;
    c.s.op_type = op_of.count(name) ? op_of[name] : "";
    for (const CalibrationPoint* p : node_points) {
      auto it = nodes.find(p->tensor);
      if (it == nodes.end()) continue;
      c.s.tensors.push_back(p->tensor);
      c.enabled.push_back(it->second);
    }
    if (c.enabled.empty()) continue;
    c.first_step = reference.step_of(*c.enabled.front());
    for (const ir::Node* n : c.enabled)
      c.first_step = std::min(c.first_step, reference.step_of(*n));
    candidates.push_back(std::move(c));
  }
  std::vector<Candidate*> by_step;
  for (Candidate& c : candidates) by_step.push_back(&c);
  std::stable_sort(by_step.begin(), by_step.end(), [](const Candidate* a, const Candidate* b) {
    return a->first_step < b->first_step;
  });

  // One executor for the float runs and every candidate: a candidate's calibration nodes are
  // enabled and their kernels re-created for its runs, then disabled again.
  std::vector<executor::RunState> float_runs = start_evaluation_runs(reference, graph, evaluation);
  auto enable = [&](const Candidate& c, bool on) {
    for (ir::Node* n : c.enabled) {
      set_calibration_enabled(*n, on);
      reference.refresh_node(*n);
    }
  };
  for (Candidate* c : by_step) {
    for (executor::RunState& run : float_runs) reference.advance(run, c->first_step);
    enable(*c, true);
    c->s.cosine = output_cosine_from(reference, graph, float_runs, evaluation);
    enable(*c, false);
  }
  for (const auto& [node, flag] : saved) set_calibration_enabled(*node, flag != 0);

  std::vector<NodeSensitivity> result;
  for (Candidate& c : candidates) result.push_back(std::move(c.s));

  std::stable_sort(result.begin(), result.end(), [&](const auto& a, const auto& b) {
    if (a.cosine != b.cosine) return a.cosine < b.cosine;
    return order[a.node] < order[b.node];
  });
  return result;
}

}  // namespace openbpu::calibration
