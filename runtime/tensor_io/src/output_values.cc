// Output values: valid data gathered by stride, dequantized, as text, written atomically, top-k (tensor_io.h).
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

std::vector<uint8_t> gather_valid(const uint8_t* data, const hbDNNTensorProperties& p) {
  const size_t dense = dense_byte_size(p);
  const hbDNNTensorShape& s = p.validShape;
  bool all_zero = true;
  for (int32_t i = 0; i < s.numDimensions; ++i) all_zero = all_zero && p.stride[i] == 0;
  if (all_zero || is_image_type(p.tensorType) || s.numDimensions == 0) return std::vector<uint8_t>(data, data + dense);
  const size_t elem = element_size(p.tensorType);
  std::vector<uint8_t> out(dense);
  const int64_t count = element_count(s);
  std::vector<int64_t> index(static_cast<size_t>(s.numDimensions), 0);
  for (int64_t n = 0; n < count; ++n) {
    int64_t offset = 0;
    for (int32_t d = 0; d < s.numDimensions; ++d) offset += index[static_cast<size_t>(d)] * p.stride[d];
    std::memcpy(out.data() + static_cast<size_t>(n) * elem, data + offset, elem);
    for (int32_t d = s.numDimensions - 1; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < s.dimensionSize[d]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  return out;
}

std::vector<double> to_doubles(const std::vector<uint8_t>& dense, const hbDNNTensorProperties& p) {
  const size_t elem = element_size(p.tensorType);
  std::vector<double> v(elem ? dense.size() / elem : 0);
  for (size_t i = 0; i < v.size(); ++i) v[i] = load_value(dense.data() + i * elem, p.tensorType);
  return v;
}

std::vector<double> dequantize(const std::vector<uint8_t>& dense, const hbDNNTensorProperties& p) {
  std::vector<double> v = to_doubles(dense, p);
  if (p.quantiType == NONE) return v;
  const int32_t len = p.quantiType == SCALE ? p.scale.scaleLen : p.shift.shiftLen;
  if (len <= 0) return v;
  const hbDNNTensorShape& s = p.validShape;
  int32_t axis = p.quantizeAxis;
  if (len > 1 && (axis < 0 || axis >= s.numDimensions)) {
    axis = p.tensorLayout == HB_DNN_LAYOUT_NHWC ? s.numDimensions - 1 : 1;  // channels
  }
  int64_t inner = 1, dim = 1;
  if (len > 1 && axis >= 0 && axis < s.numDimensions) {
    dim = s.dimensionSize[axis];
    for (int32_t d = axis + 1; d < s.numDimensions; ++d) inner *= s.dimensionSize[d];
  }
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t c = len > 1 ? (static_cast<int64_t>(i) / inner) % dim : 0;
    if (c >= len) c = len - 1;
    if (p.quantiType == SCALE) {
      const double zp = p.scale.zeroPointLen > 0 ? p.scale.zeroPointData[std::min<int64_t>(c, p.scale.zeroPointLen - 1)] : 0;
      v[i] = (v[i] - zp) * static_cast<double>(p.scale.scaleData[c]);
    } else {
      v[i] = v[i] / static_cast<double>(uint64_t{1} << p.shift.shiftData[c]);
    }
  }
  return v;
}

std::string format_txt(const std::vector<double>& values, const hbDNNTensorShape& shape, int precision, int axis,
                       bool as_float) {
  const int rank = std::clamp(shape.numDimensions, 0, HB_DNN_TENSOR_MAX_DIMENSIONS);
  const std::vector<int64_t> dims(shape.dimensionSize, shape.dimensionSize + rank);
  const format::NumberStyle style{
      as_float ? format::NumberStyle::kFixed : format::NumberStyle::kInteger, precision};
  return format::format_tensor_text(values, dims, axis, style);
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
  const format::Status status = format::write_file_atomically(
      path, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), "dump file");
  if (!status.ok()) fail(status.message);
}

std::vector<size_t> top_k(const std::vector<double>& values, size_t k) {
  std::vector<size_t> idx(values.size());
  std::iota(idx.begin(), idx.end(), size_t{0});
  k = std::min(k, idx.size());
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(), [&](size_t a, size_t b) {
    return values[a] > values[b] || (values[a] == values[b] && a < b);
  });
  idx.resize(k);
  return idx;
}

}  // namespace openbpu::tensor_io
