// hb_perf's picture of a model: its inputs, BPU segments (with their estimated latency), CPU
// operators and outputs, joined by the tensors between them, laid out and drawn by Graphviz
// (libgvc, the dot layout).
#pragma once

#include <string>
#include <vector>

#include "openbpu/format/model_file.h"

namespace openbpu::model_tools {

// The graph in Graphviz's dot language. segment_latency_us: per entry of model.segments (BPU
// segments' estimates; ignored for CPU segments).
std::string model_graph_dot(const format::ModelInfo& model,
                            const std::vector<double>& segment_latency_us);

// The graph drawn by Graphviz in `format` ("png", "svg"); raises if Graphviz cannot.
std::string render_dot(const std::string& dot, const std::string& format);

}  // namespace openbpu::model_tools
