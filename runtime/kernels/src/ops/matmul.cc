// Matrix products: Gemm, MatMul (numpy batching), MatMulInteger, QLinearMatMul.
//
// float32 products run on the blocked GEMM (gemm.h); the other element types use the plain
// loops below, which also serve as the reference for the float32 path.
#include <array>
#include <cstdint>
#include <string>
#include <type_traits>

#include "families.h"
#include "openbpu/kernels/axes.h"
#include "openbpu/kernels/broadcast.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/gemm.h"
#include "openbpu/kernels/quantization.h"
#include "openbpu/kernels/vector_clones.h"

namespace openbpu::kernels {

namespace {

using GemmTypes = TypeList<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t>;

// Accumulator of a dot product of T: float for the 16-bit floats, double for double and float
// (reference precision), and wrapping unsigned 64-bit arithmetic for integers (converted back
// modulo 2^bits, the two's complement result without signed-overflow UB).
template <typename T>
using DotAccumulator =
    std::conditional_t<std::is_integral_v<T>, uint64_t,
                       std::conditional_t<std::is_same_v<T, double>, double, ComputeType<T>>>;

template <typename T>
DotAccumulator<T> to_accumulator(T v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<uint64_t>(
        static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>(v));
  } else {
    return static_cast<DotAccumulator<T>>(to_compute(v));
  }
}

// The numpy matmul shape rule: batch dimensions broadcast, 1-D operands get a dimension
// prepended (A) or appended (B) that the result drops.
struct MatMulShape {
  int64_t m = 0, k = 0, n = 0;
  Shape output;
  // Element offset of each batch's matrix in A and B, in output batch order.
  std::vector<int64_t> a_offsets, b_offsets;
  int64_t batch_count() const { return static_cast<int64_t>(a_offsets.size()); }
};

MatMulShape matmul_shape(std::string_view op, const Shape& a_shape, const Shape& b_shape) {
  OPENBPU_CHECK(!a_shape.empty() && !b_shape.empty(), op, ": operands must have rank >= 1, got ",
        shape_to_string(a_shape), " and ", shape_to_string(b_shape));
  Shape a = a_shape, b = b_shape;
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  MatMulShape s;
  s.m = a[a.size() - 2];
  s.k = a[a.size() - 1];
  s.n = b[b.size() - 1];
  OPENBPU_CHECK(b[b.size() - 2] == s.k, op, ": inner dimensions must match, A is ",
        shape_to_string(a_shape), " and B is ", shape_to_string(b_shape));
  const Shape a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  const Shape batch = broadcast_shapes(a_batch, b_batch, op);
  s.output = batch;
  if (a_shape.size() > 1) s.output.push_back(s.m);
  if (b_shape.size() > 1) s.output.push_back(s.n);
  const int64_t batches = shape_element_count(batch);
  s.a_offsets.reserve(static_cast<size_t>(batches));
  s.b_offsets.reserve(static_cast<size_t>(batches));
  if (batches == 0) return s;
  const std::array<const Shape*, 2> inputs{&a_batch, &b_batch};
  const int64_t a_matrix = s.m * s.k, b_matrix = s.k * s.n;
  for_each_broadcast<2>(batch, inputs, [&](int64_t, const int64_t* off) {
    s.a_offsets.push_back(off[0] * a_matrix);
    s.b_offsets.push_back(off[1] * b_matrix);
  });
  return s;
}

// out (m x n) = a (m x k) * b (k x n) for any GemmTypes element type, row-major operands.
template <typename T>
void matmul_plain(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* out) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      DotAccumulator<T> sum{};
      for (int64_t p = 0; p < k; ++p) {
        sum += to_accumulator(a[i * k + p]) * to_accumulator(b[p * n + j]);
      }
      out[i * n + j] = from_compute<T>(static_cast<ComputeType<T>>(sum));
    }
  }
}

// Products below this many multiply-adds run one per task when there are several batches.
constexpr int64_t kSmallProduct = 1 << 18;

