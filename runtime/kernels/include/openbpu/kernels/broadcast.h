// Multidirectional (numpy-style) broadcasting.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "openbpu/kernels/tensor.h"

namespace openbpu::kernels {

// The broadcast result of the given shapes; KernelError naming `op` if incompatible.
Shape broadcast_shapes(std::span<const Shape* const> shapes, std::string_view op);
Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op);

// Element strides of `shape` viewed as `out_shape` (0 along broadcast dimensions).
std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& out_shape);

// The element runs of y = f(a, b) under numpy broadcasting, whatever the element types: adjacent
// dimensions that broadcast alike are merged, and the innermost merged dimension is walked with
// a fixed step per input (1, or 0 where that input is broadcast along it). Planned once per
// call; the typed loop over each run is the caller's (ops/broadcast_binary.h).
class BinaryBroadcastRuns {
 public:
  BinaryBroadcastRuns(const Shape& a, const Shape& b, const Shape& out);

  int64_t a_step() const { return a_step_; }  // 0, 1 or a stride: offset step along a run
  int64_t b_step() const { return b_step_; }

  // Calls run(out_index, a_offset, b_offset, length) for the runs covering output elements
  // [begin, end), in order.
  template <typename Run>
  void for_each_run(int64_t begin, int64_t end, Run&& run) const {
    int64_t i = begin;
    while (i < end) {
      const int64_t col = i % inner_;
      const int64_t len = std::min(inner_ - col, end - i);
      int64_t oa = col * a_step_, ob = col * b_step_;
      int64_t row = i / inner_;
      for (size_t d = dims_.size() - 1; d-- > 0;) {
        const int64_t c = row % dims_[d];
        row /= dims_[d];
        oa += c * a_strides_[d];
        ob += c * b_strides_[d];
      }
      run(i, oa, ob, len);
      i += len;
    }
  }

 private:
  std::vector<int64_t> dims_, a_strides_, b_strides_;  // merged, outermost first
  int64_t inner_ = 1, a_step_ = 0, b_step_ = 0;        // the innermost merged dimension
};

// Walks every element of `out_shape` in row-major order, giving for each the offsets into
// N inputs broadcast to it. fn(out_index, const int64_t* input_offsets) is called once per
// element; inner rows are walked with plain increments.
template <size_t N, typename Fn>
void for_each_broadcast(const Shape& out_shape, const std::array<const Shape*, N>& inputs,
                        Fn&& fn) {
  const int64_t total = shape_element_count(out_shape);
  if (total == 0) return;
  const size_t rank = out_shape.size();
  std::array<std::vector<int64_t>, N> strides;
  for (size_t k = 0; k < N; ++k) strides[k] = broadcast_strides(*inputs[k], out_shape);
  const int64_t inner = rank == 0 ? 1 : out_shape[rank - 1];
  std::array<int64_t, N> inner_step{};
  for (size_t k = 0; k < N; ++k) inner_step[k] = rank == 0 ? 0 : strides[k][rank - 1];
  std::vector<int64_t> index(rank, 0);
  std::array<int64_t, N> base{};
  int64_t out = 0;
  while (out < total) {
    std::array<int64_t, N> offs = base;
    for (int64_t i = 0; i < inner; ++i) {
      fn(out++, offs.data());
      for (size_t k = 0; k < N; ++k) offs[k] += inner_step[k];
    }
    // advance the outer index (all dims but the last)
    for (size_t d = rank < 2 ? 0 : rank - 1; d-- > 0;) {
      if (++index[d] < out_shape[d]) {
        for (size_t k = 0; k < N; ++k) base[k] += strides[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k) base[k] -= strides[k][d] * (out_shape[d] - 1);
      index[d] = 0;
    }
  }
}

}  // namespace openbpu::kernels
