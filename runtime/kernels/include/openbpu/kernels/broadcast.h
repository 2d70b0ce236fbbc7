// Multidirectional (numpy-style) broadcasting.
#pragma once

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