class MatMulKernel final : public Kernel {
 public:
  void run(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    OPENBPU_CHECK(a.dtype() == b.dtype(), "MatMul: A and B must have the same type, got ", a.describe(),
          " and ", b.describe());
    const MatMulShape s = matmul_shape("MatMul", a.shape(), b.shape());
    Tensor& y = ctx.allocate_output(0, a.dtype(), s.output);
    const int64_t batches = s.batch_count();
    if (y.element_count() == 0) return;
    dispatch<GemmTypes>(a.dtype(), "MatMul", [&]<typename T>() {
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* py = y.data<T>();
      const int64_t y_matrix = s.m * s.n;
      if constexpr (std::is_same_v<T, float>) {
        const bool per_batch_tasks = batches > 1 && s.m * s.n * s.k < kSmallProduct;
        auto product = [&](int64_t i, ThreadPool* pool) {
          gemm_f32(s.m, s.n, s.k, 1.0f, MatrixViewF32::row_major(pa + s.a_offsets[size_t(i)], s.k),
                   MatrixViewF32::row_major(pb + s.b_offsets[size_t(i)], s.n), 0.0f,
                   py + i * y_matrix, s.n, pool);
        };
        if (per_batch_tasks) {
          parallel_for(ctx.thread_pool(), batches, 1, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) product(i, nullptr);
          });
        } else {
          for (int64_t i = 0; i < batches; ++i) product(i, ctx.thread_pool());
        }
      } else {
        parallel_for(ctx.thread_pool(), batches, 1, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            matmul_plain<T>(s.m, s.n, s.k, pa + s.a_offsets[size_t(i)], pb + s.b_offsets[size_t(i)],
                            py + i * y_matrix);
          }
        });
      }
    });
  }
};

// Gemm: Y = alpha * op(A) * op(B) + beta * C, C broadcast unidirectionally to (M, N).
class GemmKernel final : public Kernel {
 public:
  explicit GemmKernel(const NodeInfo& node)
      : alpha_(node.attrs.get_float("alpha", 1.0f)),
        beta_(node.attrs.get_float("beta", 1.0f)),
        trans_a_(node.attrs.get_int("transA", 0) != 0),
        trans_b_(node.attrs.get_int("transB", 0) != 0) {}

  void run(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    const Tensor* c = ctx.optional_input(2);
    OPENBPU_CHECK(a.rank() == 2 && b.rank() == 2, "Gemm: A and B must be 2-D, got ", a.describe(), " and ",
          b.describe());
    OPENBPU_CHECK(a.dtype() == b.dtype() && (c == nullptr || c->dtype() == a.dtype()),
          "Gemm: A, B and C must have the same type, got ", a.describe(), ", ", b.describe(),
          c ? ", " + c->describe() : std::string());
    const int64_t m = trans_a_ ? a.dim(1) : a.dim(0);
    const int64_t k = trans_a_ ? a.dim(0) : a.dim(1);
    const int64_t kb = trans_b_ ? b.dim(1) : b.dim(0);
    const int64_t n = trans_b_ ? b.dim(0) : b.dim(1);
    OPENBPU_CHECK(k == kb, "Gemm: inner dimensions must match, op(A) is ", m, "x", k, " and op(B) is ", kb,
          "x", n, " (transA=", trans_a_, ", transB=", trans_b_, ")");
    const Shape out_shape{m, n};
    std::vector<int64_t> c_strides;
    if (c != nullptr) {
      OPENBPU_CHECK(c->rank() <= 2, "Gemm: C must have rank <= 2, got ", c->describe());
      for (int64_t d = 0; d < c->rank(); ++d) {
        const int64_t want = out_shape[size_t(2 - c->rank() + d)];
        OPENBPU_CHECK(c->dim(d) == 1 || c->dim(d) == want, "Gemm: C ", c->describe(),
              " is not unidirectionally broadcastable to [", m, ",", n, "]");
      }
      c_strides = broadcast_strides(c->shape(), out_shape);
    }
    Tensor& y = ctx.allocate_output(0, a.dtype(), out_shape);
    if (m == 0 || n == 0) return;
    dispatch<GemmTypes>(a.dtype(), "Gemm", [&]<typename T>() {
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* py = y.data<T>();
      if constexpr (std::is_same_v<T, float>) {
        float beta = 0.0f;
        if (c != nullptr && beta_ != 0.0f) {
          const float* pc = c->data<float>();
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) py[i * n + j] = pc[i * c_strides[0] + j * c_strides[1]];
          }
          beta = beta_;
        }
        MatrixViewF32 va = MatrixViewF32::row_major(pa, a.dim(1));
        MatrixViewF32 vb = MatrixViewF32::row_major(pb, b.dim(1));
        if (trans_a_) va = va.transposed();
        if (trans_b_) vb = vb.transposed();
        gemm_f32(m, n, k, alpha_, va, vb, beta, py, n, ctx.thread_pool());
      } else {
        using Acc = DotAccumulator<T>;
        const T* pc = c != nullptr ? c->data<T>() : nullptr;
        const int64_t lda = a.dim(1), ldb = b.dim(1);
        parallel_for(ctx.thread_pool(), m, 1, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              Acc sum{};
              for (int64_t p = 0; p < k; ++p) {
                const T av = trans_a_ ? pa[p * lda + i] : pa[i * lda + p];
                const T bv = trans_b_ ? pb[j * ldb + p] : pb[p * ldb + j];
                sum += to_accumulator(av) * to_accumulator(bv);
              }
              py[i * n + j] =
                  combine<T>(sum, pc ? &pc[i * c_strides[0] + j * c_strides[1]] : nullptr);
            }
          }
        });
      }
    });
  }

 private:
  template <typename T>
  T combine(DotAccumulator<T> sum, const T* c) const {
    if constexpr (std::is_integral_v<T>) {
      // Integer Gemm: alpha and beta scale in double, the result truncates toward zero.
      double v = static_cast<double>(static_cast<T>(sum)) * alpha_;
      if (c != nullptr) v += static_cast<double>(*c) * beta_;
      return static_cast<T>(v);
    } else {
      using C = ComputeType<T>;
      C v = static_cast<C>(alpha_) * static_cast<C>(sum);
      if (c != nullptr) v += static_cast<C>(beta_) * to_compute(*c);
      return from_compute<T>(v);
    }
  }

  float alpha_, beta_;
  bool trans_a_, trans_b_;
};

