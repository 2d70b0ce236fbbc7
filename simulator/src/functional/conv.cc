// Functional units kConv and kConvTranspose (isa.h, ConvInstruction).
//
// Both share one engine; they differ only in which input position a kernel tap reads (the
// tap tables below). For each output pixel (n, oh, ow) and group, the engine gathers the
// input values of the valid taps into a contiguous patch [tap][Cg] (one memcpy per tap when the
// channels are contiguous, as in the compiler's NHWC layout; an element-wise strided gather
// otherwise), then takes for each output channel the dot product of the patch with the
// channel's packed weight row [KH][KW][Cg]. When every tap is valid (the interior of the
// image) that is one long contiguous dot product. Depthwise convolutions with contiguous
// channels have their own loop, vectorised across channels. Dot products are exact: int32
// partial sums over chunks short enough not to overflow, added in int64.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "openbpu/simulator/integer_arithmetic.h"
#include "access.h"
#include "conv_tile.h"
#include "dot4.h"
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

// A valid kernel tap of one output row (or column): kernel index and input index.
struct Tap {
  int64_t k;
  int64_t i;
};

// taps[o] for o < out: the kernel taps of output index o that read the input (length `in`).
ScratchVector<ScratchVector<Tap>> tap_table(bool transpose, int64_t out, int64_t in, int64_t kernel,
                                        int64_t stride, int64_t dilation, int64_t pad) {
  ScratchVector<ScratchVector<Tap>> taps(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t k = 0; k < kernel; ++k) {
      if (transpose) {
        const int64_t t = o + pad - k * dilation;
        if (t >= 0 && t % stride == 0 && t / stride < in) taps[size_t(o)].push_back({k, t / stride});
      } else {
        const int64_t i = o * stride - pad + k * dilation;
        if (i >= 0 && i < in) taps[size_t(o)].push_back({k, i});
      }
    }
  }
  return taps;
}

// Geometry and operands of one instruction, in int64.
struct Conv {
  int64_t N, C, H, W, M, OH, OW, KH, KW, group, Cg, Mg;
  int64_t x_address, xs[4];  // input address and byte strides (N, C, H, W)
  ScratchVector<ScratchVector<Tap>> rows, cols;
  const int8_t* weights;  // [M][KH][KW][Cg]
};

// A table of prepared multipliers (PreparedMultiplier's fields), one array per field.
struct PreparedTable {
  ScratchVector<int64_t> multiplier, rounding, shift;
  void push_back(FixedPointMultiplier f) {
    const PreparedMultiplier p(f);
    multiplier.push_back(p.multiplier);
    rounding.push_back(p.rounding);
    shift.push_back(p.shift);
  }
};

// The output stage of isa.h for every channel of output pixels, from the accumulators
// Σ x·w (without bias).
struct OutputStage {
  int64_t M, OH, OW;
  ScratchVector<int64_t> bias;                  // M entries (zeros without a bias)
  ScratchVector<FixedPointMultiplier> requant;  // M entries, empty for an int32 output
  PreparedTable prepared;                       // the same, prepared
  PreparedTable residual;                       // M entries when there is a residual
  int64_t clip_min, clip_max;
  isa::TensorDesc y, r;
};

// acc[m] += the residual's rescaled value, read with element stride rs (bytes).
template <typename TR>
OPENBPU_INLINE void add_residual(const PreparedTable& t, const uint8_t* r, int64_t rs, int64_t M, int64_t* acc) {
  for (int64_t m = 0; m < M; ++m) {
    acc[m] += apply_prepared(load<TR>(r + m * rs), t.multiplier[size_t(m)], t.rounding[size_t(m)], t.shift[size_t(m)]);
  }
}

