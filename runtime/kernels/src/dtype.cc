#include "openbpu/kernels/dtype.h"

namespace openbpu::kernels {

size_t dtype_size(DataType type) {
  switch (type) {
    case DataType::kFloat32: return 4;
    case DataType::kUint8: return 1;
    case DataType::kInt8: return 1;
    case DataType::kUint16: return 2;
    case DataType::kInt16: return 2;
    case DataType::kInt32: return 4;
    case DataType::kInt64: return 8;
    case DataType::kBool: return 1;
    case DataType::kFloat16: return 2;
    case DataType::kFloat64: return 8;
    case DataType::kUint32: return 4;
    case DataType::kUint64: return 8;
    case DataType::kBFloat16: return 2;
    case DataType::kString:
    case DataType::kUndefined: return 0;
  }
  return 0;
}

std::string_view dtype_name(DataType type) {
  switch (type) {
    case DataType::kFloat32: return "float32";
    case DataType::kUint8: return "uint8";
    case DataType::kInt8: return "int8";
    case DataType::kUint16: return "uint16";
    case DataType::kInt16: return "int16";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kString: return "string";
    case DataType::kBool: return "bool";
    case DataType::kFloat16: return "float16";
    case DataType::kFloat64: return "float64";
    case DataType::kUint32: return "uint32";
    case DataType::kUint64: return "uint64";
    case DataType::kBFloat16: return "bfloat16";
    case DataType::kUndefined: return "undefined";
  }
  return "unknown";
}

bool dtype_is_known(int32_t code) {
  return (code >= 1 && code <= 13) || code == 16;
}

}  // namespace openbpu::kernels
