// Functional units kElementwise, kLut, kRequantize and kClamp (isa.h): one value per index,
// read and written through the descriptors' strides.
//
// The index space is walked row by row in the output's memory order (the innermost axis after
// merging axes that are contiguous in every operand and dropping axes of extent 1), so a dense
// or NHWC-padded tensor is a few long rows; rows whose operands are dense or broadcast take
// loops with unit strides that the compiler vectorises per host ISA.
#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "access.h"
#include "conv_stage.h"
#include "input_tables.h"
#include "isa_clones.h"
#include "lut_int16_lanes.h"
#include "openbpu/simulator/integer_arithmetic.h"
#include "parallel.h"
#include "scratch.h"
#include "units.h"

namespace openbpu::simulator::functional {

namespace {

using isa::ElementType;
using isa::kMaxRank;
using simulator::HostIsa;

// Calls fn(x, y) with byte pointers for every index of two descriptors of the same dims.
template <typename Fn>
void for_each_pair(const isa::TensorDesc& x, const isa::TensorDesc& y, uint8_t* memory, Fn&& fn) {
  const Walk<2> w = make_walk<2>({&x, &y}, 1);
  const int64_t n = w.dims[w.rank - 1];
  const int64_t ix = w.strides[0][w.rank - 1], iy = w.strides[1][w.rank - 1];
  for_each_row(w, {int64_t{x.address}, int64_t{y.address}}, [&](const std::array<int64_t, 2>& o) {
    const uint8_t* px = memory + o[0];
    uint8_t* py = memory + o[1];
    for (int64_t i = 0; i < n; ++i) fn(px + i * ix, py + i * iy);
  });
}

// Calls row(x, ix, y, iy, n) for the rows [r0, r1) of a context's two-operand walk (c.w from
// c.base in c.memory): the row's byte addresses, element strides in bytes and length.
template <typename Context, typename Row>
[[gnu::always_inline]] inline void for_pair_rows(const Context& c, int64_t r0, int64_t r1,
                                                 Row&& row) {
  const Walk<2>& w = c.w;
  const int64_t n = w.dims[w.rank - 1];
  const int64_t ix = w.strides[0][w.rank - 1], iy = w.strides[1][w.rank - 1];
  for_rows(
      w, c.base, r0, r1, [&](const std::array<int64_t, 2>& o) __attribute__((always_inline)) {
        row(c.memory + o[0], ix, c.memory + o[1], iy, n);
      });
}

// ------------------------------------------------------------------ kElementwise

struct ElementwiseParams {
  isa::ElementwiseOp op;
  PreparedMultiplier pa, pb;
  uint32_t intermediate_shift;
  int64_t lo, hi;
};

// One row of n values; kOp is the operation when known at compile time (dense rows), else
// p.op. Every rescaled value is below 2^47 in magnitude (an int16 times a
// multiplier below 2^31), so their combination takes the int64 rounding shift.
template <typename TA, typename TB, typename TY, int kOp = -1>
OPENBPU_INLINE void elementwise_row(const ElementwiseParams p, const uint8_t* a, int64_t ia, const uint8_t* b,
                                    int64_t ib, uint8_t* y, int64_t iy, int64_t n) {
  const isa::ElementwiseOp op = kOp < 0 ? p.op : static_cast<isa::ElementwiseOp>(kOp);
  const int shift = static_cast<int>(p.intermediate_shift);
  for (int64_t i = 0; i < n; ++i) {
    const int32_t va = load<TA>(a + i * ia), vb = load<TB>(b + i * ib);
    int64_t v;
    if (op == isa::ElementwiseOp::kMul) {
      // |a·b| <= 2^30: the product is an int32.
      v = saturate<TY>(p.pa.apply(va * vb));
    } else if (op == isa::ElementwiseOp::kAdd) {
      v = saturate<TY>(round_shift_right_int64(p.pa.apply(va) + p.pb.apply(vb), shift));
    } else {
      const int64_t xa = p.pa.apply(va), xb = p.pb.apply(vb);
      v = saturate<TY>(round_shift_right_int64(isa::combine_rescaled(op, xa, xb, p.intermediate_shift), shift));
    }
    store<TY>(y + i * iy, static_cast<TY>(std::min(std::max(v, p.lo), p.hi)));
  }
}

// A row of the walk whose operands are dense or broadcast (stride 0) within it: the broadcast
// values repeated into `fill` rows first, so the row loop has unit strides and vectorises.
template <typename T>
OPENBPU_INLINE const uint8_t* dense_operand(const uint8_t* p, int64_t stride, int64_t n, T* fill) {
  if (stride != 0) return p;
  std::fill(fill, fill + n, load<T>(p));
  return reinterpret_cast<const uint8_t*>(fill);
}

#if OPENBPU_HOST_X86
// Eight values of T at p, sign-extended to int64 lanes.
template <typename T>
OPENBPU_TARGET_AVX512 inline __m512i load8_epi64(const uint8_t* p) {
  if constexpr (sizeof(T) == 1) {
    return _mm512_cvtepi8_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  } else if constexpr (sizeof(T) == 2) {
    return _mm512_cvtepi16_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  } else {
    return _mm512_cvtepi32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
}

// Eight int64 lanes stored as T with signed saturation (saturate<T>).
template <typename T>
OPENBPU_TARGET_AVX512 inline void store8_saturated(uint8_t* p, __m512i v) {
  if constexpr (sizeof(T) == 1) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm512_cvtsepi64_epi8(v));
  } else {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtsepi64_epi16(v));
  }
}

