// Shared by the reduction operators (reduce.cc, reduce_real.cc, reduce_extremum.cc): which
// input elements each output combines (ReductionLayout), the accumulator types, and the kernel
// of the Reduce* operators.
//
// Accumulation: floating types in double, integers modulo 2^64 (so that sums and products wrap
// like the element type). Elements are combined in row-major order of the reduced dimensions,
// independently of the thread count. Reducing an empty set gives the operator's identity:
// 0 for sums and norms, 1 for ReduceProd, -inf (lowest integer) for ReduceMax, +inf (highest
// integer) for ReduceMin, -inf for ReduceLogSum/ReduceLogSumExp, NaN (integers: 0) for
// ReduceMean.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "families.h"
#include "openbpu/kernels/axes.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/elementwise.h"
#include "openbpu/kernels/numeric_cast.h"

namespace openbpu::kernels::reduction {

// (outer, extent, inner): element (o, r, i) of a view lies at (o * extent + r) * inner + i.
struct AxisSplit {
  int64_t outer, extent, inner;
};
inline AxisSplit split_at_axis(const Shape& shape, int64_t axis) {
  return {dims_product(shape, 0, size_t(axis)), shape[size_t(axis)],
          dims_product(shape, size_t(axis) + 1, shape.size())};
}

// ---------------------------------------------------------------------------------------------
// Which input elements each output element combines.

class ReductionLayout {
 public:
  // `reduced[d]` marks the reduced dimensions of `shape`.
  ReductionLayout(const Shape& shape, const std::vector<bool>& reduced) {
    const std::vector<int64_t> strides = contiguous_strides(shape);
    for (size_t d = 0; d < shape.size(); ++d) {
      const int64_t n = shape[d];
      if (reduced[d]) {
        reduce_count_ *= n;
      } else {
        output_count_ *= n;
      }
      if (n == 1) continue;
      std::vector<Group>& groups = reduced[d] ? reduced_ : kept_;
      if (groups.empty() || last_kind_reduced_ != reduced[d]) sequence_.push_back(reduced[d]);
      // Merge with the previous group if the previous dimension (ignoring 1s) is of the same
      // kind: the two are then contiguous in memory.
      if (!groups.empty() && last_kind_reduced_ == reduced[d]) {
        groups.back().extent *= n;
        groups.back().stride = strides[d];
      } else {
        groups.push_back({n, strides[d]});
      }
      last_kind_reduced_ = reduced[d];
    }
  }

  int64_t output_count() const { return output_count_; }
  int64_t reduce_count() const { return reduce_count_; }

  // The reduced dimensions as the middle of an (outer, extent, inner) view with inner > 1, if
  // they form one block followed by kept dimensions; nullopt otherwise.
  std::optional<AxisSplit> middle_block() const {
    if (reduced_.size() != 1) return std::nullopt;
    if (sequence_ == std::vector<bool>{true, false}) {
      return AxisSplit{1, reduced_[0].extent, kept_[0].extent};
    }
    if (sequence_ == std::vector<bool>{false, true, false}) {
      return AxisSplit{kept_[0].extent, reduced_[0].extent, kept_[1].extent};
    }
    return std::nullopt;
  }

  // Calls fn(offset) for every input element of output element `out`, in row-major order.
  template <typename Fn>
  void for_each_input(int64_t out, Fn&& fn) const {
    int64_t base = 0;
    for (size_t g = kept_.size(); g-- > 0;) {
      base += (out % kept_[g].extent) * kept_[g].stride;
      out /= kept_[g].extent;
    }
    if (reduce_count_ == 0) return;
    if (reduced_.empty()) {
      fn(base);
    } else if (reduced_.size() == 1) {
      const int64_t n = reduced_[0].extent, stride = reduced_[0].stride;
      if (stride == 1) {
        for (int64_t r = 0; r < n; ++r) fn(base + r);
      } else {
        for (int64_t r = 0; r < n; ++r) fn(base + r * stride);
      }
    } else {
      std::vector<int64_t> index(reduced_.size(), 0);
      const Group& last = reduced_.back();
      int64_t offset = base;
      while (true) {
        for (int64_t r = 0; r < last.extent; ++r) fn(offset + r * last.stride);
        size_t g = reduced_.size() - 1;
        while (g-- > 0) {
          offset += reduced_[g].stride;
          if (++index[g] < reduced_[g].extent) break;
          offset -= reduced_[g].stride * reduced_[g].extent;
          index[g] = 0;
        }
        if (g == static_cast<size_t>(-1)) return;
      }
    }
  }

