// Functional units kConv and kConvTranspose (isa.h, ConvInstruction).
//
// Both share the tap tables below (which input position a kernel tap reads) and four engines:
// - lanes (group 1, at most 16 output channels, on AVX-512 VNNI): 16 output pixels of a row in
//   a register's lanes, their inputs gathered from memory per tap, a register per channel
//   (conv_lanes.cc);
// - tiled (other group-1 convolutions on AVX-512 VNNI): pixels in panels, their patches gathered
//   once, register tiles of 8 pixels × 16/32 output channels against weights packed per block
//   (conv_tile.h, tile_weights.cc) — on the amx path AMX tiles of 32 × 32 (conv_amx.cc);
// - depthwise with contiguous channels: registers of channels over a pixel's taps (on AVX-512
//   runs of pixels that share their taps);
// - general (every other case and path): per output pixel and group the zero-filled patch
//   [KH][KW][Cg], four output channels' dot products per pass (dot4.h).
// Every engine ends in one output stage (bias, residual, requantization, clip) per batch of pixels.
// Sums are exact: int32 partial sums over chunks short enough not to overflow, added in int64.
#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "openbpu/simulator/integer_arithmetic.h"
#include "access.h"
#include "conv_stage.h"
#include "conv_tile.h"
#include "dot4.h"
#include "parallel.h"
#include "isa_clones.h"
#include "scratch.h"
#include "units.h"

namespace openbpu::simulator::functional {

namespace {

using isa::ElementType;
using simulator::HostIsa;

// The multipliers of a MultiplierEntry[count] table at `address`.
ScratchVector<FixedPointMultiplier> read_multipliers(const uint8_t* memory, uint32_t address,
                                                   int64_t count) {
  ScratchVector<FixedPointMultiplier> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out[size_t(i)] = read_multiplier(memory, address + 8 * uint64_t(i));
  return out;
}

// The kernel taps of each output index o < out that read the input (length `in`).
TapTable tap_table(bool transpose, int64_t out, int64_t in, int64_t kernel, int64_t stride,
                   int64_t dilation, int64_t pad) {
  ScratchVector<Tap> taps;
  taps.reserve(size_t(out * kernel));  // one block, not one per growth
  ScratchVector<int64_t> start(size_t(out + 1), 0);
  for (int64_t o = 0; o < out; ++o) {
    start[size_t(o)] = int64_t(taps.size());
    for (int64_t k = 0; k < kernel; ++k) {
      if (transpose) {
        const int64_t t = o + pad - k * dilation;
        if (t >= 0 && t % stride == 0 && t / stride < in) taps.push_back({k, t / stride});
      } else {
        const int64_t i = o * stride - pad + k * dilation;
        if (i >= 0 && i < in) taps.push_back({k, i});
      }
    }
  }
  start[size_t(out)] = int64_t(taps.size());
  return {std::move(taps), std::move(start)};
}

// acc[m] += the residual's rescaled value, read with element stride rs (bytes).
template <typename TR>
OPENBPU_INLINE void add_residual(const PreparedTable& t, const uint8_t* r, int64_t rs, int64_t M, int64_t* acc) {
  for (int64_t m = 0; m < M; ++m) {
    acc[m] += apply_prepared(load<TR>(r + m * rs), t.multiplier[size_t(m)], t.rounding[size_t(m)], t.shift[size_t(m)]);
  }
}

// The scalar definition of one output: the biased accumulator `a` of channel m requantized,
// saturated to TY and clipped.
template <typename TY>
OPENBPU_INLINE int64_t requantize_clipped(const OutputStage& s, int64_t a, int64_t m) {
  return std::min(std::max(int64_t{saturate<TY>(apply_multiplier(a, s.requant[size_t(m)]))}, s.clip_min), s.clip_max);
}

// a[i] for i < n (n a multiple of M; the biased accumulators) becomes the clipped output value;
// one branch-free loop when every a[i] is an int32 (the prepared multipliers), else per value.
// The restrict-qualified locals keep the tables out of the stores' way so the loops vectorise.
template <typename TY>
OPENBPU_INLINE void requantize_outputs(const OutputStage& s, int64_t* __restrict a, int64_t n) {
  const int64_t lo = s.clip_min, hi = s.clip_max;
  if constexpr (std::is_same_v<TY, int32_t>) {
    for (int64_t i = 0; i < n; ++i) a[i] = std::min(std::max(int64_t{saturate<int32_t>(a[i])}, lo), hi);
    return;
  }
  int64_t least = 0, most = 0;  // min/max reductions vectorise, a running && does not
  for (int64_t i = 0; i < n; ++i) {
    least = std::min(least, a[i]);
    most = std::max(most, a[i]);
  }
  if (least < INT32_MIN || most > INT32_MAX) {
    for (int64_t i = 0; i < n; ++i) a[i] = requantize_clipped<TY>(s, a[i], i % s.M);
    return;
  }
  const int32_t* __restrict mul = s.prepared.multiplier.data();
  const int64_t* __restrict rounding = s.prepared.rounding.data();
  const int64_t* __restrict shift = s.prepared.shift.data();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = saturate<TY>(apply_prepared(static_cast<int32_t>(a[i]), mul[i], rounding[i], shift[i]));
    a[i] = std::min(std::max(v, lo), hi);
  }
}

template <typename TY>
OPENBPU_INLINE void store_outputs(const int64_t* __restrict v, int64_t M, uint8_t* __restrict y, int64_t ys) {
  for (int64_t m = 0; m < M; ++m) store<TY>(y + m * ys, static_cast<TY>(v[m]));
}

#if OPENBPU_HOST_X86
// The output stage of `count` <= kFinishPixels pixels' M contiguous outputs (y[p]) on AVX-512,
// eight channels at a time with their parameters in registers across the pixels: bias; the
// prepared multiplier by vpmuldq (an int32 value is its lane's low half; eight with a value
// outside int32 take the scalar definition), rounding and arithmetic shift; saturation to TY and
// the clip as one clamp (two clamps in a row clamp to the second's images of the first's
// bounds); a narrowing store. `acc`: the pixels' accumulators without bias, [p][M].
template <typename TY>
OPENBPU_TARGET_AVX512 inline void finish_pixels_avx512(const OutputStage& s, const int64_t* acc,
                                                       uint8_t* const* y, int64_t count) {
  const int64_t M = s.M;
  auto clip = [&](int64_t v) { return std::min(std::max(v, s.clip_min), s.clip_max); };
  const __m512i lo = _mm512_set1_epi64(clip(std::numeric_limits<TY>::min()));
  const __m512i hi = _mm512_set1_epi64(clip(std::numeric_limits<TY>::max()));
  // v is an int32 when v + 2^31, unsigned, is below 2^32.
  const __m512i offset = _mm512_set1_epi64(int64_t{1} << 31),
                span = _mm512_set1_epi64(int64_t{1} << 32);
  for (int64_t m = 0; m < M; m += 8) {
    const __mmask8 k = M - m >= 8 ? __mmask8{0xFF} : static_cast<__mmask8>((1u << (M - m)) - 1);
    const __m512i bias = _mm512_maskz_loadu_epi64(k, s.bias.data() + m);
    // Unused for an int32 output (no requantization).
    [[maybe_unused]] __m512i mul = _mm512_setzero_si512(), rounding = mul, shift = mul;
    if constexpr (!std::is_same_v<TY, int32_t>) {
      mul = _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(k, s.prepared.multiplier.data() + m));
      rounding = _mm512_maskz_loadu_epi64(k, s.prepared.rounding.data() + m);
      shift = _mm512_maskz_loadu_epi64(k, s.prepared.shift.data() + m);
    }
    for (int64_t p = 0; p < count; ++p) {
      __m512i v = _mm512_add_epi64(_mm512_maskz_loadu_epi64(k, acc + p * M + m), bias);
      uint8_t* out = y[p] + m * int64_t{sizeof(TY)};
      if constexpr (!std::is_same_v<TY, int32_t>) {
        if (_mm512_mask_cmplt_epu64_mask(k, _mm512_add_epi64(v, offset), span) != k) {
          alignas(64) int64_t lanes[8];
          _mm512_store_si512(lanes, v);
          for (int64_t j = 0; j < std::min<int64_t>(8, M - m); ++j) {
            store<TY>(out + j * int64_t{sizeof(TY)},
                      static_cast<TY>(requantize_clipped<TY>(s, lanes[j], m + j)));
          }
          continue;
        }
        v = _mm512_srav_epi64(_mm512_add_epi64(_mm512_mul_epi32(v, mul), rounding), shift);
      }
      v = _mm512_min_epi64(_mm512_max_epi64(v, lo), hi);
      if constexpr (sizeof(TY) == 1) {
        _mm512_mask_cvtepi64_storeu_epi8(out, k, v);
      } else if constexpr (sizeof(TY) == 2) {
        _mm512_mask_cvtepi64_storeu_epi16(out, k, v);
      } else {
        _mm512_mask_cvtepi64_storeu_epi32(out, k, v);
      }
    }
  }
}
#endif

