#include "openbpu/base/float16.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace openbpu::base {

uint16_t Float16::from_float(float value) {
  uint32_t f;
  std::memcpy(&f, &value, sizeof f);
  const uint32_t sign = (f >> 16) & 0x8000u;
  const uint32_t abs = f & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u |
                                 (abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0u));
  }
  if (abs >= 0x477ff000u) {  // rounds to >= 65520: overflow to inf
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (abs < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);  // < 2^-25 rounds to 0
    const uint32_t exponent = abs >> 23;
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - exponent;  // 14..24
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  // normal: rebias exponent, round mantissa to 10 bits (nearest even)
  uint32_t half = ((abs - 0x38000000u) >> 13);
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

float Float16::to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t f;
  if (exponent == 0) {
    if (mantissa == 0) {
      f = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mantissa <<= 1;
      } while ((mantissa & 0x400u) == 0);
      f = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mantissa & 0x3ffu) << 13);
    }
  } else if (exponent == 0x1f) {
    f = sign | 0x7f800000u | (mantissa << 13);
  } else {
    f = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  }
  float out;
  std::memcpy(&out, &f, sizeof out);
  return out;
}

namespace {

#if defined(__x86_64__)
// 16 values a step; returns how many were converted.
__attribute__((target("avx512f"))) int64_t to_float_avx512(const uint16_t* in, float* out,
                                                           int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    // Exponent all ones, mantissa non-zero, quiet bit clear: a signalling NaN.
    const __m256i exp_mask = _mm256_set1_epi16(0x7c00), quiet = _mm256_set1_epi16(0x0200);
    const __m256i is_max_exp = _mm256_cmpeq_epi16(_mm256_and_si256(h, exp_mask), exp_mask);
    const __m256i low = _mm256_and_si256(h, _mm256_set1_epi16(0x01ff));
    const __m256i some_low =
        _mm256_xor_si256(_mm256_cmpeq_epi16(low, _mm256_setzero_si256()), _mm256_set1_epi16(-1));
    const __m256i quiet_clear =
        _mm256_cmpeq_epi16(_mm256_and_si256(h, quiet), _mm256_setzero_si256());
    const __m256i signalling =
        _mm256_and_si256(is_max_exp, _mm256_and_si256(some_low, quiet_clear));
    if (!_mm256_testz_si256(signalling, signalling)) {
      for (int64_t j = i; j < i + 16; ++j) out[j] = Float16::to_float(in[j]);
      continue;
    }
    _mm512_storeu_ps(out + i, _mm512_cvtph_ps(h));
  }
  return i;
}

__attribute__((target("avx512f"))) int64_t to_half_avx512(const float* in, uint16_t* out,
                                                          int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), h);
  }
  return i;
}

__attribute__((target("avx512f"))) int64_t round_avx512(float* values, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(values + i), _MM_FROUND_TO_NEAREST_INT);
    _mm512_storeu_ps(values + i, _mm512_cvtph_ps(h));  // a quiet NaN stays one
  }
  return i;
}
#endif

#if defined(__x86_64__)
bool has_avx512f() {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  return avx512;
}
#endif

}  // namespace

void round_to_float16(float* values, int64_t n) {
  int64_t i = 0;
#if defined(__x86_64__)
  if (has_avx512f()) i = round_avx512(values, n);
#endif
  for (; i < n; ++i) values[i] = Float16::to_float(Float16::from_float(values[i]));
}

void float16_to_float(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
#if defined(__x86_64__)
  if (has_avx512f()) i = to_float_avx512(in, out, n);
#endif
  for (; i < n; ++i) out[i] = Float16::to_float(in[i]);
}

void float_to_float16(const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
#if defined(__x86_64__)
  if (has_avx512f()) i = to_half_avx512(in, out, n);
#endif
  for (; i < n; ++i) out[i] = Float16::from_float(in[i]);
}

uint16_t BFloat16::from_float(float value) {
  uint32_t f;
  std::memcpy(&f, &value, sizeof f);
  if ((f & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((f >> 16) | 0x40u);  // quiet nan
  const uint32_t rounding = 0x7fffu + ((f >> 16) & 1u);
  return static_cast<uint16_t>((f + rounding) >> 16);
}

}  // namespace openbpu::base
