// The storage of one running inference, made once and reused by the inferences that follow, so
// that an inference after the first allocates nothing in the runtime (Model::advance):
//   - the tensor table, with the model inputs and every BPU segment output allocated once at
//     their static shapes (the device writes into them; inputs are copied into them);
//   - each CPU operator's input pointers, fixed when the context is made (the table and the
//     constants never move), and staging tensors for operators whose outputs are not adjacent
//     in the table;
//   - the span lists a BPU job reads (Device::submit_views);
//   - a RecyclingAllocator for the CPU operators' outputs: at the start of an inference every
//     buffer the previous one left in a CPU operator's output is handed back to it, and the
//     operators of this inference take them again (same sizes, same order: exact fits).
// A model keeps a pool of contexts (Model::acquire_context): one per inference running at the
// same time, made when none is free.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "openbpu/kernels/tensor.h"

namespace openbpu::dnn {

// An Allocator that hands out buffers given back to it (recycle), the smallest that fits, and
// allocates a new one from the default allocator only when none does. Not thread-safe: one
// inference uses it at a time. (kernels::BufferPool recycles too, but wraps every buffer it
// hands out in a new shared_ptr'd object; this one hands the same shared_ptrs out again.)
class RecyclingAllocator final : public kernels::Allocator {
 public:
  // Room for `buffers` free buffers (recycle() never allocates).
  void reserve(size_t buffers) { free_.reserve(buffers); }
  std::shared_ptr<kernels::Buffer> allocate(size_t bytes) override;
  // Keeps `buffer` for a later allocate(). When the list is full the smaller of it and the
  // smallest kept buffer is dropped.
  void recycle(std::shared_ptr<kernels::Buffer> buffer);

 private:
  std::vector<std::shared_ptr<kernels::Buffer>> free_;
};

struct ExecutionContext {
  std::vector<kernels::Tensor> table;               // Model's table slots
  std::vector<const kernels::Tensor*> op_inputs;    // per CPU operator, from its input_offset
  std::vector<kernels::Tensor> op_staging;          // per CPU operator, from its staging_offset
  std::vector<std::span<const uint8_t>> bpu_inputs;  // per BPU segment, from its span offsets
  std::vector<std::span<uint8_t>> bpu_outputs;
  RecyclingAllocator allocator;
  // Buffers taken out of the CPU operators' outputs at the start of an inference (capacity for
  // all of them), sorted to find the ones nothing else holds.
  std::vector<std::shared_ptr<kernels::Buffer>> released;
  std::vector<double> layer_ms;  // profiling: one latency per layer key

  // Takes the storage of `tensors` back (release_storage) and recycles every buffer no one
  // else holds (a buffer shared by several of them counts once; one that a constant, an input
  // or a BPU output also holds is left alone).
  void recycle_outputs(std::span<const uint32_t> table_slots);
};

}  // namespace openbpu::dnn
