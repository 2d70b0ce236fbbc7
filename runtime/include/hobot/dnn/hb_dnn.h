/*
 * hobot/dnn/hb_dnn.h — the hbDNN API of the UCP generation (J6 / S100 form): load .hbm / .bin
 * models, describe them, and make inference tasks that hobot/hb_ucp.h submits and waits for.
 *
 * One runtime serves both API generations: the same loader, scheduler, BPU driver and CPU
 * executor as the classic dnn/hb_dnn.h. The functions this header shares by name with the
 * classic one are bound to their UCP-generation definitions (asm labels, GCC and Clang), which
 * take this header's structs and return hbUCPStatus codes; a program includes one
 * generation's headers. docs/runtime_ucp.md has a complete example.
 *
 * Conventions, as hobot/hb_ucp.h: HB_DNN_SUCCESS (0) or a negative status
 * (hobot/dnn/hb_dnn_status.h); never throws; handles are checked against the live ones; output
 * parameters are written only on success; all functions may be called from any thread.
 *
 * Tensors: a model's NV12 input appears as two inputs, its Y plane (1,H,W,1) named
 * "<input>_y" and its UV plane (1,H/2,W/2,2) named "<input>_uv", both U8, whose strides the
 * caller fills in (reported as -1: stride[1], the bytes between rows, is at least the row's
 * bytes and a multiple of 32; alignedByteSize -1 too). Every other input and output has fixed
 * strides. An input's stride may be the model's (data laid out as the model wants it) or the
 * dense strides of validShape (the runtime pads); tensorType must be the model's.
 */
#ifndef OPENBPU_HOBOT_DNN_HB_DNN_H_
#define OPENBPU_HOBOT_DNN_HB_DNN_H_

#include <stdint.h>

#include "../hb_ucp.h"
#include "../hb_ucp_sys.h"
#include "hb_dnn_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The UCP-generation definition of a function whose name the classic API also has. */
#define HB_DNN_UCP_SYMBOL(name) __asm__(#name "_ucp")

#define HB_DNN_TENSOR_MAX_DIMENSIONS 8
#define HB_DNN_MAX_SUB_TASK_NUM 255 /* sub-tasks in one task */
#define HB_DNN_MAX_TASK_NUM 32      /* tasks existing at once (not released), both generations */

typedef void *hbDNNPackedHandle_t; /* the models of one hbDNNInitializeFrom* call */
typedef void *hbDNNHandle_t;       /* one model of a packed handle */

typedef enum {
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
  HB_DNN_TENSOR_TYPE_BOOL8,
  HB_DNN_TENSOR_TYPE_MAX
} hbDNNDataType;

typedef struct hbDNNTensorShape {
  int32_t dimensionSize[HB_DNN_TENSOR_MAX_DIMENSIONS];
  int32_t numDimensions;
} hbDNNTensorShape;

/* float = (int - zeroPoint[i]) * scale[i] (zeroPointLen 0: int * scale[i]); i runs along
 * quantizeAxis when scaleLen > 1. */
typedef struct hbDNNQuantiScale {
  int32_t scaleLen;
  float *scaleData;
  int32_t zeroPointLen;
  int32_t *zeroPointData;
} hbDNNQuantiScale;

typedef enum {
  NONE, /* data is used as is */
  SCALE /* parameters in hbDNNQuantiScale */
} hbDNNQuantiType;

/* validShape: the logical shape; stride[i]: bytes between consecutive indices of dimension i
 * (-1: the caller sets it); alignedByteSize: the bytes to allocate (-1 with dynamic strides).
 * scale points into memory owned by the model handle (valid until hbDNNRelease). */
typedef struct hbDNNTensorProperties {
  hbDNNTensorShape validShape;
  int32_t tensorType;
  hbDNNQuantiScale scale;
  hbDNNQuantiType quantiType;
  int32_t quantizeAxis;
  int64_t alignedByteSize;
  int64_t stride[HB_DNN_TENSOR_MAX_DIMENSIONS];
} hbDNNTensorProperties;

typedef struct hbDNNTensor {
  hbUCPSysMem sysMem;
  hbDNNTensorProperties properties;
} hbDNNTensor;

/* An inclusive box: x in [left, right], y in [top, bottom]. */
typedef struct hbDNNRoi {
  int32_t left;
  int32_t top;
  int32_t right;
  int32_t bottom;
} hbDNNRoi;

