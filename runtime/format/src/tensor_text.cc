#include "openbpu/format/tensor_text.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace openbpu::format {
namespace {

// The layout, for any element type: `print(buf, size, value)` writes one value.
template <typename T, typename Print>
std::string layout(std::span<const T> values, std::span<const int64_t> dims, int axis,
                   Print print) {
  const int rank = static_cast<int>(dims.size());
  const int a = std::clamp(axis, 0, rank);
  int64_t per_line = 1;
  for (int d = a; d < rank; ++d) per_line *= dims[static_cast<size_t>(d)];
  if (per_line <= 0) per_line = 1;
  std::string out;
  char buf[512];
  for (size_t i = 0; i < values.size(); ++i) {
    print(buf, sizeof buf, values[i]);
    out += buf;
    out += (static_cast<int64_t>(i + 1) % per_line == 0) ? '\n' : ' ';
  }
  if (!out.empty() && out.back() == ' ') out.back() = '\n';
  return out;
}

}  // namespace

std::string format_tensor_text(std::span<const double> values, std::span<const int64_t> dims,
                               int axis, NumberStyle style) {
  return layout(values, dims, axis, [&](char* buf, size_t size, double v) {
    switch (style.kind) {
      case NumberStyle::kFixed: std::snprintf(buf, size, "%.*f", style.digits, v); break;
      case NumberStyle::kGeneral: std::snprintf(buf, size, "%.*g", style.digits, v); break;
      case NumberStyle::kInteger: std::snprintf(buf, size, "%.0f", v); break;
    }
  });
}

std::string format_tensor_text(std::span<const int64_t> values, std::span<const int64_t> dims,
                               int axis) {
  return layout(values, dims, axis,
                [](char* buf, size_t size, int64_t v) { std::snprintf(buf, size, "%" PRId64, v); });
}

std::string format_tensor_text(std::span<const uint64_t> values, std::span<const int64_t> dims,
                               int axis) {
  return layout(values, dims, axis, [](char* buf, size_t size, uint64_t v) {
    std::snprintf(buf, size, "%" PRIu64, v);
  });
}

}  // namespace openbpu::format
