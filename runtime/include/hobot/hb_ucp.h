/*
 * hobot/hb_ucp.h — tasks of the UCP-generation runtime API: submit, wait, callbacks, release.
 *
 * A task is made by hbDNNInferV2 / hbDNNRoiInferV2 (hobot/dnn/hb_dnn.h), which may append more
 * sub-tasks to it until hbUCPSubmitTask queues it. One scheduler runs the tasks of both API
 * generations: ready tasks are ordered by priority (higher first), then customId (smaller
 * first), then submission; priority 255 (HB_UCP_PRIORITY_HIGHEST) preempts a running BPU job at
 * its next function-call boundary. Names, values and struct layouts are the reference's.
 *
 * Conventions: every function returns HB_UCP_SUCCESS (0) or a negative hbUCPStatus (except the
 * string getters); never throws or aborts on bad input; a released or unknown handle is
 * refused, not used; hbUCPGetErrorDesc(code) right after a failure gives the detail. All
 * functions may be called from any thread; one task handle should be used by one thread at a
 * time.
 */
#ifndef OPENBPU_HOBOT_HB_UCP_H_
#define OPENBPU_HOBOT_HB_UCP_H_

#include <stdint.h>

#include "hb_ucp_status.h"
#include "hb_ucp_sys.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HB_UCP_VERSION_MAJOR 3U
#define HB_UCP_VERSION_MINOR 13U
#define HB_UCP_VERSION_PATCH 6U

typedef void *hbUCPTaskHandle_t;

/* Called once when a submitted task is done (not if it was released before), on a runtime
 * thread, after hbUCPWaitTaskDone callers are woken; status is the task's result (as
 * hbUCPWaitTaskDone returns it). It may release the task; while it runs, that runtime thread
 * runs no other task, so it should return soon. */
typedef void (*hbUCPTaskDoneCb)(hbUCPTaskHandle_t taskHandle, int32_t status, void *userdata);

/* Backends (hbUCPSchedParam.backend, a bit mask). This runtime has BPU cores only: a task
 * naming DSP, GDC, codec, pyramid or ISP cores is refused with HB_UCP_OP_CMD_UNAVAILABLE. */
#define HB_UCP_CORE_ANY (0ULL)            /* any core of any backend the task needs */
#define HB_UCP_BPU_CORE_0 (1ULL << 0)
#define HB_UCP_BPU_CORE_1 (1ULL << 1)
#define HB_UCP_BPU_CORE_2 (1ULL << 2)
#define HB_UCP_BPU_CORE_3 (1ULL << 3)
#define HB_UCP_BPU_CORE_ANY (1ULL << 7)
#define HB_UCP_DSP_CORE_0 (1ULL << 8)
#define HB_UCP_DSP_CORE_1 (1ULL << 9)
#define HB_UCP_DSP_CORE_ANY (1ULL << 15)
#define HB_UCP_GDC_CORE_0 (1ULL << 16)
#define HB_UCP_GDC_CORE_1 (1ULL << 17)
#define HB_UCP_GDC_CORE_ANY (1ULL << 19)
#define HB_UCP_STITCH_CORE_0 (1ULL << 20)
#define HB_UCP_LKOF_CORE_0 (1ULL << 24)
#define HB_UCP_JPU_CORE_0 (1ULL << 25)
#define HB_UCP_JPU_CORE_1 (1ULL << 26)
#define HB_UCP_JPU_CORE_2 (1ULL << 27)
#define HB_UCP_JPU_CORE_ANY (1ULL << 29)
#define HB_UCP_VPU_CORE_0 (1ULL << 30)
#define HB_UCP_VPU_CORE_1 (1ULL << 31)
#define HB_UCP_VPU_CORE_2 (1ULL << 32)
#define HB_UCP_VPU_CORE_ANY (1ULL << 33)
#define HB_UCP_PYRAMID_CORE_0 (1ULL << 35)
#define HB_UCP_PYRAMID_CORE_1 (1ULL << 36)
#define HB_UCP_PYRAMID_CORE_2 (1ULL << 37)
#define HB_UCP_PYRAMID_CORE_3 (1ULL << 38)
#define HB_UCP_PYRAMID_CORE_4 (1ULL << 39)
#define HB_UCP_PYRAMID_CORE_ANY (1ULL << 40)
#define HB_UCP_ISP_CORE_0 (1ULL << 42)
#define HB_UCP_ISP_CORE_1 (1ULL << 43)
#define HB_UCP_ISP_CORE_2 (1ULL << 44)
#define HB_UCP_ISP_CORE_3 (1ULL << 45)

