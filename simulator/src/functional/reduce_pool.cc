// Functional units kReduce, kSoftmax, kAveragePool and kMaxPool (isa.h): exact int64 window sums and
// maxima, then the instruction's multiplier.
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <vector>

#include "openbpu/simulator/integer_arithmetic.h"
#include "openbpu/simulator/program.h"
#include "access.h"
#include "isa_clones.h"
#include "parallel.h"
#include "scratch.h"
#include "units.h"

namespace openbpu::simulator::functional {

namespace {

using isa::ElementType;
using isa::kMaxRank;
using simulator::HostIsa;

// Calls fn(index, byte offset, dense output offset) for every element of x in row-major order,
// where the dense output offset advances by out_strides (0 on the reduced axes).
template <typename Fn>
void for_each_element(const isa::TensorDesc& x, const std::array<int64_t, kMaxRank>& out_strides,
                      Fn&& fn) {
  uint32_t index[kMaxRank] = {};
  const uint32_t rank = x.rank;
  const int64_t inner = rank == 0 ? 1 : x.dims[rank - 1];
  const int64_t x_inner = rank == 0 ? 0 : x.strides[rank - 1];
  const int64_t o_inner = rank == 0 ? 0 : out_strides[rank - 1];
  int64_t xo = x.address, oo = 0;
  while (true) {
    for (int64_t i = 0; i < inner; ++i) fn(xo + i * x_inner, oo + i * o_inner);
    int d = static_cast<int>(rank) - 2;
    for (; d >= 0; --d) {
      xo += x.strides[d];
      oo += out_strides[size_t(d)];
      if (++index[d] < x.dims[d]) break;
      xo -= int64_t{x.strides[d]} * x.dims[d];
      oo -= out_strides[size_t(d)] * x.dims[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

// The rows [r0, r1) of a reduction's walk over x (its second operand: the accumulator index)
// into acc + part · count.
template <typename T>
struct ReduceRows {
  struct Context {
    Walk<2> w;
    int64_t x_address;
    bool mean;
    int64_t count;
    int64_t* accs;
    const uint8_t* memory;
  };
  template <HostIsa>
  OPENBPU_INLINE static void run(const Context& c, const int64_t& r0, const int64_t& r1, const int64_t& part) {
    const Walk<2>& w = c.w;
    const int64_t n = w.dims[w.rank - 1], ix = w.strides[0][w.rank - 1], ia = w.strides[1][w.rank - 1];
    int64_t* acc = c.accs + part * c.count;
    for_rows(w, {c.x_address, int64_t{0}}, r0, r1, [&](const std::array<int64_t, 2>& o) {
      const uint8_t* px = c.memory + o[0];
      int64_t* a = acc + o[1];
      if (c.mean && ix == int64_t{sizeof(T)} && ia == 1) {
        for (int64_t i = 0; i < n; ++i) a[i] += load<T>(px + i * int64_t{sizeof(T)});
      } else if (c.mean) {
        for (int64_t i = 0; i < n; ++i) a[i * ia] += load<T>(px + i * ix);
      } else if (ix == int64_t{sizeof(T)} && ia == 1) {
        for (int64_t i = 0; i < n; ++i) a[i] = std::max<int64_t>(a[i], load<T>(px + i * int64_t{sizeof(T)}));
      } else {
        for (int64_t i = 0; i < n; ++i) a[i * ia] = std::max<int64_t>(a[i * ia], load<T>(px + i * ix));
      }
    });
  }
};

// kReduce (mean, max): exact int64 sums or maxima, per part of x's rows on the host threads,
// then combined (the same values in any order), then the multiplier.
template <typename T>
struct ReduceKernel {
  template <HostIsa kIsa>
  OPENBPU_INLINE static void run(const isa::ReduceInstruction& in, uint8_t* const& memory) {
    const isa::TensorDesc &x = in.input, &y = in.output;
    // Dense row-major strides of y, used for the accumulators; 0 on the reduced axes for x's walk.
    std::array<int64_t, kMaxRank> dense{}, walk{};
    int64_t count = 1;
    for (uint32_t d = y.rank; d-- > 0;) {
      dense[d] = count;
      walk[d] = (in.axes_mask >> d) & 1u ? 0 : count;
      count *= y.dims[d];
    }
    const bool mean = in.op == isa::ReduceOp::kMean;
    // x's elements in its memory order (exact sums and maxima do not depend on it), with the
    // accumulator index as a pseudo operand: rows along NHWC channels are unit-stride loops.
    isa::TensorDesc acc_index = x;
    for (uint32_t d = 0; d < x.rank; ++d) acc_index.strides[d] = static_cast<int32_t>(walk[d]);
    Walk<2> w = make_walk<2>({&x, &acc_index}, 0);
    cut_long_rows(w);
    const int64_t rows = row_count(w), parts = row_parts(rows, w.dims[w.rank - 1]);
    ScratchVector<int64_t> accs(static_cast<size_t>(parts * count), mean ? 0 : int64_t{std::numeric_limits<T>::min()});
    split_rows<ReduceRows<T>, kIsa>(typename ReduceRows<T>::Context{w, int64_t{x.address}, mean, count, accs.data(), memory},
                                    rows, parts);
    for (int64_t part = 1; part < parts; ++part) {
      for (int64_t i = 0; i < count; ++i) {
        const int64_t v = accs[size_t(part * count + i)];
        accs[size_t(i)] = mean ? accs[size_t(i)] + v : std::max(accs[size_t(i)], v);
      }
    }
    const FixedPointMultiplier f{in.multiplier, in.shift};
    // Walk y's elements: byte offsets in memory and dense accumulator offsets.
    for_each_element(y, dense, [&](int64_t yo, int64_t o) {
      const int64_t v = mean ? saturate<T>(apply_multiplier(accs[size_t(o)], f)) : accs[size_t(o)];
      store<T>(memory + yo, static_cast<T>(v));
    });
  }
};

// kArgMax / kArgMin: one axis `a`; for every output element, scan x along a and keep the first
// maximum (minimum).
template <typename T, bool kMin>
void arg_extreme_typed(const isa::ReduceInstruction& in, uint8_t* memory) {
  const isa::TensorDesc &x = in.input, &y = in.output;
  const uint32_t a = static_cast<uint32_t>(std::countr_zero(in.axes_mask));
  const int64_t extent = x.dims[a];
  const int64_t step = x.strides[a];
  // Walk y's index space; x's element [ι with axis a = 0] is at the same index in x.
  uint32_t index[kMaxRank] = {};
  const uint64_t total = element_count(y);
  for (uint64_t i = 0; i < total; ++i) {
    int64_t xo = x.address, yo = y.address;
    for (uint32_t d = 0; d < y.rank; ++d) {
      xo += int64_t{index[d]} * x.strides[d];
      yo += int64_t{index[d]} * y.strides[d];
    }
    T best_value = load<T>(memory + xo);
    int32_t best = 0;
    for (int64_t k = 1; k < extent; ++k) {
      const T v = load<T>(memory + xo + k * step);
      if (kMin ? v < best_value : v > best_value) {
        best_value = v;
        best = static_cast<int32_t>(k);
      }
    }
    store<int32_t>(memory + yo, best);
    for (uint32_t d = y.rank; d-- > 0;) {
      if (++index[d] < y.dims[d]) break;
      index[d] = 0;
    }
  }
}

// kSoftmax: every row along `axis` through integer_arithmetic.h's softmax_row.
template <typename TX, typename TY>
void softmax_typed(const isa::SoftmaxInstruction& in, uint8_t* memory) {
  const isa::TensorDesc &x = in.input, &y = in.output;
  const SoftmaxMultipliers m{{in.exponent_multiplier, in.exponent_shift}, {in.output_multiplier, in.output_shift}};
  const int64_t extent = x.dims[in.axis];
  const int64_t x_step = x.strides[in.axis], y_step = y.strides[in.axis];
  // Walk the index space with the axis held at 0.
  uint32_t index[kMaxRank] = {};
  uint64_t rows = 1;
  for (uint32_t d = 0; d < x.rank; ++d) rows *= d == in.axis ? 1 : x.dims[d];
  ScratchVector<int32_t> exps(static_cast<size_t>(extent));  // the row's e_k, in the unit's buffer
  for (uint64_t r = 0; r < rows; ++r) {
    int64_t xo = x.address, yo = y.address;
    for (uint32_t d = 0; d < x.rank; ++d) {
      xo += int64_t{index[d]} * x.strides[d];
      yo += int64_t{index[d]} * y.strides[d];
    }
    softmax_row<TY>(
        extent, m, exps.data(), [&](int64_t k) { return int64_t{load<TX>(memory + xo + k * x_step)}; },
        [&](int64_t k, TY v) { store<TY>(memory + yo + k * y_step, v); });
    for (uint32_t d = x.rank; d-- > 0;) {
      if (d == in.axis) continue;
      if (++index[d] < x.dims[d]) break;
      index[d] = 0;
    }
  }
}

// ------------------------------------------------------------------ pooling

// Valid input indices of each output index along one axis of a pooling window.
ScratchVector<ScratchVector<int64_t>> window_table(int64_t out, int64_t in, int64_t kernel,
                                               int64_t stride, int64_t dilation, int64_t pad) {
  ScratchVector<ScratchVector<int64_t>> table(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t k = 0; k < kernel; ++k) {
      const int64_t i = o * stride - pad + k * dilation;
      if (i >= 0 && i < in) table[size_t(o)].push_back(i);
    }
  }
  return table;
}

// For every output pixel (n, oh, ow): acc[c] = init, combine(acc[c], x) over the window's
// elements, then emit(n, oh, ow, acc) writes the pixel's channels. Channels innermost.
template <typename T, typename Combine, typename Emit>
void pool(const isa::PoolInstruction& in, uint8_t* memory, int64_t init, Combine&& combine,
          Emit&& emit) {
  const isa::TensorDesc &x = in.input, &y = in.output;
  const int64_t N = y.dims[0], C = y.dims[1], OH = y.dims[2], OW = y.dims[3];
  const auto rows = window_table(OH, x.dims[2], in.kernel_h, in.stride_h, in.dilation_h, in.pad_top);
  const auto cols = window_table(OW, x.dims[3], in.kernel_w, in.stride_w, in.dilation_w, in.pad_left);
  const int64_t sc = x.strides[1];
  ScratchVector<int64_t> acc(static_cast<size_t>(C));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t oh = 0; oh < OH; ++oh) {
      for (int64_t ow = 0; ow < OW; ++ow) {
        std::fill(acc.begin(), acc.end(), init);
        for (int64_t ih : rows[size_t(oh)]) {
          for (int64_t iw : cols[size_t(ow)]) {
            const uint8_t* p = memory + x.address + n * x.strides[0] + ih * x.strides[2] +
                               iw * x.strides[3];
            for (int64_t c = 0; c < C; ++c) {
              acc[size_t(c)] = combine(acc[size_t(c)], int64_t{load<T>(p + c * sc)});
            }
          }
        }
        emit(n, oh, ow, acc.data());
      }
    }
  }
}

// Byte pointer of y[n, 0, oh, ow].
uint8_t* pixel(const isa::TensorDesc& y, uint8_t* memory, int64_t n, int64_t oh, int64_t ow) {
  return memory + y.address + n * y.strides[0] + oh * y.strides[2] + ow * y.strides[3];
}

template <typename T>
void average_pool_typed(const isa::PoolInstruction& in, uint8_t* memory) {
  const isa::TensorDesc& y = in.output;
  const int64_t C = y.dims[1], OH = y.dims[2], OW = y.dims[3];
  ScratchVector<int64_t> row_counts(static_cast<size_t>(OH)), col_counts(static_cast<size_t>(OW));
  for (int64_t i = 0; i < OH; ++i) row_counts[size_t(i)] = load<int32_t>(memory + in.row_counts + 4 * i);
  for (int64_t i = 0; i < OW; ++i) col_counts[size_t(i)] = load<int32_t>(memory + in.col_counts + 4 * i);
  ScratchVector<FixedPointMultiplier> table;
  for (int64_t d = 0; d < int64_t{in.kernel_h} * in.kernel_w; ++d) {
    table.push_back(read_multiplier(memory, static_cast<uint32_t>(in.table + 8 * d)));
  }
  pool<T>(
      in, memory, 0, [](int64_t a, int64_t v) { return a + v; },
      [&](int64_t n, int64_t oh, int64_t ow, const int64_t* sums) {
        const int64_t d = row_counts[size_t(oh)] * col_counts[size_t(ow)];
        uint8_t* out = pixel(y, memory, n, oh, ow);
        for (int64_t c = 0; c < C; ++c) {
          const T v = d == 0 ? T{0} : saturate<T>(apply_multiplier(sums[c], table[size_t(d - 1)]));
          store<T>(out + c * y.strides[1], v);
        }
      });
}

template <typename T>
void max_pool_typed(const isa::PoolInstruction& in, uint8_t* memory) {
  const isa::TensorDesc& y = in.output;
  const int64_t C = y.dims[1];
  pool<T>(
      in, memory, std::numeric_limits<T>::min(),
      [](int64_t a, int64_t v) { return std::max(a, v); },
      [&](int64_t n, int64_t oh, int64_t ow, const int64_t* maxima) {
        uint8_t* out = pixel(y, memory, n, oh, ow);
        for (int64_t c = 0; c < C; ++c) store<T>(out + c * y.strides[1], static_cast<T>(maxima[c]));
      });
}

}  // namespace

void softmax(const isa::SoftmaxInstruction& in, Memory memory) {
  with_activation_type(in.input.type, [&](auto x_tag) {
    with_activation_type(in.output.type, [&](auto y_tag) {
      softmax_typed<decltype(x_tag), decltype(y_tag)>(in, memory.data());
    });
  });
}

void reduce(const isa::ReduceInstruction& in, Memory memory) {
  if (in.op == isa::ReduceOp::kArgMax) {
    with_activation_type(in.input.type,
                         [&](auto tag) { arg_extreme_typed<decltype(tag), false>(in, memory.data()); });
    return;
  }
  if (in.op == isa::ReduceOp::kArgMin) {
    with_activation_type(in.input.type,
                         [&](auto tag) { arg_extreme_typed<decltype(tag), true>(in, memory.data()); });
    return;
  }
  with_activation_type(in.input.type,
                       [&](auto tag) { host_dispatch<ReduceKernel<decltype(tag)>>(in, memory.data()); });
}

void average_pool(const isa::PoolInstruction& in, Memory memory) {
  with_activation_type(in.input.type,
                       [&](auto tag) { average_pool_typed<decltype(tag)>(in, memory.data()); });
}

void max_pool(const isa::PoolInstruction& in, Memory memory) {
  with_activation_type(in.input.type,
                       [&](auto tag) { max_pool_typed<decltype(tag)>(in, memory.data()); });
}

}  // namespace openbpu::simulator::functional
