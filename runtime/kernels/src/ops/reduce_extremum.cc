// Extremes: ReduceMax, ReduceMin, ArgMax, ArgMin, TopK (reduction.h).
#include <numeric>

#include "reduction.h"

namespace openbpu::kernels {

namespace {

using namespace reduction;

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
      OPENBPU_CHECK(!node.attrs.has("k"),
                    "TopK: k is an input from opset 10, not an attribute (model ", "opset ",
                    node.opset, ")");
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
    OPENBPU_CHECK(k <= split.extent, "TopK: k must not exceed the axis length ", split.extent,
                  ", got ", k);
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

void register_reduce_extremum_kernels(std::vector<KernelDef>& defs) {
  defs.push_back(reduce_def<ReduceMax>());
  defs.push_back(reduce_def<ReduceMin>());
  defs.push_back(arg_extremum_def<true>());
  defs.push_back(arg_extremum_def<false>());
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
