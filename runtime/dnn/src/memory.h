// BPU memory of the simulated platform (hb_sys.h): a registry of the blocks the library handed
// out (hbSysAlloc(Cached)Mem) or was given (hbSysRegisterMem), so that every pointer a user
// passes can be checked — unknown, freed or too small memory is an error, not a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace openbpu::dnn {

class MemoryRegistry {
 public:
  static MemoryRegistry& instance();

  // Allocates `size` zeroed bytes, 64-byte aligned. Returns nullptr when out of memory.
  void* allocate(size_t size, bool cached);
  // Frees a block from allocate(); false if `ptr` is not the start of such a live block.
  bool free(void* ptr);
  // Registers caller-owned memory; false if it overlaps a known block.
  bool add_registered(void* ptr, size_t size);
  bool remove_registered(void* ptr);
  // True if [ptr, ptr + bytes) lies inside one live block.
  bool contains(const void* ptr, size_t bytes) const;
  // The block starting exactly at `ptr`: its size, or 0 if none.
  size_t block_size(const void* ptr) const;

  // The flush check of the UCP API (hobot/hb_ucp_sys.h, OPENBPU_UCP_CHECK_FLUSH): a cached
  // block remembers a hash of its bytes at its last CLEAN flush, and the bytes the BPU wrote
  // into it that the CPU has not invalidated yet. All false / no-ops for non-cached memory and
  // for pointers outside every block.
  // HB_SYS_MEM_CACHE_CLEAN of the block starting at `ptr`: records its bytes' hash.
  void cleaned(const void* ptr);
  // True if the cached block holding `ptr` changed since its last CLEAN (or was never cleaned).
  bool written_since_clean(const void* ptr) const;
  // After the BPU wrote [ptr, ptr + bytes) of a cached block: keeps the bytes aside and shows
  // the CPU 0xCD there until invalidated (a board's stale cache lines).
  void hide_until_invalidated(void* ptr, size_t bytes);
  // HB_SYS_MEM_CACHE_INVALIDATE of the block starting at `ptr`: the hidden bytes come back.
  void invalidated(const void* ptr);

 private:
  struct Block {
    size_t size = 0;
    bool owned = false;   // allocated by us (else registered by the caller)
    bool cached = false;  // hbSysAllocCachedMem / hbUCPMallocCached
    // The flush check: the hash at the last CLEAN (cleaned_hash valid if `cleaned`), and the
    // BPU's writes the CPU does not see yet (offset in the block → bytes).
    bool cleaned = false;
    uint64_t cleaned_hash = 0;
    std::map<size_t, std::vector<uint8_t>> hidden;
  };
  // The block holding `p`, or blocks_.end(); the caller holds mutex_.
  std::map<uintptr_t, Block>::iterator block_holding(uintptr_t p);
  mutable std::mutex mutex_;
  std::map<uintptr_t, Block> blocks_;  // start address → block
};

}  // namespace openbpu::dnn
