/*
 * hobot/dnn/hb_dnn_v1.h — the classic inference calls kept for the UCP generation (J6 / S100),
 * with that generation's types (hobot/dnn/hb_dnn.h: one hbUCPSysMem per tensor, int64 strides)
 * and status codes. Code written for the classic API keeps its hbDNNInfer / hbDNNWaitTaskDone /
 * hbDNNReleaseTask calls; they are hbDNNInferV2 + hbUCPSubmitTask, hbUCPWaitTaskDone and
 * hbUCPReleaseTask underneath (the same tasks: a task made here may also be waited for with
 * hbUCPWaitTaskDone). Every model this runtime loads runs through them.
 */
#ifndef OPENBPU_HOBOT_DNN_HB_DNN_V1_H_
#define OPENBPU_HOBOT_DNN_HB_DNN_V1_H_

#include <stdint.h>

#include "hb_dnn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef hbUCPTaskHandle_t hbDNNTaskHandle_t;

typedef enum {
  HB_BPU_CORE_ANY = 0,
  HB_BPU_CORE_0 = (1 << 0),
  HB_BPU_CORE_1 = (1 << 1)
} hbBPUCore;

typedef enum {
  HB_DNN_PRIORITY_LOWEST = 0,
  HB_DNN_PRIORITY_HIGHEST = 255,
  HB_DNN_PRIORITY_PREEMP = HB_DNN_PRIORITY_HIGHEST
} hbDNNTaskPriority;

typedef struct {
  int32_t bpuCoreId; /* hbBPUCore mask; HB_BPU_CORE_ANY lets the scheduler choose */
  int32_t dspCoreId; /* unused (no DSP) */
  int32_t priority;  /* 0..255, higher first; 255 preempts at function-call boundaries */
  int32_t more;      /* non-zero: more sub-tasks will be appended before the task runs */
  int64_t customId;  /* among equal priorities, smaller first */
  int32_t reserved1;
  int32_t reserved2;
} hbDNNInferCtrlParam;

#define HB_DNN_INITIALIZE_INFER_CTRL_PARAM(param) \
  {                                               \
    (param)->bpuCoreId = HB_BPU_CORE_ANY;         \
    (param)->dspCoreId = 0;                       \
    (param)->priority = HB_DNN_PRIORITY_LOWEST;   \
    (param)->more = 0;                            \
    (param)->customId = 0;                        \
    (param)->reserved1 = 0;                       \
    (param)->reserved2 = 0;                       \
  }

/*
 * One inference: as hbDNNInferV2 (*taskHandle NULL makes a task, non-NULL appends to one not yet
 * submitted), then, with inferCtrlParam->more == 0, hbUCPSubmitTask with its priority, customId
 * and cores. The caller owns the task until hbDNNReleaseTask. Errors: as hbDNNInferV2 and
 * hbUCPSubmitTask; HB_DNN_INVALID_ARGUMENT (NULL pointers, a priority or core mask out of range).
 */
int32_t hbDNNInfer(hbDNNTaskHandle_t *taskHandle, hbDNNTensor **output, hbDNNTensor const *input,
                   hbDNNHandle_t dnnHandle, hbDNNInferCtrlParam *inferCtrlParam) HB_DNN_UCP_SYMBOL(hbDNNInfer);
/* As hbDNNRoiInferV2, then submitted as hbDNNInfer's. */
int32_t hbDNNRoiInfer(hbDNNTaskHandle_t *taskHandle, hbDNNTensor **output, hbDNNTensor const *input, hbDNNRoi *rois,
                      int32_t roiCount, hbDNNHandle_t dnnHandle, hbDNNInferCtrlParam *inferCtrlParam)
    HB_DNN_UCP_SYMBOL(hbDNNRoiInfer);
/* As hbUCPWaitTaskDone (timeout <= 0 waits forever). */
int32_t hbDNNWaitTaskDone(hbDNNTaskHandle_t taskHandle, int32_t timeout) HB_DNN_UCP_SYMBOL(hbDNNWaitTaskDone);
/* As hbUCPReleaseTask. */
int32_t hbDNNReleaseTask(hbDNNTaskHandle_t taskHandle) HB_DNN_UCP_SYMBOL(hbDNNReleaseTask);

#ifdef __cplusplus
}
#endif

#endif /* OPENBPU_HOBOT_DNN_HB_DNN_V1_H_ */
