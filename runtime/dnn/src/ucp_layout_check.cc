// Compile-time proof that ucp_types.h mirrors the public UCP-generation headers exactly (this
// file includes only those): struct sizes and field offsets, enum and macro values.
#include <cstddef>

#include "hobot/dnn/hb_dnn.h"
#include "hobot/dnn/hb_dnn_v1.h"
#include "hobot/hb_ucp.h"
#include "ucp_types.h"

namespace openbpu::dnn::ucp {

// Values of two enums (or an enum and a macro) compared as integers.
template <typename A, typename B>
constexpr bool eq(A a, B b) {
  return static_cast<int64_t>(a) == static_cast<int64_t>(b);
}

#define OPENBPU_SAME_LAYOUT(Public, Mirror) static_assert(sizeof(Public) == sizeof(Mirror) && alignof(Public) == alignof(Mirror))
#define OPENBPU_SAME_FIELD(Public, Mirror, field) static_assert(offsetof(Public, field) == offsetof(Mirror, field))

OPENBPU_SAME_LAYOUT(hbUCPSysMem, SysMem);
OPENBPU_SAME_FIELD(hbUCPSysMem, SysMem, phyAddr);
OPENBPU_SAME_FIELD(hbUCPSysMem, SysMem, virAddr);
OPENBPU_SAME_FIELD(hbUCPSysMem, SysMem, memSize);
OPENBPU_SAME_LAYOUT(hbDNNTensorShape, TensorShape);
OPENBPU_SAME_FIELD(hbDNNTensorShape, TensorShape, numDimensions);
OPENBPU_SAME_LAYOUT(hbDNNQuantiScale, QuantiScale);
OPENBPU_SAME_FIELD(hbDNNQuantiScale, QuantiScale, scaleData);
OPENBPU_SAME_FIELD(hbDNNQuantiScale, QuantiScale, zeroPointLen);
OPENBPU_SAME_FIELD(hbDNNQuantiScale, QuantiScale, zeroPointData);
OPENBPU_SAME_LAYOUT(hbDNNTensorProperties, TensorProperties);
OPENBPU_SAME_FIELD(hbDNNTensorProperties, TensorProperties, tensorType);
OPENBPU_SAME_FIELD(hbDNNTensorProperties, TensorProperties, scale);
OPENBPU_SAME_FIELD(hbDNNTensorProperties, TensorProperties, quantiType);
OPENBPU_SAME_FIELD(hbDNNTensorProperties, TensorProperties, quantizeAxis);
OPENBPU_SAME_FIELD(hbDNNTensorProperties, TensorProperties, alignedByteSize);
OPENBPU_SAME_FIELD(hbDNNTensorProperties, TensorProperties, stride);
OPENBPU_SAME_LAYOUT(hbDNNTensor, Tensor);
OPENBPU_SAME_FIELD(hbDNNTensor, Tensor, properties);
OPENBPU_SAME_LAYOUT(hbUCPSchedParam, SchedParam);
OPENBPU_SAME_FIELD(hbUCPSchedParam, SchedParam, customId);
OPENBPU_SAME_FIELD(hbUCPSchedParam, SchedParam, backend);
OPENBPU_SAME_FIELD(hbUCPSchedParam, SchedParam, deviceId);
OPENBPU_SAME_LAYOUT(hbDNNRoi, Roi);
OPENBPU_SAME_LAYOUT(hbDNNQuantiType, QuantiType);
OPENBPU_SAME_LAYOUT(hbDNNInferCtrlParam, InferCtrlParam);
OPENBPU_SAME_FIELD(hbDNNInferCtrlParam, InferCtrlParam, priority);
OPENBPU_SAME_FIELD(hbDNNInferCtrlParam, InferCtrlParam, more);
OPENBPU_SAME_FIELD(hbDNNInferCtrlParam, InferCtrlParam, customId);

static_assert(HB_DNN_TENSOR_MAX_DIMENSIONS == kMaxDimensions);
static_assert(HB_UCP_BPU_CORE_ANY == kBpuCoreAny);
static_assert((HB_UCP_BPU_CORE_0 | HB_UCP_BPU_CORE_1 | HB_UCP_BPU_CORE_2 | HB_UCP_BPU_CORE_3) == kBpuCoreBits);
static_assert(HB_SYS_MEM_CACHE_INVALIDATE == kFlushInvalidate && HB_SYS_MEM_CACHE_CLEAN == kFlushClean);
static_assert(eq(HB_DNN_TENSOR_TYPE_S4, kS4) && eq(HB_DNN_TENSOR_TYPE_U8, kU8) && eq(HB_DNN_TENSOR_TYPE_F32, kF32) &&
              eq(HB_DNN_TENSOR_TYPE_BOOL8, kBool8));
static_assert(eq(NONE, kNone) && eq(SCALE, kScale));
static_assert(eq(HB_DNN_DESC_TYPE_UNKNOWN, kDescUnknown) && eq(HB_DNN_DESC_TYPE_STRING, kDescString));
static_assert(eq(HB_UCP_SUCCESS, kSuccess) && eq(HB_UCP_INVALID_ARGUMENT, kInvalidArgument) &&
              eq(HB_UCP_API_USE_ERROR, kApiUseError) && eq(HB_UCP_UNKNOWN_ERROR, kUnknownError) &&
              eq(HB_UCP_TASK_NUMBER_EXCEED_LIMIT, kTaskNumberExceedLimit) && eq(HB_UCP_TASK_TIMEOUT, kTaskTimeout) &&
              eq(HB_UCP_TASK_RUN_FAILED, kTaskRunFailed) && eq(HB_UCP_TASK_HANDLE_INVALID, kTaskHandleInvalid) &&
              eq(HB_UCP_OP_CMD_UNAVAILABLE, kOpCmdUnavailable) && eq(HB_UCP_MEM_ALLOC_FAIL, kMemAllocFail) &&
              eq(HB_UCP_MEM_IS_INVALID, kMemIsInvalid) && eq(HB_UCP_FILE_OPEN_FAILED, kFileOpenFailed) &&
              eq(HB_UCP_MODEL_NUMBER_EXCEED_LIMIT, kModelNumberExceedLimit) && eq(HB_UCP_MODEL_INVALID, kModelInvalid) &&
              eq(HB_UCP_MODEL_IS_INUSE, kModelIsInUse) && eq(HB_UCP_MODEL_INCOMPATIBLE, kModelIncompatible));

}  // namespace openbpu::dnn::ucp
