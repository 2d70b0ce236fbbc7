// The lane engine of kConv / kConvTranspose on AVX-512 VNNI (conv_stage.h, conv.cc's overview).
#include <algorithm>
#include <cstring>

#include "conv_stage.h"
#include "conv_tile.h"
#include "isa_clones.h"
#include "parallel.h"

#if OPENBPU_HOST_X86
namespace openbpu::simulator::functional {

namespace {

// The lane engine (group 1, few output channels, AVX-512 VNNI): sixteen output pixels of a row
// in the lanes of a register, one register per output channel, their inputs gathered straight
// from memory without patches: per valid tap and step of kStep channels one gather and one
// vpdpbusd/vpdpwssd per output channel. int8 inputs stay signed against weights offset to u8
// (w + 128), corrected by 128·Σx (one more vpdpbusd per step, against ones).
inline constexpr int64_t kLaneOutputs = 16, kLanes = 16;

// A row's output columns in tile order, sixteen per group: per group and kernel column the lanes
// whose column reads the input (mask) and the byte offset of the input column they read.
struct LaneColumns {
  int64_t groups = 0;
  ScratchVector<int64_t> ow;       // [group][lane]: the lane's output column, -1 past the row
  ScratchVector<uint32_t> mask;    // [group][KW]
  ScratchVector<int32_t> offset;   // [group][KW][lane]
};

LaneColumns lane_columns(const Conv& g) {
  LaneColumns c;
  ScratchVector<int64_t> order;
  for (int64_t phase = 0; phase < std::min(g.col_period, g.OW); ++phase) {
    for (int64_t ow = phase; ow < g.OW; ow += g.col_period) order.push_back(ow);
  }
  c.groups = (int64_t(order.size()) + kLanes - 1) / kLanes;
  c.ow.assign(size_t(c.groups * kLanes), -1);
  c.mask.assign(size_t(c.groups * g.KW), 0);
  c.offset.assign(size_t(c.groups * g.KW * kLanes), 0);
  for (size_t i = 0; i < order.size(); ++i) {
    const int64_t group = int64_t(i) / kLanes, lane = int64_t(i) % kLanes;
    c.ow[i] = order[i];
    for (const Tap& t : g.cols[size_t(order[i])]) {
      c.mask[size_t(group * g.KW + t.k)] |= 1u << lane;
      c.offset[size_t((group * g.KW + t.k) * kLanes + lane)] = static_cast<int32_t>(t.i * g.xs[3]);
    }
  }
  return c;
}

// The weights as the lane engine reads them: one dword per (tap, step, output channel < kM),
// kStep input channels each (int8: w + 128 as u8; int16: two int16), zeros past Cg and past M;
// for int8 `ones` per step: 1 in the bytes of real channels.
struct LaneWeights {
  int64_t steps, outputs;  // steps per tap; registers (M rounded up to 1, 2, 4, 8 or 16)
  ScratchVector<int32_t> w, ones;
};

template <typename TX>
LaneWeights lane_weights(const Conv& g) {
  constexpr int64_t kStep = TileTraits<TX>::kStep;
  LaneWeights lw;
  lw.steps = (g.Cg + kStep - 1) / kStep;
  lw.outputs = 1;
  while (lw.outputs < g.M) lw.outputs *= 2;
  const int64_t KK = g.KH * g.KW;
  lw.w.assign(size_t(KK * lw.steps * lw.outputs), 0);
  lw.ones.assign(size_t(lw.steps), 0);
  for (int64_t st = 0; st < lw.steps && sizeof(TX) == 1; ++st) {
    uint8_t b[4] = {};
    for (int64_t e = 0; e < kStep; ++e) b[e] = st * kStep + e < g.Cg ? 1 : 0;
    std::memcpy(&lw.ones[size_t(st)], b, 4);
  }
  for (int64_t t = 0; t < KK; ++t) {
    for (int64_t st = 0; st < lw.steps; ++st) {
      for (int64_t m = 0; m < g.M; ++m) {
        TX v[4 / sizeof(TX)] = {};
        for (int64_t e = 0; e < kStep; ++e) {
          const int64_t c = st * kStep + e;
          if (c >= g.Cg) break;
          const int64_t w = g.weights[(m * KK + t) * g.Cg + c];
          v[e] = static_cast<TX>(sizeof(TX) == 1 ? w + 128 : w);  // int8: the u8 bits of w + 128
        }
        std::memcpy(&lw.w[size_t((t * lw.steps + st) * lw.outputs + m)], v, 4);
      }
    }
  }
  return lw;
}

// wide[m][lane] += acc[m]'s lanes (wide[kM]: sum's), then the registers zeroed.
template <int kM>
OPENBPU_TARGET_AVX512 inline void spill_lanes(__m512i (&acc)[kM], __m512i& sum, int64_t (&wide)[kM + 1][kLanes]) {
  alignas(64) int32_t lanes[kLanes];
  for (int m = 0; m <= kM; ++m) {
    _mm512_store_si512(lanes, m < kM ? acc[m] : sum);
    for (int64_t j = 0; j < kLanes; ++j) wide[m][j] += lanes[j];
  }
  for (auto& a : acc) a = _mm512_setzero_si512();
  sum = _mm512_setzero_si512();
}

// out[lane·M + m] = Σ x·w for the sixteen pixels of column group `group` in an output row whose
// valid kernel rows are `rows` (x: the input of the row's image), m < M <= kM. Partial sums
// stay int32 for at most kChunkSteps steps (int8: 8192·4·255·128 < 2^31; int16: 128·2·2^22).
template <typename TX, int kM>
OPENBPU_TARGET_AVX512 void lane_group(const Conv& g, const LaneColumns& cols, const LaneWeights& lw,
                                      const TapSpan rows, const uint8_t* x, int64_t group,
                                      int64_t* out) {
  constexpr bool kInt8 = sizeof(TX) == 1;
  constexpr int64_t kChunkSteps = kInt8 ? 8192 : 128;
  __m512i acc[kM], sum = _mm512_setzero_si512();
  alignas(64) int64_t wide[kM + 1][kLanes] = {};
  for (auto& a : acc) a = _mm512_setzero_si512();
  int64_t pending = 0;
  for (const Tap& r : rows) {
    const uint8_t* row = x + r.i * g.xs[2];
    for (int64_t kw = 0; kw < g.KW; ++kw) {
      const __mmask16 mask = static_cast<__mmask16>(cols.mask[size_t(group * g.KW + kw)]);
      if (mask == 0) continue;
      const __m512i offsets = _mm512_loadu_si512(&cols.offset[size_t((group * g.KW + kw) * kLanes)]);
      const int32_t* w = &lw.w[size_t((r.k * g.KW + kw) * lw.steps * lw.outputs)];
      for (int64_t st = 0; st < lw.steps; ++st, w += lw.outputs) {
        const __m512i xv = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), mask, offsets, row + st * 4, 1);
        for (int m = 0; m < kM; ++m) {
          if constexpr (kInt8) {
            acc[m] = _mm512_dpbusd_epi32(acc[m], _mm512_set1_epi32(w[m]), xv);
          } else {
            acc[m] = _mm512_dpwssd_epi32(acc[m], xv, _mm512_set1_epi32(w[m]));
          }
        }
        if constexpr (kInt8) sum = _mm512_dpbusd_epi32(sum, _mm512_set1_epi32(lw.ones[size_t(st)]), xv);
        if (++pending == kChunkSteps) {
          spill_lanes<kM>(acc, sum, wide);
          pending = 0;
        }
      }
    }
  }
  spill_lanes<kM>(acc, sum, wide);
  for (int64_t j = 0; j < kLanes; ++j) {
    for (int64_t m = 0; m < g.M; ++m) out[j * g.M + m] = wide[m][j] - (kInt8 ? 128 * wide[kM][j] : 0);
  }
}

