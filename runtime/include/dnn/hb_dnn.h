/*
 * hb_dnn.h — the OpenBPU runtime's hbDNN C API (classic Horizon Robotics X3 / X5 / Ultra form).
 *
 * Load converted models (.bin / .hbm), query their tensors, run them asynchronously. Names,
 * struct layouts, enum and macro values are those of the original runtime; see
 * docs/runtime.md for what differs and why.
 *
 * Conventions for every function:
 *  - Returns int32_t: HB_DNN_SUCCESS (0) or a negative hbDNNStatus (hb_dnn_status.h), except
 *    hbDNNGetVersion / hbDNNGetErrorDesc. hbDNNGetErrorDesc(code) right after a failure gives
 *    the detail (which argument, index, tensor or operator, and the rule).
 *  - Never throws, never aborts on bad input: null pointers, stale or foreign handles, out of
 *    range indices and mismatched tensors are reported, not dereferenced blindly.
 *  - Output parameters are written only on success.
 *  - Handles are opaque and checked against the library's live handles (a released handle is
 *    refused, not used). Task objects are reused (the one released last first, its memory
 *    being warm), so a released task handle is refused until a later hbDNNInfer hands its task
 *    out again: a handle must not be used after hbDNNReleaseTask.
 *  - Thread safety: all functions may be called from any thread. A packed handle and the model
 *    handles in it may be used by many threads at once; a task handle should be used by one
 *    thread at a time (wait / release of the same task from two threads is serialised).
 */
#ifndef OPENBPU_DNN_HB_DNN_H_
#define OPENBPU_DNN_HB_DNN_H_

#include <stdint.h>

#include "hb_dnn_status.h"
#include "hb_sys.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The structs and enums that the UCP generation's headers (hobot/dnn/hb_dnn.h) define too, under
 * the same names but other layouts, carry a "_classic" tag: a C++ program linking libdnn.a with
 * those headers then never meets this generation's types in a template of the same name (one
 * definition rule). Code uses the typedef names as before. */

#define HB_DNN_VERSION_MAJOR 1U
#define HB_DNN_VERSION_MINOR 1U
#define HB_DNN_VERSION_PATCH 0U

#define HB_DNN_TENSOR_MAX_DIMENSIONS 8

/* Limits (as the original runtime's). */
#define HB_DNN_MAX_TASK_NUM 32       /* tasks existing at once (submitted, not released) */
#define HB_DNN_MAX_SUB_TASK_NUM 255  /* sub-tasks appended to one task with `more` */

#define HB_DNN_INITIALIZE_INFER_CTRL_PARAM(param) \
  {                                               \
    (param)->bpuCoreId = HB_BPU_CORE_ANY;         \
    (param)->dspCoreId = HB_DSP_CORE_ANY;         \
    (param)->priority = HB_DNN_PRIORITY_LOWEST;   \
    (param)->more = 0;                            \
    (param)->customId = 0;                        \
    (param)->reserved1 = 0;                       \
    (param)->reserved2 = 0;                       \
  }

#define HB_DNN_INITIALIZE_RESIZE_CTRL_PARAM(param)      \
  {                                                     \
    (param)->bpuCoreId = HB_BPU_CORE_ANY;               \
    (param)->resizeType = HB_DNN_RESIZE_TYPE_BILINEAR;  \
    (param)->priority = HB_DNN_PRIORITY_LOWEST;         \
    (param)->reserved1 = 0;                             \
    (param)->reserved2 = 0;                             \
    (param)->reserved3 = 0;                             \
    (param)->reserved4 = 0;                             \
  }

typedef void *hbPackedDNNHandle_t; /* the models of one hbDNNInitializeFrom* call */
typedef void *hbDNNHandle_t;       /* one model of a packed handle */
typedef void *hbDNNTaskHandle_t;   /* one submitted inference (with its sub-tasks) */