// A zero point or scale of a quantized matmul operand: one value for the tensor or one per row
// (A) / column (B), broadcast over the batch. `offsets[r]` is the element of `param` for row or
// column r of batch matrix `batch` (offsets are per batch x rows).
struct MatrixParam {
  const Tensor* tensor = nullptr;
  std::vector<int64_t> offsets;  // batch_count * lines, empty when per-tensor or absent
  int64_t lines = 0;

  double at(int64_t batch, int64_t line) const {
    if (tensor == nullptr) return 0.0;
    if (offsets.empty()) return tensor->float_at(0);
    return tensor->float_at(offsets[size_t(batch * lines + line)]);
  }
};

// Resolves a per-tensor / per-row (for_rows) / per-column quantization parameter of an operand
// of shape `operand` (after 1-D promotion) against the matmul batches. Accepted shapes: one
// element; a 1-D vector of `lines` elements; or the operand's shape with the reduced dimension
// set to 1 (numpy-broadcastable over the batch).
MatrixParam matrix_param(std::string_view op, std::string_view what, const Tensor* t,
                         const Shape& operand, bool for_rows, const MatMulShape& s,
                         const Shape& out_batch) {
  MatrixParam p;
  p.tensor = t;
  if (t == nullptr || t->element_count() == 1) return p;
  const int64_t lines = for_rows ? s.m : s.n;
  p.lines = lines;
  Shape per_line = operand;  // [..., M, 1] for rows, [..., 1, N] for columns
  per_line[per_line.size() - (for_rows ? 1 : 2)] = 1;
  Shape param_shape = t->shape();
  if (param_shape.size() == 1) {
    OPENBPU_CHECK(param_shape[0] == lines, op, ": ", what, " must have 1 or ", lines, " elements, got ",
          t->describe());
    param_shape = for_rows ? Shape{lines, 1} : Shape{1, lines};
  }
  OPENBPU_CHECK(param_shape.size() >= 2 && param_shape.size() <= per_line.size(), op, ": ", what, " ",
        t->describe(), " does not match operand ", shape_to_string(operand));
  // Full shape of the parameter over the output batch: out_batch + (M,1) or (1,N).
  Shape target = out_batch;
  target.push_back(for_rows ? lines : 1);
  target.push_back(for_rows ? 1 : lines);
  const Shape merged = broadcast_shapes(param_shape, target, op);
  OPENBPU_CHECK(merged == target, op, ": ", what, " ", t->describe(), " is not broadcastable to ",
        shape_to_string(target));
  const std::vector<int64_t> strides = broadcast_strides(param_shape, target);
  const int64_t batches = s.batch_count();
  p.offsets.resize(static_cast<size_t>(batches * lines));
  for (int64_t flat = 0; flat < batches * lines; ++flat) {
    // flat indexes target in row-major order (the unit dimension contributes nothing).
    int64_t rest = flat, offset = 0;
    for (size_t d = target.size(); d-- > 0;) {
      const int64_t idx = rest % target[d];
      rest /= target[d];
      offset += idx * strides[d];
    }
    p.offsets[size_t(flat)] = offset;
  }
  return p;
}

