// Reductions: ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceMax, ReduceMean,
// ReduceMin, ReduceProd, ReduceSum, ReduceSumSquare; ArgMax, ArgMin; CumSum; TopK.
//
// Accumulation: floating types in double, integers modulo 2^64 (so that sums and products wrap
// like the element type). Elements are combined in row-major order of the reduced dimensions,
// independently of the thread count. Reducing an empty set gives the operator's identity:
// 0 for sums and norms, 1 for ReduceProd, -inf (lowest integer) for ReduceMax, +inf (highest
// integer) for ReduceMin, -inf for ReduceLogSum/ReduceLogSumExp, NaN (integers: 0) for
// ReduceMean.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <type_traits>

#include "families.h"
#include "openbpu/kernels/axes.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/elementwise.h"
#include "openbpu/kernels/numeric_cast.h"

namespace openbpu::kernels {

namespace {

// (outer, extent, inner): element (o, r, i) of a view lies at (o * extent + r) * inner + i.
struct AxisSplit {
  int64_t outer, extent, inner;
};
AxisSplit split_at_axis(const Shape& shape, int64_t axis) {
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
Shape reduced_shape(const Shape& shape, const std::vector<bool>& reduced, bool keepdims) {
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

template <typename T>
Accumulator<T> absolute(Accumulator<T> v) {
  if constexpr (std::is_integral_v<T>) {
    if constexpr (std::is_signed_v<T>) {
      // v holds a sign-extended T; negate modulo 2^64 if negative.
      return static_cast<int64_t>(v) < 0 ? uint64_t(0) - v : v;
    } else {
      return v;
    }
  } else {
    return std::abs(v);
  }
}

struct ReduceSum : FoldReduction<ReduceSum> {
  static constexpr const char* kName = "ReduceSum";
  static constexpr int kAxesInputFrom = 13;
  template <typename T>
  static Accumulator<T> init() {
    return 0;
  }
  template <typename T>
  static Accumulator<T> step(Accumulator<T> acc, Accumulator<T> v) {
    return acc + v;
  }
  template <typename T>
  static T finish(Accumulator<T> acc, int64_t) {
    return narrow<T>(acc);
  }
};

struct ReduceProd : FoldReduction<ReduceProd> {
  static constexpr const char* kName = "ReduceProd";
  static constexpr int kAxesInputFrom = 18;
  template <typename T>
  static Accumulator<T> init() {
    return 1;
  }
  template <typename T>
  static Accumulator<T> step(Accumulator<T> acc, Accumulator<T> v) {
    return acc * v;
  }
  template <typename T>
  static T finish(Accumulator<T> acc, int64_t) {
    return narrow<T>(acc);
  }
};

struct ReduceSumSquare : FoldReduction<ReduceSumSquare> {
  static constexpr const char* kName = "ReduceSumSquare";
  static constexpr int kAxesInputFrom = 18;
  template <typename T>
  static Accumulator<T> init() {
    return 0;
  }
  template <typename T>
  static Accumulator<T> step(Accumulator<T> acc, Accumulator<T> v) {
    return acc + v * v;
  }
  template <typename T>
  static T finish(Accumulator<T> acc, int64_t) {
    return narrow<T>(acc);
  }
};

struct ReduceL1 : FoldReduction<ReduceL1> {
  static constexpr const char* kName = "ReduceL1";
  static constexpr int kAxesInputFrom = 18;
  template <typename T>
  static Accumulator<T> init() {
    return 0;
  }
  template <typename T>
  static Accumulator<T> step(Accumulator<T> acc, Accumulator<T> v) {
    return acc + absolute<T>(v);
  }
  template <typename T>
  static T finish(Accumulator<T> acc, int64_t) {
    return narrow<T>(acc);
  }
};

// Integers: the sum divided by the count, truncated toward zero (0 for an empty set).
struct ReduceMean : FoldReduction<ReduceMean> {
  static constexpr const char* kName = "ReduceMean";
  static constexpr int kAxesInputFrom = 18;
  template <typename T>
  static Accumulator<T> init() {
    return 0;
  }
  template <typename T>
  static Accumulator<T> step(Accumulator<T> acc, Accumulator<T> v) {
    return acc + v;
  }
  template <typename T>
  static T finish(Accumulator<T> sum, int64_t count) {
    if constexpr (std::is_integral_v<T>) {
      if (count == 0) return T(0);
      if constexpr (std::is_signed_v<T>) {
        return static_cast<T>(static_cast<int64_t>(sum) / count);
      } else {
        return static_cast<T>(sum / static_cast<uint64_t>(count));
      }
    } else {
      return narrow<T>(sum / static_cast<double>(count));
    }
  }
};

// Sum of squares / sum in double, for the real-valued results.
template <typename T>
double real_sum(const T* x, const ReductionLayout& layout, int64_t out, bool square) {
  double acc = 0.0;
  layout.for_each_input(out, [&](int64_t i) {
    const double v = as_real(x[i]);
    acc += square ? v * v : v;
  });
  return acc;
}

struct ReduceL2 {
  static constexpr const char* kName = "ReduceL2";
  static constexpr int kAxesInputFrom = 18;
  template <typename T>
  static T reduce(const T* x, const ReductionLayout& layout, int64_t out) {
    return real_to_element<T>(std::sqrt(real_sum(x, layout, out, true)));
  }
};

struct ReduceLogSum {
  static constexpr const char* kName = "ReduceLogSum";
  static constexpr int kAxesInputFrom = 18;
  template <typename T>
  static T reduce(const T* x, const ReductionLayout& layout, int64_t out) {
    return real_to_element<T>(std::log(real_sum(x, layout, out, false)));
  }
};

struct ReduceLogSumExp {
  static constexpr const char* kName = "ReduceLogSumExp";
  static constexpr int kAxesInputFrom = 18;
  template <typename T>
  static T reduce(const T* x, const ReductionLayout& layout, int64_t out) {
    // max + log(sum(exp(v - max))): no overflow for large inputs.
    double max = -std::numeric_limits<double>::infinity();
    bool nan = false;
    layout.for_each_input(out, [&](int64_t i) {
      const double v = as_real(x[i]);
      nan = nan || std::isnan(v);
      max = std::max(max, v);
    });
    if (nan) return real_to_element<T>(std::numeric_limits<double>::quiet_NaN());
    if (std::isinf(max)) return real_to_element<T>(max);  // empty, all -inf, or some +inf
    double sum = 0.0;
    layout.for_each_input(out, [&](int64_t i) { sum += std::exp(as_real(x[i]) - max); });
    return real_to_element<T>(max + std::log(sum));
  }
};

// Max / Min with NaN propagation; the empty set gives -inf/+inf (integers: lowest/highest).
template <bool kMax>
struct ReduceExtremum {
  static constexpr const char* kName = kMax ? "ReduceMax" : "ReduceMin";
  static constexpr int kAxesInputFrom = 18;
  template <typename T>
  static T reduce(const T* x, const ReductionLayout& layout, int64_t out) {
    using C = ComputeType<T>;
    C best;
    if constexpr (std::numeric_limits<C>::has_infinity) {
      best = kMax ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
    } else {
      best = kMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
    }
    bool nan = false;
    layout.for_each_input(out, [&](int64_t i) {
      const C v = to_compute(x[i]);
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(v)) nan = true;
      }
      if (kMax ? v > best : v < best) best = v;
    });
    if constexpr (std::is_floating_point_v<C>) {
      if (nan) best = std::numeric_limits<C>::quiet_NaN();
    }
    return from_compute<T>(best);
  }
};
using ReduceMax = ReduceExtremum<true>;
using ReduceMin = ReduceExtremum<false>;

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

// ---------------------------------------------------------------------------------------------
// ArgMax / ArgMin: index of the first (or last, select_last_index) extreme value along `axis`.
// NaN counts as the extreme value.

template <bool kMax>
class ArgExtremumKernel final : public Kernel {
 public:
  static constexpr const char* kName = kMax ? "ArgMax" : "ArgMin";

