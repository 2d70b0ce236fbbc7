#include "openbpu/calibration/calibration_points.h"

#include <algorithm>
#include <map>
#include <set>

#include "openbpu/bpu_support/op_def.h"

namespace openbpu::calibration {

namespace {

bool is_accumulating(const std::string& op) {
  return op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "MatMul";
}

// Ops whose inputs after the first are parameters (shapes, scales, bounds, exponents).
bool only_first_input_is_data(const std::string& op) {
  static const std::set<std::string> ops = {"Resize", "Upsample",   "Clip",
                                            "Pad",    "ReduceMean", "Pow"};
  return ops.count(op) != 0;
}

bool is_data_input(const ir::Node& node, size_t index) {
  const std::string& op = node.op_type();
  if (only_first_input_is_data(op)) return index == 0;
  if (op == "Conv" || op == "ConvTranspose" || op == "Gemm") return index <= 1;
  return true;
}

bool is_float_activation(const ir::Value* v) {
  return v != nullptr && !v->is_constant() && v->type().dtype == kernels::DataType::kFloat32;
}

// The output-channel axis of a weight input (the operator's OpDef row says which), or -1 if
// input 1 of this node is not a float weight.
int weight_axis(const ir::Node& node) {
  const ir::Value* w = node.input(1);
  if (w == nullptr || !w->is_constant() || w->constant()->dtype() != kernels::DataType::kFloat32) {
    return -1;
  }
  const bpu_support::OpDef* def = bpu_support::find_op_def(node);
  if (def == nullptr || def->weight_axis == nullptr) return -1;
  const int axis = def->weight_axis(node);
  return axis < w->constant()->rank() ? axis : -1;
}

void add_node_name(CalibrationPoint& p, const std::string& name) {
  if (std::find(p.nodes.begin(), p.nodes.end(), name) == p.nodes.end()) p.nodes.push_back(name);
}

}  // namespace

bool default_quantized_op(const std::string& op_type) {
  static const std::set<std::string> ops = {"Conv",
                                            "ConvTranspose",
                                            "Gemm",
                                            "MatMul",
                                            "Add",
                                            "Sub",
                                            "Mul",
                                            "Concat",
                                            "MaxPool",
                                            "AveragePool",
                                            "GlobalAveragePool",
                                            "GlobalMaxPool",
                                            "Resize",
                                            "Upsample",
                                            "ReduceMean",
                                            "Relu",
                                            "Clip",
                                            "LeakyRelu",
                                            "PRelu",
                                            "Sigmoid",
                                            "Tanh",
                                            "HardSigmoid",
                                            "HardSwish",
                                            "Elu",
                                            "Selu",
                                            "Softplus",
                                            "Exp",
                                            "Log",
                                            "Sqrt",
                                            "Reciprocal",
                                            "Erf",
                                            "Gelu",
                                            "Pow"};
  return ops.count(op_type) != 0;
}

CalibrationRules CalibrationRules::defaults() {
  CalibrationRules r;
  r.quantized_node = [](const ir::Node& node) {
    return node.domain().empty() && default_quantized_op(node.op_type());
  };
  return r;
}

std::vector<CalibrationPoint> find_calibration_points(const ir::Graph& graph,
                                                      const CalibrationRules& rules) {
  std::vector<CalibrationPoint> activations;
  std::map<const ir::Value*, size_t> activation_index;
  auto activation = [&](const ir::Value* v) -> CalibrationPoint& {
    auto [it, added] = activation_index.emplace(v, activations.size());
    if (added) {
      CalibrationPoint p;
      p.tensor = v->name();
      activations.push_back(std::move(p));
    }
    return activations[it->second];
  };
  std::vector<CalibrationPoint> weights;
  std::map<const ir::Value*, size_t> weight_index;

  const auto quantized = [&](const ir::Node& n) {
    return rules.quantized_node ? rules.quantized_node(n) : false;
  };
  for (const ir::Node* node : graph.nodes()) {
    if (node->domain() == "horizon" && node->op_type() == "HzPreprocess") {
      for (const ir::Value* out : node->outputs()) {
        if (is_float_activation(out)) activation(out);
      }
    }
    if (!quantized(*node)) continue;
    for (size_t i = 0; i < node->inputs().size(); ++i) {
      const ir::Value* in = node->input(i);
      if (is_data_input(*node, i) && is_float_activation(in)) {
        add_node_name(activation(in), node->name());
      }
    }
    const int axis = weight_axis(*node);
    if (axis >= 0) {
      const ir::Value* w = node->input(1);
      auto [it, added] = weight_index.emplace(w, weights.size());
      if (added) {
        CalibrationPoint p;
        p.tensor = w->name();
        p.kind = CalibrationKind::kWeight;
        p.axis = axis;
        weights.push_back(std::move(p));
      }
      add_node_name(weights[it->second], node->name());
    }
    if (is_accumulating(node->op_type())) continue;
    for (const ir::Value* out : node->outputs()) {
      if (!is_float_activation(out)) continue;
      bool read_by_quantized = false;
      for (const ir::Use& use : out->uses()) {
        if (quantized(*use.node) &&
            is_data_input(*use.node, static_cast<size_t>(use.input_index))) {
          read_by_quantized = true;
        }
      }
      if (!read_by_quantized) add_node_name(activation(out), node->name());
    }
  }
  activations.insert(activations.end(), weights.begin(), weights.end());
  return activations;
}

}  // namespace openbpu::calibration
