#include "layer_dump.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "openbpu/format/tensor_text.h"
#include "openbpu/kernels/dtype.h"

namespace openbpu::dnn {

std::optional<LayerDumpFormat> parse_layer_dump_format(const char* value) {
  if (value == nullptr || *value == '\0' || std::strcmp(value, "bin") == 0)
    return LayerDumpFormat{false};
  if (std::strcmp(value, "txt") == 0 || std::strcmp(value, "bin,txt") == 0)
    return LayerDumpFormat{true};
  return std::nullopt;
}

std::string layer_dump_text(const kernels::Tensor& t) {
  using kernels::DataType;
  const std::vector<int64_t>& dims = t.shape();
  const int axis = static_cast<int>(dims.size()) - 1;  // one line per innermost row
  const size_t n = static_cast<size_t>(t.element_count());
  std::string body;
  if (t.dtype() == DataType::kString || t.dtype() == DataType::kUndefined) {
    return "# " + t.describe() + " (no numeric values)\n";
  }
  if (t.dtype() == DataType::kUint64) {
    body = format::format_tensor_text(t.values<uint64_t>(), dims, axis);
  } else if (kernels::dtype_is_float(t.dtype())) {
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = t.float_at(static_cast<int64_t>(i));
    const int digits = t.dtype() == DataType::kFloat64 ? 17 : 9;
    body = format::format_tensor_text(v, dims, axis, {format::NumberStyle::kGeneral, digits});
  } else {
    std::vector<int64_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = t.int_at(static_cast<int64_t>(i));
    body = format::format_tensor_text(v, dims, axis);
  }
  return "# " + t.describe() + "\n" + body;
}

}  // namespace openbpu::dnn
