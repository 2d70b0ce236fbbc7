// Activation functions: Relu, LeakyRelu, Elu, Selu, Celu, Sigmoid, Tanh, HardSigmoid,
// HardSwish, Softplus, Softsign, ThresholdedRelu, Shrink, Clip.
//
// Each is an elementwise map; the float ones compute 16-bit floats in float (ComputeType).
#include <cmath>
#include <limits>
#include <type_traits>

#include "families.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/elementwise.h"
#include "openbpu/kernels/fast_exp.h"
#include "openbpu/kernels/numeric_cast.h"

namespace openbpu::kernels {

namespace {

// An activation `Fn` with parameters read from the node once. Fn provides kName, Types,
// a constructor from NodeInfo and a templated operator() on the compute type.
template <typename Fn>
class ActivationKernel final : public Kernel {
 public:
  explicit ActivationKernel(const NodeInfo& node) : fn_(node) {}
  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.allocate_output_for_overwrite(0, x.dtype(), x.shape(), 0);
    dispatch<typename Fn::Types>(
        x.dtype(), Fn::kName, [&]<typename T>() { map_unary<T, T>(ctx.thread_pool(), x, y, fn_); });
  }

 private:
  Fn fn_;
};

struct Relu {
  static constexpr const char* kName = "Relu";
  using Types = SignedNumericTypes;  // floats; signed integers from opset 14
  explicit Relu(const NodeInfo&) {}
  template <typename V>
  V operator()(V v) const {
    return v < V(0) ? V(0) : v;
  }
};

struct LeakyRelu {
  static constexpr const char* kName = "LeakyRelu";
  using Types = FloatTypes;
  explicit LeakyRelu(const NodeInfo& node) : alpha(node.attrs.get_float("alpha", 0.01f)) {}
  template <typename V>
  V operator()(V v) const {
    return v < V(0) ? V(alpha) * v : v;
  }
  float alpha;
};

struct Elu {
  static constexpr const char* kName = "Elu";
  using Types = FloatTypes;
  explicit Elu(const NodeInfo& node) : alpha(node.attrs.get_float("alpha", 1.0f)) {}
  template <typename V>
  V operator()(V v) const {
    return v < V(0) ? V(alpha) * std::expm1(v) : v;
  }
  float alpha;
};

struct Selu {
  static constexpr const char* kName = "Selu";
  using Types = FloatTypes;
  explicit Selu(const NodeInfo& node)
      : alpha(node.attrs.get_float("alpha", 1.67326319217681884765625f)),
        gamma(node.attrs.get_float("gamma", 1.05070102214813232421875f)) {}
  template <typename V>
  V operator()(V v) const {
    return v <= V(0) ? V(gamma) * (V(alpha) * std::exp(v) - V(alpha)) : V(gamma) * v;
  }
  float alpha, gamma;
};

struct Celu {
  static constexpr const char* kName = "Celu";
  using Types = FloatTypes;
  explicit Celu(const NodeInfo& node) : alpha(node.attrs.get_float("alpha", 1.0f)) {
    OPENBPU_CHECK(alpha != 0.0f, "Celu: alpha must be non-zero, got ", alpha);
  }
  template <typename V>
  V operator()(V v) const {
    const V negative_part = V(alpha) * std::expm1(v / V(alpha));
    return (v > V(0) ? v : V(0)) + (negative_part < V(0) ? negative_part : V(0));
  }
  float alpha;
};

struct Sigmoid {
  static constexpr const char* kName = "Sigmoid";
  using Types = FloatTypes;
  explicit Sigmoid(const NodeInfo&) {}
  template <typename V>
  V operator()(V v) const {
    if constexpr (std::is_same_v<V, float>) {
      // Branch-free and vectorizable; fast_exp saturates instead of overflowing, so the
      // result still tends to 0 and 1 at the ends. The unit tests compare it with the double
      // path, which uses reference().
      return 1.0f / (1.0f + fast_exp(-v));
    } else {
      return reference(v);
    }
  }
  template <typename V>
  static V reference(V v) {
    // exp of a non-positive argument only: no overflow for large |v|.
    if (v >= V(0)) return V(1) / (V(1) + std::exp(-v));
    const V e = std::exp(v);
    return e / (V(1) + e);
  }
};

struct Tanh {
  static constexpr const char* kName = "Tanh";
  using Types = FloatTypes;
  explicit Tanh(const NodeInfo&) {}
  template <typename V>
  V operator()(V v) const {
    return std::tanh(v);
  }
};

// max(0, min(1, alpha * v + beta)); NaN propagates.
template <typename V>
V hard_sigmoid(V v, V alpha, V beta) {
  const V s = alpha * v + beta;
  if (s < V(0)) return V(0);
  if (s > V(1)) return V(1);
  return s;
}

struct HardSigmoid {
  static constexpr const char* kName = "HardSigmoid";
  using Types = FloatTypes;
  explicit HardSigmoid(const NodeInfo& node)
      : alpha(node.attrs.get_float("alpha", 0.2f)), beta(node.attrs.get_float("beta", 0.5f)) {}
  template <typename V>
  V operator()(V v) const {
    return hard_sigmoid(v, V(alpha), V(beta));
  }
  float alpha, beta;
};

struct HardSwish {
  static constexpr const char* kName = "HardSwish";
  using Types = FloatTypes;
  explicit HardSwish(const NodeInfo&) {}
  template <typename V>
  V operator()(V v) const {
    return v * hard_sigmoid(v, V(1) / V(6), V(0.5));
  }
};

struct Softplus {
  static constexpr const char* kName = "Softplus";
  using Types = FloatTypes;
  explicit Softplus(const NodeInfo&) {}
  template <typename V>
  V operator()(V v) const {
    // log(1 + exp(v)) without overflow: v + log1p(exp(-v)) for positive v.
    return v > V(0) ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
  }
};

struct Softsign {
  static constexpr const char* kName = "Softsign";
  using Types = FloatTypes;
  explicit Softsign(const NodeInfo&) {}
  template <typename V>
  V operator()(V v) const {
    return v / (V(1) + std::abs(v));
  }
};

struct ThresholdedRelu {
  static constexpr const char* kName = "ThresholdedRelu";
  using Types = FloatTypes;
  explicit ThresholdedRelu(const NodeInfo& node) : alpha(node.attrs.get_float("alpha", 1.0f)) {}
  template <typename V>
  V operator()(V v) const {
    return v > V(alpha) ? v : V(0);
  }
  float alpha;
};

// v + bias below -lambd, v - bias above lambd, 0 between. Integers compute in double and
// convert back (truncating, saturating).
struct Shrink {
  static constexpr const char* kName = "Shrink";
  using Types = NumericTypes;
  explicit Shrink(const NodeInfo& node)
      : bias(node.attrs.get_float("bias", 0.0f)), lambd(node.attrs.get_float("lambd", 0.5f)) {
    OPENBPU_CHECK(lambd >= 0.0f, "Shrink: lambd must be >= 0, got ", lambd);
  }
  template <typename V>
  V operator()(V v) const {
    using Wide = std::conditional_t<std::is_floating_point_v<V>, V, double>;
    const Wide w = static_cast<Wide>(v);
    Wide r = Wide(0);
    if (w < -Wide(lambd)) {
      r = w + Wide(bias);
    } else if (w > Wide(lambd)) {
      r = w - Wide(bias);
    }
    return numeric_cast<V>(r);
  }
  float bias, lambd;
};

// Clip: bounds are attributes before opset 11 (float only), optional scalar inputs from 11
// (integer types from 12). min > max gives max everywhere; NaN inputs stay NaN.
class ClipKernel final : public Kernel {
 public:
  explicit ClipKernel(const NodeInfo& node) : bounds_are_inputs_(node.opset >= 11) {
    if (bounds_are_inputs_) {
      OPENBPU_CHECK(!node.attrs.has("min") && !node.attrs.has("max"),
            "Clip: min/max are inputs from opset 11, not attributes (model opset ", node.opset,
            ")");
    } else {
      min_attr_ = node.attrs.get_float("min", std::numeric_limits<float>::lowest());
      max_attr_ = node.attrs.get_float("max", std::numeric_limits<float>::max());
    }
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.allocate_output_for_overwrite(0, x.dtype(), x.shape(), 0);
    if (!bounds_are_inputs_) {
      dispatch<FloatTypes>(x.dtype(), "Clip", [&]<typename T>() {
        using C = ComputeType<T>;
        clip<T>(ctx.thread_pool(), x, y, C(min_attr_), C(max_attr_));
      });
      return;
    }
    dispatch<NumericTypes>(x.dtype(), "Clip", [&]<typename T>() {
      using C = ComputeType<T>;
      C lo = std::numeric_limits<C>::lowest();
      C hi = std::numeric_limits<C>::max();
      if (const Tensor* t = ctx.optional_input(1)) lo = bound<T>(*t, x, "min");
      if (const Tensor* t = ctx.optional_input(2)) hi = bound<T>(*t, x, "max");
      clip<T>(ctx.thread_pool(), x, y, lo, hi);
    });
  }

