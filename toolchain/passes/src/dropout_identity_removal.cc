// dropout_identity_removal: Identity, inference-mode Dropout and a Cast to the type its input
// already has pass their input through; their consumers read the input directly. If the removed node produced a graph output, its input
// takes the output's name, so the model's interface does not change; where that is impossible
// (the input is itself a graph input or another graph output) the node stays.
//
// Dropout is removed unless it may run in training mode (opset 12+: a `training_mode` input
// that is not the constant false) or its mask output is used.
#include "graph_rewrite.h"
#include "pass_list.h"

namespace openbpu::passes {

namespace {

bool is_inference_dropout(const ir::Graph& graph, const ir::Node& node) {
  const ir::Value* training = node.input(2);
  if (training != nullptr) {
    const auto flag = uniform_constant(training);
    if (!flag || *flag != 0) return false;
  }
  const ir::Value* mask = node.output(1);
  return mask == nullptr || (mask->uses().empty() && !graph.is_output(mask));
}

bool is_identity_cast(const ir::Node& node) {
  if (!is_op(&node, "Cast") || node.input(0) == nullptr) return false;
  const DataType from = node.input(0)->type().dtype;
  return from != DataType::kUndefined && static_cast<int64_t>(from) == node.attrs().get_int("to", -1);
}

int run(PassContext& ctx) {
  ir::Graph& graph = *ctx.model.graph;
  GraphRewriter rewriter(graph);
  int rewrites = 0;
  for (ir::Node* node : rewriter.snapshot()) {
    if (rewriter.was_removed(node)) continue;
    const bool identity = is_op(node, "Identity") || is_identity_cast(*node);
    if (!identity && !(is_op(node, "Dropout") && is_inference_dropout(graph, *node))) continue;
    ir::Value* in = node->input(0);
    ir::Value* out = node->output(0);
    if (in == nullptr || out == nullptr) continue;
    if (!rewriter.replace_value(out, in, false)) continue;
    rewriter.erase_if_dead(node);
    ++rewrites;
  }
  return rewrites;
}

}  // namespace

PassDef dropout_identity_removal_pass() {
  return {"dropout_identity_removal",
          "removes Identity, inference-mode Dropout and Casts to their input's type, keeping graph output names",
          {},
          run};
}

}  // namespace openbpu::passes