  explicit ArgExtremumKernel(const NodeInfo& node)
      : axis_(node.attrs.get_int("axis", 0)),
        keepdims_(node.attrs.get_int("keepdims", 1) != 0),
        select_last_(node.attrs.get_int("select_last_index", 0) != 0) {}

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t axis = normalize_axis(axis_, x.rank(), std::string(kName) + " axis");
    OPENBPU_CHECK(x.dim(axis) > 0, kName, ": the reduced dimension ", axis, " of ",
          shape_to_string(x.shape()), " must not be empty");
    std::vector<bool> reduced(size_t(x.rank()), false);
    reduced[size_t(axis)] = true;
    const ReductionLayout layout(x.shape(), reduced);
    Tensor& y =
        ctx.allocate_output(0, DataType::kInt64, reduced_shape(x.shape(), reduced, keepdims_));
    dispatch<NumericTypes>(x.dtype(), kName, [&]<typename T>() {
      using C = ComputeType<T>;
      const T* in = x.data<T>();
      int64_t* out = y.data<int64_t>();
      const bool last = select_last_;
      for_each_output(ctx.thread_pool(), layout, [&](int64_t o) {
        int64_t best_index = -1, r = 0;
        C best{};
        bool best_is_nan = false;
        layout.for_each_input(o, [&](int64_t i) {
          const C v = to_compute(in[i]);
          bool take;
          if (best_index < 0) {
            take = true;
          } else if constexpr (std::is_floating_point_v<C>) {
            if (best_is_nan) {
              take = last && std::isnan(v);
            } else if (std::isnan(v)) {
              take = true;
            } else {
              take = (kMax ? v > best : v < best) || (last && v == best);
            }
          } else {
            take = (kMax ? v > best : v < best) || (last && v == best);
          }
          if (take) {
            best = v;
            best_index = r;
            if constexpr (std::is_floating_point_v<C>) best_is_nan = std::isnan(v);
          }
          ++r;
        });
        out[o] = best_index;
      });
    });
  }

