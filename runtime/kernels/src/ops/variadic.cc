// Variadic Max, Min, Sum, Mean with numpy broadcasting (their loop: broadcast_binary.h).
#include <type_traits>
#include <vector>

#include "broadcast_binary.h"

namespace openbpu::kernels {

namespace {

using namespace binary_ops;

// ---------------------------------------------------------------------------------------------
// Variadic Max, Min, Sum, Mean: y = x0 op x1 op ... folded left to right over the broadcast
// shape.

// Each Op's Loop is the functor its loop runs: Mean runs Sum's, so the two share one loop per
// element type; every op copies its first input with the same TakeFirst loop.
struct TakeFirst {
  template <typename V>
  V operator()(V a, V) const {
    return a;
  }
};

struct VariadicMax {
  static constexpr const char* kName = "Max";
  using Loop = VariadicMax;
  using Types = NumericTypes;
  template <typename V>
  V operator()(V a, V b) const {
    if (is_nan(a) || is_nan(b)) return is_nan(a) ? a : b;
    return a < b ? b : a;
  }
};

struct VariadicMin {
  static constexpr const char* kName = "Min";
  using Loop = VariadicMin;
  using Types = NumericTypes;
  template <typename V>
  V operator()(V a, V b) const {
    if (is_nan(a) || is_nan(b)) return is_nan(a) ? a : b;
    return b < a ? b : a;
  }
};

struct VariadicSum {
  static constexpr const char* kName = "Sum";
  using Loop = VariadicSum;
  using Types = FloatTypes;
  template <typename V>
  V operator()(V a, V b) const {
    return a + b;
  }
};

struct VariadicMean : VariadicSum {
  static constexpr const char* kName = "Mean";
};

template <typename Op>
class VariadicKernel final : public Kernel {
 public:
  void run(KernelContext& ctx) const override {
    OPENBPU_CHECK(ctx.input_count() >= 1, Op::kName, ": needs at least one input");
    std::vector<const Tensor*> inputs;
    std::vector<const Shape*> shapes;
    for (int i = 0; i < ctx.input_count(); ++i) {
      inputs.push_back(&ctx.input(i));
      shapes.push_back(&inputs.back()->shape());
      OPENBPU_CHECK(inputs.back()->dtype() == inputs[0]->dtype(), Op::kName,
                    ": all inputs must have the same type, input 0 is ",
                    dtype_name(inputs[0]->dtype()), " and input ", i, " is ",
                    dtype_name(inputs.back()->dtype()));
    }
    Shape out_shape = broadcast_shapes(shapes, Op::kName);
    const Op op{};
    dispatch<typename Op::Types>(inputs[0]->dtype(), Op::kName, [&]<typename T>() {
      Tensor& y = ctx.allocate_output(0, inputs[0]->dtype(), out_shape);
      const Tensor& first = *inputs[0];
      broadcast_binary<T, T, T>(ctx.thread_pool(), first, first, y, TakeFirst{});
      const typename Op::Loop& loop = op;
      for (size_t k = 1; k < inputs.size(); ++k) {
        // In place: y's element i is read before it is written, at the same index.
        broadcast_binary<T, T, T>(ctx.thread_pool(), y, *inputs[k], y, loop);
      }
      if constexpr (std::is_same_v<Op, VariadicMean>) {
        const auto count = static_cast<ComputeType<T>>(inputs.size());
        map_unary<T, T>(ctx.thread_pool(), y, y, [count](auto v) { return v / count; });
      }
    });
  }
};

}  // namespace

void register_variadic_kernels(std::vector<KernelDef>& defs) {
  defs.push_back({"", "Max", 6, {}, &make_kernel<VariadicKernel<VariadicMax>>});
  defs.push_back({"", "Min", 6, {}, &make_kernel<VariadicKernel<VariadicMin>>});
  defs.push_back({"", "Sum", 6, {}, &make_kernel<VariadicKernel<VariadicSum>>});
  defs.push_back({"", "Mean", 6, {}, &make_kernel<VariadicKernel<VariadicMean>>});
}

}  // namespace openbpu::kernels
