// Internal: how the functional units touch device memory — unaligned-safe loads and stores,
// the int8/int16 type dispatch, fixed-point multipliers read from the constant region, and the
// walk over an index space shared by several operands (axes of extent 1 dropped, axes merged
// where every operand steps through them as through one axis).
#pragma once

#include <algorithm>
#include <array>
#include <utility>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "openbpu/simulator/integer_arithmetic.h"
#include "openbpu/simulator/isa.h"

namespace openbpu::simulator::functional {

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// |most negative value| of T: the bound of one product's magnitude.
template <typename T>
constexpr int64_t max_magnitude() {
  return int64_t{1} << (8 * sizeof(T) - 1);
}

// Σ a[i]·b[i] for i < n, exact: int32 partial sums over chunks short enough not to overflow
// (|a·b| <= max|a|·max|b|, so a chunk of 2^30 / that many terms stays within 2^30), added in
// int64; plain int64 when one product may reach 2^30 (int16 × int16).
template <typename TA, typename TB>
[[gnu::always_inline]] inline int64_t dot(const TA* a, const TB* b, int64_t n) {
  constexpr int64_t kProduct = max_magnitude<TA>() * max_magnitude<TB>();
  if constexpr (kProduct >= (int64_t{1} << 30)) {
    int64_t sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += int64_t{int32_t{a[i]} * int32_t{b[i]}};
    return sum;
  } else {
    constexpr int64_t kChunk = (int64_t{1} << 30) / kProduct;
    int64_t total = 0;
    for (int64_t begin = 0; begin < n; begin += kChunk) {
      const int64_t end = std::min(n, begin + kChunk);
      int32_t sum = 0;
      for (int64_t i = begin; i < end; ++i) sum += int32_t{a[i]} * int32_t{b[i]};
      total += sum;
    }
    return total;
  }
}

// Calls fn(T{}) with T the int8/int16 type of `type`.
template <typename Fn>
void with_activation_type(isa::ElementType type, Fn&& fn) {
  if (type == isa::ElementType::kInt16) {
    fn(int16_t{});
  } else {
    fn(int8_t{});
  }
}

// The fixed-point multiplier stored at `address` (an isa::MultiplierEntry).
inline FixedPointMultiplier read_multiplier(const uint8_t* memory, uint64_t address) {
  const isa::MultiplierEntry e = load<isa::MultiplierEntry>(memory + address);
  return {e.multiplier, e.shift};
}

// An index space walked by K operands, each with its own strides (bytes; entries for a
// pseudo operand such as a table index).
template <size_t K>
struct Walk {
  int rank = 0;
  int64_t dims[isa::kMaxRank] = {};
  int64_t strides[K][isa::kMaxRank] = {};
};

// The walk over desc[0]'s dims with every operand's strides. With order_by = k, the axes are
// walked in the order of operand k's memory layout (largest |stride| outermost), so an NHWC
// tensor described in NCHW order has its channels innermost; only for units whose result does
// not depend on the visiting order (one output element from the same index of the inputs).
template <size_t K>
Walk<K> make_walk(const std::array<const isa::TensorDesc*, K>& desc, int order_by = -1) {
  Walk<K> w;
  const isa::TensorDesc& shape = *desc[0];
  std::array<uint32_t, isa::kMaxRank> axes{};
  for (uint32_t d = 0; d < shape.rank; ++d) axes[d] = d;
  if (order_by >= 0) {  // a stable insertion sort: std::stable_sort may allocate
    const auto& strides = desc[size_t(order_by)]->strides;
    for (uint32_t i = 1; i < shape.rank; ++i) {
      for (uint32_t j = i; j > 0 && std::abs(int64_t{strides[axes[j]]}) > std::abs(int64_t{strides[axes[j - 1]]}); --j) {
        std::swap(axes[j], axes[j - 1]);
      }
    }
  }
  for (uint32_t i = 0; i < shape.rank; ++i) {
    const uint32_t d = axes[i];
    const int64_t n = shape.dims[d];
    if (n == 1) continue;
    if (w.rank > 0) {
      const int prev = w.rank - 1;
      bool mergeable = true;
      for (size_t k = 0; k < K; ++k) mergeable = mergeable && w.strides[k][prev] == desc[k]->strides[d] * n;
      if (mergeable) {
        w.dims[prev] *= n;
        for (size_t k = 0; k < K; ++k) w.strides[k][prev] = desc[k]->strides[d];
        continue;
      }
    }
    w.dims[w.rank] = n;
    for (size_t k = 0; k < K; ++k) w.strides[k][w.rank] = desc[k]->strides[d];
    ++w.rank;
  }
  if (w.rank == 0) {  // a single element
    w.dims[0] = 1;
    w.rank = 1;
  }
  return w;
}

// The longest row the units that split rows over the host threads walk.
inline constexpr int64_t kLongestRow = int64_t{1} << 14;

// Cuts the walk's innermost axis into rows of kLongestRow elements, or of its largest
// power-of-two divisor if that is smaller but at least 1024, so that the single long row of a
// dense tensor can be split over host threads. Only for units whose result does not depend on
// where rows end.
template <size_t K>
void cut_long_rows(Walk<K>& w) {
  constexpr int64_t longest = kLongestRow;
  const int last = w.rank - 1;
  const int64_t n = w.dims[last], row = std::min(n & -n, longest);
  if (n <= 2 * longest || row < 1024 || w.rank == int(isa::kMaxRank)) return;
  w.dims[last] = n / row;
  w.dims[w.rank] = row;
  for (size_t k = 0; k < K; ++k) {
    w.strides[k][w.rank] = w.strides[k][last];
    w.strides[k][last] *= row;
  }
  ++w.rank;
}

// The number of rows of a walk (the product of its dims but the innermost).
template <size_t K>
int64_t row_count(const Walk<K>& w) {
  int64_t rows = 1;
  for (int d = 0; d + 1 < w.rank; ++d) rows *= w.dims[d];
  return rows;
}

// Calls row(offsets) for the rows [r0, r1) of the walk's innermost axis, in order; offsets[k]
// starts at operand k's address `base[k]`.
template <size_t K, typename Row>
[[gnu::always_inline]] inline void for_rows(const Walk<K>& w, const std::array<int64_t, K>& base, int64_t r0,
                                            int64_t r1, Row&& row) {
  int64_t index[isa::kMaxRank] = {};
  std::array<int64_t, K> offsets = base;
  int64_t rest = r0;
  for (int d = w.rank - 2; d >= 0; --d) {
    index[d] = rest % w.dims[d];
    rest /= w.dims[d];
    for (size_t k = 0; k < K; ++k) offsets[k] += index[d] * w.strides[k][d];
  }
  for (int64_t r = r0; r < r1; ++r) {
    row(offsets);
    for (int d = w.rank - 2; d >= 0; --d) {
      for (size_t k = 0; k < K; ++k) offsets[k] += w.strides[k][d];
      if (++index[d] < w.dims[d]) break;
      for (size_t k = 0; k < K; ++k) offsets[k] -= w.strides[k][d] * w.dims[d];
      index[d] = 0;
    }
  }
}

// Calls row(offsets) for each row of the walk's innermost axis; offsets[k] starts at operand
// k's address.
template <size_t K, typename Row>
[[gnu::always_inline]] inline void for_each_row(const Walk<K>& w, std::array<int64_t, K> offsets, Row&& row) {
  for_rows(w, offsets, 0, row_count(w), row);
}

}  // namespace openbpu::simulator::functional
