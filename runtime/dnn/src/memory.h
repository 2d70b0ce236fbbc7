// BPU memory of the simulated platform (hb_sys.h): a registry of the blocks the library handed
// out (hbSysAlloc(Cached)Mem) or was given (hbSysRegisterMem), so that every pointer a user
// passes can be checked — unknown, freed or too small memory is an error, not a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

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

 private:
  struct Block {
    size_t size = 0;
    bool owned = false;  // allocated by us (else registered by the caller)
  };
  mutable std::mutex mutex_;
  std::map<uintptr_t, Block> blocks_;  // start address → block
};

}  // namespace openbpu::dnn
