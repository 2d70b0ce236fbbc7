// hb_sys.h and the memory registry (memory.h).
#include "memory.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "dnn/hb_sys.h"
#include "error.h"

namespace openbpu::dnn {

namespace {
constexpr size_t kAlignment = 64;
}

MemoryRegistry& MemoryRegistry::instance() {
  static MemoryRegistry registry;
  return registry;
}

void* MemoryRegistry::allocate(size_t size, bool /*cached*/) {
  const size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr) return nullptr;
  std::memset(p, 0, rounded);
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    blocks_[reinterpret_cast<uintptr_t>(p)] = {size, true};
  } catch (...) {
    std::free(p);
    return nullptr;
  }
  return p;
}

bool MemoryRegistry::free(void* ptr) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == blocks_.end() || !it->second.owned) return false;
    blocks_.erase(it);
  }
  std::free(ptr);
  return true;
}

bool MemoryRegistry::add_registered(void* ptr, size_t size) {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(ptr), hi = lo + size;
  std::lock_guard<std::mutex> lock(mutex_);
  auto next = blocks_.lower_bound(lo);
  if (next != blocks_.end() && next->first < hi) return false;
  if (next != blocks_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second.size > lo) return false;
  }
  blocks_[lo] = {size, false};
  return true;
}

bool MemoryRegistry::remove_registered(void* ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == blocks_.end() || it->second.owned) return false;
  blocks_.erase(it);
  return true;
}

bool MemoryRegistry::contains(const void* ptr, size_t bytes) const {
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.upper_bound(p);
  if (it == blocks_.begin()) return false;
  --it;
  return p >= it->first && p - it->first <= it->second.size && bytes <= it->second.size - (p - it->first);
}

size_t MemoryRegistry::block_size(const void* ptr) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(reinterpret_cast<uintptr_t>(ptr));
  return it == blocks_.end() ? 0 : it->second.size;
}

}  // namespace openbpu::dnn

using openbpu::dnn::MemoryRegistry;

namespace {

int32_t sys_fail(int32_t code, const std::string& detail) {
  openbpu::dnn::set_last_error(code, detail);
  return code;
}

int32_t alloc(hbSysMem* mem, uint32_t size, bool cached, const char* fn) {
  if (mem == nullptr) return sys_fail(HB_SYS_INVALID_ARGUMENT, std::string(fn) + ": mem is NULL");
  if (size == 0) return sys_fail(HB_SYS_INVALID_ARGUMENT, std::string(fn) + ": size must be > 0");
  void* p = MemoryRegistry::instance().allocate(size, cached);
  if (p == nullptr) {
    return sys_fail(HB_SYS_OUT_OF_MEMORY, std::string(fn) + ": " + std::to_string(size) + " bytes could not be allocated");
  }
  mem->virAddr = p;
  mem->phyAddr = reinterpret_cast<uintptr_t>(p);
  mem->memSize = size;
  return HB_SYS_SUCCESS;
}

// The block `mem` names, checked: its size, or an error code.
int32_t checked_block(const hbSysMem* mem, const char* fn, size_t* size) {
  if (mem == nullptr) return sys_fail(HB_SYS_INVALID_ARGUMENT, std::string(fn) + ": mem is NULL");
  const size_t s = MemoryRegistry::instance().block_size(mem->virAddr);
  if (s == 0) {
    return sys_fail(HB_SYS_INVALID_ARGUMENT,
                    std::string(fn) + ": virAddr is not memory from hbSysAllocMem / hbSysAllocCachedMem / hbSysRegisterMem (or it was freed)");
  }
  *size = s;
  return HB_SYS_SUCCESS;
}

}  // namespace

