// Internal: the convolution engine's register tile on AVX-512 VNNI — eight output pixels times
// one or two blocks of sixteen output channels, exact int32 partial sums (conv.cc).
#pragma once

#include <cstdint>
#include <cstring>
#include <new>

#include "isa_clones.h"

namespace openbpu::simulator::functional {

// Per activation type: kStep input values per 32-bit lane and instruction (vpdpbusd: four u8
// times s8; vpdpwssd: two s16 times s16), the packed weights' type, and how many input values a
// chunk may sum in int32: int8 inputs are offset to u8 (x + 128, corrected by 128·Σw), so a
// lane's sum is at most 255·128 per value, below 2^31 for 65536 values; int16 products are at
// most 2^22, so 256 of them stay within 2^30.
template <typename TX>
struct TileTraits;
template <>
struct TileTraits<int8_t> {
  static constexpr int64_t kStep = 4;
  static constexpr int64_t kChunk = int64_t{1} << 16;
  using Weight = int8_t;
};
template <>
struct TileTraits<int16_t> {
  static constexpr int64_t kStep = 2;
  static constexpr int64_t kChunk = 256;
  using Weight = int16_t;
};

inline constexpr int64_t kTilePixels = 8;
inline constexpr int64_t kTileLanes = 16;

// Where a tap's Cg channels sit in a tiled patch: in segments of whole `align` elements (a step
// of the VNNI tile, 64 for AMX tiles), a tap per segment (any convolution: a tile can skip taps
// no pixel uses) or a kernel row per segment (stride-1 columns, the taps of a row adjacent: a
// run of valid taps is one copy when pixels are dense).
struct PatchLayout {
  bool rows;
  int64_t KW, Cg, segment, segments;  // elements per segment
  PatchLayout(int64_t KH, int64_t kw, int64_t cg, int64_t align, bool by_rows)
      : rows(by_rows),
        KW(kw),
        Cg(cg),
        segment(((rows ? KW : 1) * Cg + align - 1) / align * align),
        segments(rows ? KH : KH * KW) {}
  int64_t segment_of(int64_t kh, int64_t kw) const { return rows ? kh : kh * KW + kw; }
  int64_t offset(int64_t kh, int64_t kw) const { return rows ? kh * segment + kw * Cg : (kh * KW + kw) * segment; }
  int64_t length() const { return segments * segment; }
};

// The weights of a group-1 convolution packed for vnni_tile: per block of sixteen output
// channels [step][lane][kStep] in the patch layout (zeros in its padding); and Σw per segment and
// channel (int8: the correction of the u8 offset).
template <typename TX>
struct TileWeights {
  PatchLayout layout;
  int64_t T, B, wb;  // steps per segment, blocks of lanes, elements per block
  const typename TileTraits<TX>::Weight* packed;
  const int64_t* sums;  // [segment][B·16]
};

// The packed form of weights [M][KH][KW][Cg] (int8) in the layout by kernel rows or by taps
// with segments of `align` elements (a multiple of the step), kept per thread across instructions
// and runs, as a real BPU reads weights the compiler laid out once (packing costs as much as a
// small layer's multiply-adds): an entry is found by the weights' address and geometry and used
// only while its copy of the weights equals the bytes there, so it is never stale. Valid until the
// thread's next call. Throws std::bad_alloc.
template <typename TX>
TileWeights<TX> tile_weights(const int8_t* weights, int64_t M, int64_t KH, int64_t KW, int64_t Cg,
                             bool rows, int64_t align);

#if OPENBPU_HOST_X86
// On AMX-INT8 tiles (conv_amx.cc; host path amx): acc[p·M + m] += the products of the `count`
// pixels' patches (rows of w.layout.length() elements; `rows` of them readable, count rounded up
// to 32) with the weights (packed with 64-element segments) over the used segments. int8 patches
// are signed; int16 ones are split into bytes in `bytes` (2 · rows · length). sums: rows ×
// amx_sums_stride(w.B) int32.
inline int64_t amx_sums_stride(int64_t blocks) {
  return (blocks + 1) / 2 * 2 * kTileLanes;
}
// amx_products runs between amx_begin() and amx_end() on its thread (tile configuration).
void amx_begin();
void amx_end();
template <typename TX>
void amx_products(const TileWeights<int8_t>& w, int64_t M, const uint8_t* used, const TX* patch,
                  int64_t rows, int64_t count, int8_t* bytes, int32_t* sums, int64_t* acc);

// memcpy for the short runs of a patch (one tap's channels) without a library call: whole
// 4/8/16/32/64-byte loads and stores (the smallest that covers a run's tail; masked byte stores
// are slow on some cores), so it writes up to 63 bytes past dst + n, and reads past src + n only
// while that stays below src_end (a masked load past it).
OPENBPU_TARGET_AVX512 inline void copy_run(uint8_t* dst, const uint8_t* src, int64_t n, const uint8_t* src_end) {
  for (; n >= 64; n -= 64, src += 64, dst += 64) _mm512_storeu_si512(dst, _mm512_loadu_si512(src));
  if (n <= 0) return;
  const int64_t width = n <= 4 ? 4 : n <= 8 ? 8 : n <= 16 ? 16 : n <= 32 ? 32 : 64;
  if (src_end - src < width) {
    _mm512_storeu_si512(dst, _mm512_maskz_loadu_epi8(_bzhi_u64(~uint64_t{0}, static_cast<unsigned>(n)), src));
    return;
  }
  switch (width) {
    case 4: return _mm_storeu_si32(dst, _mm_loadu_si32(src));
    case 8: return _mm_storeu_si64(dst, _mm_loadu_si64(src));
    case 16: return _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
    case 32:
      return _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)));
    default: return _mm512_storeu_si512(dst, _mm512_loadu_si512(src));
  }
}