// PreparedMultiplier::apply on int64 lanes holding int32 values: vpmuldq multiplies the lanes'
// low halves as signed 32-bit values (the compiler's own form is the three-uop vpmullq).
OPENBPU_TARGET_AVX512 inline __m512i apply8(__m512i x, __m512i multiplier, __m512i rounding, __m128i shift) {
  return _mm512_sra_epi64(_mm512_add_epi64(_mm512_mul_epi32(x, multiplier), rounding), shift);
}

// elementwise_row for kAdd, kSub, kMul, kMax and kMin on dense rows, eight values a step (the
// last n % 8 by elementwise_row).
template <typename TA, typename TB, typename TY, int kOp>
OPENBPU_TARGET_AVX512 inline void elementwise_row_avx512(const ElementwiseParams& p, const uint8_t* a,
                                                         const uint8_t* b, uint8_t* y, int64_t n) {
  using isa::ElementwiseOp;
  constexpr int64_t sa = sizeof(TA), sb = sizeof(TB), sy = sizeof(TY);
  const __m512i ma = _mm512_set1_epi64(p.pa.multiplier), ra = _mm512_set1_epi64(p.pa.rounding);
  const __m512i mb = _mm512_set1_epi64(p.pb.multiplier), rb = _mm512_set1_epi64(p.pb.rounding);
  const __m128i ka = _mm_cvtsi64_si128(p.pa.shift), kb = _mm_cvtsi64_si128(p.pb.shift);
  const int64_t shift = p.intermediate_shift;
  const __m512i round = _mm512_set1_epi64(shift > 0 ? int64_t{1} << (shift - 1) : 0);
  const __m128i k = _mm_cvtsi64_si128(shift);
  const __m512i type_min = _mm512_set1_epi64(std::numeric_limits<TY>::min());
  const __m512i type_max = _mm512_set1_epi64(std::numeric_limits<TY>::max());
  const __m512i lo = _mm512_set1_epi64(p.lo), hi = _mm512_set1_epi64(p.hi);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m512i va = load8_epi64<TA>(a + i * sa), vb = load8_epi64<TB>(b + i * sb);
    __m512i v;
    if constexpr (kOp == int(ElementwiseOp::kMul)) {
      v = apply8(_mm512_mul_epi32(va, vb), ma, ra, ka);  // |a·b| <= 2^30: an int32 in each lane
    } else {
      const __m512i xa = apply8(va, ma, ra, ka), xb = apply8(vb, mb, rb, kb);
      if constexpr (kOp == int(ElementwiseOp::kAdd)) v = _mm512_add_epi64(xa, xb);
      if constexpr (kOp == int(ElementwiseOp::kSub)) v = _mm512_sub_epi64(xa, xb);
      if constexpr (kOp == int(ElementwiseOp::kMax)) v = _mm512_max_epi64(xa, xb);
      if constexpr (kOp == int(ElementwiseOp::kMin)) v = _mm512_min_epi64(xa, xb);
      v = _mm512_sra_epi64(_mm512_add_epi64(v, round), k);
    }
    v = _mm512_min_epi64(_mm512_max_epi64(v, type_min), type_max);
    v = _mm512_min_epi64(_mm512_max_epi64(v, lo), hi);
    if constexpr (sy == 1) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(y + i), _mm512_cvtepi64_epi8(v));
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y + 2 * i), _mm512_cvtepi64_epi16(v));
    }
  }
  elementwise_row<TA, TB, TY, kOp>(p, a + i * sa, sa, b + i * sb, sb, y + i * sy, sy, n - i);
}
#endif

// Every operation but the comparisons, known at compile time, on dense rows.
template <typename TA, typename TB, typename TY, HostIsa kIsa>
OPENBPU_INLINE void elementwise_dense(const ElementwiseParams& p, const uint8_t* a, const uint8_t* b, uint8_t* y,
                                      int64_t n) {
  using isa::ElementwiseOp;
  constexpr int64_t sa = sizeof(TA), sb = sizeof(TB), sy = sizeof(TY);
#if OPENBPU_HOST_X86
  if constexpr (kIsa == HostIsa::kAvx512) {
    switch (p.op) {
      case ElementwiseOp::kAdd: return elementwise_row_avx512<TA, TB, TY, int(ElementwiseOp::kAdd)>(p, a, b, y, n);
      case ElementwiseOp::kSub: return elementwise_row_avx512<TA, TB, TY, int(ElementwiseOp::kSub)>(p, a, b, y, n);
      case ElementwiseOp::kMul: return elementwise_row_avx512<TA, TB, TY, int(ElementwiseOp::kMul)>(p, a, b, y, n);
      case ElementwiseOp::kMax: return elementwise_row_avx512<TA, TB, TY, int(ElementwiseOp::kMax)>(p, a, b, y, n);
      case ElementwiseOp::kMin: return elementwise_row_avx512<TA, TB, TY, int(ElementwiseOp::kMin)>(p, a, b, y, n);
      default: break;
    }
  }
#endif
  switch (p.op) {
    case ElementwiseOp::kAdd: return elementwise_row<TA, TB, TY, int(ElementwiseOp::kAdd)>(p, a, sa, b, sb, y, sy, n);
    case ElementwiseOp::kSub: return elementwise_row<TA, TB, TY, int(ElementwiseOp::kSub)>(p, a, sa, b, sb, y, sy, n);
    case ElementwiseOp::kMul: return elementwise_row<TA, TB, TY, int(ElementwiseOp::kMul)>(p, a, sa, b, sb, y, sy, n);
    case ElementwiseOp::kMax: return elementwise_row<TA, TB, TY, int(ElementwiseOp::kMax)>(p, a, sa, b, sb, y, sy, n);
    case ElementwiseOp::kMin: return elementwise_row<TA, TB, TY, int(ElementwiseOp::kMin)>(p, a, sa, b, sb, y, sy, n);
    default: return elementwise_row<TA, TB, TY>(p, a, sa, b, sb, y, sy, n);
  }
}

