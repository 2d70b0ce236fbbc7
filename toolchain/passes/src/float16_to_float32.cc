// float16_to_float32: a model exported in half precision computes in float32 instead, since
// calibration measures float32 and the BPU computes integers from float thresholds. float16
// initializers and the tensors of Constant / ConstantOfShape become float32 (values widened
// exactly), every float16 value type becomes float32 (graph inputs and outputs included), a
// Cast to float16 becomes a Cast to float32, and a Cast whose input already has its target type
// is removed (keeping graph output names). One log line records what the model computed in.
// The main graph only: subgraph bodies (If / Loop) keep their types.
#include "graph_rewrite.h"
#include "pass_list.h"

namespace openbpu::passes {

namespace {

constexpr int64_t kOnnxFloat = 1;
constexpr int64_t kOnnxFloat16 = 10;

Tensor widened(const Tensor& half) {
  Tensor out(DataType::kFloat32, half.shape());
  for (int64_t i = 0; i < half.element_count(); ++i) out.data<float>()[i] = static_cast<float>(half.float_at(i));
  return out;
}

// A Cast whose input already has the target element type (after the widening).
bool is_identity_cast(const ir::Node* node) {
  if (!is_op(node, "Cast") || node->input(0) == nullptr) return false;
  const DataType in = node->input(0)->type().dtype;
  return in == DataType::kFloat32 && node->attrs().get_int("to", 0) == kOnnxFloat;
}

int run(PassContext& ctx) {
  ir::Graph& graph = *ctx.model.graph;
  GraphRewriter rewriter(graph);
  int64_t constants = 0, parameters = 0, values = 0, casts = 0;
  for (ir::Value* v : graph.values()) {
    if (v->is_constant() && v->constant()->dtype() == DataType::kFloat16) {
      parameters += v->constant()->element_count();
      v->set_constant(widened(*v->constant()));
      ++constants;
    }
    if (v->type().dtype == DataType::kFloat16) {
      ir::TensorType t = v->type();
      t.dtype = DataType::kFloat32;
      v->set_type(t);
      ++values;
    }
  }
  for (ir::Node* node : rewriter.snapshot()) {
    if ((is_op(node, "Constant") || is_op(node, "ConstantOfShape")) && node->attrs().has("value") &&
        node->attrs().get_tensor("value").dtype() == DataType::kFloat16) {
      node->attrs().set("value", widened(node->attrs().get_tensor("value")));
      ++constants;
    }
    if (is_op(node, "Cast") && node->attrs().get_int("to", 0) == kOnnxFloat16) {
      node->attrs().set("to", kOnnxFloat);
      ++casts;
    }
  }
  int removed = 0;
  for (ir::Node* node : rewriter.snapshot()) {
    if (rewriter.was_removed(node) || !is_identity_cast(node)) continue;
    if (!rewriter.replace_value(node->output(0), node->input(0), false)) continue;
    rewriter.erase_if_dead(node);
    ++removed;
  }
  if (constants + values + casts == 0) return 0;
  if (ctx.log) {
    ctx.log("float16_to_float32: the model computes in float16; converted to float32: " + std::to_string(constants) +
            " float16 constant(s) (" + std::to_string(parameters) + " parameters), " + std::to_string(values) +
            " float16 tensor type(s), " + std::to_string(casts) + " Cast(s) to float16, " + std::to_string(removed) +
            " Cast(s) removed");
  }
  return static_cast<int>(constants + values + casts + removed);
}

}  // namespace

PassDef float16_to_float32_pass() {
  return {"float16_to_float32",
          "float16 constants, tensor types and Casts become float32; Casts left without effect are removed",
          {},
          run};
}

}  // namespace openbpu::passes
