// Building blocks for elementwise kernels: a unary map and a broadcasting binary map, both
// parallel over large tensors.
#pragma once

#include <array>
#include <type_traits>

#include "openbpu/kernels/broadcast.h"
#include "openbpu/kernels/kernel.h"
#include "openbpu/kernels/vector_clones.h"

namespace openbpu::kernels {

// Elements per parallel chunk for cheap elementwise work.
inline constexpr int64_t kElementwiseChunk = 1 << 16;

// out[i] = f(in[i]) for i in [begin, end).
template <typename In, typename Out, typename F>
struct UnaryRange {
  OPENBPU_KERNEL_INLINE static void run(const In* in, Out* out, int64_t begin, int64_t end,
                                        const F& f) {
    for (int64_t i = begin; i < end; ++i) out[i] = from_compute<Out>(f(to_compute(in[i])));
  }
};

// out[i] = f(in[i]) over all elements; In/Out are element types, f works on ComputeType.
// float32 to float32 runs on the CPU's vector path (vector_clones.h).
template <typename In, typename Out, typename F>
void map_unary(ThreadPool* pool, const Tensor& x, Tensor& y, F f) {
  const In* in = x.data<In>();
  Out* out = y.data<Out>();
  parallel_for(pool, x.element_count(), kElementwiseChunk, [&](int64_t b, int64_t e) {
    if constexpr (std::is_same_v<In, float> && std::is_same_v<Out, float>) {
      vector_dispatch<UnaryRange<In, Out, F>>(in, out, b, e, f);
    } else {
      UnaryRange<In, Out, F>::run(in, out, b, e, f);
    }
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