extern "C" {

int32_t hbSysAllocMem(hbSysMem* mem, uint32_t size) { return alloc(mem, size, false, "hbSysAllocMem"); }
int32_t hbSysAllocCachedMem(hbSysMem* mem, uint32_t size) { return alloc(mem, size, true, "hbSysAllocCachedMem"); }

int32_t hbSysFlushMem(hbSysMem* mem, int32_t flag) {
  size_t size = 0;
  if (const int32_t st = checked_block(mem, "hbSysFlushMem", &size); st != HB_SYS_SUCCESS) return st;
  if (flag != HB_SYS_MEM_CACHE_INVALIDATE && flag != HB_SYS_MEM_CACHE_CLEAN) {
    return sys_fail(HB_SYS_INVALID_ARGUMENT, "hbSysFlushMem: flag " + std::to_string(flag) +
                                                 " is neither HB_SYS_MEM_CACHE_INVALIDATE (1) nor HB_SYS_MEM_CACHE_CLEAN (2)");
  }
  return HB_SYS_SUCCESS;
}

int32_t hbSysFreeMem(hbSysMem* mem) {
  if (mem == nullptr) return sys_fail(HB_SYS_INVALID_ARGUMENT, "hbSysFreeMem: mem is NULL");
  if (!MemoryRegistry::instance().free(mem->virAddr)) {
    return sys_fail(HB_SYS_INVALID_ARGUMENT, "hbSysFreeMem: virAddr is not a live block from hbSysAllocMem / hbSysAllocCachedMem (already freed, or registered memory)");
  }
  mem->virAddr = nullptr;
  mem->phyAddr = 0;
  mem->memSize = 0;
  return HB_SYS_SUCCESS;
}

int32_t hbSysWriteMem(hbSysMem* dest, char* src, uint32_t size) {
  size_t block = 0;
  if (const int32_t st = checked_block(dest, "hbSysWriteMem", &block); st != HB_SYS_SUCCESS) return st;
  if (src == nullptr) return sys_fail(HB_SYS_INVALID_ARGUMENT, "hbSysWriteMem: src is NULL");
  if (size > block) {
    return sys_fail(HB_SYS_INVALID_ARGUMENT, "hbSysWriteMem: size " + std::to_string(size) + " exceeds the block's " + std::to_string(block) + " bytes");
  }
  std::memcpy(dest->virAddr, src, size);
  return HB_SYS_SUCCESS;
}

int32_t hbSysReadMem(char* dest, hbSysMem* src, uint32_t size) {
  size_t block = 0;
  if (const int32_t st = checked_block(src, "hbSysReadMem", &block); st != HB_SYS_SUCCESS) return st;
  if (dest == nullptr) return sys_fail(HB_SYS_INVALID_ARGUMENT, "hbSysReadMem: dest is NULL");
  if (size > block) {
    return sys_fail(HB_SYS_INVALID_ARGUMENT, "hbSysReadMem: size " + std::to_string(size) + " exceeds the block's " + std::to_string(block) + " bytes");
  }
  std::memcpy(dest, src->virAddr, size);
  return HB_SYS_SUCCESS;
}

int32_t hbSysRegisterMem(hbSysMem* mem) {
  if (mem == nullptr || mem->virAddr == nullptr || mem->memSize == 0) {
    return sys_fail(HB_SYS_INVALID_ARGUMENT, "hbSysRegisterMem: mem, mem->virAddr and mem->memSize must be set");
  }
  if (!MemoryRegistry::instance().add_registered(mem->virAddr, mem->memSize)) {
    return sys_fail(HB_SYS_INVALID_ARGUMENT, "hbSysRegisterMem: the memory overlaps a block already known to the runtime");
  }
  mem->phyAddr = reinterpret_cast<uintptr_t>(mem->virAddr);
  return HB_SYS_SUCCESS;
}

int32_t hbSysUnregisterMem(hbSysMem* mem) {
  if (mem == nullptr) return sys_fail(HB_SYS_INVALID_ARGUMENT, "hbSysUnregisterMem: mem is NULL");
  if (!MemoryRegistry::instance().remove_registered(mem->virAddr)) {
    return sys_fail(HB_SYS_REGISTER_MEM_FAILED, "hbSysUnregisterMem: the memory was not registered with hbSysRegisterMem");
  }
  return HB_SYS_SUCCESS;
}

}  // extern "C"
