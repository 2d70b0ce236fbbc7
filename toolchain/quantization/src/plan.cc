#include "openbpu/quantization/plan.h"

#include <algorithm>

#include "openbpu/common/error.h"

namespace openbpu::quantization {

using bpu_support::Unit;

namespace {

bool is_op(const ir::Node* n, std::string_view op) {
  return n != nullptr && n->domain().empty() && n->op_type() == op;
}

// Anchors that accumulate products (weights) and can output int32.
bool is_accumulating_anchor(const ir::Node& n) {
  if (n.domain() == "horizon") return n.op_type() == "HzPreprocess";
  if (!n.domain().empty()) return false;
  const std::string& op = n.op_type();
  if (op == "Conv" || op == "ConvTranspose" || op == "Gemm") return true;
  return op == "MatMul" && n.input(1) != nullptr && n.input(1)->is_constant();
}

bool is_elementwise_anchor(const ir::Node& n) {
  return n.domain().empty() &&
         (n.op_type() == "Add" || n.op_type() == "Sub" || n.op_type() == "Mul");
}

// The single BPU reader of a value, or nullptr (none, several, or a graph output).
const ir::Node* single_reader(const ir::Graph& g, const ir::Value* v) {
  if (v == nullptr || g.is_output(v) || v->uses().size() != 1) return nullptr;
  return v->uses().front().node;
}

// Operators whose output holds indices, not values of a real tensor.
bool writes_indices(const ir::Node& n) { return n.domain().empty() && n.op_type() == "ArgMax"; }

bool is_fusable_activation(const ir::Node* n) {
  if (is_op(n, "Relu")) return true;
  if (!is_op(n, "Clip")) return false;
  // Clip with constant bounds (inputs from opset 11, attributes before).
  for (size_t i = 1; i < n->inputs().size(); ++i) {
    if (n->input(i) != nullptr && !n->input(i)->is_constant()) return false;
  }
  return true;
}

}  // namespace

Role QuantizationPlan::role(const ir::Node* node) const {
  auto it = roles.find(node);
  return it == roles.end() ? Role::kCpu : it->second;
}

bool inherits_input_scale(const ir::Node& node) {
  if (!node.domain().empty()) return false;
  static const std::set<std::string> ops = {
      "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Split", "Slice",
      "Pad", "MaxPool", "GlobalMaxPool", "DepthToSpace", "SpaceToDepth", "Gather",
      "Resize", "Upsample"};
  return ops.count(node.op_type()) != 0;
}

QuantizationPlan plan_quantization(const ir::Graph& graph, const simulator::MarchSpec& march,
                                   const PlanOptions& options) {
  QuantizationPlan plan;
  plan.partition = bpu_support::partition_graph(graph, march, options.overrides);
  auto on_bpu = [&](const ir::Node* n) {
    return n != nullptr && plan.partition.at(n).unit == Unit::kBpu;
  };

  for (const ir::Node* n : graph.nodes()) plan.roles[n] = on_bpu(n) ? Role::kBpu : Role::kCpu;

  // Fusion groups, in graph order (an absorbed node is never an anchor). The quantizer emits a
  // group at its anchor's place, so a residual input must be produced before the anchor: of
  // Conv_a, Conv_b → Add(a, b), Conv_b (the later one) absorbs the Add.
  std::map<const ir::Node*, size_t> position;
  for (const ir::Node* n : graph.nodes()) position.emplace(n, position.size());
  auto produced_before = [&](const ir::Value* v, const ir::Node* anchor) {
    return v->producer() == nullptr || position.at(v->producer()) < position.at(anchor);
  };
  for (const ir::Node* n : graph.nodes()) {
    if (plan.roles[n] != Role::kBpu) continue;
    const bool accumulating = is_accumulating_anchor(*n);
    if (!accumulating && !is_elementwise_anchor(*n)) continue;
    Fusion f;
    f.output = n->output(0);
    const ir::Node* next = single_reader(graph, f.output);
    // Residual add: Conv → Add(conv_out, other) with both on the BPU.
    if (is_op(n, "Conv") && is_op(next, "Add") && on_bpu(next) && plan.roles[next] == Role::kBpu) {
      const ir::Value* other =
          next->input(0) == f.output ? next->input(1) : next->input(0);
      const bool same_shape = other != nullptr && !other->is_constant() &&
                              other->type().static_shape() && f.output->type().static_shape() &&
                              *other->type().static_shape() == *f.output->type().static_shape();
      if (same_shape && next->input(0) != next->input(1) && produced_before(other, n)) {
        f.residual_add = next;
        f.residual = other;
        f.output = next->output(0);
        plan.roles[next] = Role::kFusedResidual;
        next = single_reader(graph, f.output);
      }
    }
    if (is_fusable_activation(next) && on_bpu(next) && plan.roles[next] == Role::kBpu) {
      f.activation = next;
      f.output = next->output(0);
      plan.roles[next] = Role::kFusedActivation;
    }
    plan.fusions[n] = f;
  }

  // Quantized tensors.
  for (const ir::Node* n : graph.nodes()) {
    if (plan.roles[n] != Role::kBpu) continue;
    auto fusion = plan.fusions.find(n);
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      const ir::Value* in = n->input(i);
      if (in == nullptr || in->is_constant()) continue;
      plan.quantized.insert(in);
    }
    if (fusion != plan.fusions.end()) {
      if (fusion->second.residual) plan.quantized.insert(fusion->second.residual);
      plan.quantized.insert(fusion->second.output);
    } else if (writes_indices(*n)) {
      // int32 indices: not a quantized activation, no scale, no calibration.
    } else {
      for (const ir::Value* out : n->outputs()) {
        if (out != nullptr) plan.quantized.insert(out);
      }
    }
    if (inherits_input_scale(*n) && n->input(0) != nullptr && !n->input(0)->is_constant()) {
      for (const ir::Value* out : n->outputs()) {
        if (out != nullptr) plan.inherits_scale[out] = n->input(0);
      }
    }
  }

