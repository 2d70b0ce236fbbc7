// Internal: the convolution engine's inner product on each host ISA (isa_clones.h) — four
// output channels' dot products over one input patch, exact.
#pragma once

#include <algorithm>
#include <cstdint>

#include "access.h"
#include "isa_clones.h"

namespace openbpu::simulator::functional {

// Σ_i a[i]·w_j[i] (i < n) for four weight rows w_j, exact, on each host ISA (isa_clones.h).
// wsum[j] = Σ_i w_j[i] (used by the VNNI form).
template <typename TX>
OPENBPU_INLINE void dot4_scalar(const TX* a, const int8_t* const w[4], const int64_t*, int64_t n, int64_t out[4]) {
  for (int j = 0; j < 4; ++j) out[j] = dot(a, w[j], n);
}

#if OPENBPU_HOST_X86
// 16 values widened to int16 (vpmaddwd's operands).
OPENBPU_TARGET_AVX2 inline __m256i widen16(const int8_t* p) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
OPENBPU_TARGET_AVX2 inline __m256i widen16(const int16_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// 16-bit products summed pairwise into int32 lanes (vpmaddwd). A product is at most 2^14
// (int8 x) or 2^22 (int16 x), so chunks of 64 Ki / 256 elements keep the lanes' total within
// 2^30; the chunk's tail (under 16 elements) is the scalar dot.
template <typename TX>
OPENBPU_TARGET_AVX2 inline void dot4_avx2(const TX* a, const int8_t* const w[4], const int64_t*, int64_t n,
                                          int64_t out[4]) {
  constexpr int64_t kChunk = sizeof(TX) == 1 ? int64_t{1} << 16 : 256;
  int64_t total[4] = {0, 0, 0, 0};
  for (int64_t begin = 0; begin < n; begin += kChunk) {
    const int64_t end = std::min(n, begin + kChunk);
    __m256i sum[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    int64_t i = begin;
    for (; i + 16 <= end; i += 16) {
      const __m256i x = widen16(a + i);
      for (int j = 0; j < 4; ++j) sum[j] = _mm256_add_epi32(sum[j], _mm256_madd_epi16(x, widen16(w[j] + i)));
    }
    for (int j = 0; j < 4; ++j) {
      __m128i h = _mm_add_epi32(_mm256_castsi256_si128(sum[j]), _mm256_extracti128_si256(sum[j], 1));
      h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4e));
      h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xb1));
      total[j] += _mm_cvtsi128_si32(h) + dot(a + i, w[j] + i, end - i);
    }
  }
  for (int j = 0; j < 4; ++j) out[j] = total[j];
}

// VNNI multiplies u8 by s8: (a + 128)·w summed, minus 128·Σw. A lane gains at most
// 4·255·128 per step of 64 bytes, so a chunk of 64 KiB keeps the sum of the 16 lanes within
// int32; bytes past n are loaded as zeros (w = 0 there).
OPENBPU_TARGET_AVX512 inline void dot4_vnni(const int8_t* a, const int8_t* const w[4], const int64_t* wsum, int64_t n,
                                            int64_t out[4]) {
  constexpr int64_t kChunk = int64_t{1} << 16;
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  int64_t total[4] = {0, 0, 0, 0};
  for (int64_t begin = 0; begin < n; begin += kChunk) {
    const int64_t end = std::min(n, begin + kChunk);
    __m512i sum[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
    for (int64_t i = begin; i < end; i += 64) {
      const __mmask64 mask = end - i >= 64 ? ~__mmask64{0} : _bzhi_u64(~uint64_t{0}, static_cast<unsigned>(end - i));
      const __m512i x = _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, a + i), flip);
      for (int j = 0; j < 4; ++j) sum[j] = _mm512_dpbusd_epi32(sum[j], x, _mm512_maskz_loadu_epi8(mask, w[j] + i));
    }
    for (int j = 0; j < 4; ++j) total[j] += _mm512_reduce_add_epi32(sum[j]);
  }
  for (int j = 0; j < 4; ++j) out[j] = total[j] - 128 * wsum[j];
}

// int16 x: vpdpwssd on the weights widened to int16; products of at most 2^22, so chunks of
// 256 elements keep the lanes' total within 2^30.
OPENBPU_TARGET_AVX512 inline void dot4_vnni(const int16_t* a, const int8_t* const w[4], const int64_t*, int64_t n,
                                            int64_t out[4]) {
  constexpr int64_t kChunk = 256;
  int64_t total[4] = {0, 0, 0, 0};
  for (int64_t begin = 0; begin < n; begin += kChunk) {
    const int64_t end = std::min(n, begin + kChunk);
    __m512i sum[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
    for (int64_t i = begin; i < end; i += 32) {
      const __mmask32 mask = end - i >= 32 ? ~__mmask32{0} : _bzhi_u32(~uint32_t{0}, static_cast<unsigned>(end - i));
      const __m512i x = _mm512_maskz_loadu_epi16(mask, a + i);
      for (int j = 0; j < 4; ++j) {
        sum[j] = _mm512_dpwssd_epi32(sum[j], x, _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(mask, w[j] + i)));
      }
    }
    for (int j = 0; j < 4; ++j) total[j] += _mm512_reduce_add_epi32(sum[j]);
  }
  for (int j = 0; j < 4; ++j) out[j] = total[j];
}
#endif

template <simulator::HostIsa kIsa, typename TX>
OPENBPU_INLINE void dot4(const TX* a, const int8_t* const w[4], const int64_t* wsum, int64_t n, int64_t out[4]) {
#if OPENBPU_HOST_X86
  if constexpr (kIsa == simulator::HostIsa::kAvx512) return dot4_vnni(a, w, wsum, n, out);
  if constexpr (kIsa == simulator::HostIsa::kAvx2) return dot4_avx2(a, w, wsum, n, out);
#endif
  dot4_scalar(a, w, wsum, n, out);
}

}  // namespace openbpu::simulator::functional
