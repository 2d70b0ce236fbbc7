// Fuzz target: the conversion config reader (yaml), both flavours: the first byte picks
// hb_mapper or hb_compile and onnx or caffe, the rest is the yaml text. A config that parses
// then goes where the tools take it: fixed inputs bound and names and shapes resolved against
// a small model (input 'x' [1,3,8,8]), and the "Dump config:" text of the log.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "openbpu/config/compile_config.h"
#include "openbpu/ir/parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace openbpu::config;
  static openbpu::fuzz::ScratchFile scratch;
  static const std::string origin = scratch.write("", "yaml");  // relative quant_config paths
  static const openbpu::ir::Model model = openbpu::ir::parse_model(openbpu::fuzz::kConfigTestModel);
  openbpu::fuzz::InputReader in(data, size);
  const uint8_t mode = in.byte();
  const ConfigFlavour flavour = mode & 1 ? ConfigFlavour::kHbCompile : ConfigFlavour::kHbMapper;
  const ModelType model_type = mode & 2 ? ModelType::kCaffe : ModelType::kOnnx;
  try {
    CompileConfig config = parse_compile_config(std::string(in.rest()), origin, flavour, model_type);
    (void)dump_config(config);
    openbpu::ir::Model bound = model;
    (void)bind_fixed_inputs(config, bound);
    resolve_against_model(config, bound);
    (void)dump_config(config);
  } catch (...) {
    openbpu::fuzz::reject_or_abort("config_yaml");
  }
  return 0;
}
