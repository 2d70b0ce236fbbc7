// fuse_batchnorm: inference BatchNormalization y = (x − mean)/sqrt(var + eps)·scale + B is the
// per-channel affine map y = x·s + t. It is folded into the node producing x when that node
// has no other consumer:
//   Conv / ConvTranspose (constant float32 weight) → weights·s, bias·s + t
//   Gemm (constant B, C absent or per column)      → B·s per column, C' = beta·C·s + t, beta = 1
//   MatMul of a 2-D x with a constant 2-D B         → B·s per column, then Add(t)
// A BatchNormalization that cannot fold becomes a depthwise 1x1 Conv (weight s, bias t; rank of
// x ≥ 3), which the BPU runs as a convolution (option to_depthwise_conv). Skipped: training
// mode, used mean/var outputs, computed (non-constant) parameters, non-float32 parameters.
#include <cmath>

#include "conv_affine_folding.h"
#include "pass_list.h"

namespace openbpu::passes {

namespace {

struct Affine {
  std::vector<float> scale, shift;
};

std::optional<Affine> batchnorm_affine(const ir::Graph& graph, const ir::Node& bn) {
  if (bn.attrs().get_int("training_mode", 0) != 0) return std::nullopt;
  for (size_t k = 1; k < bn.outputs().size(); ++k) {
    const ir::Value* v = bn.output(k);
    if (v != nullptr && (!v->uses().empty() || graph.is_output(v))) return std::nullopt;
  }
  const auto gamma = float32_values(bn.input(1));
  const auto beta = float32_values(bn.input(2));
  const auto mean = float32_values(bn.input(3));
  const auto var = float32_values(bn.input(4));
  if (!gamma || !beta || !mean || !var) return std::nullopt;
  const size_t c = gamma->size();
  if (beta->size() != c || mean->size() != c || var->size() != c || c == 0) return std::nullopt;
  const double eps = bn.attrs().get_float("epsilon", 1e-5f);
  Affine a;
  for (size_t i = 0; i < c; ++i) {
    const double s = (*gamma)[i] / std::sqrt(static_cast<double>((*var)[i]) + eps);
    a.scale.push_back(static_cast<float>(s));
    a.shift.push_back(static_cast<float>((*beta)[i] - (*mean)[i] * s));
  }
  return a;
}

// Scales the columns of a 2-D constant ([K, M], or [M, K] when `rows`) by s.
Tensor scale_columns(const Tensor& b, const std::vector<float>& s, bool rows) {
  const auto src = b.values<float>();
  std::vector<float> out(src.begin(), src.end());
  const int64_t cols = b.dim(1);
  for (int64_t i = 0; i < b.element_count(); ++i) {
    out[static_cast<size_t>(i)] *= s[static_cast<size_t>(rows ? i / cols : i % cols)];
  }
  return float32_tensor(b.shape(), out);
}

struct Fuser {
  GraphRewriter& rw;
  bool to_depthwise;

  ir::Graph& graph() { return rw.graph(); }

  bool finish(ir::Node* bn, ir::Value* value) {
    rw.replace_value(bn->output(0), value, true);
    rw.erase_if_dead(bn);
    return true;
  }

  bool fold_into_gemm(ir::Node* bn, ir::Node* gemm, const Affine& a) {
    const Tensor* b = constant_of(gemm->input(1));
    if (b == nullptr || b->dtype() != DataType::kFloat32 || b->rank() != 2) return false;
    const bool trans_b = gemm->attrs().get_int("transB", 0) != 0;
    const int64_t m = trans_b ? b->dim(0) : b->dim(1);
    if (m != static_cast<int64_t>(a.scale.size())) return false;
    std::vector<float> c(static_cast<size_t>(m), 0.0f);
    if (const ir::Value* cv = gemm->input(2)) {
      const auto values = float32_values(cv);
      const Tensor* ct = constant_of(cv);
      if (!values) return false;
      const bool per_column =
          ct->element_count() == 1 || (ct->element_count() == m && ct->dim(ct->rank() - 1) == m);
      if (!per_column) return false;
      for (int64_t j = 0; j < m; ++j) {
        c[static_cast<size_t>(j)] =
            (*values)[ct->element_count() == 1 ? 0 : static_cast<size_t>(j)];
      }
    }
    const float beta = gemm->attrs().get_float("beta", 1.0f);
    for (size_t j = 0; j < c.size(); ++j) c[j] = beta * c[j] * a.scale[j] + a.shift[j];
    const std::string base = bn->output(0)->name();
    ir::Value* new_b = rw.add_constant(base + ".weight", scale_columns(*b, a.scale, trans_b));
    ir::Value* new_c = rw.add_constant(base + ".bias", float32_tensor({m}, c));
    graph().set_node_input(gemm, 1, new_b);
    graph().set_node_input(gemm, 2, new_c);
    gemm->attrs().set("beta", 1.0f);
    return finish(bn, gemm->output(0));
  }

