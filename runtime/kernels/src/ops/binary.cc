// Broadcasting arithmetic operators: Add, Sub, Mul, Div, Mod, BitShift, PRelu (their shared
// loop and legacy broadcasting: broadcast_binary.h).
//
// Defined results where C++ or the spec leave a hole (documented behaviour, never a crash):
//   - integer Add/Sub/Mul wrap modulo 2^bits;
//   - integer Div truncates toward zero; x / 0 is 0; INT_MIN / -1 is INT_MIN (wraps);
//   - integer Mod: x mod 0 is 0 (as numpy); INT_MIN mod -1 is 0;
//   - BitShift by at least the bit width gives 0.
// Before opset 7 the arithmetic operators use the legacy `broadcast`/`axis` attributes (B's
// shape aligned with A's at `axis`); from 7 numpy rules.
#include <cmath>
#include <string>
#include <type_traits>

#include "broadcast_binary.h"

namespace openbpu::kernels {

namespace {

using namespace binary_ops;

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

// ---------------------------------------------------------------------------------------------
// PRelu: slope broadcast unidirectionally to X. Before opset 7 a 1-D slope whose length is
// X's dimension 1 applies per channel (as the opset-6 exporters used it).

class PReluKernel final : public Kernel {
 public:
  explicit PReluKernel(const NodeInfo& node) : opset_(node.opset) {}

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& slope = ctx.input(1);
    OPENBPU_CHECK(x.dtype() == slope.dtype(), "PRelu: slope must have X's type ",
                  dtype_name(x.dtype()), ", got ", dtype_name(slope.dtype()));
    Shape slope_shape = slope.shape();
    if (opset_ < 7 && slope.rank() == 1 && x.rank() >= 2 && slope.dim(0) == x.dim(1) &&
        slope.dim(0) != 1) {
      slope_shape.assign(size_t(x.rank() - 1), 1);
      slope_shape[0] = slope.dim(0);
    }
    OPENBPU_CHECK(broadcast_shapes(x.shape(), slope_shape, "PRelu") == x.shape(), "PRelu: slope ",
                  shape_to_string(slope.shape()), " must broadcast to X ",
                  shape_to_string(x.shape()));
    const Tensor slope_view = slope.reshaped(slope_shape);
    Tensor& y = ctx.allocate_output_for_overwrite(0, x.dtype(), x.shape());
    dispatch<NumericTypes>(x.dtype(), "PRelu", [&]<typename T>() {
      broadcast_binary<T, T, T>(ctx.thread_pool(), x, slope_view, y, [](auto v, auto s) {
        return is_negative(v) ? wrapping_mul(v, s) : v;
      });
    });
  }

 private:
  int opset_;
};

}  // namespace

void register_binary_kernels(std::vector<KernelDef>& defs) {
  const std::vector<AttrSpec> legacy = legacy_broadcast_attributes();
  defs.push_back(binary_def<Add>(6, legacy));
  defs.push_back(binary_def<Sub>(6, legacy));
  defs.push_back(binary_def<Mul>(6, legacy));
  defs.push_back(binary_def<Div>(6, legacy));
  defs.push_back(binary_def<Mod>(10, {{"fmod", AttrKind::kInt}}));
  defs.push_back(binary_def<BitShift>(11, {{"direction", AttrKind::kString, true}}));
  defs.push_back({"", "PRelu", 6, {}, &make_kernel<PReluKernel>});
}

}  // namespace openbpu::kernels