 private:
  struct Group {
    int64_t extent;
    int64_t stride;
  };
  std::vector<Group> kept_, reduced_;
  std::vector<bool> sequence_;  // kinds of the merged groups in order (true: reduced)
  int64_t output_count_ = 1;
  int64_t reduce_count_ = 1;
  bool last_kind_reduced_ = false;
};

// Shape of the result: reduced dimensions become 1 (keepdims) or disappear.
inline Shape reduced_shape(const Shape& shape, const std::vector<bool>& reduced, bool keepdims) {
  Shape out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!reduced[d]) {
      out.push_back(shape[d]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  return out;
}

// Runs fn(out_index) for every output element, in parallel chunks of about
// kElementwiseChunk input elements.
template <typename Fn>
void for_each_output(ThreadPool* pool, const ReductionLayout& layout, Fn&& fn) {
  const int64_t chunk =
      std::max<int64_t>(1, kElementwiseChunk / std::max<int64_t>(1, layout.reduce_count()));
  parallel_for(pool, layout.output_count(), chunk, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) fn(i);
  });
}

// Accumulator of a sum or product over T: double for floats, uint64 (wrapping) for integers.
template <typename T>
using Accumulator = std::conditional_t<std::is_integral_v<ComputeType<T>>, uint64_t, double>;

template <typename T>
Accumulator<T> widen(T v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<uint64_t>(v);  // sign-extends then wraps: exact modulo 2^64
  } else {
    return static_cast<double>(to_compute(v));
  }
}

// Accumulator value → element type (integers wrap).
template <typename T>
T narrow(Accumulator<T> acc) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(acc);
  } else {
    return from_compute<T>(static_cast<ComputeType<T>>(acc));
  }
}

// A real-valued result (norms, logs, means) → element type.
template <typename T>
T real_to_element(double v) {
  if constexpr (std::is_integral_v<T>) {
    return numeric_cast<T>(v);
  } else {
    return from_compute<T>(static_cast<ComputeType<T>>(v));
  }
}

template <typename T>
double as_real(T v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<double>(v);
  } else {
    return static_cast<double>(to_compute(v));
  }
}

// ---------------------------------------------------------------------------------------------
// Reduce* operators. Each Op provides kName, kAxesInputFrom and
//   template <typename T> static T reduce(const T* x, const ReductionLayout&, int64_t out).
// Fold operators (sums, products, norms over the Accumulator) derive reduce() from
//   init<T>(), step<T>(acc, widened value) and finish<T>(acc, count)
// through FoldReduction, which also lets the kernel run them tile-wise when the reduced
// dimensions are not the innermost ones (same combination order, so the same results).

template <typename Op>
struct FoldReduction {
  static constexpr bool kIsFold = true;
  template <typename T>
  static T reduce(const T* x, const ReductionLayout& layout, int64_t out) {
    Accumulator<T> acc = Op::template init<T>();
    layout.for_each_input(out, [&](int64_t i) { acc = Op::template step<T>(acc, widen(x[i])); });
    return Op::template finish<T>(acc, layout.reduce_count());
  }
};

