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

#include <algorithm>
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

// round_shift_right for |x| < 2^62 and shift in [0, 62], in int64 arithmetic (x + 2^(shift-1)
// cannot overflow): equal to it on that domain (tested); meant for the hot loops.
constexpr int64_t round_shift_right_int64(int64_t x, int shift) {
  return shift <= 0 ? x : (x + (int64_t{1} << (shift - 1))) >> shift;
}

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

// PreparedMultiplier::apply on the prepared fields, for tables kept as one array per field
// (loops over them vectorise).
constexpr int64_t apply_prepared(int32_t x, int32_t multiplier, int64_t rounding, int64_t shift) {
  return (static_cast<int64_t>(x) * multiplier + rounding) >> shift;
}

// A valid multiplier prepared for applying to many 32-bit values in a loop without branches:
// apply(x) == apply_multiplier_int32(x, m) == apply_multiplier(x, m) for every int32 x (tested).
// A shift >= 63 always gives 0 and becomes the multiplier 0.
struct PreparedMultiplier {
  int32_t multiplier = 0;  // int32 × int32 products: the compilers' vector forms are the fast ones
  int64_t rounding = 0;  // 2^(shift-1), or 0 for shift 0
  int32_t shift = 0;

  constexpr explicit PreparedMultiplier(FixedPointMultiplier m)
      : multiplier(m.shift >= 63 ? 0 : m.multiplier),
        rounding(m.shift > 0 && m.shift < 63 ? int64_t{1} << (m.shift - 1) : 0),
        shift(m.shift >= 63 ? 0 : m.shift) {}
  constexpr int64_t apply(int32_t x) const { return apply_prepared(x, multiplier, rounding, shift); }
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
// The same over n values (a tensor's Quantize), and y = dequantize(quantize(x)) with 8 or 16
// bits (a calibration node's fake quantization): element for element the functions above,
// 16 values per AVX-512 step where the CPU has it (double division, round to nearest even).
void quantize_int8(const float* x, int64_t n, float scale, int8_t* q);
void quantize_int16(const float* x, int64_t n, float scale, int16_t* q);
void fake_quantize(const float* x, int64_t n, float scale, int bits, float* y);
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
  // |delta · r| < 2^40, so the int64 rounding shift is the definition's.
  int16_t lookup(int16_t q) const {
    const int32_t offset = static_cast<int32_t>(q) + 32768;  // [0, 65535]
    const auto k = static_cast<size_t>(offset >> 8);
    const int64_t delta = static_cast<int64_t>(knots[k + 1]) - knots[k];
    return saturate<int16_t>(knots[k] + round_shift_right_int64(delta * (offset & 0xff), 8));
  }
};
LutInt16 build_lut_int16(const std::function<double(double)>& f, float in_scale, float out_scale);
// Whether LutInt16::lookup can be computed in int32: every segment's |delta|·255 + 128 and
// |knot| + |delta| + 1 below 2^31.
bool lut_int16_fits_int32(const LutInt16& t);
// lookup over n int16 values, x and y byte addresses (any alignment). gathers: sixteen values a
// step with AVX-512 gathers in int32 (the caller checked that the CPU has AVX-512F and that the
// table fits int32), the same values as lookup; else lookup per value.
void lut_int16_row(const LutInt16& t, const uint8_t* x, uint8_t* y, int64_t n, bool gathers);
// The input of knot k (k = 0..256): (-32768 + 256 k) * in_scale.
double lut_int16_knot_input(int k, float in_scale);
// The same table from the function's float values at the 257 knot inputs (in order).
LutInt16 lut_int16_from_values(const std::vector<float>& values, float out_scale);

// ---------------------------------------------------------------- softmax

