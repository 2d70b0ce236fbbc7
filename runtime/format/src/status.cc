#include <string>

#include "internal.h"
#include "openbpu/format/model_file.h"

namespace openbpu::format {

const char* status_code_name(StatusCode code) noexcept {
  switch (code) {
#define OPENBPU_FORMAT_CASE(name) \
  case StatusCode::name: return #name;
    OPENBPU_FORMAT_CASE(kOk)
    OPENBPU_FORMAT_CASE(kCannotOpenFile)
    OPENBPU_FORMAT_CASE(kReadFailed)
    OPENBPU_FORMAT_CASE(kWriteFailed)
    OPENBPU_FORMAT_CASE(kOutOfMemory)
    OPENBPU_FORMAT_CASE(kInternalError)
    OPENBPU_FORMAT_CASE(kFileTooSmall)
    OPENBPU_FORMAT_CASE(kMisalignedBuffer)
    OPENBPU_FORMAT_CASE(kBadFooterMagic)
    OPENBPU_FORMAT_CASE(kSizeMismatch)
    OPENBPU_FORMAT_CASE(kChecksumMismatch)
    OPENBPU_FORMAT_CASE(kBadFileIdentifier)
    OPENBPU_FORMAT_CASE(kPackageTooLarge)
    OPENBPU_FORMAT_CASE(kUnsupportedFormatVersion)
    OPENBPU_FORMAT_CASE(kInvalidFlatbuffer)
    OPENBPU_FORMAT_CASE(kNoModels)
    OPENBPU_FORMAT_CASE(kMissingName)
    OPENBPU_FORMAT_CASE(kDuplicateModelName)
    OPENBPU_FORMAT_CASE(kMissingMarch)
    OPENBPU_FORMAT_CASE(kNoModelInputs)
    OPENBPU_FORMAT_CASE(kNoModelOutputs)
    OPENBPU_FORMAT_CASE(kNoSegments)
    OPENBPU_FORMAT_CASE(kDuplicateSegmentName)
    OPENBPU_FORMAT_CASE(kDuplicateTensorName)
    OPENBPU_FORMAT_CASE(kBadEnumValue)
    OPENBPU_FORMAT_CASE(kRankMismatch)
    OPENBPU_FORMAT_CASE(kRankTooLarge)
    OPENBPU_FORMAT_CASE(kNegativeDimension)
    OPENBPU_FORMAT_CASE(kValidExceedsAligned)
    OPENBPU_FORMAT_CASE(kAlignedByteSizeMismatch)
    OPENBPU_FORMAT_CASE(kStrideRankMismatch)
    OPENBPU_FORMAT_CASE(kStrideOutOfBounds)
    OPENBPU_FORMAT_CASE(kQuantiTypeMismatch)
    OPENBPU_FORMAT_CASE(kQuantParamLength)
    OPENBPU_FORMAT_CASE(kQuantizeAxisOutOfRange)
    OPENBPU_FORMAT_CASE(kBadScale)
    OPENBPU_FORMAT_CASE(kTensorTooLarge)
    OPENBPU_FORMAT_CASE(kMissingSegmentBody)
    OPENBPU_FORMAT_CASE(kUnknownSegmentKind)
    OPENBPU_FORMAT_CASE(kEmptyBpuProgram)
    OPENBPU_FORMAT_CASE(kEmptyCpuSegment)
    OPENBPU_FORMAT_CASE(kNoOutputs)
    OPENBPU_FORMAT_CASE(kTensorRefKindNotAllowed)
    OPENBPU_FORMAT_CASE(kTensorRefOutOfRange)
    OPENBPU_FORMAT_CASE(kTensorWrittenTwice)
    OPENBPU_FORMAT_CASE(kTensorReadBeforeWritten)
    OPENBPU_FORMAT_CASE(kModelOutputNotWritten)
    OPENBPU_FORMAT_CASE(kMisalignedData)
    OPENBPU_FORMAT_CASE(kBadConstantType)
    OPENBPU_FORMAT_CASE(kConstantSizeMismatch)
    OPENBPU_FORMAT_CASE(kAttributeMismatch)
    OPENBPU_FORMAT_CASE(kDuplicateAttributeName)
    OPENBPU_FORMAT_CASE(kDebugEntryOutOfRange)
    OPENBPU_FORMAT_CASE(kGraphTooDeep)
#undef OPENBPU_FORMAT_CASE
  }
  return "unknown";
}

std::string format_version_string(uint32_t format_version) {
  return std::to_string(format_version / 1000) + "." + std::to_string(format_version % 1000);
}

uint32_t element_bits(TensorType type) noexcept {
  switch (type) {
    case TensorType::TENSOR_TYPE_S4:
    case TensorType::TENSOR_TYPE_U4:
    case TensorType::IMG_TYPE_NV12:
    case TensorType::IMG_TYPE_NV12_SEPARATE: return 4;
    case TensorType::IMG_TYPE_Y:
    case TensorType::IMG_TYPE_YUV444:
    case TensorType::IMG_TYPE_RGB:
    case TensorType::IMG_TYPE_BGR:
    case TensorType::TENSOR_TYPE_S8:
    case TensorType::TENSOR_TYPE_U8: return 8;
    case TensorType::TENSOR_TYPE_F16:
    case TensorType::TENSOR_TYPE_S16:
    case TensorType::TENSOR_TYPE_U16: return 16;
    case TensorType::TENSOR_TYPE_F32:
    case TensorType::TENSOR_TYPE_S32:
    case TensorType::TENSOR_TYPE_U32: return 32;
    case TensorType::TENSOR_TYPE_F64:
    case TensorType::TENSOR_TYPE_S64:
    case TensorType::TENSOR_TYPE_U64: return 64;
  }
  return 0;
}

}  // namespace openbpu::format