// A fold operator over a middle block (reduced dimensions followed by kept ones): the
// accumulators of a tile of inner positions advance together row by row, reading memory
// contiguously. Each output combines its elements in the same order as FoldReduction::reduce.
template <typename Op, typename T>
void fold_middle_block(ThreadPool* pool, const T* in, T* out, const AxisSplit& block) {
  constexpr int64_t kTileWidth = 1024;
  if (block.outer == 0 || block.inner == 0) return;
  const int64_t width_max = std::min(block.inner, kTileWidth);
  const int64_t tiles = (block.inner + width_max - 1) / width_max;
  const int64_t chunk =
      std::max<int64_t>(1, kElementwiseChunk / std::max<int64_t>(1, block.extent * width_max));
  parallel_for(pool, block.outer * tiles, chunk, [&](int64_t b, int64_t e) {
    std::vector<Accumulator<T>> acc(static_cast<size_t>(width_max));
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / tiles;
      const int64_t i0 = (t % tiles) * width_max;
      const int64_t width = std::min(block.inner - i0, width_max);
      std::fill(acc.begin(), acc.end(), Op::template init<T>());
      for (int64_t r = 0; r < block.extent; ++r) {
        const T* row = in + (o * block.extent + r) * block.inner + i0;
        for (int64_t i = 0; i < width; ++i) {
          acc[size_t(i)] = Op::template step<T>(acc[size_t(i)], widen(row[i]));
        }
      }
      T* out_row = out + o * block.inner + i0;
      for (int64_t i = 0; i < width; ++i) {
        out_row[i] = Op::template finish<T>(acc[size_t(i)], block.extent);
      }
    }
  });
}

template <typename Op>
class ReduceKernel final : public Kernel {
 public:
  explicit ReduceKernel(const NodeInfo& node)
      : axes_from_input_(node.opset >= Op::kAxesInputFrom),
        keepdims_(node.attrs.get_int("keepdims", 1) != 0),
        noop_with_empty_axes_(node.attrs.get_int("noop_with_empty_axes", 0) != 0) {
    if (axes_from_input_) {
      OPENBPU_CHECK(!node.attrs.has("axes"), Op::kName, ": axes is an input from opset ",
                    Op::kAxesInputFrom, ", not an attribute (model opset ", node.opset, ")");
    } else {
      axes_attr_ = node.attrs.get_ints("axes", {});
    }
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> axes = axes_attr_;
    if (axes_from_input_) {
      if (const Tensor* t = ctx.optional_input(1)) {
        OPENBPU_CHECK(t->dtype() == DataType::kInt64, Op::kName, ": axes must be int64, got ",
                      dtype_name(t->dtype()));
        OPENBPU_CHECK(t->rank() == 1, Op::kName, ": axes must be 1-D, got shape ",
                      shape_to_string(t->shape()));
        axes = t->to_int64_vector();
      }
    }
    if (axes.empty() && noop_with_empty_axes_) {
      ctx.set_output(0, x);
      return;
    }
    std::vector<bool> reduced(size_t(x.rank()), axes.empty());
    for (int64_t a : normalize_axes(axes, x.rank(), std::string(Op::kName) + " axes")) {
      reduced[size_t(a)] = true;
    }
    const ReductionLayout layout(x.shape(), reduced);
    Tensor& y = ctx.allocate_output(0, x.dtype(), reduced_shape(x.shape(), reduced, keepdims_));
    dispatch<NumericTypes>(x.dtype(), Op::kName, [&]<typename T>() {
      const T* in = x.data<T>();
      T* out = y.data<T>();
      if constexpr (requires { Op::kIsFold; }) {
        if (const auto block = layout.middle_block()) {
          fold_middle_block<Op, T>(ctx.thread_pool(), in, out, *block);
          return;
        }
      }
      for_each_output(ctx.thread_pool(), layout,
                      [&](int64_t o) { out[o] = Op::template reduce<T>(in, layout, o); });
    });
  }

 private:
  bool axes_from_input_;
  bool keepdims_;
  bool noop_with_empty_axes_;
  std::vector<int64_t> axes_attr_;
};

template <typename Op>
KernelDef reduce_def() {
  return {"",
          Op::kName,
          1,
          {{"axes", AttrKind::kInts},
           {"keepdims", AttrKind::kInt},
           {"noop_with_empty_axes", AttrKind::kInt}},
          &make_kernel<ReduceKernel<Op>>};
}

}  // namespace openbpu::kernels::reduction
