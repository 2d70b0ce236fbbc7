#include "openbpu/kernels/kernel.h"

namespace openbpu::kernels {

const Tensor& KernelContext::input(int i) const {
  OPENBPU_CHECK(has_input(i), "input ", i, " is required but absent");
  return *inputs_[static_cast<size_t>(i)];
}

Tensor& KernelContext::allocate_output(int i, DataType dtype, const Shape& shape) {
  if (i >= 0 && i < output_count()) {
    Tensor& out = outputs_[static_cast<size_t>(i)];
    out.reset(dtype, shape, allocator_);
    return out;
  }
  scratch_.emplace_back(dtype, shape, allocator_);
  return scratch_.back();
}

Tensor& KernelContext::allocate_output_for_overwrite(int i, DataType dtype, const Shape& shape) {
  if (i >= 0 && i < output_count()) {
    Tensor& out = outputs_[static_cast<size_t>(i)];
    out.reset_for_overwrite(dtype, shape, allocator_);
    return out;
  }
  return allocate_output(i, dtype, shape);  // scratch: rare, zeroed
}

Tensor& KernelContext::allocate_output_for_overwrite(int i, DataType dtype, const Shape& shape,
                                                     int reuse_input) {
  const Tensor* donor = reuse_input >= 0 && static_cast<size_t>(reuse_input) < donors_.size()
                            ? donors_[static_cast<size_t>(reuse_input)]
                            : nullptr;
  if (donor != nullptr && i >= 0 && i < output_count() && donor->dtype() == dtype &&
      donor->shape() == shape && donor->buffer() != nullptr) {
    outputs_[static_cast<size_t>(i)] = *donor;  // shares the storage
    return outputs_[static_cast<size_t>(i)];
  }
  return allocate_output_for_overwrite(i, dtype, shape);
}

void KernelContext::set_output(int i, Tensor tensor) {
  if (i >= 0 && i < output_count()) outputs_[static_cast<size_t>(i)] = std::move(tensor);
}

}  // namespace openbpu::kernels
