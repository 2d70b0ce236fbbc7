// Element conversion between any two kernel element types with defined results everywhere.
//
// numeric_cast<To>(from) follows C++ value conversion except where C++ leaves it undefined:
//   - floating point to integer truncates toward zero, saturates at To's range, and maps NaN
//     to 0 (a plain static_cast of NaN or an out-of-range value is undefined behaviour);
//   - integer to narrower integer wraps modulo 2^bits (C++20 defines this);
//   - anything to bool is `value != 0` (NaN is true); bool to anything is 0 or 1;
//   - Float16 and BFloat16 go through float (round to nearest even on the way in).
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

#include "openbpu/kernels/dtype.h"

namespace openbpu::kernels {

template <typename T>
inline constexpr bool kIsHalfFloat = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

// Floating value to integer type I: truncation, saturation, NaN → 0.
template <typename I, typename F>
I saturating_float_to_int(F value) {
  static_assert(std::is_integral_v<I> && std::is_floating_point_v<F>);
  const double v = static_cast<double>(value);
  if (std::isnan(v)) return I(0);
  // Both bounds are powers of two (or 0), hence exact in double.
  constexpr double kLow = static_cast<double>(std::numeric_limits<I>::lowest());
  constexpr double kHighExclusive = static_cast<double>(std::numeric_limits<I>::max() / 2 + 1) * 2;
  if (v <= kLow) return std::numeric_limits<I>::lowest();
  if (v >= kHighExclusive) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

template <typename To, typename From>
To numeric_cast(From value) {
  if constexpr (std::is_same_v<To, From>) {
    return value;
  } else if constexpr (kIsHalfFloat<From>) {
    return numeric_cast<To>(static_cast<float>(value));
  } else if constexpr (kIsHalfFloat<To>) {
    return To(numeric_cast<float>(value));
  } else if constexpr (std::is_same_v<To, bool>) {
    return value != From(0);
  } else if constexpr (std::is_same_v<From, bool>) {
    return value ? To(1) : To(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    return saturating_float_to_int<To>(value);
  } else {
    return static_cast<To>(value);
  }
}

}  // namespace openbpu::kernels