  bool fold_into_matmul(ir::Node* bn, ir::Node* matmul, const Affine& a) {
    const Tensor* b = constant_of(matmul->input(1));
    if (b == nullptr || b->dtype() != DataType::kFloat32 || b->rank() != 2 ||
        rank_of(matmul->input(0)) != 2 || b->dim(1) != static_cast<int64_t>(a.scale.size())) {
      return false;
    }
    ir::Value* out = bn->output(0);
    ir::Value* new_b = rw.add_constant(out->name() + ".weight", scale_columns(*b, a.scale, false));
    graph().set_node_input(matmul, 1, new_b);
    ir::Value* t = rw.add_constant(out->name() + ".bias", float32_tensor({b->dim(1)}, a.shift));
    ir::Node* add = rw.add_node(bn, "Add", {matmul->output(0), t}, {out->name()}, {out->type()});
    return finish(bn, add->output(0));
  }

  bool to_depthwise_conv(ir::Node* bn, const Affine& a) {
    ir::Value* x = bn->input(0);
    const auto rank = rank_of(x);
    if (!rank || *rank < 3 || x->type().dtype != DataType::kFloat32) return false;
    const int64_t c = static_cast<int64_t>(a.scale.size());
    Shape w_shape(static_cast<size_t>(*rank), 1);
    w_shape[0] = c;
    ir::Value* out = bn->output(0);
    ir::Value* w = rw.add_constant(out->name() + ".weight", float32_tensor(w_shape, a.scale));
    ir::Value* b = rw.add_constant(out->name() + ".bias", float32_tensor({c}, a.shift));
    kernels::AttributeMap attrs;
    attrs.set("group", c);
    attrs.set("kernel_shape", std::vector<int64_t>(static_cast<size_t>(*rank - 2), 1));
    ir::Node* conv = rw.add_node(bn, "Conv", {x, w, b}, {out->name()}, {out->type()}, attrs);
    return finish(bn, conv->output(0));
  }

  bool fuse(ir::Node* bn) {
    if (!is_op(bn, "BatchNormalization") || bn->output(0) == nullptr || bn->input(0) == nullptr) {
      return false;
    }
    const auto a = batchnorm_affine(graph(), *bn);
    if (!a) return false;
    ir::Value* x = bn->input(0);
    ir::Node* producer = x->producer();
    if (producer != nullptr && has_single_use(graph(), x) && rw.can_replace(bn->output(0), x)) {
      if (foldable_conv_channels(*producer) ==
          std::optional<int64_t>(static_cast<int64_t>(a->scale.size()))) {
        fold_affine_into_conv(rw, producer, a->scale, a->shift);
        return finish(bn, x);
      }
      if (is_op(producer, "Gemm") && fold_into_gemm(bn, producer, *a)) return true;
      if (is_op(producer, "MatMul") && fold_into_matmul(bn, producer, *a)) return true;
    }
    return to_depthwise && to_depthwise_conv(bn, *a);
  }
};

int run(PassContext& ctx) {
  GraphRewriter rw(*ctx.model.graph);
  Fuser fuser{rw, ctx.options.get_bool("to_depthwise_conv")};
  return rw.sweep([&](ir::Node* node) { return fuser.fuse(node); });
}

}  // namespace

PassDef fuse_batchnorm_pass() {
  return {
      "fuse_batchnorm",
      "folds BatchNormalization into the Conv/ConvTranspose/Gemm/MatMul before it",
      {{"to_depthwise_conv", "true", "a BatchNormalization that cannot fold → depthwise 1x1 Conv"}},
      run};
}

}  // namespace openbpu::passes
