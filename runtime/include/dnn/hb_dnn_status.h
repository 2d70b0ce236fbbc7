/*
 * hb_dnn_status.h — status codes of the OpenBPU runtime's hbDNN C API.
 *
 * Names and numeric values are those of the classic Horizon Robotics runtime (X3 / X5 /
 * Ultra), so applications written against it compile and compare codes unchanged. Every
 * function of hb_dnn.h and hb_sys.h returns one of these (0 on success, negative on error).
 */
#ifndef OPENBPU_DNN_HB_DNN_STATUS_H_
#define OPENBPU_DNN_HB_DNN_STATUS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hbDNNStatus_classic {
  HB_DNN_SUCCESS = 0,
  HB_DNN_INVALID_ARGUMENT = -6000001,           /* a null pointer, index or value out of range */
  HB_DNN_INVALID_MODEL = -6000002,              /* the model file failed verification */
  HB_DNN_MODEL_NUMBER_EXCEED_LIMIT = -6000003,  /* too many models loaded */
  HB_DNN_INVALID_PACKED_DNN_HANDLE = -6000004,  /* not a live hbPackedDNNHandle_t */
  HB_DNN_INVALID_DNN_HANDLE = -6000005,         /* not a live hbDNNHandle_t */
  HB_DNN_CAN_NOT_OPEN_FILE = -6000006,          /* a model file is missing or unreadable */
  HB_DNN_OUT_OF_MEMORY = -6000007,              /* an allocation failed */
  HB_DNN_TIMEOUT = -6000008,                    /* hbDNNWaitTaskDone gave up waiting */
  HB_DNN_TASK_NUM_EXCEED_LIMIT = -6000009,      /* more unreleased tasks than the limit */
  HB_DNN_TASK_BATCH_SIZE_EXCEED_LIMIT = -6000010, /* more sub-tasks in one task than the limit */
  HB_DNN_INVALID_TASK_HANDLE = -6000011,        /* not a live hbDNNTaskHandle_t */
  HB_DNN_RUN_TASK_FAILED = -6000012,            /* an operator or BPU program failed */
  HB_DNN_MODEL_IS_RUNNING = -6000013,           /* hbDNNRelease while tasks of it exist */
  HB_DNN_INCOMPATIBLE_MODEL = -6000014,         /* the file needs a newer runtime / other BPU */
  HB_DNN_API_USE_ERROR = -6000015,              /* calls in a wrong order (e.g. wait twice) */
  HB_DNN_MULTI_PROGRESS_USE_ERROR = -6000016    /* multi-process misuse */
} hbDNNStatus;

typedef enum {
  HB_SYS_SUCCESS = 0,
  HB_SYS_INVALID_ARGUMENT = -6000129, /* null pointer, zero size, unknown or freed memory */
  HB_SYS_OUT_OF_MEMORY = -6000130,    /* the allocation failed */
  HB_SYS_REGISTER_MEM_FAILED = -6000131
} hbSysStatus;

/*
 * A readable description of a status code: the code's meaning followed, when the last failing
 * call on this thread returned that code, by its detail ("hbDNNGetInputTensorProperties: input
 * index 3 is out of range [0, 1)"). The string is owned by the library and stays valid until the
 * next hbDNN / hbSys call on the same thread. Never returns NULL; unknown codes get
 * "unknown status <code>". Thread-safe.
 */
const char *hbDNNGetErrorDesc(int32_t errorCode);

#ifdef __cplusplus
}
#endif

#endif /* OPENBPU_DNN_HB_DNN_STATUS_H_ */