// The output stage of `count` <= s.batch output pixels from acc[p·M + m], which it
// overwrites; compiled per host ISA, with unit-stride stores for channels that are contiguous in
// memory (the compiler's NHWC layout; on AVX-512 one pass per pixel).
template <typename TY, typename TR>
struct FinishKernel {
  template <HostIsa kIsa>
  OPENBPU_INLINE static void run(const OutputStage& s, uint8_t* const& memory, const Pixel* const& pixels,
                                 const int64_t& count, int64_t* const& acc) {
    const int64_t M = s.M, n = count * M;
    const int64_t ys = s.y.strides[1];
    if constexpr (!std::is_void_v<TR>) {
      const int64_t rs = s.r.strides[1];
      for (int64_t p = 0; p < count; ++p) {
        const Pixel& px = pixels[p];
        const uint8_t* r =
            memory + s.r.address + px.n * s.r.strides[0] + px.oh * s.r.strides[2] + px.ow * s.r.strides[3];
        if (rs == int64_t{sizeof(TR)}) {
          add_residual<TR>(s.residual, r, sizeof(TR), M, acc + p * M);
        } else {
          add_residual<TR>(s.residual, r, rs, M, acc + p * M);
        }
      }
    }
#if OPENBPU_HOST_X86
    if constexpr (kIsa == HostIsa::kAvx512) {
      if (ys == int64_t{sizeof(TY)} && M >= 8) {  // fewer: the passes below, over all pixels at once
        for (int64_t first = 0; first < count; first += kFinishPixels) {
          const int64_t in_batch = std::min(kFinishPixels, count - first);
          uint8_t* y[kFinishPixels];
          for (int64_t p = 0; p < in_batch; ++p) {
            const Pixel& px = pixels[first + p];
            y[p] = memory + s.y.address + px.n * s.y.strides[0] + px.oh * s.y.strides[2] +
                   px.ow * s.y.strides[3];
          }
          finish_pixels_avx512<TY>(s, acc + first * M, y, in_batch);
        }
        return;
      }
    }
#endif
    {
      int64_t* __restrict a = acc;
      const int64_t* __restrict bias = s.bias.data();
      for (int64_t i = 0; i < n; ++i) a[i] += bias[i];
    }
    requantize_outputs<TY>(s, acc, n);
    for (int64_t p = 0; p < count; ++p) {
      const Pixel& px = pixels[p];
      uint8_t* y = memory + s.y.address + px.n * s.y.strides[0] + px.oh * s.y.strides[2] + px.ow * s.y.strides[3];
      if (ys == int64_t{sizeof(TY)}) {
        store_outputs<TY>(acc + p * M, M, y, sizeof(TY));
      } else {
        store_outputs<TY>(acc + p * M, M, y, ys);
      }
    }
  }
};

template <typename TY, typename TR>
void finish_pixels(const OutputStage& s, uint8_t* memory, const Pixel* pixels, int64_t count, int64_t* acc) {
  host_dispatch<FinishKernel<TY, TR>>(s, memory, pixels, count, acc);
}

template <typename TY>
FinishFn finisher_for_residual(ElementType residual, bool has_residual) {
  if (!has_residual) return &finish_pixels<TY, void>;
  return residual == ElementType::kInt16 ? &finish_pixels<TY, int16_t> : &finish_pixels<TY, int8_t>;
}

FinishFn finisher(const OutputStage& s) {
  const bool has_residual = s.r.rank != 0;
  switch (s.y.type) {
    case ElementType::kInt32: return finisher_for_residual<int32_t>(s.r.type, has_residual);
    case ElementType::kInt16: return finisher_for_residual<int16_t>(s.r.type, has_residual);
    default: return finisher_for_residual<int8_t>(s.r.type, has_residual);
  }
}

// Copies `count` elements of TX from `src` (element stride `stride` bytes) to dst.
template <typename TX>
OPENBPU_INLINE void gather(const uint8_t* src, int64_t stride, int64_t count, TX* dst) {
  if (stride == static_cast<int64_t>(sizeof(TX))) {
    std::memcpy(dst, src, static_cast<size_t>(count) * sizeof(TX));
  } else {
    for (int64_t i = 0; i < count; ++i) dst[i] = load<TX>(src + i * stride);
  }
}

// A pixel with few valid taps: their inputs packed into patch[t][Cg] (kernel index tap_k[t]),
// each channel's sum over them of dot products of length Cg, into acc[m_begin, m_end).
template <typename TX>
OPENBPU_INLINE void sparse_taps(const Conv& g, const TapSpan rows, const TapSpan cols,
                                const uint8_t* x, TX* patch, int64_t* tap_k, int64_t m_begin,
                                int64_t m_end, int64_t* acc) {
  const int64_t Cg = g.Cg, L = g.KH * g.KW * Cg;
  int64_t t = 0;
  for (const Tap& r : rows) {
    for (const Tap& c : cols) {
      tap_k[t] = r.k * g.KW + c.k;
      gather<TX>(x + r.i * g.xs[2] + c.i * g.xs[3], g.xs[1], Cg, patch + t * Cg);
      ++t;
    }
  }
  for (int64_t m = m_begin; m < m_end; ++m) {
    int64_t a = 0;
    for (int64_t i = 0; i < t; ++i) a += dot(patch + i * Cg, g.weights + m * L + tap_k[i] * Cg, Cg);
    acc[m] = a;
  }
}

