// Calling a templated body for a tensor's element type.
//
//   dispatch<NumericTypes>(x.dtype(), "Abs", [&]<typename T>() { ... });
//
// runs the lambda instantiated for the C++ type of x.dtype(), or throws KernelError naming the
// operator and the type if the type is not in the list.
#pragma once

#include <string_view>

#include "openbpu/kernels/dtype.h"
#include "openbpu/kernels/error.h"

namespace openbpu::kernels {

template <typename... Ts>
struct TypeList {};

template <typename... A, typename... B>
constexpr TypeList<A..., B...> concat_types(TypeList<A...>, TypeList<B...>) {
  return {};
}

using FloatTypes = TypeList<float, double, Float16, BFloat16>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using UnsignedIntTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using IntTypes = decltype(concat_types(SignedIntTypes{}, UnsignedIntTypes{}));
using NumericTypes = decltype(concat_types(FloatTypes{}, IntTypes{}));
using SignedNumericTypes = decltype(concat_types(FloatTypes{}, SignedIntTypes{}));
using AllTypes = decltype(concat_types(NumericTypes{}, TypeList<bool>{}));

namespace detail {
template <typename F, typename... Ts>
void dispatch_impl(TypeList<Ts...>, DataType type, std::string_view op, F&& f) {
  const bool matched =
      ((type == DataTypeOf<Ts>::value ? (f.template operator()<Ts>(), true) : false) || ...);
  if (!matched) fail(op, " does not support element type ", dtype_name(type));
}
}  // namespace detail

template <typename List, typename F>
void dispatch(DataType type, std::string_view op, F&& f) {
  detail::dispatch_impl(List{}, type, op, std::forward<F>(f));
}

}  // namespace openbpu::kernels
