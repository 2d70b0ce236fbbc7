// Reused inference storage (execution_context.h).
#include "execution_context.h"

#include <algorithm>

namespace openbpu::dnn {

std::shared_ptr<kernels::Buffer> RecyclingAllocator::allocate(size_t bytes) {
  size_t best = free_.size();
  for (size_t i = 0; i < free_.size(); ++i) {
    const size_t size = free_[i]->size();
    if (size >= bytes && (best == free_.size() || size < free_[best]->size())) {
      best = i;
      if (size == bytes) break;
    }
  }
  if (best == free_.size()) return kernels::Allocator::default_allocator().allocate(bytes);
  std::shared_ptr<kernels::Buffer> buffer = std::move(free_[best]);
  free_[best] = std::move(free_.back());
  free_.pop_back();
  return buffer;
}

void RecyclingAllocator::recycle(std::shared_ptr<kernels::Buffer> buffer) {
  if (buffer == nullptr) return;
  if (free_.size() < free_.capacity()) {
    free_.push_back(std::move(buffer));
    return;
  }
  if (free_.empty()) return;
  auto smallest = std::min_element(free_.begin(), free_.end(),
                                   [](const auto& a, const auto& b) { return a->size() < b->size(); });
  if ((*smallest)->size() < buffer->size()) *smallest = std::move(buffer);
}

void ExecutionContext::recycle_outputs(std::span<const uint32_t> table_slots) {
  released.clear();
  for (uint32_t slot : table_slots) {
    if (std::shared_ptr<kernels::Buffer> b = table[slot].release_storage()) released.push_back(std::move(b));
  }
  for (kernels::Tensor& t : op_staging) {
    if (std::shared_ptr<kernels::Buffer> b = t.release_storage()) released.push_back(std::move(b));
  }
  std::sort(released.begin(), released.end(), [](const auto& a, const auto& b) { return a.get() < b.get(); });
  for (size_t i = 0; i < released.size();) {
    size_t j = i + 1;
    while (j < released.size() && released[j].get() == released[i].get()) ++j;
    // Every holder is in [i, j): the buffer is free.
    if (released[i].use_count() == static_cast<long>(j - i)) allocator.recycle(std::move(released[i]));
    i = j;
  }
  released.clear();
}

}  // namespace openbpu::dnn