// An elementwise instruction's walk and parameters; fill_a / fill_b: a row per part for the
// broadcast operands.
template <typename TA, typename TB, typename TY>
struct ElementwiseRows {
  struct Context {
    Walk<3> w;
    std::array<int64_t, 3> base;
    ElementwiseParams p;
    bool dense;
    TA* fill_a;
    TB* fill_b;
    uint8_t* memory;
  };
  template <HostIsa kIsa>
  OPENBPU_INLINE static void run(const Context& c, const int64_t& r0, const int64_t& r1, const int64_t& part) {
    const Walk<3>& w = c.w;
    const int64_t n = w.dims[w.rank - 1];
    const int64_t ia = w.strides[0][w.rank - 1], ib = w.strides[1][w.rank - 1], iy = w.strides[2][w.rank - 1];
    TA* fill_a = c.fill_a + (ia == 0 ? part * n : 0);
    TB* fill_b = c.fill_b + (ib == 0 ? part * n : 0);
    for_rows(w, c.base, r0, r1, [&](const std::array<int64_t, 3>& o) __attribute__((always_inline)) {
      const uint8_t* a = c.memory + o[0];
      const uint8_t* b = c.memory + o[1];
      uint8_t* y = c.memory + o[2];
      if (c.dense) {
        elementwise_dense<TA, TB, TY, kIsa>(c.p, dense_operand(a, ia, n, fill_a), dense_operand(b, ib, n, fill_b), y,
                                            n);
      } else {
        elementwise_row<TA, TB, TY>(c.p, a, ia, b, ib, y, iy, n);
      }
    });
  }
};

template <typename TA, typename TB, typename TY>
struct ElementwiseKernel {
  template <HostIsa kIsa>
  OPENBPU_INLINE static void run(const isa::ElementwiseInstruction& in, uint8_t* const& memory) {
    using Rows = ElementwiseRows<TA, TB, TY>;
    Walk<3> w = make_walk<3>({&in.a, &in.b, &in.output}, 2);
    cut_long_rows(w);
    const int64_t n = w.dims[w.rank - 1], rows = row_count(w), parts = row_parts(rows, n);
    const int64_t ia = w.strides[0][w.rank - 1], ib = w.strides[1][w.rank - 1], iy = w.strides[2][w.rank - 1];
    const bool dense = (ia == 0 || ia == int64_t{sizeof(TA)}) && (ib == 0 || ib == int64_t{sizeof(TB)}) &&
                       iy == int64_t{sizeof(TY)};
    ScratchVector<TA> fill_a(dense && ia == 0 ? size_t(parts * n) : 0);
    ScratchVector<TB> fill_b(dense && ib == 0 ? size_t(parts * n) : 0);
    const typename Rows::Context c{w,
                                   {int64_t{in.a.address}, int64_t{in.b.address}, int64_t{in.output.address}},
                                   {in.op, PreparedMultiplier(FixedPointMultiplier{in.multiplier_a, in.shift_a}),
                                    PreparedMultiplier(FixedPointMultiplier{in.multiplier_b, in.shift_b}),
                                    in.intermediate_shift, in.clip_min, in.clip_max},
                                   dense,
                                   fill_a.data(),
                                   fill_b.data(),
                                   memory};
    split_rows<Rows, kIsa>(c, rows, parts);
  }
};

template <typename TA, typename TB, typename TY>
void elementwise_typed(const isa::ElementwiseInstruction& in, uint8_t* memory) {
  host_dispatch<ElementwiseKernel<TA, TB, TY>>(in, memory);
}

// ------------------------------------------------------------------ kSelect

template <typename TA, typename TB, typename TY>
void select_typed(const isa::SelectInstruction& in, uint8_t* memory) {
  const Walk<4> w = make_walk<4>({&in.condition, &in.a, &in.b, &in.output}, 3);
  const int64_t n = w.dims[w.rank - 1];
  const int64_t ic = w.strides[0][w.rank - 1], ia = w.strides[1][w.rank - 1], ib = w.strides[2][w.rank - 1],
                iy = w.strides[3][w.rank - 1];
  const PreparedMultiplier pa(FixedPointMultiplier{in.multiplier_a, in.shift_a}),
      pb(FixedPointMultiplier{in.multiplier_b, in.shift_b});
  const int shift = static_cast<int>(in.intermediate_shift);
  for_each_row(w, {int64_t{in.condition.address}, int64_t{in.a.address}, int64_t{in.b.address}, int64_t{in.output.address}},
               [&](const std::array<int64_t, 4>& o) {
                 const uint8_t* c = memory + o[0];
                 const uint8_t* a = memory + o[1];
                 const uint8_t* b = memory + o[2];
                 uint8_t* y = memory + o[3];
                 for (int64_t i = 0; i < n; ++i) {
                   const int64_t v = load<int8_t>(c + i * ic) != 0 ? pa.apply(load<TA>(a + i * ia))
                                                                   : pb.apply(load<TB>(b + i * ib));
                   store<TY>(y + i * iy, static_cast<TY>(saturate<TY>(round_shift_right_int64(v, shift))));
                 }
               });
}

// ------------------------------------------------------------------ kRequantize

template <typename TX, typename TY>
OPENBPU_INLINE void requantize_row(const PreparedMultiplier* f, int64_t it, const uint8_t* px, int64_t ix, uint8_t* py,
                                   int64_t iy, int64_t n) {
  for (int64_t i = 0; i < n; ++i) store<TY>(py + i * iy, saturate<TY>(f[i * it].apply(load<TX>(px + i * ix))));
}

