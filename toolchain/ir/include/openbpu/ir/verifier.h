// Graph health checks, run after loading and after every toolchain stage.
#pragma once

#include <string>
#include <vector>

#include "openbpu/ir/graph.h"

namespace openbpu::ir {

// Every broken invariant, one message each naming the node/value and the rule:
//  - an input that is neither produced, a graph input, a constant nor an outer-scope value
//    (dangling), or that is produced by a node later in the order;
//  - a cycle;
//  - two nodes with the same non-empty name; a graph input that is also produced by a node;
//  - a graph output that is not defined;
//  - use lists that disagree with node inputs;
//  - type mismatches: a constant whose data disagrees with its declared type, inputs that an
//    operator requires to share one element type but do not (e.g. Add(float, int64));
//  - a value whose static shape needs more than base::kMaxTensorBytes (2 GiB), so that no
//    stage allocates it (a graph input of 2^40 elements is refused when the model loads).
std::vector<std::string> verify(const Graph& graph);
// Throws Error listing the problems (prefixed by `context`, e.g. the file name) if any.
void verify_or_throw(const Graph& graph, const std::string& context);

}  // namespace openbpu::ir
