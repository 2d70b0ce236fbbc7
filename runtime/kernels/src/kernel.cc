#include "openbpu/kernels/kernel.h"

namespace openbpu::kernels {

const Tensor& KernelContext::input(int i) const {
  OPENBPU_CHECK(has_input(i), "input ", i, " is required but absent");
  return *inputs_[static_cast<size_t>(i)];
}

Tensor& KernelContext::allocate_output(int i, DataType dtype, Shape shape) {
  Tensor t(dtype, std::move(shape), allocator_);
  if (i >= 0 && i < output_count()) {
    outputs_[static_cast<size_t>(i)] = std::move(t);
    return outputs_[static_cast<size_t>(i)];
  }
  scratch_.push_back(std::move(t));
  return scratch_.back();
}

void KernelContext::set_output(int i, Tensor tensor) {
  if (i >= 0 && i < output_count()) outputs_[static_cast<size_t>(i)] = std::move(tensor);
}

}  // namespace openbpu::kernels
