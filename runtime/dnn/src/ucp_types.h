// The UCP-generation C API's types and constants (hobot/hb_ucp*.h, hobot/dnn/hb_dnn.h) as the
// library's own code sees them. The public headers cannot be included beside the classic ones
// (same names, other layouts), so the entry points (api_ucp.cc) use these mirrors;
// ucp_layout_check.cc proves at compile time that every layout and value equals the public
// header's.
#pragma once

#include <cstdint>

namespace openbpu::dnn::ucp {

enum Status : int32_t {
  kSuccess = 0,
  kInvalidArgument = -100001,
  kApiUseError = -100002,
  kUnknownError = -100004,
  kTaskNumberExceedLimit = -200001,
  kTaskTimeout = -200002,
  kTaskRunFailed = -200003,
  kTaskHandleInvalid = -200004,
  kOpCmdUnavailable = -300003,
  kMemAllocFail = -400001,
  kMemIsInvalid = -400005,
  kFileOpenFailed = -500001,
  kModelNumberExceedLimit = -600001,
  kModelInvalid = -600002,
  kModelIsInUse = -600003,
  kModelIncompatible = -600004,
};

constexpr int kMaxDimensions = 8;
constexpr uint64_t kBpuCoreAny = 1ULL << 7;
constexpr uint64_t kBpuCoreBits = 0xFULL;  // HB_UCP_BPU_CORE_0..3
constexpr int32_t kFlushInvalidate = 1, kFlushClean = 2;

// hbDNNDataType of the UCP generation: the classic enum without its six image types.
enum DataType : int32_t { kS4, kU4, kS8, kU8, kF16, kS16, kU16, kF32, kS32, kU32, kF64, kS64, kU64, kBool8 };
constexpr int32_t kClassicTypeOffset = 6;  // classic HB_DNN_TENSOR_TYPE_S4 - kS4
enum QuantiType : int32_t { kNone = 0, kScale = 1 };
enum DescType : int32_t { kDescUnknown = 0, kDescString = 1 };

struct SysMem {
  uint64_t phyAddr;
  void* virAddr;
  uint64_t memSize;
};

struct TensorShape {
  int32_t dimensionSize[kMaxDimensions];
  int32_t numDimensions;
};

struct QuantiScale {
  int32_t scaleLen;
  float* scaleData;
  int32_t zeroPointLen;
  int32_t* zeroPointData;
};

struct TensorProperties {
  TensorShape validShape;
  int32_t tensorType;
  QuantiScale scale;
  QuantiType quantiType;
  int32_t quantizeAxis;
  int64_t alignedByteSize;
  int64_t stride[kMaxDimensions];
};

struct Tensor {
  SysMem sysMem;
  TensorProperties properties;
};

struct SchedParam {
  int32_t priority;
  int64_t customId;
  uint64_t backend;
  uint32_t deviceId;
};

struct Roi {
  int32_t left, top, right, bottom;
};

using TaskDoneCb = void (*)(void* task, int32_t status, void* userdata);

// hobot/dnn/hb_dnn_v1.h's hbDNNInferCtrlParam.
struct InferCtrlParam {
  int32_t bpuCoreId;
  int32_t dspCoreId;
  int32_t priority;
  int32_t more;
  int64_t customId;
  int32_t reserved1;
  int32_t reserved2;
};

}  // namespace openbpu::dnn::ucp
