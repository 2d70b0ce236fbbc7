// Integer quantization arithmetic shared by QuantizeLinear, DynamicQuantizeLinear, QLinearConv
// and QLinearMatMul: round half to even, add the zero point, saturate to the integer type.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace openbpu::kernels {

// Rounds `value` half to even, adds `zero_point` and clamps to Q's range. NaN maps to the zero
// point clamped to the range.
template <typename Q>
Q quantize_rounded(double value, int64_t zero_point) {
  static_assert(std::is_integral_v<Q>);
  constexpr double lo = static_cast<double>(std::numeric_limits<Q>::lowest());
  constexpr double hi = static_cast<double>(std::numeric_limits<Q>::max());
  double v = std::isnan(value) ? 0.0 : std::nearbyint(value);  // default mode: half to even
  v += static_cast<double>(zero_point);
  v = v < lo ? lo : (v > hi ? hi : v);
  return static_cast<Q>(v);
}

}  // namespace openbpu::kernels