typedef enum hbDNNDataType_classic {
  HB_DNN_IMG_TYPE_Y,
  HB_DNN_IMG_TYPE_NV12,
  HB_DNN_IMG_TYPE_NV12_SEPARATE,
  HB_DNN_IMG_TYPE_YUV444,
  HB_DNN_IMG_TYPE_RGB,
  HB_DNN_IMG_TYPE_BGR,
  HB_DNN_TENSOR_TYPE_S4,
  HB_DNN_TENSOR_TYPE_U4,
  HB_DNN_TENSOR_TYPE_S8,
  HB_DNN_TENSOR_TYPE_U8,
  HB_DNN_TENSOR_TYPE_F16,
  HB_DNN_TENSOR_TYPE_S16,
  HB_DNN_TENSOR_TYPE_U16,
  HB_DNN_TENSOR_TYPE_F32,
  HB_DNN_TENSOR_TYPE_S32,
  HB_DNN_TENSOR_TYPE_U32,
  HB_DNN_TENSOR_TYPE_F64,
  HB_DNN_TENSOR_TYPE_S64,
  HB_DNN_TENSOR_TYPE_U64,
  HB_DNN_TENSOR_TYPE_MAX
} hbDNNDataType;

typedef enum {
  HB_DNN_LAYOUT_NHWC = 0,
  HB_DNN_LAYOUT_NCHW = 2,
  HB_DNN_LAYOUT_NONE = 255
} hbDNNTensorLayout;

typedef enum hbDNNQuantiType_classic {
  NONE,  /* data is used as is */
  SHIFT, /* float = int / 2^shift (parameters in hbDNNQuantiShift) */
  SCALE  /* float = (int - zeroPoint) * scale (parameters in hbDNNQuantiScale) */
} hbDNNQuantiType;

typedef enum hbDNNTaskPriority_classic {
  HB_DNN_PRIORITY_LOWEST = 0,
  HB_DNN_PRIORITY_HIGHEST = 255,
  HB_DNN_PRIORITY_PREEMP = HB_DNN_PRIORITY_HIGHEST
} hbDNNTaskPriority;

typedef enum { HB_DNN_RESIZE_TYPE_BILINEAR = 0 } hbDNNResizeType;

/* Where a model input's data comes from (yaml compiler_parameters.input_source). */
typedef enum {
  HB_DNN_INPUT_FROM_DDR = 0,      /* a tensor in memory */
  HB_DNN_INPUT_FROM_RESIZER = 1,  /* a ROI of an NV12 / Y image of any size (hbDNNRoiInfer) */
  HB_DNN_INPUT_FROM_PYRAMID = 2   /* an NV12 / Y image of the input's size */
} hbDNNInputSource;

typedef struct hbDNNTensorShape_classic {
  int32_t dimensionSize[HB_DNN_TENSOR_MAX_DIMENSIONS];
  int32_t numDimensions;
} hbDNNTensorShape;

typedef struct {
  int32_t shiftLen;
  uint8_t *shiftData;
} hbDNNQuantiShift;

typedef struct hbDNNQuantiScale_classic {
  int32_t scaleLen;
  float *scaleData;
  int32_t zeroPointLen;
  int8_t *zeroPointData;
} hbDNNQuantiScale;

/*
 * A tensor as the model sees it. validShape is the logical shape; alignedShape the padded
 * shape the model reads / writes; stride[i] the bytes between consecutive indices of
 * dimension i of validShape (padding included; all 0 for NV12 / Y images); alignedByteSize
 * the bytes to allocate. shift / scale point into memory owned by the model handle (valid
 * until hbDNNRelease).
 */
typedef struct hbDNNTensorProperties_classic {
  hbDNNTensorShape validShape;
  hbDNNTensorShape alignedShape;
  int32_t tensorLayout;
  int32_t tensorType;
  hbDNNQuantiShift shift;
  hbDNNQuantiScale scale;
  hbDNNQuantiType quantiType;
  int32_t quantizeAxis;
  int32_t alignedByteSize;
  int32_t stride[HB_DNN_TENSOR_MAX_DIMENSIONS];
} hbDNNTensorProperties;

