// gemm_to_conv: Gemm(A[N,K], B, C) with a constant float32 B and C absent or per column (and
// transA = 0) becomes Reshape(A, [N,K,1,1]) → Conv 1x1 (weight alpha·B as [M,K,1,1], bias
// beta·C) → Reshape([N,M]): the BPU runs fully connected layers as convolutions.
// reshape_transpose_cancellation then removes the Reshape pair where A came from a 4-D tensor
// (GlobalAveragePool → Flatten → Gemm).
#include "linear_as_conv.h"
#include "pass_list.h"

namespace openbpu::passes {

namespace {

bool convert(GraphRewriter& rw, ir::Node* gemm) {
  if (!is_op(gemm, "Gemm") || gemm->output(0) == nullptr || gemm->input(0) == nullptr) return false;
  if (gemm->attrs().get_int("transA", 0) != 0) return false;
  ir::Value* a = gemm->input(0);
  const Tensor* b = constant_of(gemm->input(1));
  // A has B's element type (one T in Gemm's schema).
  if (b == nullptr || b->dtype() != DataType::kFloat32 || b->rank() != 2) return false;
  const bool trans_b = gemm->attrs().get_int("transB", 0) != 0;
  const int64_t m = trans_b ? b->dim(0) : b->dim(1);
  const int64_t k = trans_b ? b->dim(1) : b->dim(0);
  const float alpha = gemm->attrs().get_float("alpha", 1.0f);
  const float beta = gemm->attrs().get_float("beta", 1.0f);
  std::optional<std::vector<float>> bias;
  if (const ir::Value* cv = gemm->input(2)) {
    const auto values = float32_values(cv);
    if (!values) return false;
    const Tensor& ct = *cv->constant();
    const bool per_column =
        ct.element_count() == 1 || (ct.element_count() == m && ct.dim(ct.rank() - 1) == m);
    if (!per_column) return false;
    bias.emplace(static_cast<size_t>(m));
    for (int64_t j = 0; j < m; ++j) {
      (*bias)[static_cast<size_t>(j)] =
          beta * (*values)[ct.element_count() == 1 ? 0 : static_cast<size_t>(j)];
    }
  }
  const auto src = b->values<float>();
  std::vector<float> weight(static_cast<size_t>(m * k));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      const float v =
          trans_b ? src[static_cast<size_t>(i * k + j)] : src[static_cast<size_t>(j * m + i)];
      weight[static_cast<size_t>(i * k + j)] = alpha * v;
    }
  }
  ir::Value* out = gemm->output(0);
  std::optional<Shape> nchw;
  if (const auto s = static_shape_of(a); s && s->size() == 2) nchw = Shape{(*s)[0], k, 1, 1};
  LinearAsConv spec{a,    std::move(weight), m,          k, std::move(bias), {0, -1, 1, 1}, {0, -1},
                    nchw, out->type(),       out->name()};
  if (rw.pinned(out)) return false;
  ir::Value* result = insert_linear_as_conv(rw, gemm, spec);
  rw.replace_value(out, result, true);
  rw.erase_if_dead(gemm);
  return true;
}

int run(PassContext& ctx) {
  GraphRewriter rw(*ctx.model.graph);
  return rw.sweep([&](ir::Node* node) { return convert(rw, node); });
}

}  // namespace

PassDef gemm_to_conv_pass() {
  return {"gemm_to_conv", "Gemm with a constant weight → Reshape, 1x1 Conv, Reshape", {}, run};
}

}  // namespace openbpu::passes