#if OPENBPU_HOST_X86
// requantize_row on a dense row on AVX-512, eight values a step: PreparedMultiplier::apply by
// vpmuldq (the int32 multiplier in each lane's low half), rounding, arithmetic shift, and a
// saturating store. The entries from `first`: one for the row (it == 0) or one per value (it ==
// 1). The last n % 8 values by requantize_row.
template <typename TX, typename TY>
OPENBPU_TARGET_AVX512 inline void requantize_row_avx512(const PreparedTable& t,
                                                        const PreparedMultiplier* f, int64_t first,
                                                        int64_t it, const uint8_t* px, uint8_t* py,
                                                        int64_t n) {
  const int32_t* mul = t.multiplier.data() + first;
  const int64_t* rounding = t.rounding.data() + first;
  const int64_t* shift = t.shift.data() + first;
  __m512i m = _mm512_set1_epi64(mul[0]), r = _mm512_set1_epi64(rounding[0]),
          k = _mm512_set1_epi64(shift[0]);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    if (it != 0) {
      m = _mm512_cvtepi32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(mul + i)));
      r = _mm512_loadu_si512(rounding + i);
      k = _mm512_loadu_si512(shift + i);
    }
    const __m512i x = load8_epi64<TX>(px + i * int64_t{sizeof(TX)});
    store8_saturated<TY>(py + i * int64_t{sizeof(TY)},
                         _mm512_srav_epi64(_mm512_add_epi64(_mm512_mul_epi32(x, m), r), k));
  }
  requantize_row<TX, TY>(f + i * it, it, px + i * int64_t{sizeof(TX)}, sizeof(TX),
                         py + i * int64_t{sizeof(TY)}, sizeof(TY), n - i);
}
#endif

// A requantize instruction's walk (the multiplier table's index a third operand: stride 1 entry
// along `axis` per channel, else 0) and prepared table (also as columns). Dense rows (one
// multiplier, or one per element of the row) get constant strides: they vectorise.
template <typename TX, typename TY>
struct RequantizeRows {
  struct Context {
    Walk<3> w;
    std::array<int64_t, 3> base;
    const PreparedMultiplier* table;
    const PreparedTable* columns;
    uint8_t* memory;
  };
  template <HostIsa kIsa>
  OPENBPU_INLINE static void run(const Context& c, const int64_t& r0, const int64_t& r1,
                                 const int64_t&) {
    const Walk<3>& w = c.w;
    const int64_t n = w.dims[w.rank - 1];
    const int64_t ix = w.strides[0][w.rank - 1], iy = w.strides[1][w.rank - 1], it = w.strides[2][w.rank - 1];
    const bool dense = ix == int64_t{sizeof(TX)} && iy == int64_t{sizeof(TY)};
    for_rows(w, c.base, r0, r1, [&](const std::array<int64_t, 3>& o) __attribute__((always_inline)) {
      const uint8_t* px = c.memory + o[0];
      uint8_t* py = c.memory + o[1];
      const PreparedMultiplier* f = c.table + o[2];
#if OPENBPU_HOST_X86
      if constexpr (kIsa == HostIsa::kAvx512) {
        if (dense && (it == 0 || it == 1))
          return requantize_row_avx512<TX, TY>(*c.columns, f, o[2], it, px, py, n);
      }
#endif
      if (dense && it == 0) {
        requantize_row<TX, TY>(f, 0, px, sizeof(TX), py, sizeof(TY), n);
      } else if (dense && it == 1) {
        requantize_row<TX, TY>(f, 1, px, sizeof(TX), py, sizeof(TY), n);
      } else {
        requantize_row<TX, TY>(f, it, px, ix, py, iy, n);
      }
    });
  }
};

template <typename TX, typename TY>
struct RequantizeKernel {
  template <HostIsa kIsa>
  OPENBPU_INLINE static void run(const isa::RequantizeInstruction& in, uint8_t* const& memory) {
    const isa::TensorDesc &x = in.input, &y = in.output;
    isa::TensorDesc table_index = y;
    for (uint32_t d = 0; d < kMaxRank; ++d) table_index.strides[d] = 0;
    if (in.count != 1) table_index.strides[in.axis] = 1;
    Walk<3> w = make_walk<3>({&x, &y, &table_index}, 1);
    cut_long_rows(w);
    ScratchVector<PreparedMultiplier> table;
    PreparedTable columns;  // the same, one array per field, for the AVX-512 rows
    for (uint32_t i = 0; i < in.count; ++i) {
      const isa::MultiplierEntry e = load<isa::MultiplierEntry>(memory + in.table + 8 * int64_t{i});
      table.emplace_back(FixedPointMultiplier{e.multiplier, e.shift});
      if constexpr (kIsa == HostIsa::kAvx512)
        columns.push_back(FixedPointMultiplier{e.multiplier, e.shift});
    }

    const int64_t rows = row_count(w);
    split_rows<RequantizeRows<TX, TY>, kIsa>(
        typename RequantizeRows<TX, TY>::Context{
            w, {int64_t{x.address}, int64_t{y.address}, 0}, table.data(), &columns, memory},
        rows, row_parts(rows, w.dims[w.rank - 1]));
  }
};

template <typename TX, typename TY>
void requantize_typed(const isa::RequantizeInstruction& in, uint8_t* memory) {
  host_dispatch<RequantizeKernel<TX, TY>>(in, memory);
}

// ------------------------------------------------------------------ kLut