// y[m] (element stride ys bytes) from the biased accumulators a[m]; one branch-free loop when
// every a[m] is an int32 (the prepared multipliers), else per value. The restrict-qualified
// locals let the compiler keep the tables out of the byte stores' way and vectorise.
template <typename TY>
OPENBPU_INLINE void store_outputs(const OutputStage& s, const int64_t* __restrict a, uint8_t* __restrict y, int64_t ys) {
  const int64_t M = s.M, lo = s.clip_min, hi = s.clip_max;
  auto put = [&](int64_t m, int64_t v) __attribute__((always_inline)) {
    store<TY>(y + m * ys, static_cast<TY>(std::min(std::max(v, lo), hi)));
  };
  if constexpr (std::is_same_v<TY, int32_t>) {
    for (int64_t m = 0; m < M; ++m) put(m, saturate<int32_t>(a[m]));
    return;
  }
  int64_t least = 0, most = 0;  // min/max reductions vectorise, a running && does not
  for (int64_t m = 0; m < M; ++m) {
    least = std::min(least, a[m]);
    most = std::max(most, a[m]);
  }
  if (least < INT32_MIN || most > INT32_MAX) {
    for (int64_t m = 0; m < M; ++m) put(m, saturate<TY>(apply_multiplier(a[m], s.requant[size_t(m)])));
    return;
  }
  const int64_t* __restrict mul = s.prepared.multiplier.data();
  const int64_t* __restrict rounding = s.prepared.rounding.data();
  const int64_t* __restrict shift = s.prepared.shift.data();
  for (int64_t m = 0; m < M; ++m) {
    put(m, saturate<TY>(apply_prepared(static_cast<int32_t>(a[m]), mul[m], rounding[m], shift[m])));
  }
}

// The output stage of `count` consecutive output pixels (flat index first = (n·OH + oh)·OW +
// ow) from acc[p·stride + m], which it overwrites; compiled per host ISA, with unit-stride
// loops for channels that are contiguous in memory (the compiler's NHWC layout).
template <typename TY, typename TR>
struct FinishKernel {
  template <HostIsa>
  OPENBPU_INLINE static void run(const OutputStage& s, uint8_t* const& memory, const int64_t& first,
                                 const int64_t& count, int64_t* const& acc, const int64_t& stride) {
    const int64_t M = s.M;
    const int64_t ys = s.y.strides[1];
    [[maybe_unused]] const int64_t rs = s.r.strides[1];
    for (int64_t p = 0; p < count; ++p) {
      const int64_t f = first + p, ow = f % s.OW, oh = (f / s.OW) % s.OH, n = f / (s.OW * s.OH);
      int64_t* a = acc + p * stride;
      for (int64_t m = 0; m < M; ++m) a[m] += s.bias[size_t(m)];
      if constexpr (!std::is_void_v<TR>) {
        const uint8_t* r = memory + s.r.address + n * s.r.strides[0] + oh * s.r.strides[2] + ow * s.r.strides[3];
        if (rs == int64_t{sizeof(TR)}) {
          add_residual<TR>(s.residual, r, sizeof(TR), M, a);
        } else {
          add_residual<TR>(s.residual, r, rs, M, a);
        }
      }
      uint8_t* y = memory + s.y.address + n * s.y.strides[0] + oh * s.y.strides[2] + ow * s.y.strides[3];
      if (ys == int64_t{sizeof(TY)}) {
        store_outputs<TY>(s, a, y, sizeof(TY));
      } else {
        store_outputs<TY>(s, a, y, ys);
      }
    }
  }
};

using FinishFn = void (*)(const OutputStage&, uint8_t*, int64_t, int64_t, int64_t*, int64_t);

template <typename TY, typename TR>
void finish_pixels(const OutputStage& s, uint8_t* memory, int64_t first, int64_t count, int64_t* acc, int64_t stride) {
  host_dispatch<FinishKernel<TY, TR>>(s, memory, first, count, acc, stride);
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
OPENBPU_INLINE void sparse_taps(const Conv& g, const ScratchVector<Tap>& rows, const ScratchVector<Tap>& cols,
                                const uint8_t* x, TX* patch, int64_t* tap_k, int64_t m_begin, int64_t m_end,
                                int64_t* acc) {
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
      const ScratchVector<Tap>& rows = g.rows[size_t(oh)];
      for (int64_t ow = 0; ow < g.OW; ++ow) {
        const ScratchVector<Tap>& cols = g.cols[size_t(ow)];
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
        finish(s, memory, (n * g.OH + oh) * g.OW + ow, 1, acc.data(), g.M);
      }
    }
  }
}

