// The text form of a per-layer dump (HB_DNN_DUMP_FORMAT with txt, model.h): the values of one
// dense tensor, as written beside its .bin.
#pragma once

#include <optional>
#include <string>

#include "openbpu/kernels/tensor.h"

namespace openbpu::dnn {

// What HB_DNN_DUMP_FORMAT asks for: "bin" (also unset or empty) a .bin per tensor; "txt" or
// "bin,txt" also a .txt beside it. std::nullopt for any other value.
struct LayerDumpFormat {
  bool txt = false;
};
std::optional<LayerDumpFormat> parse_layer_dump_format(const char* value);

// A header line "# <tensor.describe()>" (e.g. "# float32[1,3,48,192]"), then the values in
// row-major order, one line per index of the axes before the last (format::format_tensor_text):
// floats with enough significant digits to round-trip (float32 / float16 / bfloat16 9, float64
// 17), integers and bools exactly. String / undefined tensors: the header line only, saying so.
std::string layer_dump_text(const kernels::Tensor& t);

}  // namespace openbpu::dnn
