// Broadcasting binary and variadic elementwise operators: Add, Sub, Mul, Div, Pow, Mod,
// BitShift, And, Or, Xor, Equal, Greater, Less, GreaterOrEqual, LessOrEqual, PRelu, Where,
// Max, Min, Sum, Mean.
//
// Defined results where C++ or the spec leave a hole (documented behaviour, never a crash):
//   - integer Add/Sub/Mul wrap modulo 2^bits;
//   - integer Div truncates toward zero; x / 0 is 0; INT_MIN / -1 is INT_MIN (wraps);
//   - integer Mod: x mod 0 is 0 (as numpy); INT_MIN mod -1 is 0;
//   - integer Pow with a negative exponent: 1 for base 1, ±1 for base -1, 0 otherwise;
//     float results converted to an integer base type truncate and saturate (NaN → 0);
//   - BitShift by at least the bit width gives 0.
// Before opset 7 the arithmetic, logical and comparison operators use the legacy
// `broadcast`/`axis` attributes (B's shape aligned with A's at `axis`); from 7 numpy rules.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include "families.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/elementwise.h"
#include "openbpu/kernels/numeric_cast.h"

namespace openbpu::kernels {

namespace {

// ---------------------------------------------------------------------------------------------
// Broadcasting loop

// y = f(a, b) with numpy broadcasting, y already allocated with the broadcast shape. Adjacent
// dimensions that broadcast alike are merged; the innermost merged dimension is walked with
// unit or zero strides, and the flat output range is split over the pool. Same results as
// map_binary (elementwise.h), which serves as its reference in the tests.
template <typename A, typename B, typename Out, typename F>
void broadcast_binary(ThreadPool* pool, const Tensor& a, const Tensor& b, Tensor& y, const F& f) {
  const Shape& out_shape = y.shape();
  const int64_t total = y.element_count();
  if (total == 0) return;
  const std::vector<int64_t> a_strides = broadcast_strides(a.shape(), out_shape);
  const std::vector<int64_t> b_strides = broadcast_strides(b.shape(), out_shape);
  std::vector<int64_t> dims, sa, sb;
  for (size_t d = 0; d < out_shape.size(); ++d) {
    const int64_t n = out_shape[d];
    if (n == 1) continue;
    if (!dims.empty() && sa.back() == a_strides[d] * n && sb.back() == b_strides[d] * n) {
      dims.back() *= n;
      sa.back() = a_strides[d];
      sb.back() = b_strides[d];
    } else {
      dims.push_back(n);
      sa.push_back(a_strides[d]);
      sb.push_back(b_strides[d]);
    }
  }
  if (dims.empty()) {
    dims = {1};
    sa = {0};
    sb = {0};
  }
  const size_t outer_rank = dims.size() - 1;
  const int64_t inner = dims.back();
  const int64_t a_step = sa.back(), b_step = sb.back();
  const A* pa = a.data<A>();
  const B* pb = b.data<B>();
  Out* out = y.data<Out>();
  auto apply = [&f](A x, B z) { return from_compute<Out>(f(to_compute(x), to_compute(z))); };

  parallel_for(pool, total, kElementwiseChunk, [&](int64_t begin, int64_t end) {
    int64_t i = begin;
    while (i < end) {
      int64_t row = i / inner;
      const int64_t col = i % inner;
      const int64_t len = std::min(inner - col, end - i);
      int64_t oa = col * a_step, ob = col * b_step;
      for (size_t d = outer_rank; d-- > 0;) {
        const int64_t c = row % dims[d];
        row /= dims[d];
        oa += c * sa[d];
        ob += c * sb[d];
      }
      const A* ra = pa + oa;
      const B* rb = pb + ob;
      Out* ro = out + i;
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
      i += len;
    }
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
      OPENBPU_CHECK(aligned[i] == 1 || aligned[i] == a[i], op, ": B ", shape_to_string(b), " at axis ",
            axis, " does not broadcast to A ", shape_to_string(a));
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
// validate_type<T>() and operator()(V, V) on the compute type.
struct BinaryOpBase {
  static constexpr int kNumpyFrom = 7;
  static constexpr bool kBoolOutput = false;
  template <typename T>
  void validate_type() const {}
};

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
      Tensor& y = ctx.allocate_output(0, DataTypeOf<Out>::value, std::move(out_shape));
      broadcast_binary<T, T, Out>(ctx.thread_pool(), a, b_view, y, op_);
    });
  }

