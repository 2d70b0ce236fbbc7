/*
 * hobot/hb_ucp_sys.h — memory the BPU reads and writes, UCP generation.
 *
 * On the x86 simulator and the emulated board, BPU memory is 64-byte aligned host memory that
 * the library tracks (phyAddr is a stable fake physical address). All functions are
 * thread-safe, never throw, and return an hbUCPStatus.
 *
 * Cache maintenance: memory from hbUCPMallocCached is cached on a board; the CPU's writes reach
 * the BPU only after hbUCPMemFlush(HB_SYS_MEM_CACHE_CLEAN), and the BPU's writes reach the CPU
 * only after hbUCPMemFlush(HB_SYS_MEM_CACHE_INVALIDATE). The simulator's memory is coherent, so
 * a missing flush goes unnoticed there — unless OPENBPU_UCP_CHECK_FLUSH=1 is set (read at each
 * hbUCPSubmitTask): then a task whose cached input was written after its last CLEAN is refused
 * by hbUCPSubmitTask (HB_UCP_API_USE_ERROR naming the tensor), and the task's cached outputs
 * hold the byte 0xCD until the CPU invalidates them, as a stale cache would show on a board.
 * Memory from hbUCPMalloc is not cached and needs no flush.
 */
#ifndef OPENBPU_HOBOT_HB_UCP_SYS_H_
#define OPENBPU_HOBOT_HB_UCP_SYS_H_

#include <stdint.h>

#include "hb_ucp_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One block of BPU memory; memSize is the size asked for, in bytes. */
typedef struct hbUCPSysMem {
  uint64_t phyAddr;
  void *virAddr;
  uint64_t memSize;
} hbUCPSysMem;

#ifndef OPENBPU_HB_SYS_MEM_FLUSH_FLAGS
#define OPENBPU_HB_SYS_MEM_FLUSH_FLAGS
typedef enum {
  HB_SYS_MEM_CACHE_INVALIDATE = 1, /* memory → cache: before the CPU reads what the BPU wrote */
  HB_SYS_MEM_CACHE_CLEAN = 2       /* cache → memory: after the CPU wrote what the BPU reads */
} hbUCPSysMemFlushFlag;
#endif

/*
 * Allocates `size` (> 0) zero-filled bytes of non-cached BPU memory into *mem; the caller owns
 * them until hbUCPFree. deviceId is reserved (0). Errors: HB_UCP_INVALID_ARGUMENT (mem NULL,
 * size 0, deviceId not 0), HB_UCP_MEM_ALLOC_FAIL.
 */
int32_t hbUCPMalloc(hbUCPSysMem *mem, uint64_t size, int32_t deviceId);
/* As hbUCPMalloc, cached memory: flush it with hbUCPMemFlush around CPU access. */
int32_t hbUCPMallocCached(hbUCPSysMem *mem, uint64_t size, int32_t deviceId);
/*
 * Cleans (HB_SYS_MEM_CACHE_CLEAN) or invalidates (HB_SYS_MEM_CACHE_INVALIDATE) the cache for
 * the block mem describes (virAddr must be the start of a live block). Errors:
 * HB_UCP_INVALID_ARGUMENT (mem NULL, unknown flag), HB_UCP_MEM_IS_INVALID (not a live block).
 */
int32_t hbUCPMemFlush(hbUCPSysMem const *mem, int32_t flag);
/*
 * Frees a block of hbUCPMalloc(Cached); tensors pointing at it must not be used any more
 * (hbDNNInferV2 refuses them). Errors: HB_UCP_INVALID_ARGUMENT (NULL), HB_UCP_MEM_IS_INVALID
 * (unknown or already freed block).
 */
int32_t hbUCPFree(hbUCPSysMem *mem);

#ifdef __cplusplus
}
#endif

#endif /* OPENBPU_HOBOT_HB_UCP_SYS_H_ */
