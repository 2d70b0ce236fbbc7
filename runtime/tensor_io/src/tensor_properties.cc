// Tensor properties: type, layout and shape texts, sizes, a model's port properties (tensor_io.h).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <sstream>
#include <stdexcept>

#include "element_access.h"
#include "openbpu/base/float16.h"
#include "openbpu/format/model_file.h"
#include "openbpu/format/tensor_text.h"

namespace openbpu::tensor_io {

using namespace detail;  // NOLINT(google-build-using-namespace): this library's own helpers

const char* tensor_type_name(int32_t type) {
  static const char* const names[] = {
      "HB_DNN_IMG_TYPE_Y",          "HB_DNN_IMG_TYPE_NV12",       "HB_DNN_IMG_TYPE_NV12_SEPARATE",
      "HB_DNN_IMG_TYPE_YUV444",     "HB_DNN_IMG_TYPE_RGB",        "HB_DNN_IMG_TYPE_BGR",
      "HB_DNN_TENSOR_TYPE_S4",      "HB_DNN_TENSOR_TYPE_U4",      "HB_DNN_TENSOR_TYPE_S8",
      "HB_DNN_TENSOR_TYPE_U8",      "HB_DNN_TENSOR_TYPE_F16",     "HB_DNN_TENSOR_TYPE_S16",
      "HB_DNN_TENSOR_TYPE_U16",     "HB_DNN_TENSOR_TYPE_F32",     "HB_DNN_TENSOR_TYPE_S32",
      "HB_DNN_TENSOR_TYPE_U32",     "HB_DNN_TENSOR_TYPE_F64",     "HB_DNN_TENSOR_TYPE_S64",
      "HB_DNN_TENSOR_TYPE_U64"};
  if (type < 0 || type >= HB_DNN_TENSOR_TYPE_MAX) return "HB_DNN_TENSOR_TYPE_UNKNOWN";
  return names[type];
}

const char* tensor_layout_name(int32_t layout) {
  switch (layout) {
    case HB_DNN_LAYOUT_NHWC: return "HB_DNN_LAYOUT_NHWC";
    case HB_DNN_LAYOUT_NCHW: return "HB_DNN_LAYOUT_NCHW";
    default: return "HB_DNN_LAYOUT_NONE";
  }
}

const char* quanti_type_name(hbDNNQuantiType type) {
  switch (type) {
    case SHIFT: return "SHIFT";
    case SCALE: return "SCALE";
    default: return "NONE";
  }
}

bool is_image_type(int32_t type) { return type >= HB_DNN_IMG_TYPE_Y && type <= HB_DNN_IMG_TYPE_BGR; }

bool is_float_type(int32_t type) {
  return type == HB_DNN_TENSOR_TYPE_F16 || type == HB_DNN_TENSOR_TYPE_F32 || type == HB_DNN_TENSOR_TYPE_F64;
}

size_t element_size(int32_t type) {
  switch (type) {
    case HB_DNN_TENSOR_TYPE_S4:
    case HB_DNN_TENSOR_TYPE_U4: return 0;
    case HB_DNN_TENSOR_TYPE_F16:
    case HB_DNN_TENSOR_TYPE_S16:
    case HB_DNN_TENSOR_TYPE_U16: return 2;
    case HB_DNN_TENSOR_TYPE_F32:
    case HB_DNN_TENSOR_TYPE_S32:
    case HB_DNN_TENSOR_TYPE_U32: return 4;
    case HB_DNN_TENSOR_TYPE_F64:
    case HB_DNN_TENSOR_TYPE_S64:
    case HB_DNN_TENSOR_TYPE_U64: return 8;
    default: return type >= 0 && type < HB_DNN_TENSOR_TYPE_MAX ? 1 : 0;
  }
}

std::string shape_text(const hbDNNTensorShape& shape) {
  std::string s = "(";
  for (int32_t i = 0; i < shape.numDimensions; ++i) s += std::to_string(shape.dimensionSize[i]) + ",";
  return s + ")";
}

int64_t element_count(const hbDNNTensorShape& shape) {
  int64_t n = 1;
  for (int32_t i = 0; i < shape.numDimensions; ++i) n *= shape.dimensionSize[i];
  return n;
}

size_t dense_byte_size(const hbDNNTensorProperties& p) {
  if (p.tensorType == HB_DNN_IMG_TYPE_NV12 || p.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE) {
    return static_cast<size_t>(p.alignedByteSize);
  }
  return static_cast<size_t>(element_count(p.validShape)) * element_size(p.tensorType);
}
namespace {

// One definition for inputs and outputs: the API's count / properties / name calls differ only
// in their names.
template <typename Count, typename Properties, typename Name>
std::vector<hbDNNTensorProperties> ports(hbDNNHandle_t h, std::vector<std::string>* names, const char* side,
                                         Count count, Properties properties, Name name) {
  auto check = [&](int32_t rc, const char* call) {
    if (rc != 0) fail(std::string("hbDNNGet") + side + call + " failed: " + hbDNNGetErrorDesc(rc));
  };
  int32_t n = 0;
  check(count(&n, h), "Count");
  std::vector<hbDNNTensorProperties> props(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    check(properties(&props[static_cast<size_t>(i)], h, i), "TensorProperties");
    const char* text = nullptr;
    check(name(&text, h, i), "Name");
    if (names) names->emplace_back(text);
  }
  return props;
}

}  // namespace

std::vector<hbDNNTensorProperties> input_properties(hbDNNHandle_t h, std::vector<std::string>* names) {
  return ports(h, names, "Input", hbDNNGetInputCount, hbDNNGetInputTensorProperties, hbDNNGetInputName);
}

std::vector<hbDNNTensorProperties> output_properties(hbDNNHandle_t h, std::vector<std::string>* names) {
  return ports(h, names, "Output", hbDNNGetOutputCount, hbDNNGetOutputTensorProperties, hbDNNGetOutputName);
}

std::pair<int, int> image_size(const hbDNNTensorProperties& p) {
  const hbDNNTensorShape& s = p.validShape;
  if (s.numDimensions != 4) return {0, 0};
  if (p.tensorLayout == HB_DNN_LAYOUT_NHWC) return {s.dimensionSize[1], s.dimensionSize[2]};
  return {s.dimensionSize[2], s.dimensionSize[3]};
}

}  // namespace openbpu::tensor_io
