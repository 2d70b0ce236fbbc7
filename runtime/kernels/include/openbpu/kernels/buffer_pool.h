// An Allocator that recycles freed buffers: a buffer released by its last Tensor returns to the
// pool and is handed out again for a request of similar size. Executors use one pool per model
// so that memory follows value liveness without a malloc per node output.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

#include "openbpu/kernels/tensor.h"

namespace openbpu::kernels {

class BufferPool final : public Allocator {
 public:
  BufferPool();
  ~BufferPool() override;
  std::shared_ptr<Buffer> allocate(size_t bytes) override;

  // Bytes currently cached (free) and handed out (live).
  size_t cached_bytes() const;
  size_t live_bytes() const;
  size_t peak_live_bytes() const;
  // Frees every cached block.
  void trim();

  struct State;

 private:
  std::shared_ptr<State> state_;  // shared with outstanding buffers, which may outlive the pool
};

}  // namespace openbpu::kernels