// Softmax along one axis of a per-tensor quantized tensor x (scale in_scale) to y (scale
// out_scale), each int8 or int16 (y's type T may differ from x's), in integers only. For one row x[0..n) (n >= 1):
//   m   = max_k x[k]
//   t_k = apply_multiplier(m - x[k], exponent)       exponent ≈ in_scale · log2(e) · 2^16, so
//                                                    t_k ≈ (m - x[k]) · in_scale · log2(e) in Q16
//   e_k = softmax_exp2_q30(t_k)                      ≈ 2^-(t_k / 2^16) = exp((x[k] - m) · in_scale)
//                                                    in Q30; e = 2^30 exactly where x[k] = m
//   S   = Σ_k e_k                                    >= 2^30
//   R   = floor(2^62 / S)                            one reciprocal per row
//   p_k = round_shift_right(e_k · R, 32)             the probability in Q30
//   y[k] = saturate<T>(apply_multiplier(p_k, output)) output ≈ 2^-30 / out_scale
// Every step is exact integer arithmetic, so the quantized-model executor and the virtual BPU
// give the same bits; the only tables are kSoftmaxExp2Q30's 257 constants.
struct SoftmaxMultipliers {
  FixedPointMultiplier exponent;
  FixedPointMultiplier output;
};
// The multipliers for in_scale and out_scale (both finite and > 0). Throws std::invalid_argument
// when in_scale · log2(e) · 2^16 is not below 2^31 (in_scale >= about 22713).
SoftmaxMultipliers softmax_multipliers(double in_scale, double out_scale);

// round(2^30 · 2^(-j/256)) for j = 0..256: kSoftmaxExp2Q30[0] = 2^30, [256] = 2^29.
extern const std::array<int64_t, 257> kSoftmaxExp2Q30;

// 2^(-t / 2^16) in Q30 for t >= 0: with t = 2^16 · i + 2^8 · j + r (j, r < 256),
//   v = table[j] + round_shift_right((table[j+1] - table[j]) · r, 8)   (2^-(fraction) in Q30)
//   result = i >= 63 ? 0 : round_shift_right(v, i)
int64_t softmax_exp2_q30(int64_t t);

namespace detail {
// softmax_exp2_q30 without the check of t, in 64-bit arithmetic (v < 2^31, so every rounding
// term fits): equal to it for every t >= 0.
inline int64_t softmax_exp2_q30_unchecked(int64_t t) {
  const int64_t i = t >> 16;
  if (i >= 63) return 0;
  const size_t j = static_cast<size_t>((t >> 8) & 0xff);
  const int64_t r = t & 0xff;
  const int64_t v = kSoftmaxExp2Q30[j] + (((kSoftmaxExp2Q30[j + 1] - kSoftmaxExp2Q30[j]) * r + 128) >> 8);
  return i == 0 ? v : (v + (int64_t{1} << (i - 1))) >> i;
}
}  // namespace detail

// One row through the steps above. load(k) returns x[k] (an int8/int16 value), store(k, T)
// writes y[k] of the output type T (int8/int16); exps holds n values of scratch, where the sum
// pass keeps each e_k (< 2^31) for the output pass. x is read in two passes (max, sum) before
// any y[k] is written, so y may be x itself (same type).
// The steps run in 64-bit arithmetic, equal to the 128-bit forms written above for these
// ranges (m - x[k] < 2^16 and p <= 2^30 fit int32, for which PreparedMultiplier equals
// apply_multiplier; e·R <= 2^62): m's multipliers must be valid (is_valid_multiplier).
template <typename T, typename Load, typename Store>
void softmax_row(int64_t n, const SoftmaxMultipliers& m, int32_t* exps, Load&& load, Store&& store) {
  const PreparedMultiplier exponent(m.exponent), output(m.output);
  int64_t max_value = load(0);
  for (int64_t k = 1; k < n; ++k) max_value = std::max<int64_t>(max_value, load(k));
  int64_t sum = 0;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t e = detail::softmax_exp2_q30_unchecked(exponent.apply(static_cast<int32_t>(max_value - load(k))));
    exps[k] = static_cast<int32_t>(e);
    sum += e;
  }
  const int64_t reciprocal = (int64_t{1} << 62) / sum;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t p = (int64_t{exps[k]} * reciprocal + (int64_t{1} << 31)) >> 32;
    store(k, saturate<T>(output.apply(static_cast<int32_t>(p))));
  }
}

}  // namespace openbpu::simulator
