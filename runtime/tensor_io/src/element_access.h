// Internal to openbpu::tensor_io: element access by hbDNN tensor type, file helpers and the
// one way its functions fail (std::runtime_error with one line naming the file and the rule).
#pragma once

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

#include "openbpu/base/float16.h"
#include "openbpu/tensor_io/tensor_io.h"

namespace openbpu::tensor_io::detail {

[[noreturn]] inline void fail(const std::string& message) { throw std::runtime_error(message); }

inline std::string lower_extension(const std::string& path) {
  const size_t dot = path.find_last_of('.');
  const size_t slash = path.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

inline std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("input file '" + path + "' cannot be opened: " + std::strerror(errno));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

template <typename T>
T saturate(double v) {
  const double r = std::nearbyint(v);
  if (std::isnan(r)) return T(0);
  if (r <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  if (r >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}

template <typename T>
void store(uint8_t* dst, T v) {
  std::memcpy(dst, &v, sizeof(T));
}

template <typename T>
T load(const uint8_t* src) {
  T v;
  std::memcpy(&v, src, sizeof(T));
  return v;
}

inline void store_value(uint8_t* dst, int32_t type, double v) {
  switch (type) {
    case HB_DNN_TENSOR_TYPE_S8: store<int8_t>(dst, saturate<int8_t>(v)); break;
    case HB_DNN_TENSOR_TYPE_F16: store<uint16_t>(dst, base::Float16::from_float(static_cast<float>(v))); break;
    case HB_DNN_TENSOR_TYPE_S16: store<int16_t>(dst, saturate<int16_t>(v)); break;
    case HB_DNN_TENSOR_TYPE_U16: store<uint16_t>(dst, saturate<uint16_t>(v)); break;
    case HB_DNN_TENSOR_TYPE_F32: store<float>(dst, static_cast<float>(v)); break;
    case HB_DNN_TENSOR_TYPE_S32: store<int32_t>(dst, saturate<int32_t>(v)); break;
    case HB_DNN_TENSOR_TYPE_U32: store<uint32_t>(dst, saturate<uint32_t>(v)); break;
    case HB_DNN_TENSOR_TYPE_F64: store<double>(dst, v); break;
    case HB_DNN_TENSOR_TYPE_S64: store<int64_t>(dst, saturate<int64_t>(v)); break;
    case HB_DNN_TENSOR_TYPE_U64: store<uint64_t>(dst, saturate<uint64_t>(v)); break;
    default: store<uint8_t>(dst, saturate<uint8_t>(v)); break;  // U8 and the image types
  }
}

inline double load_value(const uint8_t* src, int32_t type) {
  switch (type) {
    case HB_DNN_TENSOR_TYPE_S8: return load<int8_t>(src);
    case HB_DNN_TENSOR_TYPE_F16: return base::Float16::to_float(load<uint16_t>(src));
    case HB_DNN_TENSOR_TYPE_S16: return load<int16_t>(src);
    case HB_DNN_TENSOR_TYPE_U16: return load<uint16_t>(src);
    case HB_DNN_TENSOR_TYPE_F32: return load<float>(src);
    case HB_DNN_TENSOR_TYPE_S32: return load<int32_t>(src);
    case HB_DNN_TENSOR_TYPE_U32: return load<uint32_t>(src);
    case HB_DNN_TENSOR_TYPE_F64: return load<double>(src);
    case HB_DNN_TENSOR_TYPE_S64: return static_cast<double>(load<int64_t>(src));
    case HB_DNN_TENSOR_TYPE_U64: return static_cast<double>(load<uint64_t>(src));
    default: return load<uint8_t>(src);
  }
}

// The numpy descr ("i1", "f4", ...) of a tensor type, without byte-order character.
inline std::string numpy_kind(int32_t type) {
  switch (type) {
    case HB_DNN_TENSOR_TYPE_S8: return "i1";
    case HB_DNN_TENSOR_TYPE_F16: return "f2";
    case HB_DNN_TENSOR_TYPE_S16: return "i2";
    case HB_DNN_TENSOR_TYPE_U16: return "u2";
    case HB_DNN_TENSOR_TYPE_F32: return "f4";
    case HB_DNN_TENSOR_TYPE_S32: return "i4";
    case HB_DNN_TENSOR_TYPE_U32: return "u4";
    case HB_DNN_TENSOR_TYPE_F64: return "f8";
    case HB_DNN_TENSOR_TYPE_S64: return "i8";
    case HB_DNN_TENSOR_TYPE_U64: return "u8";
    default: return "u1";
  }
}

inline void check_supported(const hbDNNTensorProperties& p, const std::string& path) {
  if (element_size(p.tensorType) == 0) {
    fail("input file '" + path + "': tensor type " + tensor_type_name(p.tensorType) + " is not supported");
  }
}

}  // namespace openbpu::tensor_io::detail
