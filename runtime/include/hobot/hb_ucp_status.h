/*
 * hobot/hb_ucp_status.h — status codes of the UCP-generation runtime API (hobot/hb_ucp.h,
 * hobot/hb_ucp_sys.h, hobot/dnn/hb_dnn.h). Names and values are those of the reference's UCP
 * runtime (J6 / S100 generation): a 6-digit code whose first digits give the area (common,
 * task, memory, file, model). The classic API (dnn/hb_dnn.h) keeps its own -6000xxx codes.
 */
#ifndef OPENBPU_HOBOT_HB_UCP_STATUS_H_
#define OPENBPU_HOBOT_HB_UCP_STATUS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  HB_UCP_SUCCESS = 0,
  HB_UCP_INVALID_ARGUMENT = -100001,      /* NULL pointer, value or index out of range, bad tensor */
  HB_UCP_API_USE_ERROR = -100002,         /* calls in a wrong order (submit twice, missing flush) */
  HB_UCP_INIT_FAILED = -100003,
  HB_UCP_UNKNOWN_ERROR = -100004,
  HB_UCP_TASK_NUMBER_EXCEED_LIMIT = -200001, /* too many tasks, or sub-tasks in one task */
  HB_UCP_TASK_TIMEOUT = -200002,          /* hbUCPWaitTaskDone gave up waiting */
  HB_UCP_TASK_RUN_FAILED = -200003,       /* an operator or BPU program failed */
  HB_UCP_TASK_HANDLE_INVALID = -200004,   /* not a live task handle (NULL, released, never made) */
  HB_UCP_OP_NUMBER_EXCEED_LIMIT = -300001,
  HB_UCP_OP_NOT_REGISTER = -300002,
  HB_UCP_OP_CMD_UNAVAILABLE = -300003,    /* a backend (DSP, GDC, ...) this platform does not have */
  HB_UCP_MEM_ALLOC_FAIL = -400001,        /* out of memory */
  HB_UCP_MEM_FREE_FAIL = -400002,
  HB_UCP_MEM_FLUSH_FAIL = -400003,
  HB_UCP_MEM_INVALIDATE_FAIL = -400004,
  HB_UCP_MEM_IS_INVALID = -400005,        /* memory not from hbUCPMalloc*, or freed */
  HB_UCP_FILE_OPEN_FAILED = -500001,      /* a model file is missing or unreadable */
  HB_UCP_MODEL_NUMBER_EXCEED_LIMIT = -600001,
  HB_UCP_MODEL_INVALID = -600002,         /* the model file failed verification */
  HB_UCP_MODEL_IS_INUSE = -600003,        /* hbDNNRelease while tasks of its models exist */
  HB_UCP_MODEL_INCOMPATIBLE = -600004     /* the file needs a newer runtime or another BPU */
} hbUCPStatus;

/*
 * A readable description of a status code of this API: its meaning and, when the last failing
 * call on this thread returned that code, its detail (which argument, tensor or rule). Owned by
 * the library, valid until the next hbUCP / hbDNN call on the same thread; never NULL.
 */
const char *hbUCPGetErrorDesc(int32_t errorCode);

#ifdef __cplusplus
}
#endif

#endif /* OPENBPU_HOBOT_HB_UCP_STATUS_H_ */