// The general engine: per output pixel and group the patch [KH][KW][Cg] of the input (taps
// that fall outside it are zeros, which add nothing), then one dot product per output channel
// with its weight row, four channels at a time (dot4); on the scalar path pixels with under half
// their taps valid take sparse_taps instead.
template <typename TX, HostIsa kIsa>
OPENBPU_INLINE void conv_general(const Conv& g, const OutputStage& s, FinishFn finish, uint8_t* memory) {
  const int64_t KK = g.KH * g.KW, Cg = g.Cg, L = KK * Cg;
  ScratchVector<TX> patch(static_cast<size_t>(L));
  ScratchVector<int64_t> tap_k(static_cast<size_t>(KK));
  ScratchVector<int64_t> acc(static_cast<size_t>(g.M));
  ScratchVector<int64_t> wsum(static_cast<size_t>(g.M));
  if constexpr (kIsa == HostIsa::kAvx512 && std::is_same_v<TX, int8_t>) {  // VNNI's correction term
    for (int64_t m = 0; m < g.M; ++m) {
      int64_t total = 0;
      for (int64_t i = 0; i < L; ++i) total += g.weights[m * L + i];
      wsum[size_t(m)] = total;
    }
  }
  for (int64_t n = 0; n < g.N; ++n) {
    for (int64_t oh = 0; oh < g.OH; ++oh) {
      const TapSpan rows = g.rows[size_t(oh)];
      for (int64_t ow = 0; ow < g.OW; ++ow) {
        const TapSpan cols = g.cols[size_t(ow)];
        const int64_t taps = static_cast<int64_t>(rows.size() * cols.size());
        for (int64_t grp = 0; grp < g.group; ++grp) {
          const uint8_t* x = memory + g.x_address + n * g.xs[0] + grp * Cg * g.xs[1];
          const int64_t m_end = (grp + 1) * g.Mg;
          // Most taps outside (a strided ConvTranspose): the scalar build sums the valid ones only;
          // the vector paths are faster on the zero-filled patch (measured on PP-OCR det).
          if (kIsa == HostIsa::kScalar && 2 * taps < KK) {
            sparse_taps<TX>(g, rows, cols, x, patch.data(), tap_k.data(), grp * g.Mg, m_end, acc.data());
            continue;
          }
          if (taps != KK) std::fill(patch.begin(), patch.end(), TX{0});
          for (const Tap& r : rows) {
            for (const Tap& c : cols) {
              gather<TX>(x + r.i * g.xs[2] + c.i * g.xs[3], g.xs[1], Cg, patch.data() + (r.k * g.KW + c.k) * Cg);
            }
          }
          for (int64_t m = grp * g.Mg; m < m_end; m += 4) {
            const int8_t* w[4];
            int64_t out[4], ws[4];
            for (int j = 0; j < 4; ++j) {
              const int64_t row = std::min(m + j, m_end - 1);  // past the group's end: a copy, dropped
              w[j] = g.weights + row * L;
              ws[j] = wsum[size_t(row)];
            }
            dot4<kIsa>(patch.data(), w, ws, L, out);
            for (int64_t j = 0; j < 4 && m + j < m_end; ++j) acc[size_t(m + j)] = out[j];
          }
        }
        const Pixel px{n, oh, ow};
        finish(s, memory, &px, 1, acc.data());
      }
    }
  }
}

// kN lanes of T in GCC's generic vectors.
template <typename T, int64_t kN>
using Lanes [[gnu::vector_size(kN * sizeof(T))]] = T;

// The channels a depthwise step handles at once: int32 lanes of one register of the ISA; none
// on the baseline build (SSE2 has no widening loads: its channel loop is faster).
template <HostIsa kIsa>
inline constexpr int64_t kDepthwiseLanes = kIsa == HostIsa::kAvx512 ? 16 : (kIsa == HostIsa::kAvx2 ? 8 : 0);

// Σ over one output pixel's taps of x·w for the channels [c0, c0 + kN), the first n of them into
// out[c] (reads kN channels: past C only within the pixel's padding; wt has a zero there).
template <typename TX, typename Acc, typename Product, int64_t kN>
OPENBPU_INLINE void depthwise_lanes(const Conv& g, const uint8_t* x, const TapSpan rows,
                                    const TapSpan cols, const int16_t* wt, int64_t wc, int64_t c0,
                                    int64_t n, int64_t* out) {
  Lanes<Acc, kN> block{};
  for (const Tap& r : rows) {
    for (const Tap& col : cols) {
      Lanes<TX, kN> xv;
      Lanes<int16_t, kN> wv;
      std::memcpy(&xv, x + r.i * g.xs[2] + col.i * g.xs[3] + c0 * int64_t{sizeof(TX)}, sizeof(xv));
      std::memcpy(&wv, wt + (r.k * g.KW + col.k) * wc + c0, sizeof(wv));
      const Lanes<Product, kN> product =
          __builtin_convertvector(xv, Lanes<Product, kN>) * __builtin_convertvector(wv, Lanes<Product, kN>);
      block += __builtin_convertvector(product, Lanes<Acc, kN>);
    }
  }
  for (int64_t c = 0; c < n; ++c) out[c] = block[c];
}

// The same for the channels [c0, C).
template <typename TX, typename Acc, typename Product>
OPENBPU_INLINE void depthwise_tail(const Conv& g, const uint8_t* x, const TapSpan rows,
                                   const TapSpan cols, const int16_t* wt, int64_t wc, int64_t c0,
                                   int64_t* out) {
  const int64_t n = g.C - c0, xs2 = g.xs[2], xs3 = g.xs[3], KW = g.KW;  // locals: `out` may alias g
  int64_t* __restrict acc = out;
  for (int64_t c = 0; c < n; ++c) acc[c] = 0;
  for (const Tap& r : rows) {
    for (const Tap& col : cols) {
      const uint8_t* __restrict xp = x + r.i * xs2 + col.i * xs3 + c0 * int64_t{sizeof(TX)};
      const int16_t* __restrict w = wt + (r.k * KW + col.k) * wc + c0;
      for (int64_t c = 0; c < n; ++c) {
        acc[c] += static_cast<Product>(Product{load<TX>(xp + c * int64_t{sizeof(TX)})} * w[c]);
      }
    }
  }
}