using LaneGroupFn = void (*)(const Conv&, const LaneColumns&, const LaneWeights&, const TapSpan,
                             const uint8_t*, int64_t, int64_t*);

template <typename TX>
LaneGroupFn lane_group_for(int64_t outputs) {
  switch (outputs) {
    case 1: return &lane_group<TX, 1>;
    case 2: return &lane_group<TX, 2>;
    case 4: return &lane_group<TX, 4>;
    case 8: return &lane_group<TX, 8>;
    default: return &lane_group<TX, 16>;
  }
}

// One host thread's buffers of the lane engine: a finish batch plus one group of pixels.
struct LaneBuffers {
  ScratchVector<int64_t> acc;
  ScratchVector<Pixel> pixels;
  LaneBuffers(const Conv& g, const OutputStage& s)
      : acc(size_t((s.batch + kLanes) * g.M)), pixels(size_t(s.batch + kLanes)) {}
};

// The lane engine over the output rows [begin, end) of all images (row = n·OH + oh), finished
// s.batch pixels at a time.
template <typename TX>
void lane_rows(const Conv& g, const LaneColumns& cols, const LaneWeights& lw, const OutputStage& s,
               FinishFn finish, uint8_t* memory, LaneBuffers& b, int64_t begin, int64_t end) {
  const LaneGroupFn group_fn = lane_group_for<TX>(lw.outputs);
  const int64_t M = g.M;
  int64_t count = 0;
  for (int64_t row = begin; row < end; ++row) {
    const int64_t n = row / g.OH, oh = row % g.OH;
    const uint8_t* x = memory + g.x_address + n * g.xs[0];
    for (int64_t group = 0; group < cols.groups; ++group) {
      group_fn(g, cols, lw, g.rows[size_t(oh)], x, group, b.acc.data() + count * M);
      for (int64_t j = 0; j < kLanes && cols.ow[size_t(group * kLanes + j)] >= 0; ++j) {
        b.pixels[size_t(count++)] = {n, oh, cols.ow[size_t(group * kLanes + j)]};
      }
      if (count < s.batch) continue;
      int64_t done = 0;
      for (; done + s.batch <= count; done += s.batch) {
        finish(s, memory, b.pixels.data() + done, s.batch, b.acc.data() + done * M);
      }
      count -= done;  // the rest (fewer than a batch) to the front
      std::copy_n(b.acc.data() + done * M, count * M, b.acc.data());
      std::copy_n(b.pixels.data() + done, count, b.pixels.data());
    }
  }
  if (count > 0) finish(s, memory, b.pixels.data(), count, b.acc.data());
}

}  // namespace