 private:
  Op op_;
  LegacyBroadcast legacy_;
};

#define OPENBPU_SIMPLE_OP_CTOR(Name)          \
  static constexpr const char* kName = #Name; \
  explicit Name(const NodeInfo&) {}

struct Add : BinaryOpBase {
  OPENBPU_SIMPLE_OP_CTOR(Add)
  using Types = NumericTypes;
  template <typename V>
  V operator()(V a, V b) const {
    return wrapping_add(a, b);
  }
};

struct Sub : BinaryOpBase {
  OPENBPU_SIMPLE_OP_CTOR(Sub)
  using Types = NumericTypes;
  template <typename V>
  V operator()(V a, V b) const {
    return wrapping_sub(a, b);
  }
};

struct Mul : BinaryOpBase {
  OPENBPU_SIMPLE_OP_CTOR(Mul)
  using Types = NumericTypes;
  template <typename V>
  V operator()(V a, V b) const {
    return wrapping_mul(a, b);
  }
};

struct Div : BinaryOpBase {
  OPENBPU_SIMPLE_OP_CTOR(Div)
  using Types = NumericTypes;
  template <typename V>
  V operator()(V a, V b) const {
    if constexpr (std::is_integral_v<V>) {
      if (b == V(0)) return V(0);
      if constexpr (std::is_signed_v<V>) {
        if (b == V(-1)) return wrapping_sub(V(0), a);
      }
      return static_cast<V>(a / b);
    } else {
      return a / b;
    }
  }
};

class Mod : public BinaryOpBase {
 public:
  static constexpr const char* kName = "Mod";
  static constexpr int kNumpyFrom = 0;
  using Types = NumericTypes;
  explicit Mod(const NodeInfo& node) : fmod_(node.attrs.get_int("fmod", 0)) {
    OPENBPU_CHECK(fmod_ == 0 || fmod_ == 1, "Mod: fmod must be 0 or 1, got ", fmod_);
  }
  template <typename T>
  void validate_type() const {
    OPENBPU_CHECK(fmod_ == 1 || !dtype_is_float(DataTypeOf<T>::value),
          "Mod: fmod must be 1 for floating-point inputs, got fmod=0 with ",
          dtype_name(DataTypeOf<T>::value));
  }
  template <typename V>
  V operator()(V a, V b) const {
    if constexpr (std::is_floating_point_v<V>) {
      return std::fmod(a, b);
    } else {
      if (b == V(0)) return V(0);
      if constexpr (std::is_signed_v<V>) {
        if (b == V(-1)) return V(0);
      }
      V r = static_cast<V>(a % b);  // sign of the dividend (C fmod)
      if (fmod_ == 0 && r != V(0) && (is_negative(r) != is_negative(b))) {
        r = static_cast<V>(r + b);  // sign of the divisor (Python %)
      }
      return r;
    }
  }

 private:
  int64_t fmod_;
};

class BitShift : public BinaryOpBase {
 public:
  static constexpr const char* kName = "BitShift";
  static constexpr int kNumpyFrom = 0;
  using Types = UnsignedIntTypes;
  explicit BitShift(const NodeInfo& node) {
    const std::string direction = node.attrs.get_string("direction");
    OPENBPU_CHECK(direction == "LEFT" || direction == "RIGHT",
          "BitShift: direction must be \"LEFT\" or \"RIGHT\", got \"", direction, "\"");
    left_ = direction == "LEFT";
  }
  template <typename V>
  V operator()(V a, V b) const {
    if (b >= V(sizeof(V) * 8)) return V(0);
    const uint64_t wide = a;
    return static_cast<V>(left_ ? wide << b : wide >> b);
  }