/* sysMem[0] holds the data (sysMem[1] the UV plane of HB_DNN_IMG_TYPE_NV12_SEPARATE). */
typedef struct hbDNNTensor_classic {
  hbSysMem sysMem[4];
  hbDNNTensorProperties properties;
} hbDNNTensor;

/* An inclusive box: x in [left, right], y in [top, bottom]. */
typedef struct hbDNNRoi_classic {
  int32_t left;
  int32_t top;
  int32_t right;
  int32_t bottom;
} hbDNNRoi;

typedef struct hbDNNInferCtrlParam_classic {
  int32_t bpuCoreId; /* hbBPUCore mask; HB_BPU_CORE_ANY lets the scheduler choose */
  int32_t dspCoreId; /* unused (no DSP) */
  int32_t priority;  /* 0..255; higher first; HB_DNN_PRIORITY_PREEMP may preempt */
  int32_t more;      /* non-zero: more sub-tasks will be appended to this task */
  int64_t customId;  /* among equal priorities, smaller first */
  int32_t reserved1;
  int32_t reserved2;
} hbDNNInferCtrlParam;

typedef struct {
  int32_t bpuCoreId;
  int32_t priority;
  hbDNNResizeType resizeType;
  int32_t reserved1;
  int32_t reserved2;
  int32_t reserved3;
  int32_t reserved4;
} hbDNNResizeCtrlParam;

/* "<major>.<minor>.<patch>_(OpenBPU <version>)": owned by the library, always valid. */
const char *hbDNNGetVersion(void);

/*
 * Loads `modelFileCount` (> 0) model files into one packed handle. Every file is read whole and
 * verified (checksum, flatbuffers Verifier, semantic checks), every BPU program decoded and
 * verified and every CPU operator prepared before the call returns; nothing is half-loaded on
 * failure. Model names must be unique across the files. The caller owns *packedDNNHandle until
 * hbDNNRelease. Errors: HB_DNN_INVALID_ARGUMENT (NULL pointers, count <= 0, duplicate model
 * names), HB_DNN_CAN_NOT_OPEN_FILE, HB_DNN_INVALID_MODEL (a check failed; the description
 * names the file and the rule), HB_DNN_INCOMPATIBLE_MODEL (format or ISA newer than this
 * runtime, or an operator this runtime cannot run), HB_DNN_MODEL_NUMBER_EXCEED_LIMIT,
 * HB_DNN_OUT_OF_MEMORY.
 */
int32_t hbDNNInitializeFromFiles(hbPackedDNNHandle_t *packedDNNHandle, const char **modelFileNames,
                                 int32_t modelFileCount);
/*
 * As hbDNNInitializeFromFiles, from `modelDataCount` buffers holding whole model files. The
 * bytes are copied: the caller may free the buffers when the call returns.
 */
int32_t hbDNNInitializeFromDDR(hbPackedDNNHandle_t *packedDNNHandle, const void **modelData,
                               int32_t *modelDataLengths, int32_t modelDataCount);
/*
 * Releases every model of a packed handle; its model handles become invalid. Refused with
 * HB_DNN_MODEL_IS_RUNNING while a task of one of its models exists (release tasks first).
 * Errors: HB_DNN_INVALID_PACKED_DNN_HANDLE.
 */
int32_t hbDNNRelease(hbPackedDNNHandle_t packedDNNHandle);
/*
 * The names of the models in a packed handle, in file order. *modelNameList is owned by the
 * handle (valid until hbDNNRelease). Errors: HB_DNN_INVALID_ARGUMENT,
 * HB_DNN_INVALID_PACKED_DNN_HANDLE.
 */
