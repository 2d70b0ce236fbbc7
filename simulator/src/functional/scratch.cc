// The functional units' per-thread scratch arena (scratch.h).
#include "scratch.h"

#include <new>

namespace openbpu::simulator::functional {

namespace {
constexpr size_t kAlign = 64;
size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }
}  // namespace

ScratchArena::~ScratchArena() {
  if (block_ != nullptr) ::operator delete(block_, std::align_val_t{kAlign});
}

ScratchArena& ScratchArena::local() {
  thread_local ScratchArena arena;
  return arena;
}

void* ScratchArena::allocate(size_t bytes, size_t align) {
  if (open_scopes_ == 0) return ::operator new(bytes == 0 ? 1 : bytes, std::align_val_t{kAlign});
  const size_t offset = round_up(used_, align < 8 ? 8 : align);
  if (offset + bytes > needed_) needed_ = offset + bytes;
  if (block_ != nullptr && offset + bytes <= capacity_) {
    used_ = offset + bytes;
    return block_ + offset;
  }
  // Over the block: the heap (counted in needed_ so the block grows).
  used_ = offset + bytes;  // keeps later requests of this scope sized as if the block had held it
  return ::operator new(bytes == 0 ? 1 : bytes, std::align_val_t{kAlign});
}

void ScratchArena::deallocate(void* p) noexcept {
  auto* b = static_cast<std::byte*>(p);
  if (block_ != nullptr && b >= block_ && b < block_ + capacity_) return;  // the scope reclaims it
  ::operator delete(p, std::align_val_t{kAlign});
}

ScratchArena::Scope::~Scope() {
  ScratchArena& a = arena_;
  a.used_ = mark_;
  if (--a.open_scopes_ > 0) return;
  a.used_ = 0;
  if (a.needed_ > a.capacity_) {
    // Grow for the next instruction; nothing lives in the block now.
    const size_t capacity = round_up(a.needed_ + a.needed_ / 4, kAlign);
    try {
      auto* block = static_cast<std::byte*>(::operator new(capacity, std::align_val_t{kAlign}));
      if (a.block_ != nullptr) ::operator delete(a.block_, std::align_val_t{kAlign});
      a.block_ = block;
      a.capacity_ = capacity;
    } catch (const std::bad_alloc&) {
      // Keep the old block; the next run takes the heap again.
    }
  }
  a.needed_ = 0;
}

}  // namespace openbpu::simulator::functional