 private:
  bool left_ = true;
};

#define OPENBPU_BOOL_OP(Name, TypeList, NumpyFrom, Expr) \
  struct Name : BinaryOpBase {                           \
    OPENBPU_SIMPLE_OP_CTOR(Name)                         \
    static constexpr int kNumpyFrom = NumpyFrom;         \
    static constexpr bool kBoolOutput = true;            \
    using Types = TypeList;                              \
    template <typename V>                                \
    bool operator()(V a, V b) const {                    \
      return Expr;                                       \
    }                                                    \
  };
using BoolTypes = TypeList<bool>;
OPENBPU_BOOL_OP(And, BoolTypes, 7, a&& b)
OPENBPU_BOOL_OP(Or, BoolTypes, 7, a || b)
OPENBPU_BOOL_OP(Xor, BoolTypes, 7, a != b)
OPENBPU_BOOL_OP(Equal, AllTypes, 7, a == b)
OPENBPU_BOOL_OP(Greater, NumericTypes, 7, a > b)
OPENBPU_BOOL_OP(Less, NumericTypes, 7, a < b)
OPENBPU_BOOL_OP(GreaterOrEqual, NumericTypes, 0, a >= b)
OPENBPU_BOOL_OP(LessOrEqual, NumericTypes, 0, a <= b)
#undef OPENBPU_BOOL_OP
#undef OPENBPU_SIMPLE_OP_CTOR

// ---------------------------------------------------------------------------------------------
// Pow: base and exponent may differ in type from opset 12; the result has the base's type.

using PowBaseTypes = TypeList<int32_t, int64_t, float, double, Float16, BFloat16>;

template <typename I>
I integer_power(I base, int64_t exponent) {
  if (exponent < 0) {
    if (base == I(1)) return I(1);
    if constexpr (std::is_signed_v<I>) {
      if (base == I(-1)) return (exponent % 2 == 0) ? I(1) : I(-1);
    }
    return I(0);
  }
  I result = I(1);
  while (exponent > 0) {
    if (exponent & 1) result = wrapping_mul(result, base);
    base = wrapping_mul(base, base);
    exponent >>= 1;
  }
  return result;
}

template <typename B, typename E>
B power(B base, E exponent) {
  if constexpr (std::is_integral_v<B> && std::is_integral_v<E>) {
    constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    const bool too_large = std::is_unsigned_v<E> && static_cast<uint64_t>(exponent) > kMax;
    const int64_t e =
        too_large ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(exponent);
    return integer_power(base, e);
  } else if constexpr (std::is_integral_v<B>) {
    return numeric_cast<B>(std::pow(static_cast<double>(base), static_cast<double>(exponent)));
  } else {
    // B is float or double (16-bit floats compute in float).
    return static_cast<B>(std::pow(static_cast<double>(base), static_cast<double>(exponent)));
  }
}

class PowKernel final : public Kernel {
 public:
  explicit PowKernel(const NodeInfo& node) : opset_(node.opset), legacy_(node, 7) {}