template <typename Table, typename T>
OPENBPU_INLINE void lut_row(const Table& table, const uint8_t* x, int64_t ix, uint8_t* y, int64_t iy, int64_t n) {
  for (int64_t i = 0; i < n; ++i) store<T>(y + i * iy, table.lookup(load<T>(x + i * ix)));
}

#if OPENBPU_HOST_X86
// Whether the CPU has AVX-512 VBMI (vpermi2b): Ice Lake and later, Zen 4 and later.
bool has_vbmi() {
  static const bool vbmi = __builtin_cpu_supports("avx512vbmi");
  return vbmi;
}

// A dense row of LutInt8::lookup, 64 values a step: the entry is x + 128, i.e. x ^ 0x80;
// vpermi2b picks it by its low seven bits from entries 0..127 or 128..255, its top bit chooses.
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) inline void lut_int8_row_vbmi(
    const LutInt8& t, const uint8_t* x, uint8_t* y, int64_t n) {
  const int8_t* table = t.table.data();
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  for (int64_t i = 0; i < n; i += 64) {
    const __mmask64 m = n - i >= 64 ? ~__mmask64{0} : (__mmask64{1} << (n - i)) - 1;
    const __m512i index = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, x + i), flip);
    const __m512i low = _mm512_permutex2var_epi8(t0, index, t1),
                  high = _mm512_permutex2var_epi8(t2, index, t3);
    _mm512_mask_storeu_epi8(y + i, m,
                            _mm512_mask_blend_epi8(_mm512_movepi8_mask(index), low, high));
  }
}
// A dense row of int8 → int16 lookups (entry x + 128), 64 values a step: the entries' low and
// high bytes as two LutInt8 tables (lut_int8_row_vbmi's step), widened and joined.
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) inline void lut_int8_to_int16_row_vbmi(
    const LutInt8& low, const LutInt8& high, const uint8_t* x, uint8_t* y, int64_t n) {
  const int8_t *tl = low.table.data(), *th = high.table.data();
  const __m512i l0 = _mm512_loadu_si512(tl), l1 = _mm512_loadu_si512(tl + 64);
  const __m512i l2 = _mm512_loadu_si512(tl + 128), l3 = _mm512_loadu_si512(tl + 192);
  const __m512i h0 = _mm512_loadu_si512(th), h1 = _mm512_loadu_si512(th + 64);
  const __m512i h2 = _mm512_loadu_si512(th + 128), h3 = _mm512_loadu_si512(th + 192);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  for (int64_t i = 0; i < n; i += 64) {
    const __mmask64 m = n - i >= 64 ? ~__mmask64{0} : (__mmask64{1} << (n - i)) - 1;
    const __m512i index = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, x + i), flip);
    const __mmask64 top = _mm512_movepi8_mask(index);
    const __m512i lo = _mm512_mask_blend_epi8(top, _mm512_permutex2var_epi8(l0, index, l1),
                                              _mm512_permutex2var_epi8(l2, index, l3));
    const __m512i hi = _mm512_mask_blend_epi8(top, _mm512_permutex2var_epi8(h0, index, h1),
                                              _mm512_permutex2var_epi8(h2, index, h3));
    for (int part = 0; part < 2; ++part) {
      const __m256i lo_half =
          part == 0 ? _mm512_castsi512_si256(lo) : _mm512_extracti64x4_epi64(lo, 1);
      const __m256i hi_half =
          part == 0 ? _mm512_castsi512_si256(hi) : _mm512_extracti64x4_epi64(hi, 1);
      const __m512i words = _mm512_or_si512(_mm512_cvtepu8_epi16(lo_half),
                                            _mm512_slli_epi16(_mm512_cvtepu8_epi16(hi_half), 8));
      _mm512_mask_storeu_epi16(y + 2 * (i + 32 * part), static_cast<__mmask32>(m >> (32 * part)),
                               words);
    }
  }
}
#endif

// A kLut or kLutProduct on int16 x through the table of its 65,536 outputs (int16_input_table),
// built by the unit's AVX-512 rows: dense rows gather sixteen entries a step.
template <typename TY>
struct InputTableRows {
  struct Context {
    Walk<2> w;
    std::array<int64_t, 2> base;
    const uint8_t* table;  // entry x + 32768
    uint8_t* memory;
  };
#if OPENBPU_HOST_X86
  OPENBPU_TARGET_AVX512 static void gather_row(const uint8_t* table, const uint8_t* x, uint8_t* y,
                                               int64_t n) {
    const __m512i bias = _mm512_set1_epi32(32768);
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 in =
          n - i >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
      const __m512i q = _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(in, x + 2 * i));
      // Whole int32s from each entry on: the stores below keep their low bytes.
      const __m512i v =
          _mm512_mask_i32gather_epi32(bias, in, _mm512_add_epi32(q, bias), table, int{sizeof(TY)});
      if constexpr (sizeof(TY) == 1) {
        _mm512_mask_cvtepi32_storeu_epi8(y + i, in, v);
      } else {
        _mm512_mask_cvtepi32_storeu_epi16(y + 2 * i, in, v);
      }
    }
  }
#endif
  template <HostIsa kIsa>
  OPENBPU_INLINE static void run(const Context& c, const int64_t& r0, const int64_t& r1,
                                 const int64_t&) {
    for_pair_rows(
        c, r0, r1,
        [&](const uint8_t* x, int64_t ix, uint8_t* y, int64_t iy, int64_t n)
            __attribute__((always_inline)) {
#if OPENBPU_HOST_X86
              if constexpr (kIsa == HostIsa::kAvx512) {
                if (ix == 2 && iy == int64_t{sizeof(TY)}) return gather_row(c.table, x, y, n);
              }
#endif
              for (int64_t i = 0; i < n; ++i) {
                const auto at = static_cast<size_t>(load<int16_t>(x + i * ix) + 32768);
                store<TY>(y + i * iy, load<TY>(c.table + at * sizeof(TY)));
              }
            });
  }
};

