// The one definition of the virtual BPU's integer arithmetic (design invariant 1).
//
// Everything that turns integers into integers on the BPU path is defined here and nowhere
// else: rounding shifts, fixed-point multipliers (requantization), saturation, float↔integer
// quantization of tensors at the model's borders, and lookup tables for nonlinear functions.
// The simulator's functional units, the toolchain's quantized-model executor and the runtime's
// CPU Quantize/Dequantize all call these functions, so the quantized ONNX model, the simulator
// and the board agree bit for bit.
//
// Conventions
//  - Quantized values are symmetric: real = q * scale, no zero point.
//  - Rounding of integer shifts is "half up": round_shift_right(x, s) = floor(x / 2^s + 1/2).
//  - A real multiplier m > 0 is represented as M * 2^-shift with M in [2^30, 2^31), shift in
//    [0, 93]; applying it to an int64 value uses a 128-bit product, so no intermediate overflows.
//  - Float → integer quantization rounds half to even (IEEE nearbyint) and saturates.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

namespace openbpu::simulator {

// 128-bit products (GCC/Clang on x86-64 and aarch64).
__extension__ typedef __int128 Int128;

// ---------------------------------------------------------------- integer primitives

// floor(x / 2^shift + 1/2); shift in [0, 126]. shift 0 returns x.
int64_t round_shift_right(Int128 x, int shift);

template <typename T>
constexpr T saturate(int64_t v);
template <>
constexpr int8_t saturate<int8_t>(int64_t v) {
  return static_cast<int8_t>(v < -128 ? -128 : (v > 127 ? 127 : v));
}
template <>
constexpr int16_t saturate<int16_t>(int64_t v) {
  return static_cast<int16_t>(v < -32768 ? -32768 : (v > 32767 ? 32767 : v));
}
template <>
constexpr int32_t saturate<int32_t>(int64_t v) {
  return static_cast<int32_t>(v < INT32_MIN ? INT32_MIN : (v > INT32_MAX ? INT32_MAX : v));
}
template <>
constexpr uint8_t saturate<uint8_t>(int64_t v) {
  return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

// Largest shift of a fixed-point multiplier.
inline constexpr int32_t kMaxMultiplierShift = 93;

// A positive real multiplier in fixed point: real ≈ multiplier * 2^-shift.
struct FixedPointMultiplier {
  int32_t multiplier = 0;  // in [2^30, 2^31), or 0 for a zero multiplier
  int32_t shift = 0;       // in [0, kMaxMultiplierShift]
  bool operator==(const FixedPointMultiplier&) const = default;
};

// True if m is in the form to_fixed_point() produces: multiplier 0 or in [2^30, 2^31), shift
// in [0, kMaxMultiplierShift]. Consumers of quantized models check parameters with this.
constexpr bool is_valid_multiplier(FixedPointMultiplier m) {
  return (m.multiplier == 0 || m.multiplier >= (int32_t{1} << 30)) && m.shift >= 0 &&
         m.shift <= kMaxMultiplierShift;
}

// The fixed-point form of `real` (must be finite, >= 0 and < 2^31). Deterministic: computed
// with frexp and integer rounding only. real values too small for the shift range become 0.
FixedPointMultiplier to_fixed_point(double real);
// The real value a multiplier stands for.
double to_real(FixedPointMultiplier m);

// round_shift_right(x * M, shift): x times the multiplier, rounded half up.
int64_t apply_multiplier(int64_t x, FixedPointMultiplier m);

// apply_multiplier for a 32-bit x and a valid multiplier (is_valid_multiplier), with 64-bit
// arithmetic only: |x * M| < 2^62, so the product and the rounding term fit in int64, and every
// shift >= 63 gives 0. Equal to apply_multiplier(x, m) for all such inputs (tested); meant for
// the hot loops of the integer kernels.
constexpr int64_t apply_multiplier_int32(int32_t x, FixedPointMultiplier m) {
  const int64_t product = static_cast<int64_t>(x) * m.multiplier;
  if (m.shift == 0) return product;
  if (m.shift >= 63) return 0;
  return (product + (int64_t{1} << (m.shift - 1))) >> m.shift;
}

// A valid multiplier prepared for applying to many 32-bit values in a loop without branches:
// apply(x) == apply_multiplier_int32(x, m) == apply_multiplier(x, m) for every int32 x (tested).
// A shift >= 63 always gives 0 and becomes the multiplier 0.
struct PreparedMultiplier {
  int64_t multiplier = 0;
  int64_t rounding = 0;  // 2^(shift-1), or 0 for shift 0
  int32_t shift = 0;

  constexpr explicit PreparedMultiplier(FixedPointMultiplier m)
      : multiplier(m.shift >= 63 ? 0 : m.multiplier),
        rounding(m.shift > 0 && m.shift < 63 ? int64_t{1} << (m.shift - 1) : 0),
        shift(m.shift >= 63 ? 0 : m.shift) {}
  constexpr int64_t apply(int32_t x) const {
    return (static_cast<int64_t>(x) * multiplier + rounding) >> shift;
  }
};

// Requantization of an accumulator to an output type: saturate<T>(apply_multiplier(acc, m)).
template <typename T>
T requantize(int64_t acc, FixedPointMultiplier m) {
  return saturate<T>(apply_multiplier(acc, m));
}

// ---------------------------------------------------------------- resampling

// Fractional bits of the source coordinates of linear resizing.
inline constexpr int kResizeFractionBits = 10;

// The source coordinate numerator / denominator (denominator > 0; a rational number given by the
// coordinate transformation) of linear resizing along an axis of `length` input positions, in
// fixed point with kResizeFractionBits fractional bits:
//   floor((numerator * 2^10 + floor(denominator / 2)) / denominator), clamped to
//   [0, (length - 1) * 2^10].
int64_t resize_linear_coordinate(int64_t numerator, int64_t denominator, int64_t length);

// ---------------------------------------------------------------- scales

// Scale of a symmetric quantization of values in [-threshold, threshold] to `bits` bits:
// threshold / (2^(bits-1) - 1). A non-positive or non-finite threshold gives scale 1.
float symmetric_scale(float threshold, int bits);

// Multiplier for an accumulator of scale `in_scale` (e.g. input_scale * weight_scale) to an
// output of scale `out_scale`.
FixedPointMultiplier requantization_multiplier(double in_scale, double out_scale);

// ---------------------------------------------------------------- float borders

// q = saturate(nearbyint(x / scale)); NaN → 0.
int8_t quantize_int8(float x, float scale);
int16_t quantize_int16(float x, float scale);
// Bias of a layer: round(bias / (input_scale * weight_scale)) saturated to int32.
int32_t quantize_bias(float bias, double input_scale, double weight_scale);
inline float dequantize(int64_t q, float scale) { return static_cast<float>(q) * scale; }

// ---------------------------------------------------------------- lookup tables

// An int8 → int8 table: entry [q + 128] = quantize_int8(f(q * in_scale), out_scale).
struct LutInt8 {
  std::array<int8_t, 256> table{};
  int8_t lookup(int8_t q) const { return table[static_cast<uint8_t>(static_cast<int16_t>(q) + 128)]; }
};
LutInt8 build_lut_int8(const std::function<double(double)>& f, float in_scale, float out_scale);
// The same table from the function's float values at q * in_scale, q = -128..127 (in order),
// e.g. computed by a float kernel: entry i = quantize_int8(values[i], out_scale).
LutInt8 lut_int8_from_values(const std::vector<float>& values, float out_scale);

// An int16 → int16 piecewise-linear table: 257 knots at q = -32768 + 256 k, k = 0..256
// (the last knot extrapolates the segment to 32768). For q = -32768 + 256 k + r (0 <= r < 256):
//   y = saturate<int16>(knot[k] + round_shift_right((knot[k+1] - knot[k]) * r, 8)).
struct LutInt16 {
  std::array<int32_t, 257> knots{};
  int16_t lookup(int16_t q) const;
};
LutInt16 build_lut_int16(const std::function<double(double)>& f, float in_scale, float out_scale);
// The input of knot k (k = 0..256): (-32768 + 256 k) * in_scale.
double lut_int16_knot_input(int k, float in_scale);
// The same table from the function's float values at the 257 knot inputs (in order).
LutInt16 lut_int16_from_values(const std::vector<float>& values, float out_scale);

}  // namespace openbpu::simulator