// Depthwise (group == C == M) with contiguous channels: per output pixel, acc[c] over the
// taps, the channel loop innermost. Acc is int32 when KH·KW·max|x|·128 < 2^31.
template <typename TX, typename Acc>
OPENBPU_INLINE void conv_depthwise(const Conv& g, const OutputStage& s, FinishFn finish, uint8_t* memory) {
  const int64_t KK = g.KH * g.KW, C = g.C;
  // Weights transposed to [KH][KW][C]. For int8 x, |x·w| <= 2^14: the product is an int16
  // (vectorises as 16-bit multiplies).
  using Product = std::conditional_t<sizeof(TX) == 1, int16_t, Acc>;
  ScratchVector<Product> wt(static_cast<size_t>(KK * C));
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t k = 0; k < KK; ++k) wt[size_t(k * C + c)] = g.weights[c * KK + k];
  }
  ScratchVector<TX> row(static_cast<size_t>(C));
  ScratchVector<Acc> acc(static_cast<size_t>(C));
  ScratchVector<int64_t> acc64(static_cast<size_t>(g.OW * C));  // one output row, finished at once
  for (int64_t n = 0; n < g.N; ++n) {
    const uint8_t* x = memory + g.x_address + n * g.xs[0];
    for (int64_t oh = 0; oh < g.OH; ++oh) {
      for (int64_t ow = 0; ow < g.OW; ++ow) {
        std::fill(acc.begin(), acc.end(), Acc{0});
        for (const Tap& r : g.rows[size_t(oh)]) {
          for (const Tap& col : g.cols[size_t(ow)]) {
            std::memcpy(row.data(), x + r.i * g.xs[2] + col.i * g.xs[3], size_t(C) * sizeof(TX));
            const Product* w = wt.data() + (r.k * g.KW + col.k) * C;
            for (int64_t c = 0; c < C; ++c) {
              acc[size_t(c)] += static_cast<Product>(Product{row[size_t(c)]} * w[c]);
            }
          }
        }
        std::copy(acc.begin(), acc.end(), acc64.begin() + ow * C);
      }
      finish(s, memory, (n * g.OH + oh) * g.OW, g.OW, acc64.data(), C);
    }
  }
}