// A LUT instruction's walk and table (fits_int32: LutInt16 in int32, lut_int16_fits_int32).
template <typename Table, typename T>
struct LutRows {
  struct Context {
    Walk<2> w;
    std::array<int64_t, 2> base;
    Table table;
    bool fits_int32;
    uint8_t* memory;
  };
  template <HostIsa kIsa>
  OPENBPU_INLINE static void run(const Context& c, const int64_t& r0, const int64_t& r1, const int64_t&) {
    for_pair_rows(
        c, r0, r1,
        [&](const uint8_t* x, int64_t ix, uint8_t* y, int64_t iy, int64_t n)
            __attribute__((always_inline)) {
              const bool dense = ix == int64_t{sizeof(T)} && iy == int64_t{sizeof(T)};
#if OPENBPU_HOST_X86
              if constexpr (kIsa == HostIsa::kAvx512 && std::is_same_v<Table, LutInt16>) {
                if (dense && c.fits_int32) return lut_int16_row(c.table, x, y, n, true);
              }
              if constexpr (kIsa == HostIsa::kAvx512 && std::is_same_v<Table, LutInt8>) {
                if (dense && has_vbmi()) return lut_int8_row_vbmi(c.table, x, y, n);
              }
#endif
              if (dense) {
                lut_row<Table, T>(c.table, x, sizeof(T), y, sizeof(T), n);
              } else {
                lut_row<Table, T>(c.table, x, ix, y, iy, n);
              }
            });
  }
};

template <typename Table, typename T>
struct LutKernel {
  template <HostIsa kIsa>
  OPENBPU_INLINE static void run(const isa::LutInstruction& in, uint8_t* const& memory) {
    static_assert(std::is_trivially_copyable_v<Table>);
    typename LutRows<Table, T>::Context c{make_walk<2>({&in.input, &in.output}, 1),
                                          {int64_t{in.input.address}, int64_t{in.output.address}},
                                          Table{},
                                          false,
                                          memory};
    std::memcpy(&c.table, memory + in.table, sizeof(Table));
    if constexpr (std::is_same_v<Table, LutInt16>) c.fits_int32 = lut_int16_fits_int32(c.table);
    cut_long_rows(c.w);
    const int64_t rows = row_count(c.w);
#if OPENBPU_HOST_X86
    if constexpr (std::is_same_v<Table, LutInt16> && kIsa == HostIsa::kAvx512) {
      if (c.fits_int32) {
        // The key: the knots (a kLutProduct's key is longer).
        std::vector<uint8_t> key(sizeof c.table);
        std::memcpy(key.data(), &c.table, sizeof c.table);
        const bool build_now = rows * c.w.dims[c.w.rank - 1] >= int64_t{kInt16Inputs};
        if (const uint8_t* t = int16_input_table(key, 2, build_now, [&](uint8_t* table) {
              std::vector<int16_t> x(kInt16Inputs);
              for (size_t i = 0; i < kInt16Inputs; ++i)
                x[i] = static_cast<int16_t>(int64_t(i) - 32768);
              lut_int16_row(c.table, reinterpret_cast<const uint8_t*>(x.data()), table,
                            int64_t{kInt16Inputs}, true);
            })) {
          const typename InputTableRows<int16_t>::Context tc{c.w, c.base, t, memory};
          split_rows<InputTableRows<int16_t>, kIsa>(tc, rows,
                                                    row_parts(rows, c.w.dims[c.w.rank - 1]));
          return;
        }
      }
    }
#endif
    split_rows<LutRows<Table, T>, kIsa>(c, rows, row_parts(rows, c.w.dims[c.w.rank - 1]));
  }
};

// ------------------------------------------------------------------ kLutProduct

// A kLutProduct instruction's walk and fused parameters (isa.h); TN is the table's type.
template <typename Table, typename TN, typename TX, typename TY>
struct LutProductRows {
  struct Context {
    Walk<2> w;
    std::array<int64_t, 2> base;
    Table table;
    bool rescale;
    bool fits_int32;  // LutInt16 in int32 (lut_int16_fits_int32)
    PreparedMultiplier narrow, product;
    int64_t lo, hi;
    uint8_t* memory;
  };