typedef enum {
  HB_DNN_DESC_TYPE_UNKNOWN = 0, /* no description: *desc is "" and *size 0 */
  HB_DNN_DESC_TYPE_STRING       /* a NUL-terminated JSON object of *size bytes (NUL excluded) */
} hbDNNDescType;

/* "<major>.<minor>.<patch>_(OpenBPU <version>)"; owned by the library, always valid. */
const char *hbDNNGetVersion(void);

/*
 * Loads model files (read whole and verified; nothing is half-loaded on failure) into one packed
 * handle the caller owns until hbDNNRelease; from memory, the bytes are copied. Model names
 * must be unique. Errors: HB_DNN_INVALID_ARGUMENT, HB_DNN_CAN_NOT_OPEN_FILE,
 * HB_DNN_INVALID_MODEL, HB_DNN_INCOMPATIBLE_MODEL, HB_DNN_MODEL_NUMBER_EXCEED_LIMIT,
 * HB_DNN_OUT_OF_MEMORY.
 */
int32_t hbDNNInitializeFromFiles(hbDNNPackedHandle_t *dnnPackedHandle, char const **modelFileNames,
                                 int32_t modelFileCount) HB_DNN_UCP_SYMBOL(hbDNNInitializeFromFiles);
int32_t hbDNNInitializeFromDDR(hbDNNPackedHandle_t *dnnPackedHandle, const void **modelData, int32_t *modelDataLengths,
                               int32_t modelDataCount) HB_DNN_UCP_SYMBOL(hbDNNInitializeFromDDR);
/* Releases the models of a packed handle. Errors: HB_DNN_INVALID_PACKED_DNN_HANDLE,
 * HB_DNN_MODEL_IS_RUNNING (a task of one of its models is not released). */
int32_t hbDNNRelease(hbDNNPackedHandle_t dnnPackedHandle) HB_DNN_UCP_SYMBOL(hbDNNRelease);
/* Model names in file order, owned by the handle (valid until hbDNNRelease). */
int32_t hbDNNGetModelNameList(char const ***modelNameList, int32_t *modelNameCount,
                              hbDNNPackedHandle_t dnnPackedHandle) HB_DNN_UCP_SYMBOL(hbDNNGetModelNameList);
/* A model's handle by name, valid until hbDNNRelease of its packed handle. */
int32_t hbDNNGetModelHandle(hbDNNHandle_t *dnnHandle, hbDNNPackedHandle_t dnnPackedHandle,
                            char const *modelName) HB_DNN_UCP_SYMBOL(hbDNNGetModelHandle);

/* Counts, names and properties of a model's inputs and outputs (NV12 inputs as two, see
 * above); names and scale arrays are owned by the model. Errors: HB_DNN_INVALID_ARGUMENT (NULL,
 * index out of range), HB_DNN_INVALID_DNN_HANDLE. */
int32_t hbDNNGetInputCount(int32_t *inputCount, hbDNNHandle_t dnnHandle) HB_DNN_UCP_SYMBOL(hbDNNGetInputCount);
int32_t hbDNNGetInputName(char const **name, hbDNNHandle_t dnnHandle, int32_t inputIndex)
    HB_DNN_UCP_SYMBOL(hbDNNGetInputName);
int32_t hbDNNGetInputTensorProperties(hbDNNTensorProperties *properties, hbDNNHandle_t dnnHandle, int32_t inputIndex)
    HB_DNN_UCP_SYMBOL(hbDNNGetInputTensorProperties);
int32_t hbDNNGetOutputCount(int32_t *outputCount, hbDNNHandle_t dnnHandle) HB_DNN_UCP_SYMBOL(hbDNNGetOutputCount);
int32_t hbDNNGetOutputName(char const **name, hbDNNHandle_t dnnHandle, int32_t outputIndex)
    HB_DNN_UCP_SYMBOL(hbDNNGetOutputName);
int32_t hbDNNGetOutputTensorProperties(hbDNNTensorProperties *properties, hbDNNHandle_t dnnHandle, int32_t outputIndex)
    HB_DNN_UCP_SYMBOL(hbDNNGetOutputTensorProperties);

