// Internal: LutInt16::lookup (integer_arithmetic.h) on sixteen int32 lanes with AVX-512 gathers,
// for the kLut rows (integer_arithmetic.cc) and the kLutProduct rows (elementwise.cc).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "openbpu/simulator/integer_arithmetic.h"

namespace openbpu::simulator {

// q: int16 values in int32 lanes; lanes outside `in` read knot 0 and are left to the caller.
// The table must fit int32 (lut_int16_fits_int32): then the interpolation below is the
// definition's, and the result is saturated to int16 as lookup does.
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m512i lut_int16_lanes(const LutInt16& t,
                                                                                   __m512i q,
                                                                                   __mmask16 in) {
  const __m512i bias = _mm512_set1_epi32(32768), low = _mm512_set1_epi32(255),
                half = _mm512_set1_epi32(128);
  const int* knots = reinterpret_cast<const int*>(t.knots.data());
  const __m512i offset = _mm512_add_epi32(q, bias);
  const __m512i k = _mm512_srli_epi32(offset, 8), r = _mm512_and_si512(offset, low);
  const __m512i lo = _mm512_mask_i32gather_epi32(bias, in, k, knots, 4),
                hi = _mm512_mask_i32gather_epi32(bias, in, k, knots + 1, 4);
  const __m512i step =
      _mm512_srai_epi32(_mm512_add_epi32(_mm512_mullo_epi32(_mm512_sub_epi32(hi, lo), r), half), 8);
  const __m512i v = _mm512_add_epi32(lo, step);
  return _mm512_min_epi32(_mm512_max_epi32(v, _mm512_set1_epi32(-32768)), _mm512_set1_epi32(32767));
}

}  // namespace openbpu::simulator
#endif
