// Building blocks for elementwise kernels: a unary map and a broadcasting binary map, both
// parallel over large tensors.
#pragma once

#include <array>

#include "openbpu/kernels/broadcast.h"
#include "openbpu/kernels/kernel.h"

namespace openbpu::kernels {

// Elements per parallel chunk for cheap elementwise work.
inline constexpr int64_t kElementwiseChunk = 1 << 14;

// out[i] = f(in[i]) over all elements; In/Out are element types, f works on ComputeType.
template <typename In, typename Out, typename F>
void map_unary(ThreadPool* pool, const Tensor& x, Tensor& y, F f) {
  const In* in = x.data<In>();
  Out* out = y.data<Out>();
  parallel_for(pool, x.element_count(), kElementwiseChunk, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = from_compute<Out>(f(to_compute(in[i])));
  });
}

// out = f(a, b) with broadcasting; `y` must already have the broadcast shape.
template <typename A, typename B, typename Out, typename F>
void map_binary(ThreadPool* pool, const Tensor& a, const Tensor& b, Tensor& y, F f) {
  const A* pa = a.data<A>();
  const B* pb = b.data<B>();
  Out* out = y.data<Out>();
  const int64_t n = y.element_count();
  if (a.shape() == y.shape() && b.shape() == y.shape()) {
    parallel_for(pool, n, kElementwiseChunk, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) out[i] = from_compute<Out>(f(to_compute(pa[i]), to_compute(pb[i])));
    });
  } else if (b.element_count() == 1 && a.shape() == y.shape()) {
    const auto vb = to_compute(pb[0]);
    parallel_for(pool, n, kElementwiseChunk, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) out[i] = from_compute<Out>(f(to_compute(pa[i]), vb));
    });
  } else if (a.element_count() == 1 && b.shape() == y.shape()) {
    const auto va = to_compute(pa[0]);
    parallel_for(pool, n, kElementwiseChunk, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) out[i] = from_compute<Out>(f(va, to_compute(pb[i])));
    });
  } else {
    const std::array<const Shape*, 2> shapes{&a.shape(), &b.shape()};
    for_each_broadcast<2>(y.shape(), shapes, [&](int64_t i, const int64_t* off) {
      out[i] = from_compute<Out>(f(to_compute(pa[off[0]]), to_compute(pb[off[1]])));
    });
  }
}

}  // namespace openbpu::kernels