/*
 * Descriptions, owned by the handle (valid until hbDNNRelease). The model's is the JSON build
 * description (keys BUILDER_VERSION, HBDK_VERSION, HMCT_VERSION, MARCH, ONNX_MODEL, INPUT_NAMES,
 * INPUT_TYPE_RT, INPUT_TYPE_TRAIN, INPUT_LAYOUT_TRAIN, NORM_TYPE, MEAN_VALUE, SCALE_VALUE,
 * INPUT_SHAPE, INPUT_SOURCE, CALI_TYPE, OPTIMIZE_LEVEL, COMPILE_MODE, CORE_NUM, ...; per-input
 * values joined by ';' in input order) made from the parameters hb_compile / hb_mapper recorded
 * in the file; an input's holds that input's values; outputs have none
 * (HB_DNN_DESC_TYPE_UNKNOWN). hbDNNGetHBMDesc describes file `index` of the packed handle
 * (TOOLCHAIN, TOOLCHAIN_VERSION, FORMAT_VERSION, MODELS). Errors: HB_DNN_INVALID_ARGUMENT,
 * HB_DNN_INVALID_DNN_HANDLE / HB_DNN_INVALID_PACKED_DNN_HANDLE.
 */
int32_t hbDNNGetModelDesc(char const **desc, uint32_t *size, int32_t *type, hbDNNHandle_t dnnHandle);
int32_t hbDNNGetInputDesc(char const **desc, uint32_t *size, int32_t *type, hbDNNHandle_t dnnHandle, int32_t inputIndex);
int32_t hbDNNGetOutputDesc(char const **desc, uint32_t *size, int32_t *type, hbDNNHandle_t dnnHandle,
                           int32_t outputIndex);
int32_t hbDNNGetHBMDesc(char const **desc, uint32_t *size, int32_t *type, hbDNNPackedHandle_t dnnPackedHandle,
                        int32_t index);
/* The BPU cores the model was compiled for (compiler_parameters.core_num). */
int32_t hbDNNGetCompileBpuCoreNum(int32_t *bpuCoreNum, hbDNNHandle_t dnnHandle);

/*
 * One inference of a model: input[0..inputCount) and output[0..outputCount) as the properties
 * describe (see above); sysMem must be live memory of hbUCPMalloc(Cached) covering the data
 * and stay so, unchanged, until the task is done.
 *   *taskHandle == NULL: makes a task (the caller owns it until hbUCPReleaseTask), not yet
 *     submitted; non-NULL: appends a sub-task to that task, which must not be submitted yet
 *     (sub-tasks may be of other models; they run in order).
 *   taskHandle == NULL: runs synchronously with HB_UCP_INITIALIZE_SCHED_PARAM's parameters and
 *     returns when the outputs are written (the task's result).
 * Errors: HB_DNN_INVALID_ARGUMENT (NULL pointers; a tensor that does not match the model: type,
 * shape, stride, memory — the message names it), HB_DNN_INVALID_DNN_HANDLE,
 * HB_DNN_INVALID_TASK_HANDLE (not a live task, or already submitted),
 * HB_DNN_TASK_NUM_EXCEED_LIMIT, HB_DNN_OUT_OF_MEMORY; synchronous: also the task's result.
 */
int32_t hbDNNInferV2(hbUCPTaskHandle_t *taskHandle, hbDNNTensor *output, hbDNNTensor const *input,
                     hbDNNHandle_t dnnHandle);
/*
 * Inference of a model with resizer inputs (input_source: resizer): for each of its R resizer
 * inputs a ROI of an NV12 image of any size, given as its Y and UV tensors (validShape
 * (1,h,w,1) and (1,h/2,w/2,2), stride[1] the bytes between rows), is resized to the input's
 * size. roiCount = B·R for B batches: input holds B sets of the model's inputs, rois B sets of
 * R boxes (rules as the classic hbDNNRoiInfer: docs/runtime.md), and each output room for B
 * results (batch b at b · alignedByteSize). Tasks as hbDNNInferV2. Errors: as hbDNNInferV2;
 * HB_DNN_INCOMPATIBLE_MODEL (no resizer input).
 */
int32_t hbDNNRoiInferV2(hbUCPTaskHandle_t *taskHandle, hbDNNTensor *output, hbDNNTensor const *input, hbDNNRoi *rois,
                        int32_t roiCount, hbDNNHandle_t dnnHandle);
/*
 * The properties of output outputIndex of sub-task subTaskIndex of a task (the model's: this
 * runtime's outputs have static shapes). Errors: HB_DNN_INVALID_ARGUMENT (NULL, index out of
 * range), HB_DNN_INVALID_TASK_HANDLE.
 */
int32_t hbDNNGetTaskOutputTensorProperties(hbDNNTensorProperties *properties, hbUCPTaskHandle_t taskHandle,
                                           int32_t subTaskIndex, int32_t outputIndex);

#ifdef __cplusplus
}
#endif

#endif /* OPENBPU_HOBOT_DNN_HB_DNN_H_ */
