// matmul_to_conv: MatMul(A[..., K], B[K, M]) with a constant float32 B becomes a 1x1 Conv
// (weight Bᵀ as [M,K,1,1]); a following Add of a constant per-column bias joins it as the Conv
// bias. Two layouts, chosen to keep the data movement around the Conv removable:
//   channel-first (A = Transpose(X, [0,2,1]) of a 3-D X[B,K,T], the tail of a CNN+sequence
//   model): Transpose back → Reshape [B,K,1,T] → Conv → Reshape [B,M,T] → Transpose [B,T,M];
//   the first Transpose cancels against A's, and the Reshape against X's own Squeeze;
//   rows (otherwise; option rows_form): Reshape A to [R,K,1,1] (R = rows) → Conv → Reshape to
//   A's leading dims + [M]; needs A's leading dims when A has more than 2 dims.
// reshape_transpose_cancellation removes what cancels.
#include "linear_as_conv.h"
#include "pass_list.h"

namespace openbpu::passes {

namespace {

bool is_last_axes_swap(const ir::Node* transpose) {
  return is_op(transpose, "Transpose") &&
         transpose->attrs().get_ints("perm", {}) == std::vector<int64_t>{0, 2, 1};
}

struct Converter {
  GraphRewriter& rw;
  bool rows_form;

  bool convert(ir::Node* matmul) {
    if (!is_op(matmul, "MatMul") || matmul->output(0) == nullptr) return false;
    ir::Value* a = matmul->input(0);
    const Tensor* b = constant_of(matmul->input(1));
    // A has B's element type (one T in MatMul's schema).
    if (a == nullptr || b == nullptr || b->dtype() != DataType::kFloat32 || b->rank() != 2) {
      return false;
    }
    const auto rank = rank_of(a);
    const int64_t k = b->dim(0), m = b->dim(1);
    if (!rank || *rank < 2) return false;
    const ir::Dim& last = (*a->type().shape)[static_cast<size_t>(*rank - 1)];
    if (last.is_known() && last.value != k) return false;

    // The value the Conv replaces: the MatMul's, or a following bias Add's.
    ir::Value* out = matmul->output(0);
    ir::Node* bias_add = nullptr;
    std::optional<std::vector<float>> bias;
    if (has_single_use(rw.graph(), out) && is_op(out->uses().front().node, "Add")) {
      ir::Node* add = out->uses().front().node;
      const ir::Value* c = add->input(1 - static_cast<size_t>(out->uses().front().input_index));
      const Tensor* ct = constant_of(c);
      if (ct != nullptr && ct->dtype() == DataType::kFloat32 && ct->element_count() == m &&
          ct->rank() >= 1 && ct->rank() <= *rank && ct->dim(ct->rank() - 1) == m &&
          add->output(0) != nullptr) {
        bias = float32_values(c);
        bias_add = add;
      }
    }
    ir::Value* replaced = bias_add ? bias_add->output(0) : out;
    if (rw.pinned(replaced)) return false;

    std::vector<float> weight(static_cast<size_t>(m * k));
    const auto src = b->values<float>();
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < k; ++j)
        weight[static_cast<size_t>(i * k + j)] = src[static_cast<size_t>(j * m + i)];
    }
    const auto a_shape = static_shape_of(a);
    ir::Node* before = bias_add ? bias_add : matmul;
    const std::string name = replaced->name();
    ir::Value* result = nullptr;
    if (*rank == 3 && is_last_axes_swap(a->producer())) {
      std::optional<Shape> bkt, nchw, bmt;
      if (a_shape) {
        bkt = Shape{(*a_shape)[0], k, (*a_shape)[1]};
        nchw = Shape{(*a_shape)[0], k, 1, (*a_shape)[1]};
        bmt = Shape{(*a_shape)[0], m, (*a_shape)[1]};
      }
      kernels::AttributeMap perm;
      perm.set("perm", std::vector<int64_t>{0, 2, 1});
      ir::Value* channels_first = rw.add_node(before, "Transpose", {a}, {name + ".channels_first"},
                                              {typed(DataType::kFloat32, bkt)}, perm)
                                      ->output(0);
      LinearAsConv spec{channels_first,
                        std::move(weight),
                        m,
                        k,
                        std::move(bias),
                        {0, 0, 1, -1},
                        {0, 0, -1},
                        nchw,
                        typed(DataType::kFloat32, bmt),
                        name + ".channels"};
      ir::Value* conv = insert_linear_as_conv(rw, before, spec);
      result =
          rw.add_node(before, "Transpose", {conv}, {name}, {replaced->type()}, perm)->output(0);
    } else if (rows_form) {
      std::vector<int64_t> to_nchw = {0, -1, 1, 1}, from_nchw = {0, -1};
      std::optional<Shape> nchw;
      if (*rank > 2) {
        if (!a_shape) return false;
        from_nchw.assign(a_shape->begin(), a_shape->end() - 1);
        from_nchw.push_back(m);
        to_nchw = {-1, k, 1, 1};
        int64_t rows = 1;
        for (size_t i = 0; i + 1 < a_shape->size(); ++i) rows *= (*a_shape)[i];
        nchw = Shape{rows, k, 1, 1};
      } else if (a_shape) {
        nchw = Shape{(*a_shape)[0], k, 1, 1};
      }
      LinearAsConv spec{a,    std::move(weight), m,   k, std::move(bias), to_nchw, from_nchw,
                        nchw, replaced->type(),  name};
      result = insert_linear_as_conv(rw, before, spec);
    } else {
      return false;
    }
    rw.replace_value(replaced, result, true);
    if (bias_add) rw.erase_if_dead(bias_add);
    rw.erase_if_dead(matmul);
    return true;
  }
};

int run(PassContext& ctx) {
  GraphRewriter rw(*ctx.model.graph);
  Converter converter{rw, ctx.options.get_bool("rows_form")};
  return rw.sweep([&](ir::Node* node) { return converter.convert(node); });
}

}  // namespace

PassDef matmul_to_conv_pass() {
  return {"matmul_to_conv",
          "MatMul with a constant weight (+ bias Add) → 1x1 Conv between Reshapes/Transposes",
          {{"rows_form", "true",
            "also convert MatMuls whose input is not a transposed channel-first tensor"}},
          run};
}

}  // namespace openbpu::passes
