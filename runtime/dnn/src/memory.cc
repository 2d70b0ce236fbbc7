// hb_sys.h and the memory registry (memory.h).
#include "memory.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "dnn/hb_sys.h"
#include "error.h"
#include "ucp_types.h"

namespace openbpu::dnn {

namespace {
constexpr size_t kAlignment = 64;

uint64_t fnv1a(const uint8_t* p, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}
}  // namespace

MemoryRegistry& MemoryRegistry::instance() {
  static MemoryRegistry registry;
  return registry;
}

void* MemoryRegistry::allocate(size_t size, bool cached) {
  const size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr) return nullptr;
  std::memset(p, 0, rounded);
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    Block& b = blocks_[reinterpret_cast<uintptr_t>(p)];
    b.size = size;
    b.owned = true;
    b.cached = cached;
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
  Block& b = blocks_[lo];
  b.size = size;
  b.cached = true;  // the caller's memory: cacheable, as hbSysRegisterMem says
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

using openbpu::dnn::fail;
using openbpu::dnn::guarded;
using openbpu::dnn::MemoryRegistry;

namespace {

void alloc(hbSysMem* mem, uint32_t size, bool cached) {
  if (mem == nullptr) fail(HB_SYS_INVALID_ARGUMENT, "mem is NULL");
  if (size == 0) fail(HB_SYS_INVALID_ARGUMENT, "size must be > 0");
  void* p = MemoryRegistry::instance().allocate(size, cached);
  if (p == nullptr) fail(HB_SYS_OUT_OF_MEMORY, size, " bytes could not be allocated");
  mem->virAddr = p;
  mem->phyAddr = reinterpret_cast<uintptr_t>(p);
  mem->memSize = size;
}

// The size of the block `mem` names; fails with HB_SYS_INVALID_ARGUMENT if it names none.
size_t checked_block(const hbSysMem* mem) {
  if (mem == nullptr) fail(HB_SYS_INVALID_ARGUMENT, "mem is NULL");
  const size_t size = MemoryRegistry::instance().block_size(mem->virAddr);
  if (size == 0) {
    fail(HB_SYS_INVALID_ARGUMENT,
         "virAddr is not memory from hbSysAllocMem / hbSysAllocCachedMem / hbSysRegisterMem (or it "
         "was freed)");
  }
  return size;
}

}  // namespace

// Every entry point runs in guarded() (design invariant 4): a failed allocation of the registry
// or of an error text is HB_SYS_OUT_OF_MEMORY or the error's own code, never an exception.
extern "C" {

int32_t hbSysAllocMem(hbSysMem* mem, uint32_t size) {
  return guarded("hbSysAllocMem", HB_SYS_OUT_OF_MEMORY, [&] { alloc(mem, size, false); });
}

int32_t hbSysAllocCachedMem(hbSysMem* mem, uint32_t size) {
  return guarded("hbSysAllocCachedMem", HB_SYS_OUT_OF_MEMORY, [&] { alloc(mem, size, true); });
}

int32_t hbSysFlushMem(hbSysMem* mem, int32_t flag) {
  return guarded("hbSysFlushMem", HB_SYS_OUT_OF_MEMORY, [&] {
    checked_block(mem);
    if (flag != HB_SYS_MEM_CACHE_INVALIDATE && flag != HB_SYS_MEM_CACHE_CLEAN) {
      fail(HB_SYS_INVALID_ARGUMENT, "flag ", flag,
           " is neither HB_SYS_MEM_CACHE_INVALIDATE (1) nor HB_SYS_MEM_CACHE_CLEAN (2)");
    }
  });
}

int32_t hbSysFreeMem(hbSysMem* mem) {
  return guarded("hbSysFreeMem", HB_SYS_OUT_OF_MEMORY, [&] {
    if (mem == nullptr) fail(HB_SYS_INVALID_ARGUMENT, "mem is NULL");
    if (!MemoryRegistry::instance().free(mem->virAddr)) {
      fail(HB_SYS_INVALID_ARGUMENT,
           "virAddr is not a live block from hbSysAllocMem / hbSysAllocCachedMem (already freed, "
           "or registered memory)");
    }
    mem->virAddr = nullptr;
    mem->phyAddr = 0;
    mem->memSize = 0;
  });
}

int32_t hbSysWriteMem(hbSysMem* dest, char* src, uint32_t size) {
  return guarded("hbSysWriteMem", HB_SYS_OUT_OF_MEMORY, [&] {
    const size_t block = checked_block(dest);
    if (src == nullptr) fail(HB_SYS_INVALID_ARGUMENT, "src is NULL");
    if (size > block)
      fail(HB_SYS_INVALID_ARGUMENT, "size ", size, " exceeds the block's ", block, " bytes");
    std::memcpy(dest->virAddr, src, size);
  });
}

int32_t hbSysReadMem(char* dest, hbSysMem* src, uint32_t size) {
  return guarded("hbSysReadMem", HB_SYS_OUT_OF_MEMORY, [&] {
    const size_t block = checked_block(src);
    if (dest == nullptr) fail(HB_SYS_INVALID_ARGUMENT, "dest is NULL");
    if (size > block)
      fail(HB_SYS_INVALID_ARGUMENT, "size ", size, " exceeds the block's ", block, " bytes");
    std::memcpy(dest, src->virAddr, size);
  });
}

int32_t hbSysRegisterMem(hbSysMem* mem) {
  return guarded("hbSysRegisterMem", HB_SYS_OUT_OF_MEMORY, [&] {
    if (mem == nullptr || mem->virAddr == nullptr || mem->memSize == 0) {
      fail(HB_SYS_INVALID_ARGUMENT, "mem, mem->virAddr and mem->memSize must be set");
    }
    if (!MemoryRegistry::instance().add_registered(mem->virAddr, mem->memSize)) {
      fail(HB_SYS_INVALID_ARGUMENT, "the memory overlaps a block already known to the runtime");
    }
    mem->phyAddr = reinterpret_cast<uintptr_t>(mem->virAddr);
  });
}

int32_t hbSysUnregisterMem(hbSysMem* mem) {
  return guarded("hbSysUnregisterMem", HB_SYS_OUT_OF_MEMORY, [&] {
    if (mem == nullptr) fail(HB_SYS_INVALID_ARGUMENT, "mem is NULL");
    if (!MemoryRegistry::instance().remove_registered(mem->virAddr)) {
      fail(HB_SYS_REGISTER_MEM_FAILED, "the memory was not registered with hbSysRegisterMem");
    }
  });
}

}  // extern "C"

namespace openbpu::dnn {

std::map<uintptr_t, MemoryRegistry::Block>::iterator MemoryRegistry::block_holding(uintptr_t p) {
  auto it = blocks_.upper_bound(p);
  if (it == blocks_.begin()) return blocks_.end();
  --it;
  return p - it->first < it->second.size ? it : blocks_.end();
}

void MemoryRegistry::cleaned(const void* ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == blocks_.end() || !it->second.cached) return;
  it->second.cleaned = true;
  it->second.cleaned_hash = fnv1a(static_cast<const uint8_t*>(ptr), it->second.size);
}

bool MemoryRegistry::written_since_clean(const void* ptr) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = const_cast<MemoryRegistry*>(this)->block_holding(reinterpret_cast<uintptr_t>(ptr));
  if (it == blocks_.end() || !it->second.cached) return false;
  const Block& b = it->second;
  return !b.cleaned || b.cleaned_hash != fnv1a(reinterpret_cast<const uint8_t*>(it->first), b.size);
}

