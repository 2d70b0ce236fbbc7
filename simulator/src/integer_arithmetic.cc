#include "openbpu/simulator/integer_arithmetic.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace openbpu::simulator {

int64_t round_shift_right(Int128 x, int shift) {
  if (shift <= 0) return static_cast<int64_t>(x);
  const Int128 half = static_cast<Int128>(1) << (shift - 1);
  // Arithmetic shift of a signed 128-bit value rounds toward -inf: floor((x + half) / 2^s).
  return static_cast<int64_t>((x + half) >> shift);
}

FixedPointMultiplier to_fixed_point(double real) {
  if (!(real >= 0.0) || !std::isfinite(real) || real >= 2147483648.0) {
    throw std::invalid_argument("fixed-point multiplier must be finite, >= 0 and < 2^31");
  }
  if (real == 0.0) return {};
  int exponent = 0;
  const double fraction = std::frexp(real, &exponent);  // real = fraction * 2^exponent, [0.5, 1)
  int64_t m = static_cast<int64_t>(std::llround(std::ldexp(fraction, 31)));  // [2^30, 2^31]
  if (m == (int64_t{1} << 31)) {
    m /= 2;
    ++exponent;
  }
  int shift = 31 - exponent;  // real = m * 2^-(31 - exponent)
  if (shift > 93) return {};  // below the representable range: treated as zero
  while (shift < 0) {          // only when real >= 2^31, rejected above
    m *= 2;
    ++shift;
  }
  return {static_cast<int32_t>(m), shift};
}

double to_real(FixedPointMultiplier m) { return std::ldexp(static_cast<double>(m.multiplier), -m.shift); }

int64_t apply_multiplier(int64_t x, FixedPointMultiplier m) {
  const Int128 product = static_cast<Int128>(x) * m.multiplier;
  return round_shift_right(product, m.shift);
}

int64_t resize_linear_coordinate(int64_t numerator, int64_t denominator, int64_t length) {
  if (denominator <= 0) throw std::invalid_argument("resize coordinate denominator must be > 0");
  const Int128 scaled = static_cast<Int128>(numerator) * (int64_t{1} << kResizeFractionBits) +
                        denominator / 2;
  Int128 c = scaled / denominator;  // truncates toward zero
  if (c * denominator != scaled && scaled < 0) --c;  // floor
  const int64_t hi = (length > 0 ? length - 1 : 0) * (int64_t{1} << kResizeFractionBits);
  if (c < 0) return 0;
  if (c > hi) return hi;
  return static_cast<int64_t>(c);
}

float symmetric_scale(float threshold, int bits) {
  if (!(threshold > 0.0f) || !std::isfinite(threshold)) return 1.0f;
  const float qmax = static_cast<float>((int64_t{1} << (bits - 1)) - 1);
  const float scale = threshold / qmax;
  return scale > 0.0f ? scale : std::numeric_limits<float>::min();
}

FixedPointMultiplier requantization_multiplier(double in_scale, double out_scale) {
  return to_fixed_point(in_scale / out_scale);
}

namespace {
template <typename T>
T quantize_to(float x, float scale) {
  if (std::isnan(x)) return 0;
  const double q = std::nearbyint(static_cast<double>(x) / static_cast<double>(scale));
  if (q <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (q >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(q);
}
}  // namespace

int8_t quantize_int8(float x, float scale) { return quantize_to<int8_t>(x, scale); }
int16_t quantize_int16(float x, float scale) { return quantize_to<int16_t>(x, scale); }

int32_t quantize_bias(float bias, double input_scale, double weight_scale) {
  const double q = std::nearbyint(static_cast<double>(bias) / (input_scale * weight_scale));
  if (std::isnan(q)) return 0;
  if (q <= static_cast<double>(INT32_MIN)) return INT32_MIN;
  if (q >= static_cast<double>(INT32_MAX)) return INT32_MAX;
  return static_cast<int32_t>(q);
}

LutInt8 build_lut_int8(const std::function<double(double)>& f, float in_scale, float out_scale) {
  std::vector<float> values(256);
  for (int q = -128; q <= 127; ++q) {
    values[static_cast<size_t>(q + 128)] = static_cast<float>(f(static_cast<double>(q) * in_scale));
  }
  return lut_int8_from_values(values, out_scale);
}

LutInt8 lut_int8_from_values(const std::vector<float>& values, float out_scale) {
  if (values.size() != 256) throw std::invalid_argument("an int8 table needs 256 values");
  LutInt8 lut;
  for (size_t i = 0; i < 256; ++i) lut.table[i] = quantize_int8(values[i], out_scale);
  return lut;
}

int16_t LutInt16::lookup(int16_t q) const {
  const int32_t offset = static_cast<int32_t>(q) + 32768;  // [0, 65535]
  const int32_t k = offset >> 8;
  const int32_t r = offset & 0xff;
  const int64_t delta = static_cast<int64_t>(knots[static_cast<size_t>(k) + 1]) - knots[static_cast<size_t>(k)];
  return saturate<int16_t>(knots[static_cast<size_t>(k)] + round_shift_right(delta * r, 8));
}

double lut_int16_knot_input(int k, float in_scale) {
  return static_cast<double>(-32768 + 256 * k) * in_scale;
}

LutInt16 build_lut_int16(const std::function<double(double)>& f, float in_scale, float out_scale) {
  std::vector<float> values(257);
  for (int k = 0; k <= 256; ++k) {
    values[static_cast<size_t>(k)] = static_cast<float>(f(lut_int16_knot_input(k, in_scale)));
  }
  return lut_int16_from_values(values, out_scale);
}

LutInt16 lut_int16_from_values(const std::vector<float>& values, float out_scale) {
  if (values.size() != 257) throw std::invalid_argument("an int16 table needs 257 knot values");
  LutInt16 lut;
  for (size_t k = 0; k < 257; ++k) {
    double y = std::nearbyint(static_cast<double>(values[k]) / out_scale);
    if (std::isnan(y)) y = 0;
    // Knots may exceed int16 (the interpolation saturates); keep them in int32 range.
    y = std::fmin(std::fmax(y, -1073741824.0), 1073741823.0);
    lut.knots[k] = static_cast<int32_t>(y);
  }
  return lut;
}

}  // namespace openbpu::simulator