int32_t hbDNNGetModelNameList(const char ***modelNameList, int32_t *modelNameCount,
                              hbPackedDNNHandle_t packedDNNHandle);
/*
 * The handle of one model by name; valid until hbDNNRelease of its packed handle. Errors:
 * HB_DNN_INVALID_ARGUMENT (NULL, or no model of that name), HB_DNN_INVALID_PACKED_DNN_HANDLE.
 */
int32_t hbDNNGetModelHandle(hbDNNHandle_t *dnnHandle, hbPackedDNNHandle_t packedDNNHandle,
                            const char *modelName);

/* Counts, names and properties of a model's inputs and outputs. Names and the properties'
 * shift / scale arrays are owned by the model (valid until hbDNNRelease). Errors:
 * HB_DNN_INVALID_ARGUMENT (NULL, index out of range), HB_DNN_INVALID_DNN_HANDLE. */
int32_t hbDNNGetInputCount(int32_t *inputCount, hbDNNHandle_t dnnHandle);
int32_t hbDNNGetInputName(const char **name, hbDNNHandle_t dnnHandle, int32_t inputIndex);
/*
 * The source of input inputIndex (hbDNNInputSource): HB_DNN_INPUT_FROM_RESIZER inputs are fed
 * by hbDNNRoiInfer. Errors: HB_DNN_INVALID_ARGUMENT (NULL pointer, index out of range),
 * HB_DNN_INVALID_DNN_HANDLE. Thread-safe.
 */
int32_t hbDNNGetInputSource(int32_t *inputSource, hbDNNHandle_t dnnHandle, int32_t inputIndex);
int32_t hbDNNGetInputTensorProperties(hbDNNTensorProperties *properties, hbDNNHandle_t dnnHandle,
                                      int32_t inputIndex);
int32_t hbDNNGetOutputCount(int32_t *outputCount, hbDNNHandle_t dnnHandle);
int32_t hbDNNGetOutputName(const char **name, hbDNNHandle_t dnnHandle, int32_t outputIndex);
int32_t hbDNNGetOutputTensorProperties(hbDNNTensorProperties *properties, hbDNNHandle_t dnnHandle,
                                       int32_t outputIndex);

/*
 * Submits one inference of a model: input[0..inputCount) and (*output)[0..outputCount) as
 * described by hbDNNGet*TensorProperties. An input may be given with alignedShape equal to the
 * model's (data laid out by `stride`) or equal to validShape (dense; the runtime pads); its
 * tensorType must be the model's (an NV12 input may also be HB_DNN_IMG_TYPE_NV12_SEPARATE);
 * sysMem[0].memSize must cover the data. Batch models (every input with the same batch
 * N = validShape.dimensionSize[0] > 1, none NV12) also take each input as N separate tensors,
 * one batch item each (dimension 0 of validShape and alignedShape set to 1), ordered
 * input0[b0], input0[b1], ..., input1[b0], ...: input[] then holds N * inputCount tensors; the
 * runtime takes that form when input[0]'s validShape has batch 1. Outputs are written in the
 * model's layout (stride) and must be at least alignedByteSize bytes. Input and output memory
 * must stay allocated and unchanged until the task is done.
 *
 * *taskHandle must be NULL to create a task. With inferCtrlParam->more != 0 the task is held
 * back and later calls passing the same *taskHandle append sub-tasks (possibly of other
 * models); the call with more == 0 submits them all. The caller owns the task until
 * hbDNNReleaseTask. Tasks run on worker threads ordered by priority, then customId, then
 * submission; BPU segments run on the cores allowed by bpuCoreId.
 * Errors: HB_DNN_INVALID_ARGUMENT (NULL pointers, bad ctrl param values, an input/output that
 * does not match the model: type, shape, size, unknown memory), HB_DNN_INVALID_DNN_HANDLE,
 * HB_DNN_INVALID_TASK_HANDLE (a non-NULL *taskHandle that is not an open task),
 * HB_DNN_TASK_NUM_EXCEED_LIMIT, HB_DNN_TASK_BATCH_SIZE_EXCEED_LIMIT, HB_DNN_OUT_OF_MEMORY.
 */