#if OPENBPU_HOST_X86
// Depthwise sums of kB registers of sixteen channels for kP output pixels sharing one tap list,
// on AVX-512 VNNI: pixel p reads its input from x[p] on, the weights (wt32: int16 zero-extended
// to int32) from w on; taps[2t], taps[2t + 1]: tap t's input byte offset and weight offset. x is
// sign-extended to int32 lanes and the weight sits in the low half of its lane, so that vpdpwssd
// adds x·w + (x's sign half)·0; a weight register serves the kP pixels, a chain per pixel and
// register hides the instruction's latency. The first n sums of pixel p go to out[p] (int64).
template <typename TX, int kP, int kB>
OPENBPU_TARGET_AVX512 inline void depthwise_vnni(const int64_t* taps, int64_t count,
                                                 const uint8_t* const* x, const int32_t* w,
                                                 int64_t* const* out, int64_t n) {
  constexpr int64_t e = sizeof(TX);
  __m512i acc[kP][kB];
  for (int p = 0; p < kP; ++p) {
    for (int b = 0; b < kB; ++b) acc[p][b] = _mm512_setzero_si512();
  }
  for (int64_t t = 0; t < count; ++t) {
    const int64_t xo = taps[2 * t], wo = taps[2 * t + 1];
    __m512i wv[kB];
    for (int b = 0; b < kB; ++b) wv[b] = _mm512_loadu_si512(w + wo + 16 * b);
    for (int p = 0; p < kP; ++p) {
      for (int b = 0; b < kB; ++b) {
        const uint8_t* xp = x[p] + xo + 16 * b * e;
        __m512i xv;
        if constexpr (e == 1) {
          xv = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xp)));
        } else {
          xv = _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xp)));
        }
        acc[p][b] = _mm512_dpwssd_epi32(acc[p][b], xv, wv[b]);
      }
    }
  }
  for (int p = 0; p < kP; ++p) {
    for (int b = 0; b < kB; ++b) {
      alignas(64) int32_t sums[16];
      _mm512_store_si512(sums, acc[p][b]);
      const int64_t k = std::min<int64_t>(16, n - 16 * b);
      for (int64_t c = 0; c < k; ++c) out[p][16 * b + c] = sums[c];
    }
  }
}

// How many output pixels from px on (at most `limit`) share px's taps up to an input offset:
// same row, and each column's taps the lead's shifted by one column distance; shift[j] gets the
// byte offset of pixel j's input.
inline int64_t depthwise_run(const Conv& g, const Pixel& px, int64_t limit, int64_t* shift) {
  const TapSpan lead = g.cols[size_t(px.ow)];
  int64_t count = 1;
  shift[0] = 0;
  for (; count < limit && px.ow + count < g.OW; ++count) {
    const TapSpan c = g.cols[size_t(px.ow + count)];
    if (c.size() != lead.size() || c.empty()) break;
    const int64_t d = c[0].i - lead[0].i;
    bool same = true;
    for (size_t t = 0; t < c.size() && same; ++t)
      same = c[t].k == lead[t].k && c[t].i - lead[t].i == d;
    if (!same) break;
    shift[count] = d * g.xs[3];
  }
  return count;
}

// Up to four output pixels of one row that share their taps (depthwise_run), with their tap list.
struct DepthwiseRun {
  int64_t first;  // the first pixel's index in the batch
  int64_t length;
  const uint8_t* x[4];
  int64_t* taps;  // per tap: input byte offset, weight offset
  int64_t tap_count;
};

// depthwise_pixels on AVX-512 VNNI with int32 sums, kFinishPixels pixels at a time: the batch
// cut into runs of pixels that share their taps, then per pair of channel registers (the
// weights stay in L1 over the batch) the runs four pixels at a time. The runs' tap lists sit
// after the kFinishPixels · C accumulators of `acc` (depthwise_scratch).
template <typename TX>
OPENBPU_TARGET_AVX512 inline void depthwise_pixels_vnni(const Conv& g, const OutputStage& s,
                                                        FinishFn finish, uint8_t* memory,
                                                        const int16_t* wt, const int32_t* wt32,
                                                        int64_t wc, bool padded, int64_t* acc,
                                                        int64_t begin, int64_t end) {
  const int64_t C = g.C, blocks = padded ? (C + 15) / 16 : C / 16, e = sizeof(TX);
  Pixel pixels[kFinishPixels];
  DepthwiseRun runs[kFinishPixels];
  for (int64_t i = 0; i < kFinishPixels; ++i) runs[i].taps = acc + kFinishPixels * C + i * 2 * g.KH * g.KW;
  Pixel px{begin / (g.OH * g.OW), begin / g.OW % g.OH, begin % g.OW};
  for (int64_t f = begin; f < end;) {
    int64_t count = 0, run_count = 0;
    while (count < kFinishPixels && f < end) {  // the batch's runs
      DepthwiseRun& run = runs[run_count++];
      int64_t shift[4];
      run.first = count;
      run.length =
          depthwise_run(g, px, std::min({int64_t{4}, end - f, kFinishPixels - count}), shift);
      const uint8_t* x = memory + g.x_address + px.n * g.xs[0];
      for (int64_t p = 0; p < run.length; ++p) run.x[p] = x + shift[p];
      int64_t* tap = run.taps;
      for (const Tap& r : g.rows[size_t(px.oh)]) {
        for (const Tap& col : g.cols[size_t(px.ow)]) {
          *tap++ = r.i * g.xs[2] + col.i * g.xs[3];
          *tap++ = (r.k * g.KW + col.k) * wc;
        }
      }
      run.tap_count = (tap - run.taps) / 2;
      for (int64_t p = 0; p < run.length; ++p) {
        pixels[count++] = px;
        ++f;
        if (++px.ow == g.OW) {
          px.ow = 0;
          if (++px.oh == g.OH) {
            px.oh = 0;
            ++px.n;
          }
        }
      }
    }
    for (int64_t b = 0; b < blocks; b += 2) {  // channels [16b, 16b + 32)
      const int32_t* w = wt32 + 16 * b;
      for (int64_t i = 0; i < run_count; ++i) {
        const DepthwiseRun& run = runs[i];
        const int64_t* taps = run.taps;
        const int64_t taps_n = run.tap_count;
        const uint8_t* x[4];
        int64_t* out[4];
        for (int64_t p = 0; p < run.length; ++p) {
          x[p] = run.x[p] + 16 * b * e;
          out[p] = acc + (run.first + p) * C + 16 * b;
        }
        const int64_t n = C - 16 * b;
        if (run.length == 4) {
          if (blocks - b >= 2)
            depthwise_vnni<TX, 4, 2>(taps, taps_n, x, w, out, n);
          else
            depthwise_vnni<TX, 4, 1>(taps, taps_n, x, w, out, n);
          continue;
        }
        for (int64_t p = 0; p < run.length; ++p) {
          if (blocks - b >= 2)
            depthwise_vnni<TX, 1, 2>(taps, taps_n, x + p, w, out + p, n);
          else
            depthwise_vnni<TX, 1, 1>(taps, taps_n, x + p, w, out + p, n);
        }
      }
    }
    if (blocks * 16 < C) {  // the channels past the last whole register, per pixel
      for (int64_t i = 0; i < run_count; ++i) {
        const DepthwiseRun& run = runs[i];
        const Pixel& lead = pixels[run.first];
        for (int64_t p = 0; p < run.length; ++p) {
          depthwise_tail<TX, int32_t, int32_t>(g, run.x[p], g.rows[size_t(lead.oh)],
                                               g.cols[size_t(lead.ow)], wt, wc, blocks * 16,
                                               acc + (run.first + p) * C + blocks * 16);
        }
      }
    }
    finish(s, memory, pixels, count, acc);
  }
}
#endif

