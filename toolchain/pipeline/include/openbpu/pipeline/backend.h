// Stage 5 of a conversion, the backend: compile the BPU segments of the quantized model for the
// march (toolchain/compiler), estimate each with the virtual BPU's timing model, write
// <prefix>_subgraph_<i>.json / .html to working_dir, and the model file (<prefix>.bin from
// hb_mapper, <prefix>.hbm from hb_compile: the same flatbuffer format), logging the lines users
// of the original know ("Compile submodel: ...", "FPS=..., latency = ... us, DDR = ... bytes",
// the model deps info block, "Convert to runtime bin file successfully!").
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "openbpu/compiler/compiler.h"
#include "openbpu/config/compile_config.h"
#include "openbpu/kernels/tensor.h"
#include "openbpu/pipeline/log.h"
#include "openbpu/simulator/march.h"
#include "openbpu/simulator/timing.h"

namespace openbpu::pipeline {

// The compiler options a config asks for.
compiler::CompileOptions compile_options(const config::CompileConfig& cfg, const simulator::MarchSpec& march);

struct SubgraphReport {
  std::string name;  // <prefix>_subgraph_<i>
  compiler::CompiledSegment segment;
  simulator::ProgramEstimate estimate;
};

struct BackendResult {
  std::filesystem::path model_file;
  std::vector<SubgraphReport> subgraphs;
};

// Runs stage 5 on `quantized` with `feeds` (one sample of the quantized model's inputs, used to
// learn every tensor's shape). Throws Error naming the node or file on failure; the model file
// is written atomically, after everything else succeeded.
BackendResult compile_model_file(const config::CompileConfig& cfg, const compiler::CompileOptions& options,
                                 const ir::Model& quantized,
                                 const std::map<std::string, kernels::Tensor>& feeds,
                                 const std::filesystem::path& dir, const std::string& prefix, Log& log,
                                 int threads);

}  // namespace openbpu::pipeline