Shape promoted_a(const Shape& a) {
  return a.size() == 1 ? Shape{1, a[0]} : a;
}
Shape promoted_b(const Shape& b) {
  return b.size() == 1 ? Shape{b[0], 1} : b;
}
// The broadcast batch dimensions of a matmul result.
Shape batch_of(const Shape& out, const Shape& a, const Shape& b) {
  Shape batch = out;
  if (a.size() > 1) batch.pop_back();
  if (b.size() > 1) batch.pop_back();
  return batch;
}

// acc[j] += av * (b[j] - b_zero[j]) over one row of B: contiguous, on the CPU's vector path.
template <typename TB>
struct IntegerRowUpdate {
  OPENBPU_KERNEL_INLINE static void run(const TB* b, const int32_t* b_zero, int32_t av,
                                        int32_t* acc, int64_t n) {
    for (int64_t j = 0; j < n; ++j) acc[j] += av * (int32_t{b[j]} - b_zero[j]);
  }
};

// Integer product of uint8/int8 operands with zero points, accumulated in int32 for every
// (batch, row, column); `emit(batch, i, j, acc)` receives the result. A row of the result is
// accumulated over B's rows (contiguous), not column by column down B.
template <typename Emit>
void integer_matmul(std::string_view op, const Tensor& a, const Tensor& b, const MatMulShape& s,
                    const MatrixParam& a_zp, const MatrixParam& b_zp, ThreadPool* pool,
                    Emit&& emit) {
  dispatch<TypeList<uint8_t, int8_t>>(a.dtype(), op, [&]<typename TA>() {
    dispatch<TypeList<uint8_t, int8_t>>(b.dtype(), op, [&]<typename TB>() {
      const TA* pa = a.data<TA>();
      const TB* pb = b.data<TB>();
      parallel_for(pool, s.batch_count() * s.m, 1, [&](int64_t begin, int64_t end) {
        std::vector<int32_t> b_zero(static_cast<size_t>(s.n)), acc(static_cast<size_t>(s.n));
        for (int64_t row = begin; row < end; ++row) {
          const int64_t batch = row / s.m, i = row % s.m;
          const int32_t azp = static_cast<int32_t>(a_zp.at(batch, i));
          for (int64_t j = 0; j < s.n; ++j) b_zero[size_t(j)] = int32_t(b_zp.at(batch, j));
          const TA* arow = pa + s.a_offsets[size_t(batch)] + i * s.k;
          const TB* bmat = pb + s.b_offsets[size_t(batch)];
          std::fill(acc.begin(), acc.end(), 0);
          for (int64_t p = 0; p < s.k; ++p) {
            const int32_t av = int32_t(arow[p]) - azp;
            if (av != 0) {
              vector_dispatch<IntegerRowUpdate<TB>>(bmat + p * s.n, b_zero.data(), av, acc.data(),
                                                    s.n);
            }
          }
          for (int64_t j = 0; j < s.n; ++j) emit(batch, i, j, acc[size_t(j)]);
        }
      });
    });
  });
}

void check_zero_point_type(std::string_view op, std::string_view what, const Tensor* zp,
                           const Tensor& operand) {
  if (zp == nullptr) return;
  OPENBPU_CHECK(zp->dtype() == operand.dtype(), op, ": ", what, " must have the type of its operand (",
        dtype_name(operand.dtype()), "), got ", zp->describe());
}

