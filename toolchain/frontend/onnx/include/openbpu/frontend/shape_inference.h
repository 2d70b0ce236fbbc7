// Shape and type inference over the IR: libonnx's inference first, then our own rules for
// operators libonnx 1.12 does not know (custom domains, revisions from opsets 18 and 19).
#pragma once

#include "openbpu/ir/graph.h"

namespace openbpu::frontend {

// Fills in the types of values that are unknown; never throws for an op it cannot infer
// (the value keeps an unknown type). Inferred values are marked annotated.
void infer_shapes(ir::Model& model);

// Our own rules only (used after libonnx's pass and directly in tests): returns how many
// values got a type.
int apply_own_shape_rules(const ir::Model& model, ir::Graph& graph);

}  // namespace openbpu::frontend