  // The definition, one value: rescale (or not), look up, multiply by x, requantize, clamp.
  OPENBPU_INLINE static TY value(const Context& c, int32_t x) {
    const TN n = c.rescale ? saturate<TN>(c.narrow.apply(x)) : static_cast<TN>(x);
    const int32_t h = c.table.lookup(n);
    const int64_t v = saturate<TY>(c.product.apply(x * h));  // |x·h| <= 2^30
    return static_cast<TY>(std::min(std::max(v, c.lo), c.hi));
  }
  OPENBPU_INLINE static void row(const Context& c, const uint8_t* x, int64_t ix, uint8_t* y,
                                 int64_t iy, int64_t n) {
    for (int64_t i = 0; i < n; ++i) store<TY>(y + i * iy, value(c, load<TX>(x + i * ix)));
  }

#if OPENBPU_HOST_X86
  // PreparedMultiplier::apply on sixteen int32 lanes, clamped to [lo, hi] (inside int32): the
  // even lanes are their int64 lanes' low halves for vpmuldq, the odd ones shifted down to
  // them; the two halves' results recombine by a blend, with no lane crossing.
  OPENBPU_TARGET_AVX512 static __m512i apply16(__m512i x, const PreparedMultiplier& f, int64_t lo,
                                               int64_t hi) {
    const __m512i m = _mm512_set1_epi64(f.multiplier), r = _mm512_set1_epi64(f.rounding);
    const __m128i k = _mm_cvtsi64_si128(f.shift);
    const __m512i l = _mm512_set1_epi64(lo), h = _mm512_set1_epi64(hi);
    const __m512i even = _mm512_min_epi64(_mm512_max_epi64(apply8(x, m, r, k), l), h);
    const __m512i odd =
        _mm512_min_epi64(_mm512_max_epi64(apply8(_mm512_srli_epi64(x, 32), m, r, k), l), h);
    return _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
  }
  // A dense row with an int16 table that fits int32, sixteen values a step (masked at the end).
  OPENBPU_TARGET_AVX512 static void row16(const Context& c, const uint8_t* x, uint8_t* y,
                                          int64_t n) {
    constexpr int64_t tn_min = std::numeric_limits<TN>::min(),
                      tn_max = std::numeric_limits<TN>::max();
    // Copies: the stores through y may alias c, which would reload its fields every step.
    const PreparedMultiplier narrow = c.narrow, product = c.product;
    const int64_t lo = c.lo, hi = c.hi;
    const bool rescale = c.rescale;
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 in =
          n - i >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
      __m512i vx;
      if constexpr (sizeof(TX) == 1) {
        vx = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(in, x + i));
      } else {
        vx = _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(in, x + 2 * i));
      }
      const __m512i vn = rescale ? apply16(vx, narrow, tn_min, tn_max) : vx;
      const __m512i h = lut_int16_lanes(c.table, vn, in);
      const __m512i v = apply16(_mm512_mullo_epi32(vx, h), product, lo, hi);
      if constexpr (sizeof(TY) == 1) {
        _mm512_mask_cvtepi32_storeu_epi8(y + i, in, v);
      } else {
        _mm512_mask_cvtepi32_storeu_epi16(y + 2 * i, in, v);
      }
    }
  }
  // row16 over every int16 x, in order: the outputs' table (entry x + 32768). (GCC 12 takes
  // the intrinsics' undefined vectors for uninitialised values when row16 is inlined here.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
  OPENBPU_TARGET_AVX512 static void table16(const Context& c, uint8_t* table) {
    constexpr int64_t kChunk = 4096;
    alignas(64) int16_t x[kChunk];
    for (int64_t at = 0; at < 65536; at += kChunk) {
      for (int64_t i = 0; i < kChunk; ++i) x[i] = static_cast<int16_t>(at + i - 32768);
      row16(c, reinterpret_cast<const uint8_t*>(x), table + at * int64_t{sizeof(TY)}, kChunk);
    }
  }
#pragma GCC diagnostic pop
#endif

  template <HostIsa kIsa>
  OPENBPU_INLINE static void run(const Context& c, const int64_t& r0, const int64_t& r1,
                                 const int64_t&) {
    for_pair_rows(
        c, r0, r1,
        [&](const uint8_t* x, int64_t ix, uint8_t* y, int64_t iy, int64_t n)
            __attribute__((always_inline)) {
              const bool dense = ix == int64_t{sizeof(TX)} && iy == int64_t{sizeof(TY)};
#if OPENBPU_HOST_X86
              if constexpr (kIsa == HostIsa::kAvx512 && std::is_same_v<Table, LutInt16>) {
                if (dense && c.fits_int32) return row16(c, x, y, n);
              }
#endif
              row(c, x, dense ? int64_t{sizeof(TX)} : ix, y, dense ? int64_t{sizeof(TY)} : iy, n);
            });
  }
};

// A kLutProduct on int8 x: its output is one of 256 values, computed once per instruction by
// the definition (LutProductRows::value); the rows look them up.
template <typename TY>
struct ByteTableRows {
  struct Context {
    Walk<2> w;
    std::array<int64_t, 2> base;
    std::array<TY, 256> by_x;  // entry x + 128
    LutInt8 low, high;         // by_x's low and high bytes (int16 outputs; low: int8 outputs)
    uint8_t* memory;
  };
  template <HostIsa kIsa>
  OPENBPU_INLINE static void run(const Context& c, const int64_t& r0, const int64_t& r1,
                                 const int64_t&) {
    for_pair_rows(
        c, r0, r1,
        [&](const uint8_t* x, int64_t ix, uint8_t* y, int64_t iy, int64_t n)
            __attribute__((always_inline)) {
#if OPENBPU_HOST_X86
              if constexpr (kIsa == HostIsa::kAvx512) {
                if (ix == 1 && iy == int64_t{sizeof(TY)} && has_vbmi()) {
                  if constexpr (sizeof(TY) == 1) return lut_int8_row_vbmi(c.low, x, y, n);
                  if constexpr (sizeof(TY) == 2)
                    return lut_int8_to_int16_row_vbmi(c.low, c.high, x, y, n);
                }
              }
#endif
              for (int64_t i = 0; i < n; ++i)
                store<TY>(y + i * iy, c.by_x[static_cast<size_t>(load<int8_t>(x + i * ix) + 128)]);
            });
  }
};

