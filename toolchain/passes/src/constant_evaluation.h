// Evaluating an operator on constant tensors with the shared kernel library (design invariant
// 2: folding computes exactly what the executor would).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "openbpu/ir/graph.h"
#include "openbpu/kernels/attributes.h"
#include "openbpu/kernels/tensor.h"

namespace openbpu::passes {

// The node's outputs (one per listed output; empty tensors for omitted ones), computed from
// `inputs` (nullptr for omitted inputs). nullopt if the kernel library has no kernel for the
// node or the kernel rejects it; every tensor returned owns fresh storage.
std::optional<std::vector<kernels::Tensor>> evaluate_node(
    const ir::Model& model, const ir::Node& node,
    const std::vector<const kernels::Tensor*>& inputs);

// A single-output ai.onnx operator on constants, e.g. Mul of two constants.
std::optional<kernels::Tensor> evaluate_op(std::string_view op_type,
                                           const kernels::AttributeMap& attrs, int64_t opset,
                                           const std::vector<const kernels::Tensor*>& inputs);

}  // namespace openbpu::passes