  void run(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    OPENBPU_CHECK(opset_ >= 12 || a.dtype() == b.dtype(),
          "Pow: before opset 12 base and exponent must have the same type, got ",
          dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
    const Tensor b_view = b.reshaped(legacy_.aligned_shape(a.shape(), b.shape(), "Pow"));
    Shape out_shape = legacy_.output_shape(a.shape(), b_view.shape(), "Pow");
    dispatch<PowBaseTypes>(a.dtype(), "Pow", [&]<typename T>() {
      Tensor& y = ctx.allocate_output(0, a.dtype(), std::move(out_shape));
      dispatch<NumericTypes>(b.dtype(), "Pow (exponent)", [&]<typename E>() {
        if (is_scalar_two<E>(b_view) && a.shape() == y.shape()) {
          map_unary<T, T>(ctx.thread_pool(), a, y, [](auto v) { return wrapping_mul(v, v); });
          return;
        }
        broadcast_binary<T, E, T>(ctx.thread_pool(), a, b_view, y,
                                  [](auto base, auto e) { return power(base, e); });
      });
    });
  }

 private:
  // x^2 (the usual variance term) as x*x: the same value as pow(x, 2), much cheaper.
  template <typename E>
  static bool is_scalar_two(const Tensor& exponent) {
    return exponent.element_count() == 1 && to_compute(exponent.data<E>()[0]) == 2;
  }

  int opset_;
  LegacyBroadcast legacy_;
};

// ---------------------------------------------------------------------------------------------
// PRelu: slope broadcast unidirectionally to X. Before opset 7 a 1-D slope whose length is
// X's dimension 1 applies per channel (as the opset-6 exporters used it).

class PReluKernel final : public Kernel {
 public:
  explicit PReluKernel(const NodeInfo& node) : opset_(node.opset) {}

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& slope = ctx.input(1);
    OPENBPU_CHECK(x.dtype() == slope.dtype(), "PRelu: slope must have X's type ", dtype_name(x.dtype()),
          ", got ", dtype_name(slope.dtype()));
    Shape slope_shape = slope.shape();
    if (opset_ < 7 && slope.rank() == 1 && x.rank() >= 2 && slope.dim(0) == x.dim(1) &&
        slope.dim(0) != 1) {
      slope_shape.assign(size_t(x.rank() - 1), 1);
      slope_shape[0] = slope.dim(0);
    }
    OPENBPU_CHECK(broadcast_shapes(x.shape(), slope_shape, "PRelu") == x.shape(), "PRelu: slope ",
          shape_to_string(slope.shape()), " must broadcast to X ", shape_to_string(x.shape()));
    const Tensor slope_view = slope.reshaped(slope_shape);
    Tensor& y = ctx.allocate_output(0, x.dtype(), x.shape());
    dispatch<NumericTypes>(x.dtype(), "PRelu", [&]<typename T>() {
      broadcast_binary<T, T, T>(ctx.thread_pool(), x, slope_view, y, [](auto v, auto s) {
        return is_negative(v) ? wrapping_mul(v, s) : v;
      });
    });
  }

 private:
  int opset_;
};

// ---------------------------------------------------------------------------------------------
// Where(condition, X, Y) with three-way broadcasting.

class WhereKernel final : public Kernel {
 public:
  void run(KernelContext& ctx) const override {
    const Tensor& cond = ctx.input(0);
    const Tensor& x = ctx.input(1);
    const Tensor& z = ctx.input(2);
    OPENBPU_CHECK(cond.dtype() == DataType::kBool, "Where: condition must be bool, got ",
          dtype_name(cond.dtype()));
    OPENBPU_CHECK(x.dtype() == z.dtype(), "Where: X and Y must have the same type, got ",
          dtype_name(x.dtype()), " and ", dtype_name(z.dtype()));
    const std::array<const Shape*, 3> shapes{&cond.shape(), &x.shape(), &z.shape()};
    Shape out_shape = broadcast_shapes(shapes, "Where");
    Tensor& y = ctx.allocate_output(0, x.dtype(), out_shape);
    dispatch<AllTypes>(x.dtype(), "Where", [&]<typename T>() {
      const bool* pc = cond.data<bool>();
      const T* px = x.data<T>();
      const T* pz = z.data<T>();
      T* out = y.data<T>();
      if (cond.shape() == out_shape && x.shape() == out_shape && z.shape() == out_shape) {
        parallel_for(ctx.thread_pool(), y.element_count(), kElementwiseChunk,
                     [&](int64_t b, int64_t e) {
                       for (int64_t i = b; i < e; ++i) out[i] = pc[i] ? px[i] : pz[i];
                     });
        return;
      }
      for_each_broadcast<3>(out_shape, shapes, [&](int64_t i, const int64_t* off) {
        out[i] = pc[off[0]] ? px[off[1]] : pz[off[2]];
      });
    });
  }
};

// ---------------------------------------------------------------------------------------------
// Variadic Max, Min, Sum, Mean: y = x0 op x1 op ... folded left to right over the broadcast
// shape.

struct VariadicMax {
  static constexpr const char* kName = "Max";
  using Types = NumericTypes;
  template <typename V>
  V operator()(V a, V b) const {
    if (is_nan(a) || is_nan(b)) return is_nan(a) ? a : b;
    return a < b ? b : a;
  }
};

struct VariadicMin {
  static constexpr const char* kName = "Min";
  using Types = NumericTypes;
  template <typename V>
  V operator()(V a, V b) const {
    if (is_nan(a) || is_nan(b)) return is_nan(a) ? a : b;
    return b < a ? b : a;
  }
};

struct VariadicSum {
  static constexpr const char* kName = "Sum";
  using Types = FloatTypes;
  template <typename V>
  V operator()(V a, V b) const {
    return a + b;
  }
};

struct VariadicMean : VariadicSum {
  static constexpr const char* kName = "Mean";
};

template <typename Op>
class VariadicKernel final : public Kernel {
 public:
  void run(KernelContext& ctx) const override {
    OPENBPU_CHECK(ctx.input_count() >= 1, Op::kName, ": needs at least one input");
    std::vector<const Tensor*> inputs;
    std::vector<const Shape*> shapes;
    for (int i = 0; i < ctx.input_count(); ++i) {
      inputs.push_back(&ctx.input(i));
      shapes.push_back(&inputs.back()->shape());
      OPENBPU_CHECK(inputs.back()->dtype() == inputs[0]->dtype(), Op::kName,
            ": all inputs must have the same type, input 0 is ", dtype_name(inputs[0]->dtype()),
            " and input ", i, " is ", dtype_name(inputs.back()->dtype()));
    }
    Shape out_shape = broadcast_shapes(shapes, Op::kName);
    const Op op{};
    dispatch<typename Op::Types>(inputs[0]->dtype(), Op::kName, [&]<typename T>() {
      Tensor& y = ctx.allocate_output(0, inputs[0]->dtype(), out_shape);
      const Tensor& first = *inputs[0];
      broadcast_binary<T, T, T>(ctx.thread_pool(), first, first, y, [](auto v, auto) { return v; });
      for (size_t k = 1; k < inputs.size(); ++k) {
        // In place: y's element i is read before it is written, at the same index.
        broadcast_binary<T, T, T>(ctx.thread_pool(), y, *inputs[k], y, op);
      }
      if constexpr (std::is_same_v<Op, VariadicMean>) {
        const auto count = static_cast<ComputeType<T>>(inputs.size());
        map_unary<T, T>(ctx.thread_pool(), y, y, [count](auto v) { return v / count; });
      }
    });
  }
};

template <typename Op>
KernelDef binary_def(int since, std::vector<AttrSpec> attributes) {
  return {"", Op::kName, since, std::move(attributes), &make_kernel<BinaryKernel<Op>>};
}

}  // namespace

