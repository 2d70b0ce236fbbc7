// Shared by the broadcasting binary operators (binary.cc, comparison.cc, pow.cc, variadic.cc):
// the typed loop over numpy-broadcast element runs, legacy (opset < 7) broadcasting, integer
// arithmetic with defined overflow, and the kernel of a two-input operator with one element
// type.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "families.h"
#include "openbpu/kernels/broadcast.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/elementwise.h"
#include "openbpu/kernels/vector_clones.h"

namespace openbpu::kernels::binary_ops {

// ---------------------------------------------------------------------------------------------
// Broadcasting loop

// y = f(a, b) with numpy broadcasting, y already allocated with the broadcast shape. The runs
// (BinaryBroadcastRuns, planned without the element types) are walked with unit or zero
// strides, and the flat output range is split over the pool. Same results as map_binary
// (elementwise.h), which serves as its reference in the tests.
// One run of len outputs; a and b advance by a_step and b_step elements.
template <typename A, typename B, typename Out, typename Apply>
struct BinaryRun {
  OPENBPU_KERNEL_INLINE static void run(const A* ra, const B* rb, Out* ro, int64_t len,
                                        int64_t a_step, int64_t b_step, const Apply& apply) {
    if (a_step == 1 && b_step == 1) {
      for (int64_t j = 0; j < len; ++j) ro[j] = apply(ra[j], rb[j]);
    } else if (a_step == 1 && b_step == 0) {
      const B vb = rb[0];
      for (int64_t j = 0; j < len; ++j) ro[j] = apply(ra[j], vb);
    } else if (a_step == 0 && b_step == 1) {
      const A va = ra[0];
      for (int64_t j = 0; j < len; ++j) ro[j] = apply(va, rb[j]);
    } else {
      for (int64_t j = 0; j < len; ++j) ro[j] = apply(ra[j * a_step], rb[j * b_step]);
    }
  }
};

template <typename A, typename B, typename Out, typename F>
void broadcast_binary(ThreadPool* pool, const Tensor& a, const Tensor& b, Tensor& y, const F& f) {
  const int64_t total = y.element_count();
  if (total == 0) return;
  const BinaryBroadcastRuns runs(a.shape(), b.shape(), y.shape());
  const int64_t a_step = runs.a_step(), b_step = runs.b_step();
  const A* pa = a.data<A>();
  const B* pb = b.data<B>();
  Out* out = y.data<Out>();
  auto apply = [&f](A x, B z) { return from_compute<Out>(f(to_compute(x), to_compute(z))); };
  using Run = BinaryRun<A, B, Out, decltype(apply)>;
  // float32 (the float executor's hot case) runs on the CPU's vector path; other types on the
  // baseline, to keep the instantiations few.
  constexpr bool kVector =
      std::is_same_v<A, float> && std::is_same_v<B, float> && std::is_same_v<Out, float>;

  parallel_for(pool, total, kElementwiseChunk, [&](int64_t begin, int64_t end) {
    runs.for_each_run(begin, end, [&](int64_t i, int64_t oa, int64_t ob, int64_t len) {
      if constexpr (kVector) {
        vector_dispatch<Run>(pa + oa, pb + ob, out + i, len, a_step, b_step, apply);
      } else {
        Run::run(pa + oa, pb + ob, out + i, len, a_step, b_step, apply);
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Legacy broadcasting (opset < 7)

class LegacyBroadcast {
 public:
  // `numpy_from`: the first opset with numpy broadcasting for this operator.
  LegacyBroadcast(const NodeInfo& node, int numpy_from) : active_(node.opset < numpy_from) {
    if (active_) {
      broadcast_ = node.attrs.get_int("broadcast", 0) != 0;
      if (node.attrs.has("axis")) axis_ = node.attrs.get_int("axis");
    } else {
      OPENBPU_CHECK(!node.attrs.has("broadcast") && !node.attrs.has("axis"), node.op_type,
                    ": the broadcast/axis attributes exist only before opset ", numpy_from,
                    " (model opset ", node.opset, ")");
    }
  }

  // The shape under which `b` is broadcast against `a` (b's own shape with numpy rules).
  Shape aligned_shape(const Shape& a, const Shape& b, std::string_view op) const {
    if (!active_) return b;
    if (!broadcast_) {
      OPENBPU_CHECK(a == b, op, ": without broadcast=1 both inputs must have the same shape, got ",
                    shape_to_string(a), " and ", shape_to_string(b));
      return b;
    }
    const int64_t a_rank = static_cast<int64_t>(a.size());
    const int64_t b_rank = static_cast<int64_t>(b.size());
    OPENBPU_CHECK(b_rank <= a_rank, op, ": with broadcast=1 B's rank must not exceed A's, got ",
                  shape_to_string(b), " for A ", shape_to_string(a));
    int64_t axis = axis_.value_or(a_rank - b_rank);
    if (axis < 0) axis += a_rank;
    OPENBPU_CHECK(axis >= 0 && axis + b_rank <= a_rank, op, ": axis ", axis_.value_or(axis),
                  " does not place B ", shape_to_string(b), " inside A ", shape_to_string(a));
    Shape aligned(a.size(), 1);
    for (int64_t i = 0; i < b_rank; ++i) aligned[size_t(axis + i)] = b[size_t(i)];
    for (size_t i = 0; i < a.size(); ++i) {
      OPENBPU_CHECK(aligned[i] == 1 || aligned[i] == a[i], op, ": B ", shape_to_string(b),
                    " at axis ", axis, " does not broadcast to A ", shape_to_string(a));
    }
    return aligned;
  }

  // Output shape: A's shape in legacy mode, the numpy broadcast otherwise.
  Shape output_shape(const Shape& a, const Shape& aligned_b, std::string_view op) const {
    return active_ ? a : broadcast_shapes(a, aligned_b, op);
  }

 private:
  bool active_;
  bool broadcast_ = false;
  std::optional<int64_t> axis_;
};

// ---------------------------------------------------------------------------------------------
// Integer helpers with defined overflow

template <typename V>
inline constexpr bool kWrapsOnOverflow = std::is_integral_v<V> && !std::is_same_v<V, bool>;

template <typename V>
V wrapping_add(V a, V b) {
  if constexpr (kWrapsOnOverflow<V>) {
    return static_cast<V>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}
template <typename V>
V wrapping_sub(V a, V b) {
  if constexpr (kWrapsOnOverflow<V>) {
    return static_cast<V>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  } else {
    return a - b;
  }
}
template <typename V>
V wrapping_mul(V a, V b) {
  if constexpr (kWrapsOnOverflow<V>) {
    return static_cast<V>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return a * b;
  }
}

template <typename V>
bool is_negative(V v) {
  if constexpr (std::is_unsigned_v<V>) {
    return false;
  } else {
    return v < V(0);
  }
}

template <typename V>
bool is_nan(V v) {
  if constexpr (std::is_floating_point_v<V>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Two-input operators with one element type

// Op provides kName, Types, kNumpyFrom (first opset with numpy broadcasting; 0 if the
// operator never had legacy broadcasting), kBoolOutput, a constructor from NodeInfo,
// validate_type<T>() and operator()(V, V) on the compute type. An Op with kSwapInputs runs
// its base class Loop's loop on (b, a): Less is Greater swapped, so the two share one loop
// per element type.
struct BinaryOpBase {
  static constexpr int kNumpyFrom = 7;
  static constexpr bool kBoolOutput = false;
  static constexpr bool kSwapInputs = false;
  template <typename T>
  void validate_type() const {}
};

// kName and a constructor that ignores the node, for an Op without attributes.
#define OPENBPU_SIMPLE_OP_CTOR(Name)          \
  static constexpr const char* kName = #Name; \
  explicit Name(const NodeInfo&) {}

template <typename Op>
class BinaryKernel final : public Kernel {
 public:
  explicit BinaryKernel(const NodeInfo& node) : op_(node), legacy_(node, Op::kNumpyFrom) {}

  void run(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    OPENBPU_CHECK(a.dtype() == b.dtype(), Op::kName, ": both inputs must have the same type, got ",
                  dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
    const Tensor b_view = b.reshaped(legacy_.aligned_shape(a.shape(), b.shape(), Op::kName));
    Shape out_shape = legacy_.output_shape(a.shape(), b_view.shape(), Op::kName);
    dispatch<typename Op::Types>(a.dtype(), Op::kName, [&]<typename T>() {
      op_.template validate_type<T>();
      using Out = std::conditional_t<Op::kBoolOutput, bool, T>;
      // Written over A (or B) when that input is donated and has the output's shape.
      const int reuse = a.shape() == out_shape ? 0 : b.shape() == out_shape ? 1 : -1;
      Tensor& y = ctx.allocate_output_for_overwrite(0, DataTypeOf<Out>::value, out_shape, reuse);
      if constexpr (Op::kSwapInputs) {
        const typename Op::Loop& loop = op_;
        broadcast_binary<T, T, Out>(ctx.thread_pool(), b_view, a, y, loop);
      } else {
        broadcast_binary<T, T, Out>(ctx.thread_pool(), a, b_view, y, op_);
      }
    });
  }

 private:
  Op op_;
  LegacyBroadcast legacy_;
};

// The KernelDef of a BinaryKernel.
template <typename Op>
KernelDef binary_def(int since, std::vector<AttrSpec> attributes) {
  return {"", Op::kName, since, std::move(attributes), &make_kernel<BinaryKernel<Op>>};
}

// The legacy broadcasting attributes of the arithmetic, logical and comparison operators.
inline std::vector<AttrSpec> legacy_broadcast_attributes() {
  return {{"broadcast", AttrKind::kInt}, {"axis", AttrKind::kInt}};
}

}  // namespace openbpu::kernels::binary_ops
