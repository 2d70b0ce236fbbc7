// The config keys that change a model's interface:
// - output_nodes (before stage 1): the named nodes' outputs (or named tensors) become *all* the
//   model's outputs, in the order given; nodes that no longer reach an output are removed.
// - remove_node_type / remove_node_name (on the quantized model): nodes at the model's edges
//   are taken out, so the model's inputs/outputs become what those nodes read/produced (e.g.
//   without the output Dequantize the model outputs the integers). A node is at an edge when it
//   has one non-constant input and one output and either its output is a graph output that no
//   node reads, or its input is a graph input that only it reads.
#pragma once

#include <string>
#include <vector>

#include "openbpu/config/compile_config.h"
#include "openbpu/ir/graph.h"

namespace openbpu::pipeline {

// Applies output_nodes; returns one log line per output. Error for a name that is neither a
// node nor a tensor of the graph.
std::vector<std::string> apply_output_nodes(ir::Model& model, const std::vector<std::string>& names);

// Removes edge nodes of the given types (each type in turn, repeatedly, so chains at an edge go
// one after another) and then the named nodes (each must be at an edge when its turn comes:
// Error naming the node otherwise). Returns one log line per removed node.
std::vector<std::string> remove_edge_nodes(ir::Model& model, const std::vector<config::RemovableNodeType>& types,
                                           const std::vector<std::string>& names);

}  // namespace openbpu::pipeline
