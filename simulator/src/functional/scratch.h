// Scratch memory of the functional units. An instruction's temporaries (tap and window tables,
// gathered patches, accumulators, prepared multipliers, transposed operands) come from a
// per-thread arena that is rewound when the instruction ends (ScratchScope in
// execute_instruction). Once the arena has grown to the largest instruction's needs — during
// the first run of a program — executing it again allocates nothing, as a real BPU's units
// work in on-chip buffers, not a heap; a device that runs one model after another so adds no
// allocation per inference (runtime/dnn).
#pragma once

#include <cstddef>
#include <vector>

namespace openbpu::simulator::functional {

class ScratchArena {
 public:
  ScratchArena() = default;
  ~ScratchArena();
  ScratchArena(const ScratchArena&) = delete;
  ScratchArena& operator=(const ScratchArena&) = delete;

  static ScratchArena& local();  // the calling thread's

  // Memory for `bytes` aligned to `align` (<= 64): inside a scope from the arena's block, or
  // from the heap when the block is too small (the arena then grows when its outermost scope
  // closes); outside any scope from the heap.
  void* allocate(size_t bytes, size_t align);
  // Heap memory goes back to the heap; arena memory is reclaimed by the scope.
  void deallocate(void* p) noexcept;

  // Everything allocated in the arena during a scope's life is reclaimed at its end.
  class Scope {
   public:
    Scope() : arena_(local()), mark_(arena_.used_) { ++arena_.open_scopes_; }
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    ScratchArena& arena_;
    size_t mark_;
  };

  size_t capacity() const { return capacity_; }

 private:
  std::byte* block_ = nullptr;
  size_t capacity_ = 0;
  size_t used_ = 0;
  size_t needed_ = 0;  // the most the block would have held in the current outermost scope
  int open_scopes_ = 0;
};

template <typename T>
struct ScratchAllocator {
  using value_type = T;
  ScratchAllocator() = default;
  template <typename U>
  ScratchAllocator(const ScratchAllocator<U>&) noexcept {}
  // Blocks of 64 bytes or more start on a cache line (whole-line vector and AMX tile loads).
  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    return static_cast<T*>(ScratchArena::local().allocate(bytes, bytes >= 64 ? 64 : alignof(T)));
  }
  void deallocate(T* p, size_t) noexcept { ScratchArena::local().deallocate(p); }
  friend bool operator==(const ScratchAllocator&, const ScratchAllocator&) { return true; }
};

// A std::vector of an instruction's temporaries.
template <typename T>
using ScratchVector = std::vector<T, ScratchAllocator<T>>;

}  // namespace openbpu::simulator::functional
