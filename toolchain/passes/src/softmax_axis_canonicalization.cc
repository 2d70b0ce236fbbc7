// softmax_axis_canonicalization: before opset 13, Softmax normalises over the flattened axes
// [axis, rank) (default axis 1); from opset 13 along the one axis `axis` (default -1). In a model
// of opset < 13 every Softmax with a known input shape is made to mean the same under both
// rules, so later stages (the op-support table, the quantizer, the BPU's one-axis softmax) read
// one meaning:
//   - at most one axis of [axis, rank) has more than one element: `axis` becomes that axis (or
//     stays, if none has), written out; every later axis then has one element;
//   - otherwise Reshape to [prod(shape[:axis]), prod(shape[axis:])], Softmax along axis 1 of that
//     2-D tensor, Reshape back.
// Models of opset >= 13 and Softmax nodes of unknown input shape are left alone.
#include "graph_rewrite.h"
#include "pass_list.h"

namespace openbpu::passes {

namespace {

int run(PassContext& ctx) {
  if (onnx_opset(ctx.model) >= 13) return 0;
  ir::Graph& graph = *ctx.model.graph;
  GraphRewriter rewriter(graph);
  int rewrites = 0;
  for (ir::Node* node : rewriter.snapshot()) {
    if (rewriter.was_removed(node) || !is_op(node, "Softmax")) continue;
    const auto shape = static_shape_of(node->input(0));
    if (!shape || shape->empty()) continue;
    const int64_t rank = static_cast<int64_t>(shape->size());
    const auto axis = normalize_axis(node->attrs().get_int("axis", 1), rank);
    if (!axis) continue;
    std::vector<int64_t> wide;  // axes of [axis, rank) with more than one element
    for (int64_t d = *axis; d < rank; ++d) {
      if ((*shape)[size_t(d)] != 1) wide.push_back(d);
    }
    if (wide.size() <= 1) {
      const int64_t canonical = wide.empty() ? *axis : wide.front();
      if (node->attrs().has("axis") && node->attrs().get_int("axis") == canonical) continue;
      node->attrs().set("axis", canonical);
      ++rewrites;
      continue;
    }
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) ((d < *axis) ? outer : inner) *= (*shape)[size_t(d)];
    ir::Value* x = node->input(0);
    ir::Value* y = node->output(0);
    ir::TensorType flat_type = x->type();
    flat_type.shape = std::vector<ir::Dim>{ir::Dim::known(outer), ir::Dim::known(inner)};
    ir::Value* flat_shape = rewriter.add_constant(x->name() + ".shape2d", int64_tensor({2}, {outer, inner}));
    ir::Node* flatten = rewriter.add_node(node, "Reshape", {x, flat_shape}, {x->name() + ".2d"}, {flat_type});
    kernels::AttributeMap attrs;
    attrs.set("axis", int64_t{1});
    ir::Node* softmax =
        rewriter.add_node(node, "Softmax", {flatten->output(0)}, {y->name() + ".2d"}, {flat_type}, attrs);
    ir::Value* back_shape = rewriter.add_constant(y->name() + ".shape", int64_tensor({rank}, *shape));
    ir::Node* restore = rewriter.add_node(node, "Reshape", {softmax->output(0), back_shape}, {y->name() + ".nd"},
                                          {y->type()});
    if (!rewriter.replace_value(y, restore->output(0), true)) {
      continue;  // (the new nodes are dead and go with dead-code elimination)
    }
    rewriter.erase_if_dead(node);
    ++rewrites;
  }
  return rewrites;
}

}  // namespace

PassDef softmax_axis_canonicalization_pass() {
  return {"softmax_axis_canonicalization",
          "gives every Softmax of an opset < 13 model the one-axis meaning of opset 13",
          {},
          run};
}

}  // namespace openbpu::passes
