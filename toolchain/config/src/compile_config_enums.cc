// The yaml spelling of every enum value of compile_config.h.
#include "openbpu/config/compile_config.h"
#include "spelling.h"

namespace openbpu::config {

#define OPENBPU_ENUM_SPELLINGS(E, ...)                             \
  template <>                                                      \
  std::span<const EnumSpelling<E>> enum_spellings<E>() {           \
    static constexpr EnumSpelling<E> kSpellings[] = {__VA_ARGS__}; \
    return kSpellings;                                             \
  }                                                                \
  template std::optional<E> parse_enum<E>(std::string_view text);

template <typename E>
std::optional<E> parse_enum(std::string_view text) {
  for (const auto& s : enum_spellings<E>()) {
    if (equals_ignoring_case(s.name, text)) return s.value;
  }
  return std::nullopt;
}

OPENBPU_ENUM_SPELLINGS(ConfigFlavour, {ConfigFlavour::kHbMapper, "hb_mapper"},
                       {ConfigFlavour::kHbCompile, "hb_compile"})
OPENBPU_ENUM_SPELLINGS(ModelType, {ModelType::kOnnx, "onnx"}, {ModelType::kCaffe, "caffe"})
OPENBPU_ENUM_SPELLINGS(March, {March::kBernoulli2, "bernoulli2"}, {March::kBayes, "bayes"},
                       {March::kBayesE, "bayes-e"}, {March::kNashE, "nash-e"},
                       {March::kNashM, "nash-m"})
OPENBPU_ENUM_SPELLINGS(InputType, {InputType::kRgb, "rgb"}, {InputType::kBgr, "bgr"},
                       {InputType::kYuv444, "yuv444"}, {InputType::kNv12, "nv12"},
                       {InputType::kGray, "gray"}, {InputType::kFeaturemap, "featuremap"})
OPENBPU_ENUM_SPELLINGS(Layout, {Layout::kNchw, "NCHW"}, {Layout::kNhwc, "NHWC"})
OPENBPU_ENUM_SPELLINGS(InputSpaceAndRange, {InputSpaceAndRange::kRegular, "regular"},
                       {InputSpaceAndRange::kBt601Video, "bt601_video"})
OPENBPU_ENUM_SPELLINGS(NormType, {NormType::kNoPreprocess, "no_preprocess"},
                       {NormType::kDataMean, "data_mean"}, {NormType::kDataScale, "data_scale"},
                       {NormType::kDataMeanAndScale, "data_mean_and_scale"})
OPENBPU_ENUM_SPELLINGS(CalDataType, {CalDataType::kFloat32, "float32"},
                       {CalDataType::kUint8, "uint8"})
OPENBPU_ENUM_SPELLINGS(CalibrationType, {CalibrationType::kDefault, "default"},
                       {CalibrationType::kMix, "mix"}, {CalibrationType::kKl, "kl"},
                       {CalibrationType::kMax, "max"}, {CalibrationType::kLoad, "load"},
                       {CalibrationType::kSkip, "skip"})
OPENBPU_ENUM_SPELLINGS(CompileMode, {CompileMode::kLatency, "latency"},
                       {CompileMode::kBandwidth, "bandwidth"}, {CompileMode::kBalance, "balance"})
OPENBPU_ENUM_SPELLINGS(OptimizeLevel, {OptimizeLevel::kO0, "O0"}, {OptimizeLevel::kO1, "O1"},
                       {OptimizeLevel::kO2, "O2"}, {OptimizeLevel::kO3, "O3"})
OPENBPU_ENUM_SPELLINGS(InputSource, {InputSource::kDdr, "ddr"}, {InputSource::kPyramid, "pyramid"},
                       {InputSource::kResizer, "resizer"})
OPENBPU_ENUM_SPELLINGS(ExecutionUnit, {ExecutionUnit::kBpu, "BPU"}, {ExecutionUnit::kCpu, "CPU"})
OPENBPU_ENUM_SPELLINGS(QuantDataType, {QuantDataType::kInt8, "int8"},
                       {QuantDataType::kInt16, "int16"}, {QuantDataType::kFloat16, "float16"},
                       {QuantDataType::kFloat32, "float32"})
OPENBPU_ENUM_SPELLINGS(RemovableNodeType, {RemovableNodeType::kQuantize, "Quantize"},
                       {RemovableNodeType::kTranspose, "Transpose"},
                       {RemovableNodeType::kDequantize, "Dequantize"},
                       {RemovableNodeType::kCast, "Cast"}, {RemovableNodeType::kReshape, "Reshape"},
                       {RemovableNodeType::kSoftmax, "Softmax"})
OPENBPU_ENUM_SPELLINGS(DebugMode, {DebugMode::kDumpCalibrationData, "dump_calibration_data"})
OPENBPU_ENUM_SPELLINGS(LogLevel, {LogLevel::kDebug, "debug"}, {LogLevel::kInfo, "info"},
                       {LogLevel::kWarning, "warning"}, {LogLevel::kError, "error"})
OPENBPU_ENUM_SPELLINGS(CustomOpMethod, {CustomOpMethod::kRegister, "register"})

#undef OPENBPU_ENUM_SPELLINGS

std::vector<March> marches_of(ConfigFlavour flavour) {
  std::vector<March> out;
  for (const simulator::MarchSpec& m : simulator::all_marches()) {
    if (m.hbm_generation == (flavour == ConfigFlavour::kHbCompile)) out.push_back(m.march);
  }
  return out;
}

}  // namespace openbpu::config
