// prelu_decomposition: PRelu(x, slope) with a constant slope becomes operators the BPU runs:
// - one slope for every element: LeakyRelu[alpha = slope] (a table on the BPU);
// - a slope per channel (or any other broadcast): Relu(x)·(1 − slope) + x·slope, which equals
//   x for x ≥ 0 and slope·x below (two constant Muls, an Add, a Relu: elementwise BPU
//   operators), named as the PRelu's output was.
// Must not fire: a slope that is not a float32 constant.
#include "graph_rewrite.h"
#include "pass_list.h"

namespace openbpu::passes {

namespace {

bool convert(GraphRewriter& rw, ir::Node* node) {
  if (!is_op(node, "PRelu")) return false;
  ir::Value* x = node->input(0);
  ir::Value* y = node->output(0);
  const Tensor* slope = constant_of(node->input(1));
  if (x == nullptr || y == nullptr || slope == nullptr || slope->dtype() != DataType::kFloat32) return false;
  ir::Node* replacement;
  if (const auto alpha = uniform_constant(node->input(1)); alpha && slope->element_count() >= 1) {
    kernels::AttributeMap a;
    a.set("alpha", static_cast<float>(*alpha));
    replacement = rw.add_node(node, "LeakyRelu", {x}, {y->name() + ".leaky"}, {y->type()}, std::move(a));
  } else {
    Tensor keep(DataType::kFloat32, slope->shape());
    for (int64_t i = 0; i < slope->element_count(); ++i) keep.data<float>()[i] = 1.0f - slope->data<float>()[i];
    ir::Node* relu = rw.add_node(node, "Relu", {x}, {y->name() + ".relu"}, {x->type()});
    ir::Node* kept = rw.add_node(node, "Mul", {relu->output(0), rw.add_constant(y->name() + ".keep", std::move(keep))},
                                 {y->name() + ".positive"}, {y->type()});
    ir::Node* scaled = rw.add_node(node, "Mul", {x, rw.add_constant(y->name() + ".slope", *slope)},
                                   {y->name() + ".scaled"}, {y->type()});
    replacement = rw.add_node(node, "Add", {kept->output(0), scaled->output(0)}, {y->name() + ".sum"}, {y->type()});
  }
  if (!rw.replace_value(y, replacement->output(0), true)) {
    rw.erase_if_dead(replacement);
    return false;
  }
  rw.erase_if_dead(node);
  return true;
}

int run(PassContext& ctx) {
  GraphRewriter rw(*ctx.model.graph);
  return rw.sweep([&](ir::Node* node) { return convert(rw, node); });
}

}  // namespace

PassDef prelu_decomposition_pass() {
  return {"prelu_decomposition",
          "PRelu with a constant slope: LeakyRelu (one slope) or Relu·(1 − slope) + x·slope",
          {},
          run};
}

}  // namespace openbpu::passes