void MemoryRegistry::hide_until_invalidated(void* ptr, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  auto it = block_holding(p);
  if (it == blocks_.end() || !it->second.cached) return;
  const size_t offset = p - it->first;
  bytes = std::min(bytes, it->second.size - offset);
  auto* data = static_cast<uint8_t*>(ptr);
  it->second.hidden[offset].assign(data, data + bytes);
  std::memset(data, 0xCD, bytes);
  it->second.cleaned = false;  // the BPU's bytes are not what the CPU last cleaned
}

void MemoryRegistry::invalidated(const void* ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == blocks_.end()) return;
  auto* base = reinterpret_cast<uint8_t*>(it->first);
  for (const auto& [offset, saved] : it->second.hidden) std::memcpy(base + offset, saved.data(), saved.size());
  it->second.hidden.clear();
}

}  // namespace openbpu::dnn

// The UCP generation's memory functions (hobot/hb_ucp_sys.h): the same registry, UCP codes,
// 64-bit sizes, and the flush check's bookkeeping (MemoryRegistry::cleaned / invalidated).
namespace {

namespace ucp = openbpu::dnn::ucp;

void ucp_alloc(ucp::SysMem* mem, uint64_t size, int32_t device, bool cached) {
  if (mem == nullptr) fail(ucp::kInvalidArgument, "mem is NULL");
  if (size == 0) fail(ucp::kInvalidArgument, "size must be > 0");
  if (device != 0) fail(ucp::kInvalidArgument, "deviceId ", device, " is not 0 (this platform has one device)");
  void* p = size > SIZE_MAX / 2 ? nullptr : MemoryRegistry::instance().allocate(static_cast<size_t>(size), cached);
  if (p == nullptr) fail(ucp::kMemAllocFail, size, " bytes could not be allocated");
  mem->virAddr = p;
  mem->phyAddr = reinterpret_cast<uintptr_t>(p);
  mem->memSize = size;
}

}  // namespace

