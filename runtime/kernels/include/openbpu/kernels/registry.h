// The table of operator kernels. Adding an operator: write its kernel in the family's source
// file under runtime/kernels/src/ops/, add its KernelDef to that file's register function, and
// a test; nothing else changes.
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "openbpu/kernels/kernel.h"

namespace openbpu::kernels {

// All kernels, sorted by (domain, op_type).
std::span<const KernelDef> all_kernels();
// The kernel for (domain, op_type), or nullptr. domain "" and "ai.onnx" are the same domain.
const KernelDef* find_kernel(std::string_view domain, std::string_view op_type);
// Validates the node's attributes against the def and prepares a kernel. Throws KernelError
// (unknown operator, opset older than the kernel supports, bad attribute).
std::unique_ptr<Kernel> create_kernel(const NodeInfo& node);

}  // namespace openbpu::kernels
