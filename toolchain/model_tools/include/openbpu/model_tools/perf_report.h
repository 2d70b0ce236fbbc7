// The static performance report of BPU subgraphs, one definition for makertbin (which writes
// <model>_subgraph_<i>.json / .html beside the model) and hb_perf (which reads a model file):
// the timing model's estimate of each program under the reference's summary keys, with a row
// per instruction when the instructions' ONNX nodes are known (compiler_parameters.debug).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "openbpu/simulator/march.h"
#include "openbpu/simulator/program.h"
#include "openbpu/simulator/timing.h"

namespace openbpu::model_tools {

struct SubgraphPerf {
  std::string name;  // <model>_subgraph_<i>
  simulator::ProgramEstimate estimate;
  uint64_t weight_bytes = 0;
  uint64_t activation_bytes = 0;  // device memory past the weights
  uint32_t function_calls = 0;
  size_t instructions = 0;
  std::vector<std::pair<std::string, uint64_t>> input_features;  // tensor name, bytes
  std::vector<std::string> instruction_nodes;  // per instruction ("" none); empty: no layer rows
};

// Estimates `program` (decoded; its weights blob has weight_bytes) on `cores` cores of `march`.
// input_names: the tensors bound to program.inputs, in order.
SubgraphPerf subgraph_perf(const std::string& name, const simulator::Program& program,
                           uint64_t weight_bytes, const std::vector<std::string>& input_names,
                           std::vector<std::string> instruction_nodes,
                           const simulator::MarchSpec& march, int cores);

// {"summary": {...}, "layer details": [...]}; `options`: the compiling options as a command line.
nlohmann::ordered_json subgraph_json(const SubgraphPerf& s, const simulator::MarchSpec& march,
                                     int cores, const std::string& options);

// A static page of one subgraph's JSON: the summary table, then the layer rows if any.
std::string subgraph_html(const nlohmann::ordered_json& j);

// Text for HTML.
std::string html_escape(const std::string& s);

}  // namespace openbpu::model_tools
