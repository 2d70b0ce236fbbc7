// uint8 image data for an int8 input of a stage model (the intermediate types RGB_128,
// yuv444_128, ...): each value minus `offset`, as the reference's HB_ONNXRuntime.run(...,
// input_offset=128) does. Used by hb_mapper infer (--input-offset) and openbpu.Session.
#pragma once

#include <string>

#include "openbpu/kernels/tensor.h"

namespace openbpu {

// The uint8 tensor `data` as int8 values minus `offset`. Throws Error "<what>: uint8 value V
// minus <offset_name> O does not fit the model's int8 input" for the first value out of range.
kernels::Tensor shift_to_int8(const kernels::Tensor& data, int offset, const std::string& what,
                              const std::string& offset_name);

}  // namespace openbpu