// The int64 scratch of one part of a depthwise instruction: kFinishPixels · C accumulators, then
// the VNNI engine's tap lists (pool threads must not allocate).
inline int64_t depthwise_scratch(const Conv& g) { return kFinishPixels * (g.C + 2 * g.KH * g.KW); }

// The depthwise pixels [begin, end) of the (n, oh, ow) order, finished kFinishPixels at a time
// through acc[depthwise_scratch]; wt: weights [KH][KW][wc >= C] as int16, zeros past C (the last
// register of channels reads past C when `padded`: the pixels' padding holds it and device
// memory goes on past the tensor). For int8 x, |x·w| <= 2^14: the product is an int16 (16-bit
// multiplies); for int16 x, an int16 × int16 widening multiply.
template <typename TX, typename Acc, HostIsa kIsa>
OPENBPU_INLINE void depthwise_pixels(const Conv& g, const OutputStage& s, FinishFn finish,
                                     uint8_t* memory, const int16_t* wt,
                                     [[maybe_unused]] const int32_t* wt32, int64_t wc, bool padded,
                                     int64_t* acc, int64_t begin, int64_t end) {
#if OPENBPU_HOST_X86
  if constexpr (kIsa == HostIsa::kAvx512 && std::is_same_v<Acc, int32_t>) {
    return depthwise_pixels_vnni<TX>(g, s, finish, memory, wt, wt32, wc, padded, acc, begin, end);
  }
#endif
  using Product = std::conditional_t<sizeof(TX) == 1, int16_t, Acc>;
  constexpr int64_t kN = kDepthwiseLanes<kIsa>;
  const int64_t C = g.C;
  Pixel pixels[kFinishPixels];
  int64_t count = 0;
  Pixel px{begin / (g.OH * g.OW), begin / g.OW % g.OH, begin % g.OW};
  for (int64_t f = begin; f < end; ++f) {
    const uint8_t* x = memory + g.x_address + px.n * g.xs[0];
    const TapSpan rows = g.rows[size_t(px.oh)];
    const TapSpan cols = g.cols[size_t(px.ow)];
    int64_t* out = acc + count * C;
    int64_t c0 = 0;
    if constexpr (kN > 0) {
      for (; c0 + kN <= C || (padded && c0 < C); c0 += kN) {
        depthwise_lanes<TX, Acc, Product, kN>(g, x, rows, cols, wt, wc, c0, std::min(kN, C - c0), out + c0);
      }
    }
    if (c0 < C) depthwise_tail<TX, Acc, Product>(g, x, rows, cols, wt, wc, c0, out + c0);
    pixels[count++] = px;
    if (count == kFinishPixels || f + 1 == end) {
      finish(s, memory, pixels, count, acc);
      count = 0;
    }
    if (++px.ow < g.OW) continue;  // the next pixel, without dividing
    px.ow = 0;
    if (++px.oh < g.OH) continue;
    px.oh = 0;
    ++px.n;
  }
}

// depthwise_pixels compiled per host ISA, for the parts an instruction runs on pool threads.
template <typename TX, typename Acc>
struct DepthwisePartKernel {
  template <HostIsa kIsa>
  OPENBPU_INLINE static void run(const Conv& g, const OutputStage& s, const FinishFn& finish,
                                 uint8_t* const& memory, const int16_t* const& wt,
                                 const int32_t* const& wt32, const int64_t& wc, const bool& padded,
                                 int64_t* const& acc, const int64_t& begin, const int64_t& end) {
    depthwise_pixels<TX, Acc, kIsa>(g, s, finish, memory, wt, wt32, wc, padded, acc, begin, end);
  }
};

// Depthwise (group == C == M) with contiguous channels: per output pixel, a register of channels
// at a time over the taps, the pixels split over the host threads. Acc is int32 when
// KH·KW·max|x|·128 < 2^31.
template <typename TX, typename Acc, HostIsa kIsa>
OPENBPU_INLINE void conv_depthwise(const Conv& g, const OutputStage& s, FinishFn finish, uint8_t* memory) {
  const int64_t KK = g.KH * g.KW, C = g.C;
  constexpr int64_t kN = kDepthwiseLanes<kIsa>, e = sizeof(TX);
  const int64_t wc = kN > 0 ? (C + kN - 1) / kN * kN : C;
  const bool padded = kN > 0 && g.xs[3] >= wc * e && g.x_address + g.N * g.xs[0] + wc * e <= g.memory_bytes;
  // wt: the weights tap by tap, wc channels each; wt32, for the VNNI engine: the same as int16
  // zero-extended to int32.
  constexpr bool kVnni = kIsa == HostIsa::kAvx512 && std::is_same_v<Acc, int32_t>;
  ScratchVector<int16_t> wt(static_cast<size_t>(KK * wc), 0);
  ScratchVector<int32_t> wt32(kVnni ? static_cast<size_t>(KK * wc) : 0, 0);
  for (int64_t k = 0; k < KK; ++k) {
    const int8_t* from = g.weights + k;
    int16_t* __restrict to = wt.data() + k * wc;
    for (int64_t c = 0; c < C; ++c) to[c] = from[c * KK];
    if constexpr (kVnni) {
      int32_t* __restrict to32 = wt32.data() + k * wc;
      for (int64_t c = 0; c < C; ++c) to32[c] = int32_t{static_cast<uint16_t>(to[c])};
    }
  }
  const int64_t total = g.N * g.OH * g.OW, parts = part_count(total, 256);
  const int64_t scratch = depthwise_scratch(g);
  ScratchVector<int64_t> accs(static_cast<size_t>(parts * scratch));
  if (parts == 1) {
    return depthwise_pixels<TX, Acc, kIsa>(g, s, finish, memory, wt.data(), wt32.data(), wc, padded,
                                           accs.data(), 0, total);
  }
  for_each_part(parts, [&](int64_t part) {
    host_dispatch<DepthwisePartKernel<TX, Acc>>(g, s, finish, memory, wt.data(), wt32.data(), wc,
                                                padded, accs.data() + part * scratch,
                                                total * part / parts, total * (part + 1) / parts);
  });
}

