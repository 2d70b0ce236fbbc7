// The 16-bit float types: IEEE 754 binary16 and bfloat16, stored as their bit patterns. The one
// codec of the project (kernels, runtime and board tools convert through it).
#pragma once

#include <cstdint>
#include <cstring>

namespace openbpu::base {

// IEEE 754 binary16. Conversions round to nearest even; a NaN keeps its sign and the top bits
// of its payload, and stays a NaN.
struct Float16 {
  uint16_t bits = 0;
  Float16() = default;
  explicit Float16(float value) : bits(from_float(value)) {}
  explicit operator float() const { return to_float(bits); }
  static uint16_t from_float(float value);
  static float to_float(uint16_t bits);
  static Float16 from_bits(uint16_t b) {
    Float16 h;
    h.bits = b;
    return h;
  }
};

// Float16::to_float / from_float over n values, the same bits element for element (F16C or
// AVX-512 conversions where the CPU has them; a block holding a signalling NaN, which the
// hardware would quieten, is converted one value at a time).
void float16_to_float(const uint16_t* in, float* out, int64_t n);
void float_to_float16(const float* in, uint16_t* out, int64_t n);
// values[i] = to_float(from_float(values[i])) in place: float32 storage of float16 values.
void round_to_float16(float* values, int64_t n);

// bfloat16 (the upper half of a float32), round to nearest even on conversion.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float value) : bits(from_float(value)) {}
  explicit operator float() const { return to_float(bits); }
  static uint16_t from_float(float value);
  static float to_float(uint16_t b) {
    uint32_t u = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  }
};

}  // namespace openbpu::base
