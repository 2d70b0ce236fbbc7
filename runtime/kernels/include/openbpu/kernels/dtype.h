// Element types of tensors handled by the kernel library.
//
// The numeric values equal ONNX's TensorProto.DataType so that a model's type codes map onto
// DataType without a table; the kernel library itself does not depend on ONNX.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "openbpu/base/float16.h"

namespace openbpu::kernels {

enum class DataType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,  // only carried by the IR; no kernel computes on strings
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBFloat16 = 16,
};

// Bytes per element; 0 for kUndefined and kString.
size_t dtype_size(DataType type);
// Lower-case name as ONNX spells it ("float", "int64", "float16", ...).
std::string_view dtype_name(DataType type);
// True for a code this library knows (any enumerator above).
bool dtype_is_known(int32_t code);
inline bool dtype_is_float(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat64 || t == DataType::kFloat16 ||
         t == DataType::kBFloat16;
}

// The 16-bit float element types (one codec, in openbpu::base).
using base::BFloat16;
using base::Float16;

// DataTypeOf<T>::value: the DataType of C++ type T.
template <typename T>
struct DataTypeOf;
#define OPENBPU_DATA_TYPE_OF(T, V) \
  template <>                      \
  struct DataTypeOf<T> {           \
    static constexpr DataType value = DataType::V; \
  }
OPENBPU_DATA_TYPE_OF(float, kFloat32);
OPENBPU_DATA_TYPE_OF(double, kFloat64);
OPENBPU_DATA_TYPE_OF(Float16, kFloat16);
OPENBPU_DATA_TYPE_OF(BFloat16, kBFloat16);
OPENBPU_DATA_TYPE_OF(int8_t, kInt8);
OPENBPU_DATA_TYPE_OF(int16_t, kInt16);
OPENBPU_DATA_TYPE_OF(int32_t, kInt32);
OPENBPU_DATA_TYPE_OF(int64_t, kInt64);
OPENBPU_DATA_TYPE_OF(uint8_t, kUint8);
OPENBPU_DATA_TYPE_OF(uint16_t, kUint16);
OPENBPU_DATA_TYPE_OF(uint32_t, kUint32);
OPENBPU_DATA_TYPE_OF(uint64_t, kUint64);
OPENBPU_DATA_TYPE_OF(bool, kBool);
#undef OPENBPU_DATA_TYPE_OF

// Arithmetic type used to compute on T: float for the 16-bit floats, T otherwise.
template <typename T>
using ComputeType =
    std::conditional_t<std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>, float, T>;

template <typename T>
inline ComputeType<T> to_compute(T v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return static_cast<float>(v);
  } else {
    return v;
  }
}

template <typename T>
inline T from_compute(ComputeType<T> v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return T(v);
  } else {
    return v;
  }
}

}  // namespace openbpu::kernels
