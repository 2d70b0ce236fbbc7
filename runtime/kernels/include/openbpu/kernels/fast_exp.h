// exp() for float without branches, so that loops calling it auto-vectorize (the library's
// exp for float is a scalar libm call). Used by the float32 paths of Sigmoid and Softmax.
//
// Accuracy: relative error below 2e-7 (about 1 ulp; 8e-8 measured) over the whole range,
// checked against double-precision exp in the unit tests. Range: arguments are clamped to
// [-87.3365, 88.3763], so results lie in [FLT_MIN, ~2.4e38]: exp(-inf) gives FLT_MIN
// (1.2e-38) instead of 0 and exp(+inf) a large finite value instead of inf. NaN gives NaN.
#pragma once

#include <bit>
#include <cstdint>

namespace openbpu::kernels {

[[gnu::always_inline]] inline float fast_exp(float x) {
  constexpr float kHigh = 88.3762626647949f;  // n = 127 at most
  constexpr float kLow = -87.3365478515625f;  // n = -126 at least (normal scale)
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2High = 0.693359375f;  // ln 2 = kLn2High + kLn2Low (Cody-Waite)
  constexpr float kLn2Low = -2.12194440e-4f;
  constexpr float kRoundMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  // Clamp and pass NaN through with integer masks: float comparisons and selects would keep
  // the compiler from vectorizing under the default -ftrapping-math.
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t high_bits = std::bit_cast<uint32_t>(kHigh);
  const uint32_t low_bits = std::bit_cast<uint32_t>(kLow);
  const uint32_t nan_mask = 0u - uint32_t((bits & 0x7fffffffu) > 0x7f800000u);
  const uint32_t high_mask = 0u - uint32_t((bits < 0x80000000u) & (bits > high_bits));
  const uint32_t low_mask = 0u - uint32_t((bits >= 0x80000000u) & (bits > low_bits));
  const uint32_t clamped =
      (high_mask & high_bits) | (low_mask & low_bits) | (~(high_mask | low_mask) & bits);
  x = std::bit_cast<float>(clamped);
  // x = n ln2 + r with n = round(x / ln2), |r| <= ln2 / 2
  const float shifted = x * kLog2e + kRoundMagic;
  const float n = shifted - kRoundMagic;
  float r = x - n * kLn2High;
  r = r - n * kLn2Low;
  // exp(r) by a degree-7 polynomial (Cephes coefficients)
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^n from the integer left in the low mantissa bits of `shifted` (unsigned: no UB on NaN)
  const uint32_t n_bits = std::bit_cast<uint32_t>(shifted) - std::bit_cast<uint32_t>(kRoundMagic);
  const float scale = std::bit_cast<float>((n_bits + 127u) << 23);
  const uint32_t result = std::bit_cast<uint32_t>(p * scale);
  return std::bit_cast<float>((nan_mask & bits) | (~nan_mask & result));
}

}  // namespace openbpu::kernels