#if OPENBPU_HOST_X86
// The output pixels of a convolution in the tiled engine's order: row by row, and within a row
// of a transposed convolution by phase (ow mod stride), so that a tile's pixels mostly share
// their valid taps.
struct TileOrder {
  const Conv& g;
  Pixel next{0, 0, 0};
  int64_t phase = 0;
  int64_t left = 0;  // pixels still to take
  // The pixels [begin, end) of this order.
  TileOrder(const Conv& conv, int64_t begin, int64_t end) : g(conv), left(end - begin) {
    const int64_t row = begin / g.OW;
    int64_t r = begin % g.OW;
    next = {row / g.OH, row % g.OH, 0};
    for (phase = 0; phase < g.col_period; ++phase) {
      const int64_t in_phase = (g.OW - phase + g.col_period - 1) / g.col_period;
      if (r < in_phase) break;
      r -= in_phase;
    }
    next.ow = phase + r * g.col_period;
  }
  // Up to `count` next pixels into out; returns how many.
  int64_t take(int64_t count, Pixel* out) {
    int64_t k = 0;
    for (; k < count && left > 0; ++k, --left) {
      out[k] = next;
      next.ow += g.col_period;
      if (next.ow < g.OW) continue;
      next.ow = ++phase;
      if (phase < g.col_period && phase < g.OW) continue;
      next.ow = phase = 0;
      if (++next.oh < g.OH) continue;
      next.oh = 0;
      ++next.n;
    }
    return k;
  }
};

// The patches of a panel's pixels, [pixel][layout]: used[s] = 1 for the segments holding a tap
// valid for some pixel; in those, each pixel's valid taps copied (in increasing order, with
// copy_run's whole-vector stores that later writes overwrite: `patch` has 64 elements of slack; a
// run of adjacent taps that are adjacent in dense memory is one copy) and its other taps zeroed;
// int8 values then offset to u8 for vpdpbusd when `to_u8` (x + 128 has the bits of x ^ 0x80).
// Unused segments and the padding keep stale values: they meet no weights.
template <typename TX>
OPENBPU_INLINE void tile_patches(const Conv& g, const PatchLayout& layout, const Pixel* tile,
                                 int64_t count, const uint8_t* memory, uint8_t* used, uint8_t* zero,
                                 bool to_u8, TX* patch) {
  const int64_t KK = g.KH * g.KW, lp = layout.length();
  const uint8_t* memory_end = memory + g.memory_bytes;
  constexpr int64_t e = sizeof(TX);
  const bool dense = g.xs[1] == e, runs = dense && g.xs[3] == g.Cg * e && layout.rows;
  const int64_t ahead = kTilePixels * g.stride_w * g.xs[3];
  std::fill(used, used + layout.segments, uint8_t{0});
  for (int64_t p = 0; p < count; ++p) {
    for (const Tap& r : g.rows[size_t(tile[p].oh)]) {
      for (const Tap& c : g.cols[size_t(tile[p].ow)]) used[layout.segment_of(r.k, c.k)] = 1;
    }
  }
  for (int64_t p = 0; p < count; ++p) {
    const TapSpan rows = g.rows[size_t(tile[p].oh)];
    const TapSpan cols = g.cols[size_t(tile[p].ow)];
    TX* dst = patch + p * lp;
    const bool all = int64_t(rows.size() * cols.size()) == KK;
    if (!all) {  // the taps of used segments still to zero
      for (int64_t kh = 0; kh < g.KH; ++kh) {
        for (int64_t kw = 0; kw < g.KW; ++kw) zero[kh * g.KW + kw] = used[layout.segment_of(kh, kw)];
      }
    }
    const uint8_t* x = memory + g.x_address + tile[p].n * g.xs[0];
    for (const Tap& r : rows) {
      if (runs) {  // the row's valid taps: adjacent kernel columns reading adjacent pixels
        const Tap& c = cols.front();
        copy_run(reinterpret_cast<uint8_t*>(dst + layout.offset(r.k, c.k)), x + r.i * g.xs[2] + c.i * g.xs[3],
                 int64_t(cols.size()) * g.Cg * e, memory_end);
        if (!all) std::fill(zero + r.k * g.KW + c.k, zero + r.k * g.KW + c.k + int64_t(cols.size()), uint8_t{0});
        continue;
      }
      for (const Tap& c : cols) {
        const uint8_t* src = x + r.i * g.xs[2] + c.i * g.xs[3];
        TX* to = dst + layout.offset(r.k, c.k);
        if (!all) zero[r.k * g.KW + c.k] = 0;
        if (dense) {
          _mm_prefetch(reinterpret_cast<const char*>(src + ahead), _MM_HINT_T0);  // the next tile's tap
          copy_run(reinterpret_cast<uint8_t*>(to), src, g.Cg * e, memory_end);
        } else {
          gather<TX>(src, g.xs[1], g.Cg, to);
        }
      }
    }
    for (int64_t t = 0; t < KK && !all; ++t) {
      if (zero[t]) {
        TX* at = dst + layout.offset(t / g.KW, t % g.KW);
        std::fill(at, at + g.Cg, TX{0});
      }
    }
  }
  if (e == 1 && to_u8) {
    uint8_t* bytes = reinterpret_cast<uint8_t*>(patch);
    for (int64_t i = 0; i < count * lp; ++i) bytes[i] ^= 0x80;
  }
}

// acc[p·M + m] += the products of a panel's patches (count pixels, in tiles of eight) with the
// weights over the used segments' steps (runs of used segments, in chunks that keep the int32
// partial sums exact); a block pair's weights serve every tile of the panel while in cache.
// With `init` (the int32 start of every pixel's sums, padded to whole block pairs), the first
// chunk's sums start from it inside the tile and are stored, not added, so acc needs no
// start; returns whether that happened (false: no used segment, acc untouched).
template <typename TX>
OPENBPU_INLINE bool panel_products(const Conv& g, const TileWeights<TX>& w, const uint8_t* used, const TX* patch,
                                   int64_t count, const int32_t* init, int32_t* part, int64_t* acc) {
  // Chunks of at most 512 bytes of each patch, so that a panel's chunk and a block pair's weights
  // for it stay in L1 while the tiles pass.
  constexpr int64_t kChunkSteps = std::min(TileTraits<TX>::kChunk, 512 / int64_t{sizeof(TX)}) / TileTraits<TX>::kStep;
  const int64_t segments = w.layout.segments, lp = w.layout.length(), M = g.M;
  bool first = true;
  for (int64_t s0 = 0; s0 < segments;) {
    if (!used[s0]) {
      ++s0;
      continue;
    }
    int64_t s1 = s0 + 1;
    while (s1 < segments && used[s1]) ++s1;
    for (int64_t k0 = s0 * w.T; k0 < s1 * w.T; k0 += kChunkSteps) {
      const int64_t k1 = std::min(s1 * w.T, k0 + kChunkSteps);
      const bool assign = first && init != nullptr;
      for (int64_t b = 0; b < w.B; b += 2) {
        const int64_t width = std::min<int64_t>(2, w.B - b) * kTileLanes, lanes = std::min(width, M - b * kTileLanes);
        const int32_t* start = assign ? init + b * kTileLanes : nullptr;
        for (int64_t tile_first = 0; tile_first < count; tile_first += kTilePixels) {
          const TX* tile = patch + tile_first * lp;
          if (width == 2 * kTileLanes) {
            vnni_tile<TX, 2>(tile, lp, w.packed + b * w.wb, w.wb, k0, k1, start, part);
          } else {
            vnni_tile<TX, 1>(tile, lp, w.packed + b * w.wb, w.wb, k0, k1, start, part);
          }
          for (int64_t p = 0; p < std::min(kTilePixels, count - tile_first); ++p) {
            int64_t* __restrict to = acc + (tile_first + p) * M + b * kTileLanes;
            const int32_t* __restrict from = part + p * width;
            if (assign) {
              for (int64_t j = 0; j < lanes; ++j) to[j] = from[j];
            } else {
              for (int64_t j = 0; j < lanes; ++j) to[j] += from[j];
            }
          }
        }
      }
      first = false;
    }
    s0 = s1;
  }
  return !first && init != nullptr;
}

