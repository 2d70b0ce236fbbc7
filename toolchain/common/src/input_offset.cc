#include "openbpu/common/input_offset.h"

#include "openbpu/common/error.h"

namespace openbpu {

kernels::Tensor shift_to_int8(const kernels::Tensor& data, int offset, const std::string& what,
                              const std::string& offset_name) {
  kernels::Tensor out(kernels::DataType::kInt8, data.shape());
  const uint8_t* in = data.data<uint8_t>();
  int8_t* o = out.data<int8_t>();
  for (int64_t i = 0; i < data.element_count(); ++i) {
    const int v = static_cast<int>(in[i]) - offset;
    if (v < -128 || v > 127) {
      raise(what, ": uint8 value ", static_cast<int>(in[i]), " minus ", offset_name, " ", offset,
            " does not fit the model's int8 input");
    }
    o[i] = static_cast<int8_t>(v);
  }
  return out;
}

}  // namespace openbpu
