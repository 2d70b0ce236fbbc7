#include "openbpu/kernels/buffer_pool.h"

#include <new>

namespace openbpu::kernels {

struct BufferPool::State {
  std::mutex mutex;
  std::multimap<size_t, void*> free_blocks;  // capacity → block
  size_t cached = 0;
  size_t live = 0;
  size_t peak = 0;
  bool closed = false;  // the pool is gone: release blocks instead of caching them

  static void* allocate_block(size_t capacity) {
    return ::operator new(capacity, std::align_val_t{64});
  }
  static void free_block(void* p) { ::operator delete(p, std::align_val_t{64}); }
};

namespace {

class PooledBuffer final : public Buffer {
 public:
  PooledBuffer(std::shared_ptr<BufferPool::State> state, void* data, size_t size, size_t capacity)
      : state_(std::move(state)), data_(data), size_(size), capacity_(capacity) {}
  ~PooledBuffer() override {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->live -= capacity_;
    if (state_->closed) {
      BufferPool::State::free_block(data_);
    } else {
      state_->free_blocks.emplace(capacity_, data_);
      state_->cached += capacity_;
    }
  }
  void* data() override { return data_; }
  size_t size() const override { return size_; }

 private:
  std::shared_ptr<BufferPool::State> state_;
  void* data_;
  size_t size_;
  size_t capacity_;
};

}  // namespace

BufferPool::BufferPool() : state_(std::make_shared<State>()) {}

BufferPool::~BufferPool() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  for (auto& [capacity, block] : state_->free_blocks) State::free_block(block);
  state_->free_blocks.clear();
  state_->cached = 0;
  state_->closed = true;
}

std::shared_ptr<Buffer> BufferPool::allocate(size_t bytes) {
  const size_t capacity = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
  void* block = nullptr;
  size_t block_capacity = capacity;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    // Reuse the smallest cached block that fits and wastes at most half of itself.
    auto it = state_->free_blocks.lower_bound(capacity);
    if (it != state_->free_blocks.end() && it->first <= capacity * 2 + 4096) {
      block = it->second;
      block_capacity = it->first;
      state_->cached -= it->first;
      state_->free_blocks.erase(it);
    }
    state_->live += block_capacity;
    if (state_->live > state_->peak) state_->peak = state_->live;
  }
  if (block == nullptr) {
    try {
      block = State::allocate_block(capacity);
    } catch (...) {
      std::lock_guard<std::mutex> lock(state_->mutex);
      state_->live -= block_capacity;
      throw;
    }
  }
  return std::make_shared<PooledBuffer>(state_, block, bytes, block_capacity);
}

size_t BufferPool::cached_bytes() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->cached;
}

size_t BufferPool::live_bytes() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->live;
}

size_t BufferPool::peak_live_bytes() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->peak;
}

void BufferPool::trim() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  for (auto& [capacity, block] : state_->free_blocks) State::free_block(block);
  state_->free_blocks.clear();
  state_->cached = 0;
}

}  // namespace openbpu::kernels