// Group-1 convolutions on AVX-512 VNNI: output pixels in panels of up to kPanelPixels
// (TileOrder; fewer when their patches would pass kPanelBytes), the patches times the packed
// weights over the taps valid for some pixel of the panel (a transposed convolution's phases skip
// the others) in register tiles of eight pixels — or on the amx path in AMX tiles of 32 pixels
// (kAmx: weights packed as int8 with 64-element segments) — summed in int64 and finished eight
// at a time.
inline constexpr int64_t kPanelPixels = 64, kPanelBytes = 256 << 10, kAmxRows = 32;

template <typename TX, bool kAmx>
using TiledWeights = TileWeights<std::conditional_t<kAmx, int8_t, TX>>;

// One host thread's buffers of the tiled engine.
template <typename TX>
struct TiledBuffers {
  ScratchVector<TX> patch;
  ScratchVector<int8_t> bytes;  // amx, int16: the patches' bytes
  ScratchVector<int32_t> part;
  ScratchVector<int64_t> acc, start;
  // `start` as int32, padded to whole block pairs, when every value is below 2^30 (start32_ok):
  // a chunk's sums then stay within int32 on top of it (an int8 chunk's are below 2^24; int16
  // sums start at 0 and a chunk's stay within 2^30).
  ScratchVector<int32_t> start32;
  bool start32_ok = true;
  ScratchVector<uint8_t> used, zero, start_for;  // start_for: the used segments `start` holds
  ScratchVector<Pixel> pixels;
  // amx: `panel` is a whole number of 32-row AMX tiles (conv_tiled), so the patch rows past a
  // short last panel are there for the tiles to read.
  TiledBuffers(const Conv& g, const PatchLayout& layout, int64_t panel, bool amx)
      : patch(size_t(panel * layout.length() + 64), TX{0}),
        bytes(size_t(amx && sizeof(TX) == 2 ? 2 * panel * layout.length() : 0)),
        part(size_t(amx ? panel * amx_sums_stride((g.M + kTileLanes - 1) / kTileLanes)
                        : kTilePixels * 2 * kTileLanes)),
        acc(size_t(panel * g.M)),
        start(size_t(g.M), 0),
        start32(size_t((g.M + 2 * kTileLanes - 1) / (2 * kTileLanes) * 2 * kTileLanes), 0),
        used(size_t(layout.segments)),
        zero(size_t(g.KH * g.KW)),
        start_for(size_t(layout.segments), 0),
        pixels(size_t(panel)) {}
};

// The tiled engine over the pixels [begin, end) of the tile order.
template <typename TX, bool kAmx>
OPENBPU_INLINE void tiled_pixels(const Conv& g, const TiledWeights<TX, kAmx>& w,
                                 const OutputStage& s, FinishFn finish, uint8_t* memory,
                                 int64_t panel, TiledBuffers<TX>& b, int64_t begin, int64_t end) {
  TileOrder order{g, begin, end};
  if constexpr (kAmx) amx_begin();
  while (const int64_t count = order.take(panel, b.pixels.data())) {
    tile_patches<TX>(g, w.layout, b.pixels.data(), count, memory, b.used.data(), b.zero.data(),
                     !kAmx, b.patch.data());
    if constexpr (kAmx) {
      std::fill(b.acc.begin(), b.acc.begin() + count * g.M, 0);
      amx_products<TX>(w, g.M, b.used.data(), b.patch.data(), panel, count, b.bytes.data(),
                       b.part.data(), b.acc.data());
    } else {
      if (sizeof(TX) == 1 && b.used != b.start_for) {  // int8: −128·Σw over the used segments
        std::fill(b.start.begin(), b.start.end(), 0);
        for (int64_t k = 0; k < w.layout.segments; ++k) {
          if (!b.used[size_t(k)]) continue;
          const int64_t* sums = w.sums + k * w.B * kTileLanes;
          for (int64_t m = 0; m < g.M; ++m) b.start[size_t(m)] -= 128 * sums[m];
        }
        std::copy(b.used.begin(), b.used.end(), b.start_for.begin());
        b.start32_ok = true;
        for (int64_t m = 0; m < g.M; ++m) {
          const int64_t v = b.start[size_t(m)];
          b.start32_ok = b.start32_ok && v > -(int64_t{1} << 30) && v < (int64_t{1} << 30);
          b.start32[size_t(m)] = static_cast<int32_t>(v);
        }
      }
      // The sums start from `start`: inside the first chunk's tiles when it fits int32, else
      // (and when no segment is used) copied into acc.
      const int32_t* init = b.start32_ok ? b.start32.data() : nullptr;
      auto start_acc = [&] {
        for (int64_t p = 0; p < count; ++p) std::copy(b.start.begin(), b.start.end(), b.acc.begin() + p * g.M);
      };
      if (init == nullptr) start_acc();
      if (!panel_products<TX>(g, w, b.used.data(), b.patch.data(), count, init, b.part.data(), b.acc.data()) &&
          init != nullptr) {
        start_acc();
      }
    }
    for (int64_t first = 0; first < count; first += kFinishPixels) {
      finish(s, memory, b.pixels.data() + first, std::min(kFinishPixels, count - first), b.acc.data() + first * g.M);
    }
  }
  if constexpr (kAmx) amx_end();
}

// tiled_pixels compiled per host ISA: the parts of an instruction run on pool threads, through a
// plain function, so each part dispatches into the clone of the path in use.
// Whether the tiled patches hold a kernel row per segment (PatchLayout).
inline bool patch_by_rows(const Conv& g) {
  return !g.transposed && g.dilation_w == 1 && g.KW > 1;
}

// Whether AMX tiles beat the VNNI tile for a group-1 convolution: its patch segments grow by at
// most a quarter when aligned to 64 values, and it has pixels for two tiles of 32.
inline bool amx_pays(const Conv& g) {
  const int64_t values = (patch_by_rows(g) ? g.KW : 1) * g.Cg;
  return (values + 63) / 64 * 64 * 4 <= values * 5 && g.N * g.OH * g.OW >= 2 * kAmxRows;
}

template <typename TX, bool kAmx>
struct TiledPartKernel {
  template <HostIsa>
  OPENBPU_INLINE static void run(const Conv& g, const TiledWeights<TX, kAmx>& w,
                                 const OutputStage& s, const FinishFn& finish,
                                 uint8_t* const& memory, const int64_t& panel,
                                 TiledBuffers<TX>* const& b, const int64_t& begin,
                                 const int64_t& end) {
    tiled_pixels<TX, kAmx>(g, w, s, finish, memory, panel, *b, begin, end);
  }
};