  // int32 tails.
  for (auto& [anchor, f] : plan.fusions) {
    if (!is_accumulating_anchor(*anchor) || anchor->domain() == "horizon") continue;
    if (f.activation != nullptr && !is_op(f.activation, "Relu")) continue;
    if (f.residual_add != nullptr) continue;
    if (options.model_output_bits != 32) continue;
    bool bpu_reader = false;
    for (const ir::Use& u : f.output->uses()) bpu_reader = bpu_reader || on_bpu(u.node);
    f.int32_output = !bpu_reader;
  }

  // Calibration targets: quantized tensors that do not inherit a scale and are not int32.
  std::set<const ir::Value*> int32_outputs;
  for (const auto& [anchor, f] : plan.fusions) {
    if (f.int32_output) int32_outputs.insert(f.output);
  }
  std::map<const ir::Value*, std::vector<std::string>> owners;
  std::vector<const ir::Value*> order;
  auto note = [&](const ir::Value* v, const ir::Node* owner) {
    if (v == nullptr || plan.quantized.count(v) == 0 || plan.inherits_scale.count(v) ||
        int32_outputs.count(v) || v->is_constant()) {
      return;
    }
    // Integer graph inputs (image inputs: pixel − 128) are already quantized, scale 1.
    if (v->type().dtype != kernels::DataType::kUndefined && !kernels::dtype_is_float(v->type().dtype)) {
      return;
    }
    auto [it, inserted] = owners.try_emplace(v);
    if (inserted) order.push_back(v);
    if (std::find(it->second.begin(), it->second.end(), owner->name()) == it->second.end()) {
      it->second.push_back(owner->name());
    }
  };
  for (const ir::Node* n : graph.nodes()) {
    const Role r = plan.roles[n];
    if (r == Role::kCpu) continue;
    const ir::Node* owner = n;
    if (r == Role::kFusedActivation || r == Role::kFusedResidual) {
      for (const auto& [anchor, f] : plan.fusions) {
        if (f.activation == n || f.residual_add == n) owner = anchor;
      }
    }
    for (const ir::Value* in : n->inputs()) note(in, owner);
    for (const ir::Value* out : n->outputs()) note(out, owner);
  }
  for (const ir::Value* v : order) {
    plan.calibration.push_back({v->name(), false, 1, owners[v]});
  }
  for (const ir::Node* anchor : graph.nodes()) {  // graph order: deterministic
    if (plan.fusions.count(anchor) == 0) continue;
    if (!is_accumulating_anchor(*anchor) || anchor->domain() == "horizon") continue;
    const ir::Value* w = anchor->input(1);
    if (w == nullptr || !w->is_constant()) continue;
    int axis = 0;
    if (anchor->op_type() == "ConvTranspose") axis = 1;
    if (anchor->op_type() == "MatMul") axis = 1;  // B is [K, N]
    if (anchor->op_type() == "Gemm") axis = anchor->attrs().get_int("transB", 0) != 0 ? 0 : 1;
    plan.calibration.push_back({w->name(), true, axis, {anchor->name()}});
  }
  return plan;
}

}  // namespace openbpu::quantization