typedef enum hbUCPTaskPriority {
  HB_UCP_PRIORITY_LOWEST = 0,
  HB_UCP_PRIORITY_HIGHEST = 255
} hbUCPTaskPriority;

typedef struct hbUCPSchedParam {
  int32_t priority;  /* 0..255, higher first; 255 preempts at function-call boundaries */
  int64_t customId;  /* among equal priorities, smaller first */
  uint64_t backend;  /* HB_UCP_*_CORE_* bits; HB_UCP_CORE_ANY / HB_UCP_BPU_CORE_ANY: any BPU core */
  uint32_t deviceId; /* 0: the one device */
} hbUCPSchedParam;

#define HB_UCP_INITIALIZE_SCHED_PARAM(param)    \
  {                                             \
    (param)->priority = HB_UCP_PRIORITY_LOWEST; \
    (param)->customId = 0;                      \
    (param)->backend = HB_UCP_CORE_ANY;         \
    (param)->deviceId = 0U;                     \
  }

/* "<major>.<minor>.<patch>_(OpenBPU <version>)"; owned by the library, always valid. */
const char *hbUCPGetVersion(void);
/* The SoC the runtime drives: "openbpu-sim" on the simulator (the board build says the same:
 * it runs the same simulated BPU). Owned by the library, always valid. */
const char *hbUCPGetSocName(void);

/*
 * Queues a task made by hbDNNInferV2 / hbDNNRoiInferV2 with its scheduling parameters
 * (schedParam NULL: HB_UCP_INITIALIZE_SCHED_PARAM's). The task runs its sub-tasks in order;
 * their tensors' memory must stay allocated and unchanged until it is done. A task is
 * submitted once. Errors: HB_UCP_TASK_HANDLE_INVALID, HB_UCP_API_USE_ERROR (already submitted;
 * with OPENBPU_UCP_CHECK_FLUSH=1, a cached input written after its last CLEAN flush),
 * HB_UCP_INVALID_ARGUMENT (priority outside 0..255, deviceId not 0, a BPU core the models'
 * platform does not have), HB_UCP_OP_CMD_UNAVAILABLE (a non-BPU backend bit).
 */
int32_t hbUCPSubmitTask(hbUCPTaskHandle_t taskHandle, hbUCPSchedParam *schedParam);
/*
 * Waits until a submitted task is done: timeout > 0 waits at most that many ms
 * (HB_UCP_TASK_TIMEOUT if it still runs; it continues), timeout <= 0 waits forever. Returns the
 * task's result (HB_UCP_SUCCESS, or HB_UCP_TASK_RUN_FAILED naming the segment / operator); may
 * be called again. Errors: HB_UCP_TASK_HANDLE_INVALID, HB_UCP_API_USE_ERROR (not submitted).
 */
int32_t hbUCPWaitTaskDone(hbUCPTaskHandle_t taskHandle, int32_t timeout);
/*
 * Sets the function called when the task is done (replacing an earlier one); set it before
 * hbUCPSubmitTask. Errors: HB_UCP_TASK_HANDLE_INVALID, HB_UCP_INVALID_ARGUMENT (taskDoneCb
 * NULL), HB_UCP_API_USE_ERROR (the task was already submitted).
 */
int32_t hbUCPSetTaskDoneCb(hbUCPTaskHandle_t taskHandle, hbUCPTaskDoneCb taskDoneCb, void *userdata);
/*
 * Releases a task: one not submitted or not started is dropped; a running one stops at its
 * next segment boundary (its outputs are then undefined); its callback is not called any more.
 * The handle is invalid afterwards (a later task may reuse the value). Errors:
 * HB_UCP_TASK_HANDLE_INVALID.
 */
int32_t hbUCPReleaseTask(hbUCPTaskHandle_t taskHandle);

#ifdef __cplusplus
}
#endif

#endif /* OPENBPU_HOBOT_HB_UCP_H_ */