extern "C" {

int32_t hbUCPMalloc(ucp::SysMem* mem, uint64_t size, int32_t deviceId) {
  return openbpu::dnn::guarded_ucp("hbUCPMalloc", [&] { ucp_alloc(mem, size, deviceId, false); });
}

int32_t hbUCPMallocCached(ucp::SysMem* mem, uint64_t size, int32_t deviceId) {
  return openbpu::dnn::guarded_ucp("hbUCPMallocCached", [&] { ucp_alloc(mem, size, deviceId, true); });
}

int32_t hbUCPMemFlush(const ucp::SysMem* mem, int32_t flag) {
  return openbpu::dnn::guarded_ucp("hbUCPMemFlush", [&] {
    if (mem == nullptr) fail(ucp::kInvalidArgument, "mem is NULL");
    if (flag != ucp::kFlushInvalidate && flag != ucp::kFlushClean) {
      fail(ucp::kInvalidArgument, "flag ", flag, " is neither HB_SYS_MEM_CACHE_INVALIDATE (1) nor HB_SYS_MEM_CACHE_CLEAN (2)");
    }
    MemoryRegistry& registry = MemoryRegistry::instance();
    if (registry.block_size(mem->virAddr) == 0) {
      fail(ucp::kMemIsInvalid, "virAddr is not the start of live memory from hbUCPMalloc / hbUCPMallocCached (or it was freed)");
    }
    if (flag == ucp::kFlushClean) {
      registry.cleaned(mem->virAddr);
    } else {
      registry.invalidated(mem->virAddr);
    }
  });
}

int32_t hbUCPFree(ucp::SysMem* mem) {
  return openbpu::dnn::guarded_ucp("hbUCPFree", [&] {
    if (mem == nullptr) fail(ucp::kInvalidArgument, "mem is NULL");
    if (!MemoryRegistry::instance().free(mem->virAddr)) {
      fail(ucp::kMemIsInvalid, "virAddr is not a live block from hbUCPMalloc / hbUCPMallocCached (already freed, or never allocated)");
    }
    mem->virAddr = nullptr;
    mem->phyAddr = 0;
    mem->memSize = 0;
  });
}

}  // extern "C"
