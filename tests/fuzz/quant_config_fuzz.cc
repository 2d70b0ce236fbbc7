// Fuzz target: quant_config JSON (hb_compile), as hb_compile reads it: a json file named by
// calibration_parameters.quant_config in an otherwise valid config, then resolved against a
// small model (node_config names are checked there).
#include <cstdint>
#include <string_view>
#include <string>

#include "fuzz_support.h"
#include "openbpu/config/compile_config.h"
#include "openbpu/ir/parse.h"

namespace {

const char kConfig[] = R"(model_parameters:
  onnx_model: 'model.onnx'
  march: 'nash-e'
  output_model_file_prefix: 'model'
input_parameters:
  input_type_train: 'rgb'
  input_type_rt: 'rgb'
  input_layout_train: 'NCHW'
  norm_type: 'no_preprocess'
calibration_parameters:
  cal_data_dir: 'calibration_data'
  quant_config: 'input.json'
compiler_parameters:
  optimize_level: 'O2'
)";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace openbpu::config;
  static openbpu::fuzz::ScratchFile scratch;
  static const openbpu::ir::Model model = openbpu::ir::parse_model(openbpu::fuzz::kConfigTestModel);
  const std::string json_path = scratch.write(std::string_view(reinterpret_cast<const char*>(data), size), "json");
  const std::string origin = json_path.substr(0, json_path.rfind('/')) + "/config.yaml";
  try {
    CompileConfig config = parse_compile_config(kConfig, origin, ConfigFlavour::kHbCompile, ModelType::kOnnx);
    openbpu::fuzz::require(config.calibration.quant_config.has_value(), "quant_config",
                           "a config that parsed has no quant_config");
    resolve_against_model(config, model);
    (void)dump_config(config);
  } catch (...) {
    openbpu::fuzz::reject_or_abort("quant_config");
  }
  return 0;
}