class MatMulIntegerKernel final : public Kernel {
 public:
  void run(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    const Tensor* a_zp = ctx.optional_input(2);
    const Tensor* b_zp = ctx.optional_input(3);
    check_zero_point_type("MatMulInteger", "a_zero_point", a_zp, a);
    check_zero_point_type("MatMulInteger", "b_zero_point", b_zp, b);
    const MatMulShape s = matmul_shape("MatMulInteger", a.shape(), b.shape());
    const Shape batch = batch_of(s.output, a.shape(), b.shape());
    const MatrixParam azp =
        matrix_param("MatMulInteger", "a_zero_point", a_zp, promoted_a(a.shape()), true, s, batch);
    const MatrixParam bzp =
        matrix_param("MatMulInteger", "b_zero_point", b_zp, promoted_b(b.shape()), false, s, batch);
    Tensor& y = ctx.allocate_output(0, DataType::kInt32, s.output);
    int32_t* py = y.data<int32_t>();
    integer_matmul("MatMulInteger", a, b, s, azp, bzp, ctx.thread_pool(),
                   [&](int64_t batch_index, int64_t i, int64_t j, int32_t acc) {
                     py[(batch_index * s.m + i) * s.n + j] = acc;
                   });
  }
};

class QLinearMatMulKernel final : public Kernel {
 public:
  void run(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& a_scale = ctx.input(1);
    const Tensor& a_zp = ctx.input(2);
    const Tensor& b = ctx.input(3);
    const Tensor& b_scale = ctx.input(4);
    const Tensor& b_zp = ctx.input(5);
    const Tensor& y_scale = ctx.input(6);
    const Tensor& y_zp = ctx.input(7);
    constexpr std::string_view op = "QLinearMatMul";
    check_zero_point_type(op, "a_zero_point", &a_zp, a);
    check_zero_point_type(op, "b_zero_point", &b_zp, b);
    for (const Tensor* scale : {&a_scale, &b_scale, &y_scale}) {
      OPENBPU_CHECK(scale->dtype() == DataType::kFloat32, op, ": scales must be float, got ",
            scale->describe());
    }
    OPENBPU_CHECK(y_scale.element_count() == 1 && y_zp.element_count() == 1, op,
          ": y_scale and y_zero_point must be scalars, got ", y_scale.describe(), " and ",
          y_zp.describe());
    const MatMulShape s = matmul_shape(op, a.shape(), b.shape());
    const Shape batch = batch_of(s.output, a.shape(), b.shape());
    const Shape pa = promoted_a(a.shape()), pb = promoted_b(b.shape());
    const MatrixParam azp = matrix_param(op, "a_zero_point", &a_zp, pa, true, s, batch);
    const MatrixParam bzp = matrix_param(op, "b_zero_point", &b_zp, pb, false, s, batch);
    const MatrixParam as = matrix_param(op, "a_scale", &a_scale, pa, true, s, batch);
    const MatrixParam bs = matrix_param(op, "b_scale", &b_scale, pb, false, s, batch);
    const float ys = y_scale.data<float>()[0];
    const int64_t yzp = y_zp.int_at(0);
    Tensor& y = ctx.allocate_output(0, y_zp.dtype(), s.output);
    dispatch<TypeList<uint8_t, int8_t>>(y_zp.dtype(), op, [&]<typename TY>() {
      TY* py = y.data<TY>();
      integer_matmul(op, a, b, s, azp, bzp, ctx.thread_pool(),
                     [&](int64_t batch_index, int64_t i, int64_t j, int32_t acc) {
                       const float multiplier = static_cast<float>(as.at(batch_index, i)) *
                                                static_cast<float>(bs.at(batch_index, j)) / ys;
                       py[(batch_index * s.m + i) * s.n + j] = quantize_rounded<TY>(
                           static_cast<double>(acc) * static_cast<double>(multiplier), yzp);
                     });
    });
  }
};

}  // namespace

void register_matmul_kernels(std::vector<KernelDef>& defs) {
  defs.push_back({"", "MatMul", 1, {}, &make_kernel<MatMulKernel>});
  defs.push_back({"",
                  "Gemm",
                  1,
                  {{"alpha", AttrKind::kFloat},
                   {"beta", AttrKind::kFloat},
                   {"transA", AttrKind::kInt},
                   {"transB", AttrKind::kInt},
                   {"broadcast", AttrKind::kInt}},  // opset < 7; broadcasting is always on
                  &make_kernel<GemmKernel>});
  defs.push_back({"", "MatMulInteger", 10, {}, &make_kernel<MatMulIntegerKernel>});
  defs.push_back({"", "QLinearMatMul", 10, {}, &make_kernel<QLinearMatMulKernel>});
}

}  // namespace openbpu::kernels
