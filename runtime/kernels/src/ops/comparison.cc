// Broadcasting logical and comparison operators: And, Or, Xor, Equal, Greater, Less,
// GreaterOrEqual, LessOrEqual; and Where (their shared loop: broadcast_binary.h). Before opset 7
// And/Or/Xor/Equal/Greater/Less use the legacy `broadcast`/`axis` attributes.
#include <array>

#include "broadcast_binary.h"

namespace openbpu::kernels {

namespace {

using namespace binary_ops;

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
OPENBPU_BOOL_OP(GreaterOrEqual, NumericTypes, 0, a >= b)
#undef OPENBPU_BOOL_OP

// a < b is b > a and a <= b is b >= a (false with a NaN either way): Less and LessOrEqual
// run the loops of Greater and GreaterOrEqual on the swapped inputs.
#define OPENBPU_SWAPPED_OP(Name, Base)                  \
  struct Name : Base {                                  \
    static constexpr const char* kName = #Name;         \
    static constexpr bool kSwapInputs = true;           \
    using Loop = Base;                                  \
    explicit Name(const NodeInfo& node) : Base(node) {} \
  };
OPENBPU_SWAPPED_OP(Less, Greater)
OPENBPU_SWAPPED_OP(LessOrEqual, GreaterOrEqual)
#undef OPENBPU_SWAPPED_OP
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

}  // namespace

void register_comparison_kernels(std::vector<KernelDef>& defs) {
  const std::vector<AttrSpec> legacy = legacy_broadcast_attributes();
  defs.push_back(binary_def<And>(1, legacy));
  defs.push_back(binary_def<Or>(1, legacy));
  defs.push_back(binary_def<Xor>(1, legacy));
  defs.push_back(binary_def<Equal>(1, legacy));
  defs.push_back(binary_def<Greater>(1, legacy));
  defs.push_back(binary_def<Less>(1, legacy));
  defs.push_back(binary_def<GreaterOrEqual>(12, {}));
  defs.push_back(binary_def<LessOrEqual>(12, {}));
  defs.push_back({"", "Where", 9, {}, &make_kernel<WhereKernel>});
}

}  // namespace openbpu::kernels
