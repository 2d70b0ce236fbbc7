// The tiled convolution engine's products on AMX-INT8 tiles (conv_tile.h, amx_products): a
// 2×2 grid of int32 accumulator tiles, 32 pixels × 32 output channels, over 64-value steps of
// the patches and the weights packed [block][step][lane][4], which is the layout of an AMX B
// tile. Host path "amx" (host_isa.h version 3).
#include <algorithm>
#include <cstring>

#include "conv_tile.h"

namespace openbpu::simulator::functional {

#if OPENBPU_HOST_X86

namespace {

#define OPENBPU_TARGET_AMX \
  __attribute__((target("avx2,fma,bmi,bmi2,avx512f,avx512bw,avx512vl,amx-tile,amx-int8")))

// Keeps the compiler from moving memory accesses across a tile load or store (the intrinsics
// are asm statements that name no memory).
inline void memory_barrier() {
  asm volatile("" ::: "memory");
}

// ldtilecfg's 64-byte operand: palette 1, tiles 0-7 of 16 rows × 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

}  // namespace

// Tiles: 0-3 accumulators C[pixel tile][block], 4-5 patches, 6-7 weights.
OPENBPU_TARGET_AMX void amx_begin() {
  TileConfig c;
  for (int t = 0; t < 8; ++t) {
    c.colsb[t] = 64;
    c.rows[t] = 16;
  }
  memory_barrier();  // ldtilecfg names 8 bytes of c: the stores to the rest must happen
  _tile_loadconfig(&c);
}

OPENBPU_TARGET_AMX void amx_end() {
  _tile_release();
}

namespace {

// The int32 sums of 32 pixels (patch rows lp bytes apart from a) times 32 output channels
// (weight blocks b0 and b1, 64 bytes a step) over the steps k of the 16-step tiles `ks`, to
// out[p·stride + j] (j < 16: b0's lanes): signed patches by tdpbssd, unsigned ones by tdpbusd.
template <bool kUnsigned>
OPENBPU_TARGET_AMX void tile_2x2(const int8_t* a, int64_t lp, const int8_t* b0, const int8_t* b1,
                                 const int64_t* ks, int64_t count, int32_t* out, int64_t stride) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  memory_barrier();
  for (int64_t i = 0; i < count; ++i) {
    const int64_t k = ks[i];
    _tile_loadd(4, a + 4 * k, lp);
    _tile_loadd(5, a + 16 * lp + 4 * k, lp);
    _tile_loadd(6, b0 + 64 * k, 64);
    _tile_loadd(7, b1 + 64 * k, 64);
    if constexpr (kUnsigned) {
      _tile_dpbusd(0, 4, 6);
      _tile_dpbusd(1, 4, 7);
      _tile_dpbusd(2, 5, 6);
      _tile_dpbusd(3, 5, 7);
    } else {
      _tile_dpbssd(0, 4, 6);
      _tile_dpbssd(1, 4, 7);
      _tile_dpbssd(2, 5, 6);
      _tile_dpbssd(3, 5, 7);
    }
  }
  const int64_t bytes = 4 * stride;
  _tile_stored(0, out, bytes);
  _tile_stored(1, out + 16, bytes);
  _tile_stored(2, out + 16 * stride, bytes);
  _tile_stored(3, out + 16 * stride + 16, bytes);
  memory_barrier();
}

// acc[p·M + m] += sums[p·stride + m] · 2^shift for p < count, m < M (a shift: the AMX target
// has no 64-bit vector multiply).
OPENBPU_TARGET_AMX void add_sums(const int32_t* sums, int64_t stride, int shift, int64_t count,
                                 int64_t M, int64_t* acc) {
  for (int64_t p = 0; p < count; ++p) {
    int64_t* __restrict to = acc + p * M;
    const int32_t* __restrict from = sums + p * stride;
    for (int64_t m = 0; m < M; ++m) to[m] += int64_t{from[m]} << shift;
  }
}

// acc += 2^shift · the products of byte patches (signed, or unsigned) over the used segments:
// int32 tiles over the used steps in chunks of 16384 values (each product below 2^15 in
// magnitude: 65536 would be exact; a shorter chunk is cheap to test), added to acc after each.
template <bool kUnsigned>
OPENBPU_TARGET_AMX void byte_products(const TileWeights<int8_t>& w, int64_t M, const uint8_t* used,
                                      const int8_t* patch, int64_t count, int shift, int32_t* sums,
                                      int64_t* acc) {
  constexpr int64_t kChunkTiles = (int64_t{1} << 14) / 64;
  const int64_t lp = w.layout.length(), stride = amx_sums_stride(w.B);
  int64_t ks[kChunkTiles];
  int64_t n = 0;
  auto flush = [&] {
    for (int64_t b = 0; b < w.B; b += 2) {
      const int8_t* b0 = w.packed + b * w.wb;
      const int8_t* b1 =
          b + 1 < w.B ? b0 + w.wb : b0;  // an odd last block: its twin's sums land in the padding
      for (int64_t first = 0; first < count; first += 32) {
        tile_2x2<kUnsigned>(patch + first * lp, lp, b0, b1, ks, n,
                            sums + first * stride + b * kTileLanes, stride);
      }
    }
    add_sums(sums, stride, shift, count, M, acc);
    n = 0;
  };
  for (int64_t s = 0; s < w.layout.segments; ++s) {
    if (!used[s]) continue;
    for (int64_t k = s * w.T; k < (s + 1) * w.T; k += 16) {
      ks[n++] = k;
      if (n == kChunkTiles) flush();
    }
  }
  if (n > 0) flush();
}

}  // namespace

template <>
OPENBPU_TARGET_AMX void amx_products<int8_t>(const TileWeights<int8_t>& w, int64_t M,
                                             const uint8_t* used, const int8_t* patch, int64_t,
                                             int64_t count, int8_t*, int32_t* sums, int64_t* acc) {
  byte_products<false>(w, M, used, patch, count, 0, sums, acc);
}

// int16 patches: x = 256·hi + lo with hi = x >> 8 (signed) and lo = x & 0xFF (unsigned).
template <>
OPENBPU_TARGET_AMX void amx_products<int16_t>(const TileWeights<int8_t>& w, int64_t M,
                                              const uint8_t* used, const int16_t* patch,
                                              int64_t rows, int64_t count, int8_t* bytes,
                                              int32_t* sums, int64_t* acc) {
  const int64_t n = rows * w.layout.length();
  int8_t* __restrict hi = bytes;
  uint8_t* __restrict lo = reinterpret_cast<uint8_t*>(bytes + n);
  for (int64_t i = 0; i < n; ++i) {
    hi[i] = static_cast<int8_t>(patch[i] >> 8);
    lo[i] = static_cast<uint8_t>(patch[i] & 0xFF);
  }
  byte_products<false>(w, M, used, hi, count, 8, sums, acc);
  byte_products<true>(w, M, used, bytes + n, count, 0, sums, acc);
}

#endif

}  // namespace openbpu::simulator::functional