 private:
  int64_t axis_;
  bool keepdims_;
  bool select_last_;
};

template <bool kMax>
KernelDef arg_extremum_def() {
  return {"",
          ArgExtremumKernel<kMax>::kName,
          1,
          {{"axis", AttrKind::kInt},
           {"keepdims", AttrKind::kInt},
           {"select_last_index", AttrKind::kInt}},
          &make_kernel<ArgExtremumKernel<kMax>>};
}

// ---------------------------------------------------------------------------------------------
// CumSum(x, axis): running sums along axis; `exclusive` leaves out the element itself,
// `reverse` sums from the end.

class CumSumKernel final : public Kernel {
 public:
  explicit CumSumKernel(const NodeInfo& node)
      : exclusive_(node.attrs.get_int("exclusive", 0) != 0),
        reverse_(node.attrs.get_int("reverse", 0) != 0) {}

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& axis_tensor = ctx.input(1);
    OPENBPU_CHECK(axis_tensor.dtype() == DataType::kInt32 || axis_tensor.dtype() == DataType::kInt64,
          "CumSum: axis must be int32 or int64, got ", dtype_name(axis_tensor.dtype()));
    OPENBPU_CHECK(axis_tensor.element_count() == 1 && axis_tensor.rank() <= 1,
          "CumSum: axis must be a scalar, got shape ", shape_to_string(axis_tensor.shape()));
    OPENBPU_CHECK(x.rank() >= 1, "CumSum: input must have rank >= 1, got a scalar");
    const int64_t axis = normalize_axis(axis_tensor.int_at(0), x.rank(), "CumSum axis");
    const AxisSplit split = split_at_axis(x.shape(), axis);
    Tensor& y = ctx.allocate_output(0, x.dtype(), x.shape());
    dispatch<NumericTypes>(x.dtype(), "CumSum", [&]<typename T>() {
      const T* in = x.data<T>();
      T* out = y.data<T>();
      const int64_t lines = split.outer * split.inner;
      const int64_t chunk =
          std::max<int64_t>(1, kElementwiseChunk / std::max<int64_t>(1, split.extent));
      parallel_for(ctx.thread_pool(), lines, chunk, [&](int64_t b, int64_t e) {
        for (int64_t line = b; line < e; ++line) {
          const int64_t base =
              (line / split.inner) * split.extent * split.inner + line % split.inner;
          Accumulator<T> acc(0);
          for (int64_t k = 0; k < split.extent; ++k) {
            const int64_t r = reverse_ ? split.extent - 1 - k : k;
            const int64_t offset = base + r * split.inner;
            if (exclusive_) {
              out[offset] = narrow<T>(acc);
              acc += widen(in[offset]);
            } else {
              acc += widen(in[offset]);
              out[offset] = narrow<T>(acc);
            }
          }
        }
      });
    });
  }

 private:
  bool exclusive_, reverse_;
};

// ---------------------------------------------------------------------------------------------
// TopK: the k largest (or smallest) elements along `axis` and their indices, sorted; equal
// values keep the smaller index first. NaN ranks above every number. k is an attribute before
// opset 10 and a 1-element int64 input from 10.

