// Softmax, LogSoftmax and Hardmax.
//
// Before opset 13 the input is coerced to 2-D at `axis` (default 1): the operator works on
// rows of prod(shape[axis:]) elements. From opset 13 it works along the single axis `axis`
// (default -1). Both views are (outer, extent, inner) with elements at
// outer * extent * inner + r * inner + i; the old one has inner = 1.
//
// Softmax and LogSoftmax subtract the row maximum before exponentiating (no overflow), compute
// exponentials in the element's compute type (float through the vectorizable fast_exp) and sum
// them in double in a fixed order.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "families.h"
#include "openbpu/kernels/axes.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/elementwise.h"
#include "openbpu/kernels/fast_exp.h"
#include "openbpu/kernels/vector_clones.h"

namespace openbpu::kernels {

namespace {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

constexpr const char* kind_name(SoftmaxKind kind) {
  switch (kind) {
    case SoftmaxKind::kSoftmax: return "Softmax";
    case SoftmaxKind::kLogSoftmax: return "LogSoftmax";
    case SoftmaxKind::kHardmax: return "Hardmax";
  }
  return "";
}

// When the axis is not the last one, up to kMaxTileWidth inner positions are handled together,
// fewer if the axis is so long that the tile's scratch would exceed kMaxTileElements values.
constexpr int64_t kMaxTileWidth = 256;
constexpr int64_t kMaxTileElements = 1 << 16;

// exp on the compute type: the vectorizable fast_exp for float, libm for double.
template <typename C>
OPENBPU_KERNEL_INLINE C exp_of(C v) {
  if constexpr (std::is_same_v<C, float>) {
    return fast_exp(v);
  } else {
    return std::exp(v);
  }
}

// Sum of n values in double, in four interleaved lanes (a fixed order: deterministic).
template <typename C>
OPENBPU_KERNEL_INLINE double lane_sum(const C* v, int64_t n) {
  double lanes[4] = {0.0, 0.0, 0.0, 0.0};
  int64_t r = 0;
  for (; r + 4 <= n; r += 4) {
    for (int j = 0; j < 4; ++j) lanes[j] += static_cast<double>(v[r + j]);
  }
  double sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
  for (; r < n; ++r) sum += static_cast<double>(v[r]);
  return sum;
}

// Maximum of n >= 1 values in four interleaved lanes (independent dependency chains).
template <typename T>
OPENBPU_KERNEL_INLINE ComputeType<T> lane_max(const T* v, int64_t n) {
  using C = ComputeType<T>;
  C lanes[4];
  for (C& lane : lanes) lane = to_compute(v[0]);
  int64_t r = 0;
  for (; r + 4 <= n; r += 4) {
    for (int j = 0; j < 4; ++j) {
      const C x = to_compute(v[r + j]);
      lanes[j] = x > lanes[j] ? x : lanes[j];
    }
  }
  C max = lanes[0];
  for (int j = 1; j < 4; ++j) max = lanes[j] > max ? lanes[j] : max;
  for (; r < n; ++r) max = to_compute(v[r]) > max ? to_compute(v[r]) : max;
  return max;
}

// One row (inner == 1) of `n` contiguous elements. `exps` is scratch for n compute-type values;
// it may be `out` itself when T is its own compute type.
template <SoftmaxKind kKind, typename T>
OPENBPU_KERNEL_INLINE void softmax_row(const T* in, T* out, int64_t n, ComputeType<T>* exps) {
  using C = ComputeType<T>;
  if constexpr (kKind == SoftmaxKind::kHardmax) {
    C max = to_compute(in[0]);
    int64_t argmax = 0;
    for (int64_t r = 1; r < n; ++r) {
      const C v = to_compute(in[r]);
      if (v > max) {
        max = v;
        argmax = r;
      }
    }
    for (int64_t r = 0; r < n; ++r) out[r] = from_compute<T>(C(r == argmax ? 1 : 0));
  } else {
    const C max = lane_max(in, n);
    for (int64_t r = 0; r < n; ++r) exps[r] = exp_of(to_compute(in[r]) - max);
    const double sum = lane_sum(exps, n);
    if constexpr (kKind == SoftmaxKind::kSoftmax) {
      const C scale = static_cast<C>(1.0 / sum);
      for (int64_t r = 0; r < n; ++r) out[r] = from_compute<T>(exps[r] * scale);
    } else {
      const C log_sum = static_cast<C>(std::log(sum));
      for (int64_t r = 0; r < n; ++r) out[r] = from_compute<T>(to_compute(in[r]) - max - log_sum);
    }
  }
}

// A float row on the CPU's vector path (vector_clones.h): the same operations on every path.
template <SoftmaxKind kKind>
struct FloatSoftmaxRow {
  OPENBPU_KERNEL_INLINE static void run(const float* in, float* out, int64_t n, float* exps) {
    softmax_row<kKind, float>(in, out, n, exps);
  }
};

// Positions [i0, i1) of the inner dimension of one outer block, all along the axis at once:
// every pass walks consecutive memory across the tile. `exps` is scratch for
// extent * (i1 - i0) compute-type values.
template <SoftmaxKind kKind, typename T>
void softmax_tile(const T* in, T* out, int64_t extent, int64_t inner, int64_t i0, int64_t i1,
                  ComputeType<T>* exps) {
  using C = ComputeType<T>;
  const int64_t width = i1 - i0;
  std::vector<C> max(static_cast<size_t>(width));
  for (int64_t i = 0; i < width; ++i) max[size_t(i)] = to_compute(in[i0 + i]);
  if constexpr (kKind == SoftmaxKind::kHardmax) {
    std::vector<int64_t> argmax(static_cast<size_t>(width), 0);
    for (int64_t r = 1; r < extent; ++r) {
      const T* row = in + r * inner + i0;
      for (int64_t i = 0; i < width; ++i) {
        const C v = to_compute(row[i]);
        if (v > max[size_t(i)]) {
          max[size_t(i)] = v;
          argmax[size_t(i)] = r;
        }
      }
    }
    for (int64_t r = 0; r < extent; ++r) {
      T* row = out + r * inner + i0;
      for (int64_t i = 0; i < width; ++i) row[i] = from_compute<T>(C(argmax[size_t(i)] == r));
    }
  } else {
    for (int64_t r = 1; r < extent; ++r) {
      const T* row = in + r * inner + i0;
      for (int64_t i = 0; i < width; ++i) {
        const C v = to_compute(row[i]);
        max[size_t(i)] = v > max[size_t(i)] ? v : max[size_t(i)];
      }
    }
    std::vector<double> sum(static_cast<size_t>(width), 0.0);
    for (int64_t r = 0; r < extent; ++r) {
      const T* row = in + r * inner + i0;
      C* exp_row = exps + r * width;
      for (int64_t i = 0; i < width; ++i) {
        exp_row[i] = exp_of(to_compute(row[i]) - max[size_t(i)]);
        sum[size_t(i)] += static_cast<double>(exp_row[i]);
      }
    }
    for (int64_t r = 0; r < extent; ++r) {
      const T* row = in + r * inner + i0;
      const C* exp_row = exps + r * width;
      T* out_row = out + r * inner + i0;
      for (int64_t i = 0; i < width; ++i) {
        if constexpr (kKind == SoftmaxKind::kSoftmax) {
          out_row[i] = from_compute<T>(static_cast<C>(exp_row[i] / sum[size_t(i)]));
        } else {
          out_row[i] = from_compute<T>(to_compute(row[i]) - max[size_t(i)] -
                                       static_cast<C>(std::log(sum[size_t(i)])));
        }
      }
    }
  }
}

template <SoftmaxKind kKind>
class SoftmaxKernel final : public Kernel {
 public:
  explicit SoftmaxKernel(const NodeInfo& node)
      : coerce_to_2d_(node.opset < 13), axis_(node.attrs.get_int("axis", coerce_to_2d_ ? 1 : -1)) {}

