// Recognising activations that the float model spells with several standard ONNX nodes, for
// the quantizer (which fuses them into one BPU operation or table) and for the passes.
//
// The optimized float model keeps standard ONNX operators of the model's opset, so it stays
// runnable by any ONNX runtime; fusing Conv with its activation happens at quantization
// (HzSQuantizedConv clip_min/clip_max), and these matchers are how it finds them.
#pragma once

#include <limits>
#include <optional>

#include "openbpu/ir/graph.h"

namespace openbpu::passes {

struct ClipBounds {
  float min = -std::numeric_limits<float>::infinity();
  float max = std::numeric_limits<float>::infinity();
  bool is_relu() const;   // [0, +inf)
  bool is_relu6() const;  // [0, 6]
};

// The bounds of a Clip node (attributes before opset 11, optional constant inputs from 11);
// nullopt if a bound is computed at run time. A bound of ±FLT_MAX reads as ±inf.
std::optional<ClipBounds> clip_bounds(const ir::Model& model, const ir::Node& clip);

// x·Sigmoid(x) (SiLU / Swish), in either operand order: the Mul node's x, else nullptr.
ir::Value* match_swish(const ir::Node& mul);

// HardSwish(x), or x·HardSigmoid(x) with alpha = 1/6 and beta = 0.5 (either order): x, else
// nullptr.
ir::Value* match_hard_swish(const ir::Node& node);

// HardSigmoid with alpha = 1/6 and beta = 0.5 (= ReLU6(x + 3) / 6).
bool is_hard_swish_sigmoid(const ir::Node& node);

}  // namespace openbpu::passes
