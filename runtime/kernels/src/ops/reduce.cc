// Sums and their kin: ReduceSum, ReduceProd, ReduceSumSquare, ReduceL1, ReduceMean (fold
// reductions), CumSum. Accumulation and empty-set results: reduction.h.
#include "reduction.h"

namespace openbpu::kernels {

namespace {

using namespace reduction;

template <typename T>
Accumulator<T> absolute(Accumulator<T> v) {
  if constexpr (std::is_integral_v<T>) {
    if constexpr (std::is_signed_v<T>) {
      // v holds a sign-extended T; negate modulo 2^64 if negative.
      return static_cast<int64_t>(v) < 0 ? uint64_t(0) - v : v;
    } else {
      return v;
    }
  } else {
    return std::abs(v);
  }
}

struct ReduceSum : FoldReduction<ReduceSum> {
  static constexpr const char* kName = "ReduceSum";
  static constexpr int kAxesInputFrom = 13;
  template <typename T>
  static Accumulator<T> init() {
    return 0;
  }
  template <typename T>
  static Accumulator<T> step(Accumulator<T> acc, Accumulator<T> v) {
    return acc + v;
  }
  template <typename T>
  static T finish(Accumulator<T> acc, int64_t) {
    return narrow<T>(acc);
  }
};

struct ReduceProd : FoldReduction<ReduceProd> {
  static constexpr const char* kName = "ReduceProd";
  static constexpr int kAxesInputFrom = 18;
  template <typename T>
  static Accumulator<T> init() {
    return 1;
  }
  template <typename T>
  static Accumulator<T> step(Accumulator<T> acc, Accumulator<T> v) {
    return acc * v;
  }
  template <typename T>
  static T finish(Accumulator<T> acc, int64_t) {
    return narrow<T>(acc);
  }
};

struct ReduceSumSquare : FoldReduction<ReduceSumSquare> {
  static constexpr const char* kName = "ReduceSumSquare";
  static constexpr int kAxesInputFrom = 18;
  template <typename T>
  static Accumulator<T> init() {
    return 0;
  }
  template <typename T>
  static Accumulator<T> step(Accumulator<T> acc, Accumulator<T> v) {
    return acc + v * v;
  }
  template <typename T>
  static T finish(Accumulator<T> acc, int64_t) {
    return narrow<T>(acc);
  }
};

struct ReduceL1 : FoldReduction<ReduceL1> {
  static constexpr const char* kName = "ReduceL1";
  static constexpr int kAxesInputFrom = 18;
  template <typename T>
  static Accumulator<T> init() {
    return 0;
  }
  template <typename T>
  static Accumulator<T> step(Accumulator<T> acc, Accumulator<T> v) {
    return acc + absolute<T>(v);
  }
  template <typename T>
  static T finish(Accumulator<T> acc, int64_t) {
    return narrow<T>(acc);
  }
};

// Integers: the sum divided by the count, truncated toward zero (0 for an empty set).
struct ReduceMean : FoldReduction<ReduceMean> {
  static constexpr const char* kName = "ReduceMean";
  static constexpr int kAxesInputFrom = 18;
  template <typename T>
  static Accumulator<T> init() {
    return 0;
  }
  template <typename T>
  static Accumulator<T> step(Accumulator<T> acc, Accumulator<T> v) {
    return acc + v;
  }
  template <typename T>
  static T finish(Accumulator<T> sum, int64_t count) {
    if constexpr (std::is_integral_v<T>) {
      if (count == 0) return T(0);
      if constexpr (std::is_signed_v<T>) {
        return static_cast<T>(static_cast<int64_t>(sum) / count);
      } else {
        return static_cast<T>(sum / static_cast<uint64_t>(count));
      }
    } else {
      return narrow<T>(sum / static_cast<double>(count));
    }
  }
};

// ---------------------------------------------------------------------------------------------
// CumSum(x, axis): running sums along axis; `exclusive` leaves out the element itself,
// `reverse` sums from the end.

class CumSumKernel final : public Kernel {
 public:
  explicit CumSumKernel(const NodeInfo& node)
      : exclusive_(node.attrs.get_int("exclusive", 0) != 0),
        reverse_(node.attrs.get_int("reverse", 0) != 0) {}

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& axis_tensor = ctx.input(1);
    OPENBPU_CHECK(
        axis_tensor.dtype() == DataType::kInt32 || axis_tensor.dtype() == DataType::kInt64,
        "CumSum: axis must be int32 or int64, got ", dtype_name(axis_tensor.dtype()));
    OPENBPU_CHECK(axis_tensor.element_count() == 1 && axis_tensor.rank() <= 1,
                  "CumSum: axis must be a scalar, got shape ",
                  shape_to_string(axis_tensor.shape()));
    OPENBPU_CHECK(x.rank() >= 1, "CumSum: input must have rank >= 1, got a scalar");
    const int64_t axis = normalize_axis(axis_tensor.int_at(0), x.rank(), "CumSum axis");
    const AxisSplit split = split_at_axis(x.shape(), axis);
    Tensor& y = ctx.allocate_output(0, x.dtype(), x.shape());
    dispatch<NumericTypes>(x.dtype(), "CumSum", [&]<typename T>() {
      const T* in = x.data<T>();
      T* out = y.data<T>();
      const int64_t lines = split.outer * split.inner;
      const int64_t chunk =
          std::max<int64_t>(1, kElementwiseChunk / std::max<int64_t>(1, split.extent));
      parallel_for(ctx.thread_pool(), lines, chunk, [&](int64_t b, int64_t e) {
        for (int64_t line = b; line < e; ++line) {
          const int64_t base =
              (line / split.inner) * split.extent * split.inner + line % split.inner;
          Accumulator<T> acc(0);
          for (int64_t k = 0; k < split.extent; ++k) {
            const int64_t r = reverse_ ? split.extent - 1 - k : k;
            const int64_t offset = base + r * split.inner;
            if (exclusive_) {
              out[offset] = narrow<T>(acc);
              acc += widen(in[offset]);
            } else {
              acc += widen(in[offset]);
              out[offset] = narrow<T>(acc);
            }
          }
        }
      });
    });
  }

 private:
  bool exclusive_, reverse_;
};

}  // namespace

void register_reduce_kernels(std::vector<KernelDef>& defs) {
  defs.push_back(reduce_def<ReduceL1>());
  defs.push_back(reduce_def<ReduceMean>());
  defs.push_back(reduce_def<ReduceProd>());
  defs.push_back(reduce_def<ReduceSum>());
  defs.push_back(reduce_def<ReduceSumSquare>());
  defs.push_back({"",
                  "CumSum",
                  11,
                  {{"exclusive", AttrKind::kInt}, {"reverse", AttrKind::kInt}},
                  &make_kernel<CumSumKernel>});
}

}  // namespace openbpu::kernels
