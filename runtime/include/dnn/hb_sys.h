/*
 * hb_sys.h — BPU-accessible memory of the OpenBPU runtime (classic Horizon hb_sys.h API).
 *
 * On the x86 simulator and on an emulated board, "BPU memory" is 64-byte aligned host memory
 * tracked by the library; phyAddr is a stable fake physical address (the virtual address), so
 * code that prints or passes it keeps working. Every function is thread-safe, never throws and
 * returns an hbSysStatus (hb_dnn_status.h). Memory is identified by its virAddr: a hbSysMem
 * whose virAddr was not returned by hbSysAlloc(Cached)Mem, or was already freed, is refused
 * with HB_SYS_INVALID_ARGUMENT (use after free is detected, not undefined).
 *
 * Out of memory: only hbSysAllocMem, hbSysAllocCachedMem and hbSysRegisterMem need memory, and
 * return HB_SYS_OUT_OF_MEMORY without it (nothing allocated or registered). The others allocate
 * nothing when they succeed; when an error finds no memory to describe itself it keeps its
 * code, and hbDNNGetErrorDesc gives the code's meaning without the detail.
 */
#ifndef OPENBPU_DNN_HB_SYS_H_
#define OPENBPU_DNN_HB_SYS_H_

#include <stdint.h>

#include "hb_dnn_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One block of BPU memory. memSize is the size asked for, in bytes. */
typedef struct {
  uint64_t phyAddr;
  void *virAddr;
  uint32_t memSize;
} hbSysMem;

typedef enum {
  HB_SYS_MEM_CACHE_INVALIDATE = 1, /* memory → cache: call before the CPU reads BPU output */
  HB_SYS_MEM_CACHE_CLEAN = 2       /* cache → memory: call after the CPU wrote BPU input */
} hbSysMemFlushFlag;

/* BPU cores for hbDNNInferCtrlParam.bpuCoreId (a bit mask; 0 = any core). */
typedef enum hbBPUCore_classic {
  HB_BPU_CORE_ANY = 0,
  HB_BPU_CORE_0 = (1 << 0),
  HB_BPU_CORE_1 = (1 << 1)
} hbBPUCore;

/* DSP cores (placeholders: the virtual BPU platform has no DSP). */
typedef enum hbDSPCore_classic {
  HB_DSP_CORE_ANY = 0,
  HB_DSP_CORE_0 = (1 << 0),
  HB_DSP_CORE_1 = (1 << 1)
} hbDSPCore;

/*
 * Allocates `size` bytes (> 0) of non-cached BPU memory, zero-filled, and describes it in *mem.
 * The caller owns the block until hbSysFreeMem. Errors: HB_SYS_INVALID_ARGUMENT (mem NULL,
 * size 0), HB_SYS_OUT_OF_MEMORY.
 */
int32_t hbSysAllocMem(hbSysMem *mem, uint32_t size);
/* As hbSysAllocMem, for cached memory (flush with hbSysFlushMem around CPU access). */
int32_t hbSysAllocCachedMem(hbSysMem *mem, uint32_t size);
/*
 * Flushes (HB_SYS_MEM_CACHE_CLEAN) or invalidates (HB_SYS_MEM_CACHE_INVALIDATE) the cache for
 * a block. The simulated memory is coherent, so this only checks its arguments; code that
 * runs here flushes correctly on a board. Errors: HB_SYS_INVALID_ARGUMENT (mem NULL, unknown
 * or freed block, unknown flag).
 */
int32_t hbSysFlushMem(hbSysMem *mem, int32_t flag);
/*
 * Frees a block from hbSysAlloc(Cached)Mem. Tensors that still point at it must not be used
 * (an hbDNNInfer naming it fails with HB_DNN_INVALID_ARGUMENT). Errors: HB_SYS_INVALID_ARGUMENT
 * (mem NULL, unknown or already freed block).
 */
int32_t hbSysFreeMem(hbSysMem *mem);
/*
 * Copies `size` bytes from `src` to the start of `dest`. Errors: HB_SYS_INVALID_ARGUMENT
 * (NULL pointer, unknown or freed block, size larger than dest->memSize).
 */
int32_t hbSysWriteMem(hbSysMem *dest, char *src, uint32_t size);
/* Copies `size` bytes from the start of `src` to `dest`. Errors as hbSysWriteMem. */
int32_t hbSysReadMem(char *dest, hbSysMem *src, uint32_t size);
/*
 * Registers memory the caller allocated (virAddr, memSize set) so that tensors may point at it;
 * phyAddr is filled in. hbSysUnregisterMem forgets it (the caller still owns the bytes).
 * Errors: HB_SYS_INVALID_ARGUMENT (NULL, zero size, overlaps a known block),
 * HB_SYS_OUT_OF_MEMORY (registering: no memory to record the block),
 * HB_SYS_REGISTER_MEM_FAILED (unregistering a block that was not registered).
 */
int32_t hbSysRegisterMem(hbSysMem *mem);
int32_t hbSysUnregisterMem(hbSysMem *mem);

#ifdef __cplusplus
}
#endif

#endif /* OPENBPU_DNN_HB_SYS_H_ */
