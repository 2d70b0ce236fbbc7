#include "openbpu/calibration/node_sensitivity.h"

#include <algorithm>
#include <map>

#include "openbpu/base/thread_pool.h"
#include "openbpu/calibration/calibration_nodes.h"

namespace openbpu::calibration {

std::vector<SensitivityGroup> node_groups(const ir::Graph& graph,
                                          const std::vector<CalibrationPoint>& points) {
  std::map<std::string, std::string> op_of;
  for (const ir::Node* n : graph.nodes()) op_of[n->name()] = n->op_type();
  std::map<std::string, SensitivityGroup> by_node;
  for (const CalibrationPoint& p : points) {
    for (const std::string& n : p.nodes) {
      SensitivityGroup& g = by_node[n];
      g.name = n;
      g.op_type = op_of.count(n) ? op_of[n] : "";
      g.tensors.push_back(p.tensor);
    }
  }
  std::vector<SensitivityGroup> groups;
  for (auto& [name, g] : by_node) groups.push_back(std::move(g));
  return groups;
}

std::vector<NodeSensitivity> rank_node_sensitivity(ir::Model& calibrated_model,
                                                   const std::vector<CalibrationPoint>& points,
                                                   const EvaluationSet& evaluation,
                                                   const executor::ExecutorOptions& options) {
  return rank_sensitivity(calibrated_model, node_groups(*calibrated_model.graph, points),
                          evaluation, options);
}

std::vector<NodeSensitivity> rank_sensitivity(ir::Model& calibrated_model,
                                              const std::vector<SensitivityGroup>& groups,
                                              const EvaluationSet& evaluation,
                                              const executor::ExecutorOptions& options) {
  ir::Graph& graph = *calibrated_model.graph;
  const std::map<std::string, ir::Node*> nodes = calibration_nodes(graph);
  std::map<const ir::Node*, size_t> index_of;
  for (size_t i = 0; i < graph.nodes().size(); ++i) index_of[graph.nodes()[i]] = i;

  std::map<ir::Node*, int64_t> saved;
  for (const auto& [tensor, node] : nodes) {
    saved[node] = node->attrs().get_int("enabled", 1);
    set_calibration_enabled(*node, false);
  }

  // Everything before a node's first calibration node computes as in the float model, so each
  // node's run resumes from one float run advanced to that step: nodes in step order, the
  // float run advanced between them. Same results as running each model from its inputs.
  // Candidates are dealt to `options.threads` workers, each with an executor of its own (one
  // kernel thread) whose float runs it advances itself; a candidate's calibration nodes are
  // enabled only in its worker's executor (refresh_node with enabled attributes), so the
  // cosines do not depend on the number of workers.
  struct Candidate {
    NodeSensitivity s;
    std::vector<ir::Node*> enabled;
    size_t first_step = 0;
    size_t order = 0;  // ties: the named node's position, else first_step
  };
  std::map<std::string, size_t> position;
  for (size_t i = 0; i < graph.nodes().size(); ++i) position[graph.nodes()[i]->name()] = i;
  std::vector<Candidate> candidates;
  for (const SensitivityGroup& g : groups) {
    Candidate c;
    c.s.node = g.name;
    c.s.op_type = g.op_type;
    for (const std::string& tensor : g.tensors) {
      auto it = nodes.find(tensor);
      if (it == nodes.end()) continue;
      c.s.tensors.push_back(tensor);
      c.enabled.push_back(it->second);
    }
    if (c.enabled.empty()) continue;
    c.first_step = index_of.at(c.enabled.front());  // an executor's step is the node index
    for (const ir::Node* n : c.enabled) c.first_step = std::min(c.first_step, index_of.at(n));
    auto named = position.find(g.name);
    c.order = named != position.end() ? named->second : c.first_step;
    candidates.push_back(std::move(c));
  }
  std::vector<Candidate*> by_step;
  for (Candidate& c : candidates) by_step.push_back(&c);
  std::stable_sort(by_step.begin(), by_step.end(), [](const Candidate* a, const Candidate* b) {
    return a->first_step < b->first_step;
  });

  const int64_t workers =
      std::clamp<int64_t>(options.threads, 1, std::max<int64_t>(1, static_cast<int64_t>(by_step.size())));
  executor::ExecutorOptions one = options;
  one.threads = 1;
  auto work = [&](int64_t worker) {
    executor::FloatExecutor ex(calibrated_model, workers > 1 ? one : options);
    std::vector<executor::RunState> runs = start_evaluation_runs(ex, graph, evaluation);
    auto enable = [&](const Candidate& c, bool on) {
      for (ir::Node* n : c.enabled) {
        kernels::AttributeMap attrs = n->attrs();
        attrs.set("enabled", int64_t{on ? 1 : 0});
        ex.refresh_node(*n, &attrs);
      }
    };
    for (size_t k = static_cast<size_t>(worker); k < by_step.size(); k += static_cast<size_t>(workers)) {
      Candidate* c = by_step[k];
      for (executor::RunState& run : runs) ex.advance(run, c->first_step);
      enable(*c, true);
      c->s.metrics = output_metrics_from(ex, graph, runs, evaluation);
      enable(*c, false);
    }
  };
  if (workers > 1) {
    base::ThreadPool pool(static_cast<int>(workers));
    base::parallel_for(&pool, workers, 1, [&](int64_t begin, int64_t end) {
      for (int64_t w = begin; w < end; ++w) work(w);
    });
  } else {
    work(0);
  }
  for (const auto& [node, flag] : saved) set_calibration_enabled(*node, flag != 0);

  std::stable_sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
    if (a.s.metrics.score != b.s.metrics.score) return a.s.metrics.score < b.s.metrics.score;
    return a.order < b.order;
  });
  std::vector<NodeSensitivity> result;
  for (Candidate& c : candidates) result.push_back(std::move(c.s));
  return result;
}

}  // namespace openbpu::calibration