#if OPENBPU_HOST_X86
// Group-1 convolutions on AVX-512 VNNI: output pixels in tiles of eight, each one's patch
// [KH][KW][C] (taps outside the input are zeros) padded to whole steps (the padding meets zero
// weights, so its values do not matter), times the weights
// packed per block of sixteen output channels (conv_tile.h); int32 partial sums per chunk are
// added in int64, then eight pixels are finished at once.
template <typename TX>
OPENBPU_INLINE void conv_tiled(const Conv& g, const OutputStage& s, FinishFn finish, uint8_t* memory) {
  using Traits = TileTraits<TX>;
  constexpr int64_t kStep = Traits::kStep, kChunkSteps = Traits::kChunk / kStep;
  const int64_t KK = g.KH * g.KW, L = KK * g.Cg, S = (L + kStep - 1) / kStep, lp = S * kStep;
  const int64_t B = (g.M + kTileLanes - 1) / kTileLanes, stride = B * kTileLanes, wb = S * kTileLanes * kStep;
  ScratchVector<typename Traits::Weight> packed(size_t(B * wb), 0);
  ScratchVector<int64_t> start(size_t(stride), 0);  // int8: −128·Σw, the u8 offset's correction
  for (int64_t m = 0; m < g.M; ++m) {
    for (int64_t k = 0; k < L; ++k) {
      const int8_t v = g.weights[m * L + k];
      packed[size_t((m / kTileLanes) * wb + ((k / kStep) * kTileLanes + m % kTileLanes) * kStep + k % kStep)] = v;
      if constexpr (sizeof(TX) == 1) start[size_t(m)] -= 128 * int64_t{v};
    }
  }
  ScratchVector<TX> patch(size_t(kTilePixels * lp), TX{0});
  ScratchVector<int32_t> part(size_t(kTilePixels * 2 * kTileLanes));
  ScratchVector<int64_t> acc(size_t(kTilePixels * stride));
  const int64_t pixels = g.N * g.OH * g.OW;
  for (int64_t first = 0; first < pixels; first += kTilePixels) {
    const int64_t count = std::min(kTilePixels, pixels - first);
    for (int64_t p = 0; p < count; ++p) {
      const int64_t f = first + p, ow = f % g.OW, oh = (f / g.OW) % g.OH, n = f / (g.OW * g.OH);
      const ScratchVector<Tap>& rows = g.rows[size_t(oh)];
      const ScratchVector<Tap>& cols = g.cols[size_t(ow)];
      TX* dst = patch.data() + p * lp;
      if (int64_t(rows.size() * cols.size()) != KK) std::fill(dst, dst + L, TX{0});
      const uint8_t* x = memory + g.x_address + n * g.xs[0];
      for (const Tap& r : rows) {
        for (const Tap& c : cols) {
          const uint8_t* src = x + r.i * g.xs[2] + c.i * g.xs[3];
          TX* to = dst + (r.k * g.KW + c.k) * g.Cg;
          if (g.xs[1] == int64_t{sizeof(TX)}) {
            copy_bytes(reinterpret_cast<uint8_t*>(to), src, g.Cg * int64_t{sizeof(TX)});
          } else {
            gather<TX>(src, g.xs[1], g.Cg, to);
          }
        }
      }
    }
    if constexpr (sizeof(TX) == 1) {  // int8 offset to u8 for vpdpbusd: x + 128 has the bits of x ^ 0x80
      uint8_t* bytes = reinterpret_cast<uint8_t*>(patch.data());
      for (int64_t i = 0; i < kTilePixels * lp; ++i) bytes[i] ^= 0x80;
    }
    for (int64_t p = 0; p < count; ++p) std::copy(start.begin(), start.end(), acc.begin() + p * stride);
    for (int64_t s0 = 0; s0 < S; s0 += kChunkSteps) {
      const int64_t s1 = std::min(S, s0 + kChunkSteps);
      for (int64_t b = 0; b < B; b += 2) {
        const int64_t width = std::min<int64_t>(2, B - b) * kTileLanes;
        if (width == 2 * kTileLanes) {
          vnni_tile<TX, 2>(patch.data(), lp, packed.data() + b * wb, wb, s0, s1, part.data());
        } else {
          vnni_tile<TX, 1>(patch.data(), lp, packed.data() + b * wb, wb, s0, s1, part.data());
        }
        for (int64_t p = 0; p < count; ++p) {
          for (int64_t j = 0; j < width; ++j) acc[size_t(p * stride + b * kTileLanes + j)] += part[size_t(p * width + j)];
        }
      }
    }
    finish(s, memory, first, count, acc.data(), stride);
  }
}
#endif

template <typename TX, HostIsa kIsa>
OPENBPU_INLINE void run_conv_body(const Conv& g, const OutputStage& s, uint8_t* memory) {
  const FinishFn finish = finisher(s);
  const bool depthwise = g.group == g.C && g.group == g.M;
  if (depthwise && g.xs[1] == static_cast<int64_t>(sizeof(TX))) {
    if (g.KH * g.KW * max_magnitude<TX>() * 128 < (int64_t{1} << 31)) {
      conv_depthwise<TX, int32_t>(g, s, finish, memory);
    } else {
      conv_depthwise<TX, int64_t>(g, s, finish, memory);
    }
    return;
  }
#if OPENBPU_HOST_X86
  if constexpr (kIsa == HostIsa::kAvx512) {
    if (g.group == 1) return conv_tiled<TX>(g, s, finish, memory);
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
  g.weights = reinterpret_cast<const int8_t*>(mem + in.weights);

  OutputStage s;
  s.M = g.M;
  s.OH = g.OH;
  s.OW = g.OW;
  s.bias.assign(static_cast<size_t>(g.M), 0);
  if (in.bias != isa::kNoAddress) {
    for (int64_t m = 0; m < g.M; ++m) s.bias[size_t(m)] = load<int32_t>(mem + in.bias + 4 * m);
  }
  if (in.output.type != ElementType::kInt32) {
    s.requant = read_multipliers(mem, in.requant, g.M);
    for (const FixedPointMultiplier& f : s.requant) s.prepared.push_back(f);
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
