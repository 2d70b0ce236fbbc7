// Tensor values as text: the one txt layout of hrt_model_exec's output dumps (--enable_dump
// --dump_format=txt) and of the runtime's per-layer dumps (HB_DNN_DUMP_FORMAT, docs/runtime.md).
// Values in row-major order, separated by a space, with a line break after every index of the
// axes before `axis` (axis >= rank: one value per line; 0: all on one line); the text ends with
// a line break when it holds a value. Board-side code: C++ standard library only.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace openbpu::format {

// How a double is printed.
struct NumberStyle {
  enum Kind {
    kFixed,    // "%.*f" with `digits` decimals (hrt_model_exec's --dump_precision)
    kGeneral,  // "%.*g" with `digits` significant digits (9 round-trips a float32, 17 a float64)
    kInteger,  // "%.0f": values that are integers (of at most 53 bits)
  };
  Kind kind = kGeneral;
  int digits = 9;
};

std::string format_tensor_text(std::span<const double> values, std::span<const int64_t> dims,
                               int axis, NumberStyle style);
// 64-bit integers, exactly.
std::string format_tensor_text(std::span<const int64_t> values, std::span<const int64_t> dims,
                               int axis);
std::string format_tensor_text(std::span<const uint64_t> values, std::span<const int64_t> dims,
                               int axis);

}  // namespace openbpu::format