  void run(KernelContext& ctx) const override {
    constexpr const char* kName = kind_name(kKind);
    const Tensor& x = ctx.input(0);
    const Shape& shape = x.shape();
    int64_t outer, extent, inner;
    if (coerce_to_2d_) {
      // The axis may equal the rank here (all dimensions in the outer part).
      OPENBPU_CHECK(axis_ >= -x.rank() && axis_ <= x.rank(), kName, ": axis ", axis_,
            " is out of range for rank ", x.rank(), " (must be in [", -x.rank(), ", ", x.rank(),
            "])");
      const int64_t axis = axis_ < 0 ? axis_ + x.rank() : axis_;
      outer = dims_product(shape, 0, size_t(axis));
      extent = dims_product(shape, size_t(axis), shape.size());
      inner = 1;
    } else {
      OPENBPU_CHECK(x.rank() >= 1, kName, ": input must have rank >= 1, got a scalar");
      const int64_t axis = normalize_axis(axis_, x.rank(), std::string(kName) + " axis");
      outer = dims_product(shape, 0, size_t(axis));
      extent = shape[size_t(axis)];
      inner = dims_product(shape, size_t(axis) + 1, shape.size());
    }
    Tensor& y = ctx.allocate_output(0, x.dtype(), shape);
    if (y.element_count() == 0) return;
    dispatch<FloatTypes>(x.dtype(), kName, [&]<typename T>() {
      using C = ComputeType<T>;
      const T* in = x.data<T>();
      T* out = y.data<T>();
      if (inner == 1) {
        const int64_t chunk = std::max<int64_t>(1, kElementwiseChunk / 4 / extent);
        parallel_for(ctx.thread_pool(), outer, chunk, [&](int64_t b, int64_t e) {
          std::vector<C> scratch(std::is_same_v<C, T> ? 0 : static_cast<size_t>(extent));
          for (int64_t o = b; o < e; ++o) {
            C* exps = nullptr;
            if constexpr (std::is_same_v<C, T>) {
              exps = out + o * extent;
            } else {
              exps = scratch.data();
            }
            if constexpr (std::is_same_v<T, float>) {
              vector_dispatch<FloatSoftmaxRow<kKind>>(in + o * extent, out + o * extent, extent,
                                                      exps);
            } else {
              softmax_row<kKind, T>(in + o * extent, out + o * extent, extent, exps);
            }
          }
        });
        return;
      }
      const int64_t tile_width =
          std::clamp<int64_t>(kMaxTileElements / extent, 1, std::min(inner, kMaxTileWidth));
      const int64_t tiles_per_block = (inner + tile_width - 1) / tile_width;
      const int64_t chunk = std::max<int64_t>(1, kElementwiseChunk / 4 / (extent * tile_width));
      parallel_for(ctx.thread_pool(), outer * tiles_per_block, chunk, [&](int64_t b, int64_t e) {
        std::vector<C> exps(static_cast<size_t>(extent * tile_width));
        for (int64_t t = b; t < e; ++t) {
          const int64_t o = t / tiles_per_block;
          const int64_t i0 = (t % tiles_per_block) * tile_width;
          const int64_t i1 = std::min(inner, i0 + tile_width);
          const int64_t base = o * extent * inner;
          softmax_tile<kKind, T>(in + base, out + base, extent, inner, i0, i1, exps.data());
        }
      });
    });
  }

 private:
  bool coerce_to_2d_;
  int64_t axis_;
};

}  // namespace

void register_softmax_kernels(std::vector<KernelDef>& defs) {
  defs.push_back({"",
                  "Softmax",
                  1,
                  {{"axis", AttrKind::kInt}},
                  &make_kernel<SoftmaxKernel<SoftmaxKind::kSoftmax>>});
  defs.push_back({"",
                  "LogSoftmax",
                  1,
                  {{"axis", AttrKind::kInt}},
                  &make_kernel<SoftmaxKernel<SoftmaxKind::kLogSoftmax>>});
  defs.push_back({"",
                  "Hardmax",
                  1,
                  {{"axis", AttrKind::kInt}},
                  &make_kernel<SoftmaxKernel<SoftmaxKind::kHardmax>>});
}

}  // namespace openbpu::kernels