template <typename Table, typename TN, typename TX, typename TY>
struct LutProductKernel {
  using Rows = LutProductRows<Table, TN, TX, TY>;
#if OPENBPU_HOST_X86
  // The table of the instruction's outputs per int16 x (int16_input_table), or nullptr; the
  // key is everything the definition reads but x.
  static const uint8_t* output_table(const isa::LutProductInstruction& in,
                                     const typename Rows::Context& c, bool build_now) {
    const int32_t fields[] = {
        int32_t{sizeof(TX)},   int32_t{sizeof(TY)}, int32_t(in.table_type), int32_t(in.rescale),
        in.rescale_multiplier, in.rescale_shift,    in.multiplier,          in.shift,
        in.clip_min,           in.clip_max};
    std::vector<uint8_t> key(sizeof fields + sizeof c.table);
    std::memcpy(key.data(), fields, sizeof fields);
    std::memcpy(key.data() + sizeof fields, &c.table, sizeof c.table);
    return int16_input_table(key, sizeof(TY), build_now,
                             [&](uint8_t* table) { Rows::table16(c, table); });
  }
#endif

  template <HostIsa kIsa>
  OPENBPU_INLINE static void run(const isa::LutProductInstruction& in, uint8_t* const& memory) {
    typename Rows::Context c{
        make_walk<2>({&in.input, &in.output}, 1),
        {int64_t{in.input.address}, int64_t{in.output.address}},
        Table{},
        in.rescale != 0,
        false,
        PreparedMultiplier(FixedPointMultiplier{in.rescale_multiplier, in.rescale_shift}),
        PreparedMultiplier(FixedPointMultiplier{in.multiplier, in.shift}),
        in.clip_min,
        in.clip_max,
        memory};
    std::memcpy(&c.table, memory + in.table, sizeof(Table));
    cut_long_rows(c.w);
    const int64_t rows = row_count(c.w);
    if constexpr (sizeof(TX) == 1) {
      typename ByteTableRows<TY>::Context b{c.w, c.base, {}, {}, {}, memory};
      for (int q = -128; q <= 127; ++q) {
        const TY v = Rows::value(c, q);
        const auto bits = static_cast<uint16_t>(v);
        b.by_x[static_cast<size_t>(q + 128)] = v;
        b.low.table[static_cast<size_t>(q + 128)] = static_cast<int8_t>(bits & 0xFF);
        b.high.table[static_cast<size_t>(q + 128)] = static_cast<int8_t>(bits >> 8);
      }
      split_rows<ByteTableRows<TY>, kIsa>(b, rows, row_parts(rows, c.w.dims[c.w.rank - 1]));
    } else {
      // Only the AVX-512 rows of an int16 table ask whether it fits int32.
      if constexpr (std::is_same_v<Table, LutInt16> && kIsa == HostIsa::kAvx512) {
        c.fits_int32 = lut_int16_fits_int32(c.table);
#if OPENBPU_HOST_X86
        if (c.fits_int32) {
          const int64_t n = rows * c.w.dims[c.w.rank - 1];
          if (const uint8_t* t = output_table(in, c, n >= int64_t{kInt16Inputs})) {
            const typename InputTableRows<TY>::Context tc{c.w, c.base, t, memory};
            split_rows<InputTableRows<TY>, kIsa>(tc, rows, row_parts(rows, c.w.dims[c.w.rank - 1]));
            return;
          }
        }
#endif
      }
      split_rows<Rows, kIsa>(c, rows, row_parts(rows, c.w.dims[c.w.rank - 1]));
    }
  }
};

}  // namespace

void elementwise(const isa::ElementwiseInstruction& in, Memory memory) {
  with_activation_type(in.a.type, [&](auto a) {
    with_activation_type(in.b.type, [&](auto b) {
      with_activation_type(in.output.type, [&](auto y) {
        elementwise_typed<decltype(a), decltype(b), decltype(y)>(in, memory.data());
      });
    });
  });
}

void select(const isa::SelectInstruction& in, Memory memory) {
  with_activation_type(in.a.type, [&](auto a) {
    with_activation_type(in.b.type, [&](auto b) {
      with_activation_type(in.output.type, [&](auto y) {
        select_typed<decltype(a), decltype(b), decltype(y)>(in, memory.data());
      });
    });
  });
}

void lut(const isa::LutInstruction& in, Memory memory) {
  if (in.input.type == ElementType::kInt8) {
    host_dispatch<LutKernel<LutInt8, int8_t>>(in, memory.data());
  } else {
    host_dispatch<LutKernel<LutInt16, int16_t>>(in, memory.data());
  }
}

void lut_product(const isa::LutProductInstruction& in, Memory memory) {
  with_activation_type(in.input.type, [&](auto x) {
    with_activation_type(in.output.type, [&](auto y) {
      using TX = decltype(x);
      using TY = decltype(y);
      if (in.table_type == ElementType::kInt8) {
        host_dispatch<LutProductKernel<LutInt8, int8_t, TX, TY>>(in, memory.data());
      } else {
        host_dispatch<LutProductKernel<LutInt16, int16_t, TX, TY>>(in, memory.data());
      }
    });
  });
}

void requantize(const isa::RequantizeInstruction& in, Memory memory) {
  auto with_output = [&](auto x) {
    with_activation_type(in.output.type, [&](auto y) {
      requantize_typed<decltype(x), decltype(y)>(in, memory.data());
    });
  };
  switch (in.input.type) {
    case ElementType::kInt32: with_output(int32_t{}); break;
    case ElementType::kInt16: with_output(int16_t{}); break;
    default: with_output(int8_t{}); break;
  }
}

void clamp(const isa::ClampInstruction& in, Memory memory) {
  with_activation_type(in.input.type, [&](auto tag) {
    using T = decltype(tag);
    const T lo = static_cast<T>(in.lo), hi = static_cast<T>(in.hi);
    for_each_pair(in.input, in.output, memory.data(), [&](const uint8_t* x, uint8_t* y) {
      store<T>(y, std::min(std::max(load<T>(x), lo), hi));
    });
  });
}

}  // namespace openbpu::simulator::functional
