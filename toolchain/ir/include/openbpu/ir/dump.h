// A readable text form of a graph, one line per node, for logs and pass tests:
//
//   graph main (%x: float32[1,3,8,8]) -> (%y) {
//     init %w: float32[4,3,3,3]
//     %c = Conv[pads=[1,1,1,1]](%x, %w)
//     %y = Relu(%c)
//   }
//
// Attributes are printed in the node's order; tensors as type and shape (and values when they
// hold at most 8 elements); omitted optional inputs/outputs as "_".
#pragma once

#include <string>

#include "openbpu/ir/graph.h"

namespace openbpu::ir {

struct DumpOptions {
  bool types = false;  // append ": type" to every node output
};

std::string dump(const Graph& graph, const DumpOptions& options = {});
std::string dump(const Model& model, const DumpOptions& options = {});
// One node: "%y = Relu(%x)".
std::string dump_node(const Node& node, const DumpOptions& options = {});

}  // namespace openbpu::ir