int32_t hbDNNInfer(hbDNNTaskHandle_t *taskHandle, hbDNNTensor **output, const hbDNNTensor *input,
                   hbDNNHandle_t dnnHandle, hbDNNInferCtrlParam *inferCtrlParam);
/*
 * Inference of a model compiled with resizer inputs (input_source: resizer; see
 * hbDNNGetInputSource): for each resizer input a ROI is cut from an NV12 (or Y) image of any
 * size and resized to the input's size (bilinear, corners to corners; docs/runtime.md), then
 * the model runs as with hbDNNInfer. With R resizer inputs and roiCount = B·R (B batches):
 *   input   B · inputCount tensors; batch b's are input[b·inputCount ... (b+1)·inputCount) in
 *           input order. A resizer input's tensor is the source image: tensorType as the
 *           model's (NV12 takes NV12 or NV12_SEPARATE), validShape (1, 3 | 1, H, W) NCHW,
 *           alignedShape (1, 3 | 1, H, rowBytes) with rowBytes >= W the distance between rows
 *           (the UV rows too); memory rowBytes·H (Y) + rowBytes·H/2 (UV). Other inputs take
 *           the tensors hbDNNInfer takes.
 *   rois    batch b's are rois[b·R ... (b+1)·R), one per resizer input in input order;
 *           inclusive boxes inside the image, left/top even and right/bottom odd, each side in
 *           the march's ROI range and ROI side / input side in its scale range (bernoulli2:
 *           16..255 and (0.5, 8]; later marches 2..4096 and (0, 4]).
 *   output  *output points to outputCount tensors, each with room for B results: output i's
 *           properties as hbDNNGetOutputTensorProperties gives (batch b is written at
 *           b · alignedByteSize) and memSize >= B · alignedByteSize.
 * The ROIs are resized when the task runs. B at most HB_DNN_MAX_SUB_TASK_NUM; the task counts
 * as one. Ownership, lifetime, threads and the other errors as hbDNNInfer. Errors:
 * HB_DNN_INVALID_ARGUMENT (NULL pointers, roiCount not a positive multiple of R, a ROI or image
 * that breaks a rule above, which the message names), HB_DNN_INCOMPATIBLE_MODEL (the model has
 * no resizer input, or a batch dimension > 1).
 */
int32_t hbDNNRoiInfer(hbDNNTaskHandle_t *taskHandle, hbDNNTensor **output, const hbDNNTensor *input,
                      hbDNNRoi *rois, int32_t roiCount, hbDNNHandle_t dnnHandle,
                      hbDNNInferCtrlParam *inferCtrlParam);
/*
 * Waits until a submitted task is done: timeout > 0 waits at most that many ms
 * (HB_DNN_TIMEOUT if still running; the task continues), timeout <= 0 waits forever. Returns
 * the task's result: HB_DNN_SUCCESS, or HB_DNN_RUN_TASK_FAILED (the description names the
 * segment / operator and the error). May be called again after it returned. Errors:
 * HB_DNN_INVALID_TASK_HANDLE, HB_DNN_API_USE_ERROR (a task still open for `more`).
 */
int32_t hbDNNWaitTaskDone(hbDNNTaskHandle_t taskHandle, int32_t timeout);
/*
 * Releases a task: a task not started is cancelled; a running one stops at its next segment
 * boundary (its outputs are then undefined). The handle is invalid afterwards; the call
 * returns at once (the library frees the task when its worker lets go of it).
 * Errors: HB_DNN_INVALID_TASK_HANDLE.
 */
int32_t hbDNNReleaseTask(hbDNNTaskHandle_t taskHandle);

#ifdef __cplusplus
}
#endif

#endif /* OPENBPU_DNN_HB_DNN_H_ */
