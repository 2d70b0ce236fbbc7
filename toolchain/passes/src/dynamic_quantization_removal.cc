// dynamic_quantization_removal: a dynamically quantized export (ONNX Runtime's
// quantize_dynamic: DynamicQuantizeLinear on the activation, ConvInteger / MatMulInteger with
// int8 or uint8 weights, Cast to float, Mul by activation scale · weight scale) computes in float
// again, so that our own calibration and quantization take over:
//   x → DynamicQuantizeLinear → (q, s, z);  ConvInteger(q, Wq, z, wz) → Cast → Mul(·, Mul(s, ws))
// becomes Conv(x, (Wq − wz)·ws) with ConvInteger's attributes (MatMulInteger: MatMul), named as
// the Mul's output was. Weight scales and zero points may be per tensor or per output channel
// (Conv: axis 0 of W; MatMul: the last axis). The DynamicQuantizeLinear, Cast and scale Mul go
// when nothing else reads them.
#include "graph_rewrite.h"
#include "pass_list.h"

namespace openbpu::passes {

namespace {

constexpr int64_t kOnnxFloat = 1;

struct Match {
  ir::Node* integer_op;  // ConvInteger / MatMulInteger
  ir::Value* x;          // the float activation the DynamicQuantizeLinear read
  const Tensor* weight;  // int8 / uint8
  const Tensor* weight_zero;   // may be null (0)
  const Tensor* weight_scale;  // float
};

// `scale` = Mul(s, ws) or Mul(ws, s) with s the DynamicQuantizeLinear's scale: ws.
const Tensor* weight_scale_of(const ir::Value* scale, const ir::Node& dql) {
  const ir::Node* mul = scale->producer();
  if (!is_op(mul, "Mul")) return nullptr;
  for (size_t i = 0; i < 2; ++i) {
    if (mul->input(i) == dql.output(1) && mul->input(1 - i) != nullptr && mul->input(1 - i)->is_constant()) {
      const Tensor* ws = mul->input(1 - i)->constant();
      return ws->dtype() == DataType::kFloat32 ? ws : nullptr;
    }
  }
  return nullptr;
}

std::optional<Match> match(const ir::Node& mul) {
  if (!is_op(&mul, "Mul")) return std::nullopt;
  for (size_t i = 0; i < 2; ++i) {
    const ir::Node* cast = producer_if(&mul, i, "Cast");
    if (cast == nullptr || cast->attrs().get_int("to", 0) != kOnnxFloat || mul.input(1 - i) == nullptr) continue;
    ir::Node* op = cast->input(0) ? cast->input(0)->producer() : nullptr;
    if (!is_op(op, "ConvInteger") && !is_op(op, "MatMulInteger")) continue;
    const ir::Node* dql = producer_if(op, 0, "DynamicQuantizeLinear");
    if (dql == nullptr || op->input(1) == nullptr || !op->input(1)->is_constant()) continue;
    if (op->input(2) != nullptr && op->input(2) != dql->output(2)) continue;
    const ir::Value* wz = op->input(3);
    if (wz != nullptr && !wz->is_constant()) continue;
    const Tensor* ws = weight_scale_of(mul.input(1 - i), *dql);
    if (ws == nullptr) continue;
    return Match{op, dql->input(0), op->input(1)->constant(), wz ? wz->constant() : nullptr, ws};
  }
  return std::nullopt;
}

// (Wq − wz)·ws, the per-channel parameters along `axis` (or one value for the whole tensor).
std::optional<Tensor> dequantized_weight(const Match& m, int64_t axis) {
  const Tensor& w = *m.weight;
  const Shape& shape = w.shape();
  if (axis < 0 || axis >= static_cast<int64_t>(shape.size())) return std::nullopt;
  const int64_t channels = shape[size_t(axis)];
  auto per_channel = [&](const Tensor* t) {
    return t == nullptr || t->element_count() == 1 || t->element_count() == channels;
  };
  if (!per_channel(m.weight_zero) || !per_channel(m.weight_scale)) return std::nullopt;
  int64_t inner = 1;
  for (size_t d = size_t(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  Tensor out(DataType::kFloat32, shape);
  for (int64_t k = 0; k < w.element_count(); ++k) {
    const int64_t c = (k / inner) % channels;
    auto at = [&](const Tensor* t) { return t == nullptr ? 0.0 : t->float_at(t->element_count() == 1 ? 0 : c); };
    out.data<float>()[k] = static_cast<float>((w.float_at(k) - at(m.weight_zero)) * at(m.weight_scale));
  }
  return out;
}

int run(PassContext& ctx) {
  ir::Graph& graph = *ctx.model.graph;
  GraphRewriter rewriter(graph);
  int convs = 0, matmuls = 0;
  for (ir::Node* mul : rewriter.snapshot()) {
    if (rewriter.was_removed(mul)) continue;
    const std::optional<Match> m = match(*mul);
    if (!m) continue;
    const bool conv = is_op(m->integer_op, "ConvInteger");
    const int64_t axis = conv ? 0 : static_cast<int64_t>(m->weight->rank()) - 1;
    std::optional<Tensor> w = dequantized_weight(*m, axis);
    if (!w) continue;
    ir::Value* out = mul->output(0);
    ir::Value* weight = rewriter.add_constant(m->integer_op->name() + ".weight", std::move(*w));
    kernels::AttributeMap attrs = conv ? m->integer_op->attrs() : kernels::AttributeMap{};
    ir::Node* replacement = rewriter.add_node(mul, conv ? "Conv" : "MatMul", {m->x, weight}, {out->name() + ".float"},
                                              {out->type()}, std::move(attrs));
    if (!rewriter.replace_value(out, replacement->output(0), true)) {
      rewriter.erase_if_dead(replacement);
      continue;
    }
    rewriter.erase_if_dead(mul);
    ++(conv ? convs : matmuls);
  }
  if (convs + matmuls > 0 && ctx.log) {
    ctx.log("dynamic_quantization_removal: " + std::to_string(convs) + " ConvInteger and " + std::to_string(matmuls) +
            " MatMulInteger of a dynamically quantized export computed in float again, with dequantized weights");
  }
  return convs + matmuls;
}

}  // namespace

PassDef dynamic_quantization_removal_pass() {
  return {"dynamic_quantization_removal",
          "DynamicQuantizeLinear + ConvInteger / MatMulInteger + Cast + scale Mul become Conv / MatMul on float",
          {},
          run};
}

}  // namespace openbpu::passes
