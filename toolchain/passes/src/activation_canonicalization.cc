// activation_canonicalization: one spelling per activation, in standard ONNX of the model's
// opset (so the optimized model stays runnable by any ONNX runtime; the Conv+activation fusion
// itself is done at quantization, see activation_patterns.h):
//   Clip(x, 0, +inf)                         → Relu(x)
//   Clip(x) without bounds                   → x
//   Clip(x + 3, 0, 6) / 6  (or · 1/6)        → HardSigmoid[alpha=1/6, beta=0.5](x)
//   x · Clip(x + 3, 0, 6) / 6  (or · 1/6)    → HardSwish(x)                    opset ≥ 14
//                                            → x · HardSigmoid[1/6, 0.5](x)   below
//   x · HardSigmoid[1/6, 0.5](x)             → HardSwish(x)                    opset ≥ 14
// Clip(x, 0, 6) (ReLU6) stays a Clip with constant bounds; x·Sigmoid(x) stays as it is
// (match_swish recognises it).
#include <cmath>

#include "graph_rewrite.h"
#include "openbpu/passes/activation_patterns.h"
#include "pass_list.h"

namespace openbpu::passes {

namespace {

struct Canonicalizer {
  const ir::Model& model;
  GraphRewriter& rw;
  int64_t opset;

  ir::Graph& graph() { return rw.graph(); }

  // x if `node` computes x / 6 or x · (1/6) with a one-element constant, else nullptr.
  ir::Value* divided_by_six(const ir::Node* node) {
    if (node->inputs().size() != 2 || node->input(0) == nullptr) return nullptr;
    const auto c = uniform_constant(node->input(1));
    if (!c || node->input(1)->constant()->element_count() != 1) return nullptr;
    if (is_op(node, "Div") && *c == 6) return node->input(0);
    if (is_op(node, "Mul") && std::fabs(*c - 1.0 / 6.0) < 1e-7) return node->input(0);
    return nullptr;
  }

  // x if `value` = Clip(Add(x, 3), 0, 6) and the Add and Clip results have no other use.
  ir::Value* relu6_of_x_plus_3(const ir::Value* value) {
    if (value == nullptr || !has_single_use(graph(), value)) return nullptr;
    const ir::Node* clip = value->producer();
    const auto bounds = clip == nullptr ? std::nullopt : clip_bounds(model, *clip);
    if (!bounds || !bounds->is_relu6()) return nullptr;
    const ir::Node* add = producer_if(clip, 0, "Add");
    if (add == nullptr || !has_single_use(graph(), add->output(0))) return nullptr;
    for (size_t k = 0; k < 2; ++k) {
      const auto three = uniform_constant(add->input(1 - k));
      if (three && *three == 3 && add->input(1 - k)->constant()->element_count() == 1 &&
          add->input(k) != nullptr && !add->input(k)->is_constant()) {
        return add->input(k);
      }
    }
    return nullptr;
  }

  ir::Value* hard_sigmoid(ir::Node* before, ir::Value* x, const std::string& name) {
    kernels::AttributeMap attrs;
    attrs.set("alpha", 1.0f / 6.0f);
    attrs.set("beta", 0.5f);
    return rw.add_node(before, "HardSigmoid", {x}, {name}, {x->type()}, attrs)->output(0);
  }

  ir::Value* hard_swish(ir::Node* before, ir::Value* x, const ir::Value* like) {
    if (opset >= 14) {
      return rw.add_node(before, "HardSwish", {x}, {like->name()}, {like->type()})->output(0);
    }
    ir::Value* gate = hard_sigmoid(before, x, like->name() + ".hardsigmoid");
    gate->producer()->set_name(graph().unique_node_name(before->name() + ".hardsigmoid"));
    ir::Node* mul = rw.add_node(before, "Mul", {x, gate}, {like->name()}, {like->type()});
    mul->set_name(graph().unique_node_name(before->name() + ".mul"));
    return mul->output(0);
  }

  // `value` is new (it takes the replaced value\'s name) or an existing value (it keeps its own).
  // A new value's producer then takes the replaced node's name, unless it is a part of several
  // ("<node>.<part>"): either way node_info's name for the node stands for what replaced it
  // (ir::nodes_standing_for).
  bool finish(ir::Node* node, ir::Value* value, bool is_new = true) {
    const std::string name = node->name();
    if (!rw.replace_value(node->output(0), value, is_new)) return false;
    rw.erase_if_dead(node);
    ir::Node* producer = value->producer();
    if (is_new && producer != nullptr && producer->name().rfind(name + ".", 0) != 0 &&
        graph().unique_node_name(name) == name) {
      producer->set_name(name);
    }
    return true;
  }

  bool rewrite(ir::Node* node) {
    if (!node->domain().empty() || node->output(0) == nullptr) return false;
    ir::Value* out = node->output(0);
    if (node->op_type() == "Clip") {
      const auto bounds = clip_bounds(model, *node);
      if (!bounds || node->input(0) == nullptr) return false;
      if (std::isinf(bounds->min) && bounds->min < 0 && std::isinf(bounds->max) &&
          bounds->max > 0) {
        return finish(node, node->input(0), false);
      }
      if (bounds->is_relu()) {
        return finish(
            node,
            rw.add_node(node, "Relu", {node->input(0)}, {out->name()}, {out->type()})->output(0));
      }
      return false;
    }
    if (ir::Value* scaled = divided_by_six(node)) {
      if (ir::Value* x = relu6_of_x_plus_3(scaled)) {
        return finish(node, hard_sigmoid(node, x, out->name()));
      }
      const ir::Node* mul = scaled->producer();
      if (is_op(mul, "Mul") && has_single_use(graph(), scaled)) {
        for (size_t k = 0; k < 2; ++k) {
          ir::Value* x = relu6_of_x_plus_3(mul->input(1 - k));
          if (x != nullptr && x == mul->input(k)) return finish(node, hard_swish(node, x, out));
        }
      }
      return false;
    }
    if (opset >= 14 && is_op(node, "Mul")) {
      ir::Value* x = match_hard_swish(*node);
      if (x == nullptr) return false;
      const ir::Value* gate = node->input(0) == x ? node->input(1) : node->input(0);
      if (!has_single_use(graph(), gate)) return false;
      return finish(node, hard_swish(node, x, out));
    }
    return false;
  }
};

int run(PassContext& ctx) {
  GraphRewriter rw(*ctx.model.graph);
  Canonicalizer canonicalizer{ctx.model, rw, onnx_opset(ctx.model)};
  int total = 0;
  for (int round = 0; round < 4; ++round) {
    int rewrites = rw.sweep([&](ir::Node* node) { return canonicalizer.rewrite(node); });
    total += rewrites;
    if (rewrites == 0) break;
  }
  return total;
}

}  // namespace

PassDef activation_canonicalization_pass() {
  return {"activation_canonicalization",
          "one spelling per activation: Clip(0,inf)→Relu, relu6(x+3)/6→HardSigmoid, →HardSwish",
          {},
          run};
}

}  // namespace openbpu::passes
