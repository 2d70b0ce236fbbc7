// The inverse of dump(): builds a graph from its text form, so that pass tests read as
// "this graph in, that graph out" (MLIR/IREE lit style).
//
//   model opsets=[ai.onnx:13]                      (optional first line; default ai.onnx:17)
//   graph g (%x: float32[1,3,8,8]) -> (%y) {
//     init %w: float32[4,3,3,3]                    (values: deterministic pseudo-random)
//     init %b: float32[4]{0.5,1,2,-1}               (explicit values)
//     init %v: float32[4] uniform(0.5, 2)           (pseudo-random in [0.5, 2))
//     %c: float32[1,4,8,8] = Conv[pads=[1,1,1,1]](%x, %w, %b)
//     %y = Relu(%c)
//   }
//
// Everything dump() prints is accepted: "ir_version=" on the model line, typed outputs
// ("%c: float32[...]", DumpOptions::types), domains ("horizon::HzLut"), omitted inputs/outputs
// ("_"), attributes (ints, floats, strings, lists, tensors). A number's attribute kind comes
// from the operator's kernel definition when the kernel library knows the operator (so
// "min=0" is a float for Clip), else from its spelling ("1" int, "1.0" float). Pseudo-random
// constants depend only on the constant's name, so two parses of one text are identical.
// Subgraph attributes are not supported. Errors are openbpu::Error naming the line.
#pragma once

#include <string_view>

#include "openbpu/ir/graph.h"

namespace openbpu::ir {

Model parse_model(std::string_view text);

}  // namespace openbpu::ir
