// Pow (its broadcasting loop: broadcast_binary.h).
//   - integer Pow with a negative exponent: 1 for base 1, ±1 for base -1, 0 otherwise;
//     float results converted to an integer base type truncate and saturate (NaN → 0).
// Before opset 7 Pow uses the legacy `broadcast`/`axis` attributes.
#include <cmath>
#include <limits>
#include <type_traits>

#include "broadcast_binary.h"
#include "openbpu/kernels/numeric_cast.h"

namespace openbpu::kernels {

namespace {

using namespace binary_ops;

// ---------------------------------------------------------------------------------------------
// Pow: base and exponent may differ in type from opset 12; the result has the base's type.

using PowBaseTypes = TypeList<int32_t, int64_t, float, double, Float16, BFloat16>;

template <typename I>
I integer_power(I base, int64_t exponent) {
  if (exponent < 0) {
    if (base == I(1)) return I(1);
    if constexpr (std::is_signed_v<I>) {
      if (base == I(-1)) return (exponent % 2 == 0) ? I(1) : I(-1);
    }
    return I(0);
  }
  I result = I(1);
  while (exponent > 0) {
    if (exponent & 1) result = wrapping_mul(result, base);
    base = wrapping_mul(base, base);
    exponent >>= 1;
  }
  return result;
}

template <typename B, typename E>
B power(B base, E exponent) {
  if constexpr (std::is_integral_v<B> && std::is_integral_v<E>) {
    constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    const bool too_large = std::is_unsigned_v<E> && static_cast<uint64_t>(exponent) > kMax;
    const int64_t e =
        too_large ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(exponent);
    return integer_power(base, e);
  } else if constexpr (std::is_integral_v<B>) {
    return numeric_cast<B>(std::pow(static_cast<double>(base), static_cast<double>(exponent)));
  } else {
    // B is float or double (16-bit floats compute in float).
    return static_cast<B>(std::pow(static_cast<double>(base), static_cast<double>(exponent)));
  }
}

class PowKernel final : public Kernel {
 public:
  explicit PowKernel(const NodeInfo& node) : opset_(node.opset), legacy_(node, 7) {}

  void run(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    OPENBPU_CHECK(opset_ >= 12 || a.dtype() == b.dtype(),
                  "Pow: before opset 12 base and exponent must have the same type, got ",
                  dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
    const Tensor b_view = b.reshaped(legacy_.aligned_shape(a.shape(), b.shape(), "Pow"));
    Shape out_shape = legacy_.output_shape(a.shape(), b_view.shape(), "Pow");
    dispatch<PowBaseTypes>(a.dtype(), "Pow", [&]<typename T>() {
      Tensor& y = ctx.allocate_output(0, a.dtype(), std::move(out_shape));
      dispatch<NumericTypes>(b.dtype(), "Pow (exponent)", [&]<typename E>() {
        if (is_scalar_two<E>(b_view) && a.shape() == y.shape()) {
          map_unary<T, T>(ctx.thread_pool(), a, y, [](auto v) { return wrapping_mul(v, v); });
          return;
        }
        broadcast_binary<T, E, T>(ctx.thread_pool(), a, b_view, y,
                                  [](auto base, auto e) { return power(base, e); });
      });
    });
  }

 private:
  // x^2 (the usual variance term) as x*x: the same value as pow(x, 2), much cheaper.
  template <typename E>
  static bool is_scalar_two(const Tensor& exponent) {
    return exponent.element_count() == 1 && to_compute(exponent.data<E>()[0]) == 2;
  }

  int opset_;
  LegacyBroadcast legacy_;
};

}  // namespace

void register_pow_kernels(std::vector<KernelDef>& defs) {
  defs.push_back({"", "Pow", 1, legacy_broadcast_attributes(), &make_kernel<PowKernel>});
}

}  // namespace openbpu::kernels
