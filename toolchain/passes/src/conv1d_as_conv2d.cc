// conv1d_as_conv2d: a 1-D convolution or pooling (input [N, C, L], as speech and audio front
// ends export it) becomes the 2-D one the BPU runs: Unsqueeze to [N, C, 1, L] → Conv /
// MaxPool / AveragePool with kernel [1, k], strides [1, s], dilations [1, d], pads [0, b, 0, e]
// (a constant weight reshaped to [M, C/g, 1, k]) → Squeeze back, named as the output was.
// auto_pad is kept (SAME / VALID pad L only, since H is 1). Must not fire: 2-D ones, a weight
// that is not constant.
#include "graph_rewrite.h"
#include "pass_list.h"

namespace openbpu::passes {

namespace {

// [v] → [1, v] for a 1-D attribute (fill: the value for the new axis).
void widen(kernels::AttributeMap& attrs, const char* name, int64_t fill) {
  if (!attrs.has(name)) return;
  std::vector<int64_t> v = attrs.get_ints(name);
  if (std::string_view(name) == "pads" && v.size() == 2) {
    attrs.set(name, std::vector<int64_t>{0, v[0], 0, v[1]});
  } else if (v.size() == 1) {
    attrs.set(name, std::vector<int64_t>{fill, v[0]});
  }
}

bool convert(GraphRewriter& rw, ir::Node* node, int64_t opset) {
  const bool conv = is_op(node, "Conv");
  if (!conv && !is_op(node, "MaxPool") && !is_op(node, "AveragePool")) return false;
  ir::Value* x = node->input(0);
  ir::Value* y = node->output(0);
  if (x == nullptr || y == nullptr || rank_of(x) != 3) return false;
  if (node->outputs().size() > 1 && node->output(1) != nullptr) return false;  // MaxPool indices
  const Tensor* w = conv ? constant_of(node->input(1)) : nullptr;
  if (conv && (w == nullptr || w->rank() != 3)) return false;
  // Unsqueeze / Squeeze take their axes as an input from opset 13, as an attribute before.
  auto axes_op = [&](const char* op, ir::Value* in, const std::string& base, std::vector<ir::TensorType> type) {
    kernels::AttributeMap a;
    std::vector<ir::Value*> inputs{in};
    if (opset >= 13) {
      inputs.push_back(rw.add_constant(base + ".axes", int64_tensor({1}, {2})));
    } else {
      a.set("axes", std::vector<int64_t>{2});
    }
    return rw.add_node(node, op, inputs, {base}, std::move(type), std::move(a));
  };
  ir::TensorType x4 = x->type();
  if (x4.shape) x4.shape->insert(x4.shape->begin() + 2, ir::Dim::known(1));
  ir::Node* up = axes_op("Unsqueeze", x, y->name() + ".in2d", {x4});
  std::vector<ir::Value*> inputs{up->output(0)};
  if (conv) {
    inputs.push_back(rw.add_constant(y->name() + ".weight2d", w->reshaped({w->dim(0), w->dim(1), 1, w->dim(2)})));
    if (node->input(2) != nullptr) inputs.push_back(node->input(2));
  }
  kernels::AttributeMap attrs = node->attrs();
  widen(attrs, "kernel_shape", 1);
  widen(attrs, "strides", 1);
  widen(attrs, "dilations", 1);
  widen(attrs, "pads", 0);
  ir::TensorType y4 = y->type();
  if (y4.shape) y4.shape->insert(y4.shape->begin() + 2, ir::Dim::known(1));
  ir::Node* op2d = rw.add_node(node, node->op_type(), inputs, {y->name() + ".out2d"}, {y4}, std::move(attrs));
  ir::Node* down = axes_op("Squeeze", op2d->output(0), y->name() + ".out1d", {y->type()});
  if (!rw.replace_value(y, down->output(0), true)) {
    rw.erase_if_dead(down);
    return false;
  }
  rw.erase_if_dead(node);
  return true;
}

int run(PassContext& ctx) {
  GraphRewriter rw(*ctx.model.graph);
  const int64_t opset = onnx_opset(ctx.model);
  return rw.sweep([&](ir::Node* node) { return convert(rw, node, opset); });
}

}  // namespace

PassDef conv1d_as_conv2d_pass() {
  return {"conv1d_as_conv2d", "1-D Conv / MaxPool / AveragePool become 2-D ones over [N, C, 1, L]", {}, run};
}

}  // namespace openbpu::passes