// out[p][16·b + j] = init[16·b + j] + Σ_{s0 <= s < s1} Σ_e patch[p·lp + s·kStep + e] ·
// w[b·wb + (s·16 + j)·kStep + e] for p < 8, b < kBlocks, j < 16 (init null: 0): weights packed
// [block][step][lane][kStep], int8 patches already offset to u8. (s1 - s0)·kStep must not exceed
// TileTraits<TX>::kChunk, and |init| + the chunk's sums must stay within int32 (the caller's
// bound).
template <typename TX, int kBlocks>
OPENBPU_TARGET_AVX512 inline void vnni_tile(const TX* patch, int64_t lp, const typename TileTraits<TX>::Weight* w,
                                            int64_t wb, int64_t s0, int64_t s1, const int32_t* init, int32_t* out) {
  constexpr int64_t kStep = TileTraits<TX>::kStep;
  __m512i acc[kTilePixels][kBlocks];
  for (int b = 0; b < kBlocks; ++b) {
    const __m512i first = init != nullptr ? _mm512_loadu_si512(init + b * kTileLanes) : _mm512_setzero_si512();
    for (auto& row : acc) row[b] = first;
  }
  for (int64_t s = s0; s < s1; ++s) {
    __m512i wv[kBlocks];
    for (int b = 0; b < kBlocks; ++b) wv[b] = _mm512_loadu_si512(w + b * wb + s * kTileLanes * kStep);
    for (int64_t p = 0; p < kTilePixels; ++p) {
      int32_t four;
      std::memcpy(&four, patch + p * lp + s * kStep, sizeof(four));
      const __m512i x = _mm512_set1_epi32(four);
      for (int b = 0; b < kBlocks; ++b) {
        if constexpr (sizeof(TX) == 1) {
          acc[p][b] = _mm512_dpbusd_epi32(acc[p][b], x, wv[b]);
        } else {
          acc[p][b] = _mm512_dpwssd_epi32(acc[p][b], x, wv[b]);
        }
      }
    }
  }
  for (int64_t p = 0; p < kTilePixels; ++p) {
    for (int b = 0; b < kBlocks; ++b) {
      _mm512_storeu_si512(out + (p * kBlocks + b) * kTileLanes, acc[p][b]);
    }
  }
}
#endif

}  // namespace openbpu::simulator::functional