// Every gathered dword reads up to 3 bytes past a tap's channels: they must be inside memory, at
// int32 offsets.
template <typename TX>
bool lane_engine_fits(const Conv& g) {
  constexpr int64_t e = sizeof(TX), kStep = TileTraits<TX>::kStep;
  if (g.group != 1 || g.M > kLaneOutputs || g.xs[1] != e) return false;
  if (g.xs[0] < 0 || g.xs[2] < 0 || g.xs[3] < 0) return false;
  const int64_t tap_bytes = (g.Cg + kStep - 1) / kStep * 4;
  const int64_t last = g.x_address + (g.N - 1) * g.xs[0] + (g.H - 1) * g.xs[2] + (g.W - 1) * g.xs[3] + tap_bytes;
  return last <= g.memory_bytes && (g.W - 1) * g.xs[3] + tap_bytes < (int64_t{1} << 31);
}

template <typename TX>
void conv_lanes(const Conv& g, const OutputStage& s, FinishFn finish, uint8_t* memory) {
  const LaneColumns cols = lane_columns(g);
  const LaneWeights lw = lane_weights<TX>(g);
  const int64_t rows = g.N * g.OH, parts = part_count(rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(g.OW, 1)));
  ScratchVector<LaneBuffers> buffers;
  buffers.reserve(size_t(parts));
  for (int64_t i = 0; i < parts; ++i) buffers.emplace_back(g, s);
  if (parts == 1) return lane_rows<TX>(g, cols, lw, s, finish, memory, buffers[0], 0, rows);
  for_each_part(parts, [&](int64_t i) {
    lane_rows<TX>(g, cols, lw, s, finish, memory, buffers[size_t(i)], rows * i / parts, rows * (i + 1) / parts);
  });
}

template bool lane_engine_fits<int8_t>(const Conv&);
template bool lane_engine_fits<int16_t>(const Conv&);
template void conv_lanes<int8_t>(const Conv&, const OutputStage&, FinishFn, uint8_t*);
template void conv_lanes<int16_t>(const Conv&, const OutputStage&, FinishFn, uint8_t*);

}  // namespace openbpu::simulator::functional
#endif