class TopKKernel final : public Kernel {
 public:
  explicit TopKKernel(const NodeInfo& node)
      : k_from_input_(node.opset >= 10),
        axis_(node.attrs.get_int("axis", -1)),
        largest_(node.attrs.get_int("largest", 1) != 0) {
    if (k_from_input_) {
      OPENBPU_CHECK(!node.attrs.has("k"), "TopK: k is an input from opset 10, not an attribute (model ",
            "opset ", node.opset, ")");
    } else {
      k_attr_ = node.attrs.get_int("k");
      OPENBPU_CHECK(k_attr_ >= 0, "TopK: k must be >= 0, got ", k_attr_);
    }
    const int64_t sorted = node.attrs.get_int("sorted", 1);
    OPENBPU_CHECK(sorted == 0 || sorted == 1, "TopK: sorted must be 0 or 1, got ", sorted);
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    int64_t k = k_attr_;
    if (k_from_input_) {
      const Tensor& k_tensor = ctx.input(1);
      OPENBPU_CHECK(k_tensor.dtype() == DataType::kInt64, "TopK: K must be int64, got ",
            dtype_name(k_tensor.dtype()));
      OPENBPU_CHECK(k_tensor.element_count() == 1 && k_tensor.rank() <= 1,
            "TopK: K must hold one element, got shape ", shape_to_string(k_tensor.shape()));
      k = k_tensor.int_at(0);
      OPENBPU_CHECK(k >= 0, "TopK: k must be >= 0, got ", k);
    }
    const int64_t axis = normalize_axis(axis_, x.rank(), "TopK axis");
    const AxisSplit split = split_at_axis(x.shape(), axis);
    OPENBPU_CHECK(k <= split.extent, "TopK: k must not exceed the axis length ", split.extent, ", got ", k);
    Shape out_shape = x.shape();
    out_shape[size_t(axis)] = k;
    Tensor& values = ctx.allocate_output(0, x.dtype(), out_shape);
    Tensor& indices = ctx.allocate_output(1, DataType::kInt64, out_shape);
    if (k == 0) return;
    const bool largest = largest_;
    dispatch<NumericTypes>(x.dtype(), "TopK", [&]<typename T>() {
      using C = ComputeType<T>;
      const T* in = x.data<T>();
      T* out_values = values.data<T>();
      int64_t* out_indices = indices.data<int64_t>();
      // a ranks before b: larger (or smaller) value first, then the smaller index.
      auto ranks_before = [largest](C a, int64_t ia, C b, int64_t ib) {
        bool a_nan = false, b_nan = false;
        if constexpr (std::is_floating_point_v<C>) {
          a_nan = std::isnan(a);
          b_nan = std::isnan(b);
        }
        if (a_nan != b_nan) return largest ? a_nan : b_nan;
        if (!a_nan && a != b) return largest ? a > b : a < b;
        return ia < ib;
      };
      const int64_t lines = split.outer * split.inner;
      const int64_t chunk =
          std::max<int64_t>(1, kElementwiseChunk / std::max<int64_t>(1, split.extent));
      parallel_for(ctx.thread_pool(), lines, chunk, [&](int64_t b, int64_t e) {
        std::vector<int64_t> order(size_t(split.extent));
        std::vector<C> line_values(size_t(split.extent));
        for (int64_t line = b; line < e; ++line) {
          const int64_t outer = line / split.inner, inner = line % split.inner;
          const int64_t in_base = outer * split.extent * split.inner + inner;
          for (int64_t r = 0; r < split.extent; ++r) {
            line_values[size_t(r)] = to_compute(in[in_base + r * split.inner]);
          }
          std::iota(order.begin(), order.end(), int64_t{0});
          std::partial_sort(
              order.begin(), order.begin() + k, order.end(), [&](int64_t ia, int64_t ib) {
                return ranks_before(line_values[size_t(ia)], ia, line_values[size_t(ib)], ib);
              });
          const int64_t out_base = outer * k * split.inner + inner;
          for (int64_t j = 0; j < k; ++j) {
            const int64_t src = order[size_t(j)];
            out_values[out_base + j * split.inner] = in[in_base + src * split.inner];
            out_indices[out_base + j * split.inner] = src;
          }
        }
      });
    });
  }

 private:
  bool k_from_input_;
  int64_t k_attr_ = 0;
  int64_t axis_;
  bool largest_;
};

}  // namespace

void register_reduce_kernels(std::vector<KernelDef>& defs) {
  defs.push_back(reduce_def<ReduceL1>());
  defs.push_back(reduce_def<ReduceL2>());
  defs.push_back(reduce_def<ReduceLogSum>());
  defs.push_back(reduce_def<ReduceLogSumExp>());
  defs.push_back(reduce_def<ReduceMax>());
  defs.push_back(reduce_def<ReduceMean>());
  defs.push_back(reduce_def<ReduceMin>());
  defs.push_back(reduce_def<ReduceProd>());
  defs.push_back(reduce_def<ReduceSum>());
  defs.push_back(reduce_def<ReduceSumSquare>());
  defs.push_back(arg_extremum_def<true>());
  defs.push_back(arg_extremum_def<false>());
  defs.push_back({"",
                  "CumSum",
                  11,
                  {{"exclusive", AttrKind::kInt}, {"reverse", AttrKind::kInt}},
                  &make_kernel<CumSumKernel>});
  defs.push_back({"",
                  "TopK",
                  1,
                  {{"k", AttrKind::kInt},
                   {"axis", AttrKind::kInt},
                   {"largest", AttrKind::kInt},
                   {"sorted", AttrKind::kInt}},
                  &make_kernel<TopKKernel>});
}

}  // namespace openbpu::kernels
