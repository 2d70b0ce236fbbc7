// Shape and type inference over the IR: libonnx's inference first, then our own rules for
// operators libonnx 1.12 does not know (custom domains, revisions from opsets 18 and 19).
#pragma once

#include "openbpu/ir/graph.h"

namespace openbpu::frontend {

// Fills in the types of values that are unknown; never throws for an op it cannot infer
// (the value keeps an unknown type). Inferred values are marked annotated. libonnx and our
// rules alternate until nothing changes, so types flow through operators libonnx does not
// know (e.g. horizon-domain ones). With `recompute`, the types of all intermediate values are
// first forgotten (after a graph input's shape changed, e.g. input_shape from the config).
void infer_shapes(ir::Model& model, bool recompute = false);

// Our own rules only (used after libonnx's pass and directly in tests): returns how many
// values got a type.
int apply_own_shape_rules(const ir::Model& model, ir::Graph& graph);

}  // namespace openbpu::frontend
