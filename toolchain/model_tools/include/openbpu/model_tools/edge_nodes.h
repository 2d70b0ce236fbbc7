// hb_model_modifier's rules: which CPU operators at a model's edges may be removed, and their
// removal. A removed node's step is left to the caller: the model then takes (or gives) the
// tensor on the node's other side, with that tensor's properties (e.g. int8 with its scale
// after an output Dequantize), and the node is recorded in the model's deleted_nodes with its
// attributes, which hb_model_info prints.
#pragma once

#include <string>
#include <vector>

#include "openbpu/format/model_file.h"

namespace openbpu::model_tools {

struct EdgeNode {
  std::string name;
  std::string op_type;
  bool at_input = false;  // reads a model input; else writes a model output
};

// The op types the reference lets hb_model_modifier remove, per side.
bool removable_at_input(const std::string& op_type);  // Quantize, Transpose
bool removable_at_output(
    const std::string& op_type);  // Transpose, Dequantize, Cast, Reshape, Softmax

// The nodes removable now, in execution order: a CPU operator of a removable type with one data
// input (the others constants) and one output, that either reads a model input nothing else
// reads and writes an intermediate, or reads an intermediate and writes a model output.
std::vector<EdgeNode> removable_nodes(const format::ModelInfo& model);

// Removes `name` (one of removable_nodes()); raises naming the node and the rule it breaks
// otherwise. The other side's tensor takes the model input's / output's place and index.
format::DeletedNodeInfo remove_edge_node(format::ModelInfo& model, const std::string& name);

}  // namespace openbpu::model_tools
