#include "openbpu/quantization/plan.h"

#include <algorithm>
#include <map>

#include "openbpu/common/error.h"

namespace openbpu::quantization {

using bpu_support::Unit;

namespace {

const bpu_support::OpDef* def_of(const ir::Node* n) { return n == nullptr ? nullptr : bpu_support::find_op_def(*n); }

bool is_fusion_anchor(const ir::Node& n) {
  const bpu_support::OpDef* d = def_of(&n);
  return d != nullptr && bpu_support::is_fusion_anchor(*d, n);
}

// Anchors that accumulate products (weights) and can output int32.
bool is_accumulating_anchor(const ir::Node& n) {
  const bpu_support::OpDef* d = def_of(&n);
  return d != nullptr && bpu_support::accumulates(*d, n);
}

// The single BPU reader of a value, or nullptr (none, several, or a graph output).
const ir::Node* single_reader(const ir::Graph& g, const ir::Value* v) {
  if (v == nullptr || g.is_output(v) || v->uses().size() != 1) return nullptr;
  return v->uses().front().node;
}

// Operators whose output holds indices, not values of a real tensor.
bool writes_indices(const ir::Node& n) {
  const bpu_support::OpDef* d = def_of(&n);
  return d != nullptr && d->quantize == bpu_support::QuantizeAs::kArgMax;
}

// A Where with one constant operand (a fill: 0, -inf, -1e9, ...): its output has the other
// operand's scale, so the fill saturates there instead of stretching the output's range.
const ir::Value* where_featuremap_operand(const ir::Node& n) {
  const bpu_support::OpDef* d = def_of(&n);
  if (d == nullptr || d->quantize != bpu_support::QuantizeAs::kSelect || n.inputs().size() != 3) return nullptr;
  const ir::Value *x = n.input(1), *y = n.input(2);
  if (x == nullptr || y == nullptr || x->is_constant() == y->is_constant()) return nullptr;
  return x->is_constant() ? y : x;
}

// The Add a Conv absorbs (a residual connection), when `next` is one.
bool is_residual_add(const ir::Node& anchor, const ir::Node* next) {
  const bpu_support::OpDef* a = def_of(&anchor);
  const bpu_support::OpDef* d = def_of(next);
  return a != nullptr && a->absorbs_residual_add && d != nullptr &&
         d->quantize == bpu_support::QuantizeAs::kElementwise && d->elementwise == simulator::isa::ElementwiseOp::kAdd;
}

// A Relu, or a Clip with constant bounds (inputs from opset 11, attributes before).
bool is_fusable_activation(const ir::Node* n) {
  const bpu_support::OpDef* d = def_of(n);
  if (d == nullptr || d->activation == bpu_support::FusedActivation::kNone) return false;
  for (size_t i = 1; i < n->inputs().size(); ++i) {
    if (n->input(i) != nullptr && !n->input(i)->is_constant()) return false;
  }
  return true;
}

// A ReLU keeps an int32 tail (a clamp at 0 needs no output scale).
bool is_relu(const ir::Node* n) {
  const bpu_support::OpDef* d = def_of(n);
  return d != nullptr && d->activation == bpu_support::FusedActivation::kRelu;
}

}  // namespace

Role QuantizationPlan::role(const ir::Node* node) const {
  auto it = roles.find(node);
  return it == roles.end() ? Role::kCpu : it->second;
}

bool inherits_input_scale(const ir::Node& node) {
  const bpu_support::OpDef* d = node.domain().empty() ? def_of(&node) : nullptr;
  return d != nullptr && (d->quantize == bpu_support::QuantizeAs::kMove || d->quantize == bpu_support::QuantizeAs::kResize);
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
    if (!is_fusion_anchor(*n)) continue;
    Fusion f;
    f.output = n->output(0);
    const ir::Node* next = single_reader(graph, f.output);
    // Residual add: Conv → Add(conv_out, other) with both on the BPU.
    if (is_residual_add(*n, next) && on_bpu(next) && plan.roles[next] == Role::kBpu) {
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
    if (const ir::Value* operand = where_featuremap_operand(*n)) plan.inherits_scale[n->output(0)] = operand;
  }

  // int32 tails.
  for (auto& [anchor, f] : plan.fusions) {
    if (!is_accumulating_anchor(*anchor) || anchor->domain() == "horizon") continue;
    if (f.activation != nullptr && !is_relu(f.activation)) continue;
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
  // One target per weight; a weight several anchors share (an unrolled loop's, tied weights)
  // lists them all.
  std::map<const ir::Value*, size_t> weight_target;
  for (const ir::Node* anchor : graph.nodes()) {  // graph order: deterministic
    if (plan.fusions.count(anchor) == 0) continue;
    if (!is_accumulating_anchor(*anchor) || anchor->domain() == "horizon") continue;
    const ir::Value* w = anchor->input(1);
    if (w == nullptr || !w->is_constant()) continue;
    const int axis = def_of(anchor)->weight_axis(*anchor);
    const auto [it, added] = weight_target.emplace(w, plan.calibration.size());
    if (added) {
      plan.calibration.push_back({w->name(), true, axis, {anchor->name()}});
      continue;
    }
    CalibrationTarget& shared = plan.calibration[it->second];
    if (shared.axis != axis) {
      raise("weight '", w->name(), "' is read by '", shared.nodes.front(), "' per channel along axis ", shared.axis,
            " and by '", anchor->name(), "' along axis ", axis, "; give each its own copy of the weight");
    }
    shared.nodes.push_back(anchor->name());
  }
  return plan;
}

}  // namespace openbpu::quantization