 private:
  template <typename T>
  static ComputeType<T> bound(const Tensor& t, const Tensor& x, const char* which) {
    OPENBPU_CHECK(t.dtype() == x.dtype(), "Clip: ", which, " must have the input's type ",
          dtype_name(x.dtype()), ", got ", dtype_name(t.dtype()));
    OPENBPU_CHECK(t.element_count() == 1, "Clip: ", which, " must be a scalar, got shape ",
          shape_to_string(t.shape()));
    return to_compute(t.data<T>()[0]);
  }

  template <typename T>
  static void clip(ThreadPool* pool, const Tensor& x, Tensor& y, ComputeType<T> lo,
                   ComputeType<T> hi) {
    map_unary<T, T>(pool, x, y, [lo, hi](ComputeType<T> v) {
      const ComputeType<T> above = v < lo ? lo : v;
      return above > hi ? hi : above;
    });
  }

  bool bounds_are_inputs_;
  float min_attr_ = 0.0f;
  float max_attr_ = 0.0f;
};

template <typename Fn>
KernelDef activation_def(int since, std::vector<AttrSpec> attributes = {}) {
  return {"", Fn::kName, since, std::move(attributes), &make_kernel<ActivationKernel<Fn>>};
}

}  // namespace

void register_activation_kernels(std::vector<KernelDef>& defs) {
  defs.push_back(activation_def<Relu>(6));
  defs.push_back(activation_def<LeakyRelu>(6, {{"alpha", AttrKind::kFloat}}));
  defs.push_back(activation_def<Elu>(6, {{"alpha", AttrKind::kFloat}}));
  defs.push_back(
      activation_def<Selu>(6, {{"alpha", AttrKind::kFloat}, {"gamma", AttrKind::kFloat}}));
  defs.push_back(activation_def<Celu>(12, {{"alpha", AttrKind::kFloat}}));
  defs.push_back(activation_def<Sigmoid>(6));
  defs.push_back(activation_def<Tanh>(6));
  defs.push_back(
      activation_def<HardSigmoid>(6, {{"alpha", AttrKind::kFloat}, {"beta", AttrKind::kFloat}}));
  defs.push_back(activation_def<HardSwish>(14));
  defs.push_back(activation_def<Softplus>(1));
  defs.push_back(activation_def<Softsign>(1));
  defs.push_back(activation_def<ThresholdedRelu>(10, {{"alpha", AttrKind::kFloat}}));
  defs.push_back(
      activation_def<Shrink>(9, {{"bias", AttrKind::kFloat}, {"lambd", AttrKind::kFloat}}));
  defs.push_back({"",
                  "Clip",
                  6,
                  {{"min", AttrKind::kFloat}, {"max", AttrKind::kFloat}},
                  &make_kernel<ClipKernel>});
}

}  // namespace openbpu::kernels