void register_binary_kernels(std::vector<KernelDef>& defs) {
  const std::vector<AttrSpec> legacy = {{"broadcast", AttrKind::kInt}, {"axis", AttrKind::kInt}};
  defs.push_back(binary_def<Add>(6, legacy));
  defs.push_back(binary_def<Sub>(6, legacy));
  defs.push_back(binary_def<Mul>(6, legacy));
  defs.push_back(binary_def<Div>(6, legacy));
  defs.push_back(binary_def<Mod>(10, {{"fmod", AttrKind::kInt}}));
  defs.push_back(binary_def<BitShift>(11, {{"direction", AttrKind::kString, true}}));
  defs.push_back(binary_def<And>(1, legacy));
  defs.push_back(binary_def<Or>(1, legacy));
  defs.push_back(binary_def<Xor>(1, legacy));
  defs.push_back(binary_def<Equal>(1, legacy));
  defs.push_back(binary_def<Greater>(1, legacy));
  defs.push_back(binary_def<Less>(1, legacy));
  defs.push_back(binary_def<GreaterOrEqual>(12, {}));
  defs.push_back(binary_def<LessOrEqual>(12, {}));
  defs.push_back({"", "Pow", 1, legacy, &make_kernel<PowKernel>});
  defs.push_back({"", "PRelu", 6, {}, &make_kernel<PReluKernel>});
  defs.push_back({"", "Where", 9, {}, &make_kernel<WhereKernel>});
  defs.push_back({"", "Max", 6, {}, &make_kernel<VariadicKernel<VariadicMax>>});
  defs.push_back({"", "Min", 6, {}, &make_kernel<VariadicKernel<VariadicMin>>});
  defs.push_back({"", "Sum", 6, {}, &make_kernel<VariadicKernel<VariadicSum>>});
  defs.push_back({"", "Mean", 6, {}, &make_kernel<VariadicKernel<VariadicMean>>});
}

}  // namespace openbpu::kernels
