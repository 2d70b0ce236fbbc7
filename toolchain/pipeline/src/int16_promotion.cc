#include "openbpu/pipeline/int16_promotion.h"

#include <algorithm>
#include <map>

#include "openbpu/simulator/timing.h"

namespace openbpu::pipeline {

namespace {

// Elements of a value from its static dimensions (an unknown one counts 1).
uint64_t elements(const ir::Value* v) {
  if (v == nullptr || !v->type().shape.has_value()) return 0;
  uint64_t n = 1;
  for (const ir::Dim& d : *v->type().shape) n *= d.is_known() ? static_cast<uint64_t>(d.value) : 1;
  return n;
}

int64_t dim(const ir::Value* v, int64_t axis) {
  if (v == nullptr || !v->type().shape.has_value()) return 1;
  const auto& s = *v->type().shape;
  if (axis < 0) axis += static_cast<int64_t>(s.size());
  if (axis < 0 || axis >= static_cast<int64_t>(s.size()) || !s[static_cast<size_t>(axis)].is_known()) return 1;
  return std::max<int64_t>(1, s[static_cast<size_t>(axis)].value);
}

// The work of a node for the timing model: the MAC array's for Conv, ConvTranspose, MatMul and
// Gemm (weights as constants), the vector unit's over the output for the others.
simulator::OperationWork node_work(const ir::Node& n) {
  simulator::OperationWork w;
  const std::string& op = n.op_type();
  const bool weighted = op == "Conv" || op == "ConvTranspose" || op == "MatMul" || op == "Gemm";
  for (size_t i = 0; i < n.inputs().size(); ++i) {
    const uint64_t e = elements(n.input(i));
    if (weighted && i >= 1) {
      w.constant_bytes += e;
    } else {
      w.activation_elements += e;
    }
  }
  const ir::Value* y = n.outputs().empty() ? nullptr : n.output(0);
  for (const ir::Value* out : n.outputs()) w.activation_elements += elements(out);
  const uint64_t out_elements = std::max<uint64_t>(1, elements(y));
  const uint64_t groups = static_cast<uint64_t>(std::max<int64_t>(1, n.attrs().get_int("group", 1)));
  if (op == "Conv" || op == "ConvTranspose") {
    const ir::Value* weight = n.inputs().size() > 1 ? n.input(1) : nullptr;
    const uint64_t taps = static_cast<uint64_t>(dim(weight, 2) * dim(weight, 3));
    if (op == "Conv") {
      const uint64_t m = static_cast<uint64_t>(dim(y, 1));
      w.macs = {out_elements / m, static_cast<uint64_t>(dim(weight, 1)), m / groups, groups, taps};
    } else {  // weight [C, M / group, kh, kw]; every input position feeds kh x kw outputs
      const ir::Value* x = n.input(0);
      const uint64_t c = static_cast<uint64_t>(dim(x, 1));
      w.macs = {std::max<uint64_t>(1, elements(x)) / c, c / groups, static_cast<uint64_t>(dim(weight, 1)), groups, taps};
    }
  } else if (op == "MatMul" || op == "Gemm") {
    const uint64_t cols = static_cast<uint64_t>(dim(y, -1));
    const bool trans_a = op == "Gemm" && n.attrs().get_int("transA", 0) != 0;
    const uint64_t depth = static_cast<uint64_t>(dim(n.input(0), trans_a ? -2 : -1));
    w.macs = {out_elements / cols, depth, cols};
  } else {
    w.element_ops = out_elements;
  }
  return w;
}

}  // namespace

Int16Choice choose_int16_nodes(const ir::Graph& calibrated,
                               const std::vector<calibration::NodeSensitivity>& ranking,
                               const simulator::MarchSpec& march, double budget) {
  std::map<std::string, const ir::Node*> by_name;
  for (const ir::Node* n : calibrated.nodes()) by_name.emplace(n->name(), n);
  struct Candidate {
    size_t rank;
    double gain;
    uint64_t cost;
  };
  Int16Choice choice;
  std::vector<Candidate> candidates;
  for (size_t r = 0; r < ranking.size(); ++r) {
    auto it = by_name.find(ranking[r].node);
    if (it == by_name.end()) continue;
    const simulator::OperationWork work = node_work(*it->second);
    const uint64_t int8 = simulator::operation_cycles(work, march, false);
    const uint64_t int16 = simulator::operation_cycles(work, march, true);
    choice.int8_cycles += int8;
    const double score = ranking[r].metrics.score;
    if (score < kInt16Cutoff) candidates.push_back({r, 1.0 - score, std::max<uint64_t>(1, int16 - std::min(int16, int8))});
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return a.gain / static_cast<double>(a.cost) > b.gain / static_cast<double>(b.cost);
  });
  const double allowed = budget * static_cast<double>(choice.int8_cycles);
  std::vector<size_t> chosen;
  for (const Candidate& c : candidates) {
    if (static_cast<double>(choice.added_cycles + c.cost) > allowed) continue;
    choice.added_cycles += c.cost;
    chosen.push_back(c.rank);
  }
  std::sort(chosen.begin(), chosen.end());
  for (size_t r : chosen) choice.nodes.push_back(ranking[r].node);
  return choice;
}

}  // namespace openbpu::pipeline