template <typename TX, bool kAmx>
OPENBPU_INLINE void conv_tiled(const Conv& g, const OutputStage& s, FinishFn finish,
                               uint8_t* memory) {
  using W = std::conditional_t<kAmx, int8_t, TX>;
  const TileWeights<W> w = tile_weights<W>(g.weights, g.M, g.KH, g.KW, g.Cg, patch_by_rows(g),
                                           kAmx ? 64 : TileTraits<TX>::kStep);
  const int64_t lp = w.layout.length(), quantum = kAmx ? kAmxRows : kTilePixels;
  const int64_t panel = std::clamp<int64_t>(
      kPanelBytes / (lp * int64_t{sizeof(TX)}) / quantum * quantum, quantum, kPanelPixels);
  static_assert(kTilePixels <= kFinishPixels && kPanelPixels % kFinishPixels == 0 &&
                kPanelPixels % kAmxRows == 0);
  // The pixels split over the host threads in whole panels; each thread has its own buffers.
  const int64_t pixels = g.N * g.OH * g.OW, parts = part_count(pixels, panel);
  ScratchVector<TiledBuffers<TX>> buffers;
  buffers.reserve(size_t(parts));
  for (int64_t i = 0; i < parts; ++i) buffers.emplace_back(g, w.layout, panel, kAmx);
  const int64_t per_part = (pixels / panel + parts - 1) / parts * panel;
  if (parts == 1)
    return tiled_pixels<TX, kAmx>(g, w, s, finish, memory, panel, buffers[0], 0, pixels);
  for_each_part(parts, [&](int64_t i) {
    host_dispatch<TiledPartKernel<TX, kAmx>>(
        g, w, s, finish, memory, panel, &buffers[size_t(i)], std::min(pixels, i * per_part),
        i + 1 == parts ? pixels : std::min(pixels, (i + 1) * per_part));
  });
}

#endif

template <typename TX, HostIsa kIsa>
OPENBPU_INLINE void run_conv_body(const Conv& g, const OutputStage& s, uint8_t* memory) {
  const FinishFn finish = finisher(s);
  const bool depthwise = g.group == g.C && g.group == g.M;
  if (depthwise && g.xs[1] == static_cast<int64_t>(sizeof(TX))) {
    if (g.KH * g.KW * max_magnitude<TX>() * 128 < (int64_t{1} << 31)) {
      conv_depthwise<TX, int32_t, kIsa>(g, s, finish, memory);
    } else {
      conv_depthwise<TX, int64_t, kIsa>(g, s, finish, memory);
    }
    return;
  }
#if OPENBPU_HOST_X86
  if constexpr (kIsa == HostIsa::kAvx512) {
    if (lane_engine_fits<TX>(g)) return conv_lanes<TX>(g, s, finish, memory);
    if (g.group == 1 && host_isa() == HostIsa::kAmx && amx_pays(g))
      return conv_tiled<TX, true>(g, s, finish, memory);
    if (g.group == 1) return conv_tiled<TX, false>(g, s, finish, memory);
  }
#endif
  conv_general<TX, kIsa>(g, s, finish, memory);
}

// The engine compiled per host ISA (isa_clones.h).
template <typename TX>
struct ConvKernel {
  template <HostIsa kIsa>
  OPENBPU_INLINE static void run(const Conv& g, const OutputStage& s, uint8_t* const& memory) {
    run_conv_body<TX, kIsa>(g, s, memory);
  }
};

template <typename TX>
void run_conv(const Conv& g, const OutputStage& s, uint8_t* memory) {
  host_dispatch<ConvKernel<TX>>(g, s, memory);
}

void convolve(const isa::ConvInstruction& in, Memory memory, bool transpose) {
  uint8_t* mem = memory.data();
  Conv g{};
  g.N = in.input.dims[0];
  g.C = in.input.dims[1];
  g.H = in.input.dims[2];
  g.W = in.input.dims[3];
  g.M = in.output.dims[1];
  g.OH = in.output.dims[2];
  g.OW = in.output.dims[3];
  g.KH = in.kernel_h;
  g.KW = in.kernel_w;
  g.group = in.group;
  g.Cg = g.C / g.group;
  g.Mg = g.M / g.group;
  g.x_address = in.input.address;
  for (int d = 0; d < 4; ++d) g.xs[d] = in.input.strides[d];
  g.rows = tap_table(transpose, g.OH, g.H, g.KH, in.stride_h, in.dilation_h, in.pad_top);
  g.cols = tap_table(transpose, g.OW, g.W, g.KW, in.stride_w, in.dilation_w, in.pad_left);
  g.transposed = transpose;
  g.stride_w = transpose ? 1 : in.stride_w;
  g.memory_bytes = int64_t(memory.size());
  g.dilation_w = in.dilation_w;
  g.col_period = transpose ? in.stride_w : 1;
  g.weights = reinterpret_cast<const int8_t*>(mem + in.weights);

  OutputStage s;
  s.M = g.M;
  s.batch = kFinishPixels * std::max<int64_t>(1, 64 / (kFinishPixels * g.M));  // >= 64 values per call
  s.bias.assign(static_cast<size_t>(s.batch * g.M), 0);
  if (in.output.type != ElementType::kInt32) s.requant = read_multipliers(mem, in.requant, g.M);
  if (in.bias != isa::kNoAddress) {
    for (int64_t m = 0; m < g.M; ++m) s.bias[size_t(m)] = load<int32_t>(mem + in.bias + 4 * m);
  }
  if (!s.requant.empty()) {
    s.prepared.multiplier.resize(s.bias.size());
    s.prepared.rounding.resize(s.bias.size());
    s.prepared.shift.resize(s.bias.size());
    for (int64_t m = 0; m < g.M; ++m) s.prepared.set(m, s.requant[size_t(m)]);
  }
  for (int64_t p = 1; p < s.batch; ++p) {  // the first pixel's tables repeated for the others
    s.prepared.copy_row(0, p * g.M, g.M);
    std::copy_n(s.bias.begin(), g.M, s.bias.begin() + p * g.M);
  }
  if (in.residual.rank != 0) {
    for (const FixedPointMultiplier& f : read_multipliers(mem, in.residual_requant, g.M)) {
      s.residual.push_back(f);
    }
  }
  s.clip_min = in.clip_min;
  s.clip_max = in.clip_max;
  s.y = in.output;
  s.r = in.residual;

  if (in.input.type == ElementType::kInt16) {
    run_conv<int16_t>(g, s, mem);
  } else {
    run_conv<int8_t>(g, s, mem);
  }
}

}  // namespace

void conv(const isa::ConvInstruction& in, Memory memory) { convolve(in, memory, false); }

void conv_transpose(const isa::ConvInstruction& in, Memory memory) { convolve(in, memory, true); }

}  // namespace openbpu::simulator::functional
