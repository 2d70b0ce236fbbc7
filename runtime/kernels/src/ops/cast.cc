// Cast and CastLike between the numeric types, bool, float16 and bfloat16.
//
// Conversions follow numeric_cast (numeric_cast.h): float → integer truncates toward zero and
// saturates, NaN → 0; integer narrowing wraps; → bool is `!= 0`; → float16/bfloat16 rounds to
// nearest even. String tensors are not supported. `saturate` (opset 19) only concerns float8
// types, which this library does not have; it is accepted and has no effect.
#include <type_traits>

#include "families.h"
#include "openbpu/base/float16.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/elementwise.h"
#include "openbpu/kernels/numeric_cast.h"

namespace openbpu::kernels {

namespace {

void check_castable(DataType type, std::string_view op, std::string_view role) {
  OPENBPU_CHECK(type != DataType::kString, op, ": casting ", role,
        " string tensors is not supported by this kernel library");
}

// Elements [b, e). A function template rather than a branch inside the lambdas below: clang 14
// (the fuzz preset) does not discard `if constexpr` branches in a lambda nested in generic ones.
template <typename From, typename To>
void cast_range(const From* in, To* out, int64_t b, int64_t e) {
  // float <-> float16 through the codec's span forms (the same bits, vectorised).
  if constexpr (std::is_same_v<From, float> && std::is_same_v<To, Float16>) {
    base::float_to_float16(in + b, reinterpret_cast<uint16_t*>(out + b), e - b);
  } else if constexpr (std::is_same_v<From, Float16> && std::is_same_v<To, float>) {
    base::float16_to_float(reinterpret_cast<const uint16_t*>(in + b), out + b, e - b);
  } else {
    for (int64_t i = b; i < e; ++i) out[i] = numeric_cast<To>(in[i]);
  }
}

void cast_tensor(ThreadPool* pool, const Tensor& x, DataType to, Tensor& y, std::string_view op) {
  dispatch<AllTypes>(x.dtype(), op, [&]<typename From>() {
    dispatch<AllTypes>(to, op, [&]<typename To>() {
      const From* in = x.data<From>();
      To* out = y.data<To>();
      parallel_for(pool, x.element_count(), kElementwiseChunk,
                   [&](int64_t b, int64_t e) { cast_range<From, To>(in, out, b, e); });
    });
  });
}

void check_saturate(const NodeInfo& node) {
  const int64_t saturate = node.attrs.get_int("saturate", 1);
  OPENBPU_CHECK(saturate == 0 || saturate == 1, node.op_type, ": saturate must be 0 or 1, got ", saturate);
}

class CastKernel final : public Kernel {
 public:
  explicit CastKernel(const NodeInfo& node) {
    const int64_t to = node.attrs.get_int("to");
    OPENBPU_CHECK(to >= 0 && to <= 0x7fffffff && dtype_is_known(static_cast<int32_t>(to)) &&
              to != static_cast<int64_t>(DataType::kUndefined),
          "Cast: 'to' must be a supported TensorProto data type, got ", to);
    to_ = static_cast<DataType>(to);
    check_castable(to_, "Cast", "to");
    check_saturate(node);
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    check_castable(x.dtype(), "Cast", "from");
    Tensor& y = ctx.allocate_output_for_overwrite(0, to_, x.shape());
    cast_tensor(ctx.thread_pool(), x, to_, y, "Cast");
  }

 private:
  DataType to_ = DataType::kUndefined;
};

// CastLike(input, target_type): casts input to target_type's element type.
class CastLikeKernel final : public Kernel {
 public:
  explicit CastLikeKernel(const NodeInfo& node) { check_saturate(node); }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const DataType to = ctx.input(1).dtype();
    check_castable(x.dtype(), "CastLike", "from");
    check_castable(to, "CastLike", "to");
    Tensor& y = ctx.allocate_output_for_overwrite(0, to, x.shape());
    cast_tensor(ctx.thread_pool(), x, to, y, "CastLike");
  }
};

}  // namespace

void register_cast_kernels(std::vector<KernelDef>& defs) {
  defs.push_back({"",
                  "Cast",
                  6,
                  {{"to", AttrKind::kInt, true}, {"saturate", AttrKind::kInt}},
                  &make_kernel<CastKernel>});
  defs.push_back(
      {"", "CastLike", 15, {{"saturate", AttrKind::kInt}}, &make_kernel<CastLikeKernel>});
}

}  // namespace openbpu::kernels
