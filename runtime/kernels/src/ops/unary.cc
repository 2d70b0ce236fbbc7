// Elementwise math without attributes: Abs, Neg, Floor, Ceil, Round, Sqrt, Reciprocal, Exp,
// Log, trigonometric and hyperbolic functions, Sign, Erf, IsNaN, IsInf, Not.
#include <cmath>
#include <type_traits>

#include "families.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/elementwise.h"

namespace openbpu::kernels {

namespace {

// A unary operator: Types it accepts, and apply() on the compute type.
template <typename Op>
class UnaryKernel final : public Kernel {
 public:
  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.allocate_output_for_overwrite(0, x.dtype(), x.shape(), 0);
    dispatch<typename Op::Types>(x.dtype(), Op::kName, [&]<typename T>() {
      map_unary<T, T>(ctx.thread_pool(), x, y, [](auto v) { return Op::apply(v); });
    });
  }
};

template <typename Op>
KernelDef unary_def(int since) {
  return {"", Op::kName, since, {}, &make_kernel<UnaryKernel<Op>>};
}

#define OPENBPU_FLOAT_UNARY(Name, Expr)           \
  struct Name {                                   \
    static constexpr const char* kName = #Name;   \
    using Types = FloatTypes;                     \
    template <typename V>                         \
    static V apply(V v) {                         \
      return Expr;                                \
    }                                             \
  };
OPENBPU_FLOAT_UNARY(Sqrt, std::sqrt(v))
OPENBPU_FLOAT_UNARY(Reciprocal, V(1) / v)
OPENBPU_FLOAT_UNARY(Exp, std::exp(v))
OPENBPU_FLOAT_UNARY(Log, std::log(v))
OPENBPU_FLOAT_UNARY(Sin, std::sin(v))
OPENBPU_FLOAT_UNARY(Cos, std::cos(v))
OPENBPU_FLOAT_UNARY(Tan, std::tan(v))
OPENBPU_FLOAT_UNARY(Asin, std::asin(v))
OPENBPU_FLOAT_UNARY(Acos, std::acos(v))
OPENBPU_FLOAT_UNARY(Atan, std::atan(v))
OPENBPU_FLOAT_UNARY(Sinh, std::sinh(v))
OPENBPU_FLOAT_UNARY(Cosh, std::cosh(v))
OPENBPU_FLOAT_UNARY(Asinh, std::asinh(v))
OPENBPU_FLOAT_UNARY(Acosh, std::acosh(v))
OPENBPU_FLOAT_UNARY(Atanh, std::atanh(v))
OPENBPU_FLOAT_UNARY(Erf, std::erf(v))
OPENBPU_FLOAT_UNARY(Floor, std::floor(v))
OPENBPU_FLOAT_UNARY(Ceil, std::ceil(v))
OPENBPU_FLOAT_UNARY(Round, std::nearbyint(v))  // halves to even (default rounding mode)
#undef OPENBPU_FLOAT_UNARY

struct Abs {
  static constexpr const char* kName = "Abs";
  using Types = NumericTypes;
  template <typename V>
  static V apply(V v) {
    if constexpr (std::is_unsigned_v<V>) {
      return v;
    } else {
      return v < V(0) ? V(-v) : v;
    }
  }
};

struct Neg {
  static constexpr const char* kName = "Neg";
  using Types = SignedNumericTypes;
  template <typename V>
  static V apply(V v) {
    return V(-v);
  }
};

struct Sign {
  static constexpr const char* kName = "Sign";
  using Types = NumericTypes;
  template <typename V>
  static V apply(V v) {
    if constexpr (std::is_floating_point_v<V>) {
      if (std::isnan(v)) return v;
    }
    return v > V(0) ? V(1) : (v < V(0) ? V(-1) : V(0));
  }
};

struct Not {
  static constexpr const char* kName = "Not";
  using Types = TypeList<bool>;
  static bool apply(bool v) { return !v; }
};

// IsNaN / IsInf produce bool from a float input.
class IsNaNKernel final : public Kernel {
 public:
  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.allocate_output(0, DataType::kBool, x.shape());
    dispatch<FloatTypes>(x.dtype(), "IsNaN", [&]<typename T>() {
      map_unary<T, bool>(ctx.thread_pool(), x, y, [](auto v) { return std::isnan(v); });
    });
  }
};

class IsInfKernel final : public Kernel {
 public:
  explicit IsInfKernel(const NodeInfo& node)
      : positive_(node.attrs.get_int("detect_positive", 1) != 0),
        negative_(node.attrs.get_int("detect_negative", 1) != 0) {}
  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.allocate_output(0, DataType::kBool, x.shape());
    const bool pos = positive_, neg = negative_;
    dispatch<FloatTypes>(x.dtype(), "IsInf", [&]<typename T>() {
      map_unary<T, bool>(ctx.thread_pool(), x, y, [pos, neg](auto v) {
        return std::isinf(v) && ((v > 0 && pos) || (v < 0 && neg));
      });
    });
  }

 private:
  bool positive_, negative_;
};

}  // namespace

void register_unary_kernels(std::vector<KernelDef>& defs) {
  defs.push_back(unary_def<Abs>(6));
  defs.push_back(unary_def<Neg>(6));
  defs.push_back(unary_def<Sign>(9));
  defs.push_back(unary_def<Not>(1));
  defs.push_back(unary_def<Sqrt>(6));
  defs.push_back(unary_def<Reciprocal>(6));
  defs.push_back(unary_def<Exp>(6));
  defs.push_back(unary_def<Log>(6));
  defs.push_back(unary_def<Sin>(7));
  defs.push_back(unary_def<Cos>(7));
  defs.push_back(unary_def<Tan>(7));
  defs.push_back(unary_def<Asin>(7));
  defs.push_back(unary_def<Acos>(7));
  defs.push_back(unary_def<Atan>(7));
  defs.push_back(unary_def<Sinh>(9));
  defs.push_back(unary_def<Cosh>(9));
  defs.push_back(unary_def<Asinh>(9));
  defs.push_back(unary_def<Acosh>(9));
  defs.push_back(unary_def<Atanh>(9));
  defs.push_back(unary_def<Erf>(9));
  defs.push_back(unary_def<Floor>(6));
  defs.push_back(unary_def<Ceil>(6));
  defs.push_back(unary_def<Round>(11));
  defs.push_back({"", "IsNaN", 9, {}, &make_kernel<IsNaNKernel>});
  defs.push_back({"", "IsInf", 10,
                  {{"detect_positive", AttrKind::kInt}, {"detect_negative", AttrKind::kInt}},
                  &make_kernel<IsInfKernel>});
}

}  // namespace openbpu::kernels
