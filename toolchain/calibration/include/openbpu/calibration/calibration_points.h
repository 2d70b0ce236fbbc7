// Which tensors of a float model get a threshold (an HzCalibration node).
//
// Activations: every float, non-constant data input of a node the quantizer will quantize, and
// the output of a quantized node that no quantized node reads (a graph output or a CPU op's
// input) unless the node accumulates (Conv, ConvTranspose, Gemm, MatMul: such a tail outputs
// int32 and needs no output threshold). Weights: the constant input 1 of a quantized Conv,
// ConvTranspose, Gemm or MatMul, per output channel.
//
// The quantizer owns the op-support table; it passes its predicate in CalibrationRules. The
// default predicate quantizes Conv/ConvTranspose/Gemm/MatMul/Add/Sub/Mul/Concat, the pools,
// Resize/Upsample, ReduceMean and the activation ops (Relu, Clip, LeakyRelu, PRelu, Sigmoid,
// Tanh, HardSigmoid, HardSwish, Elu, Selu, Softplus, Exp, Log, Sqrt, Reciprocal, Erf, Gelu, Pow).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "openbpu/ir/graph.h"

namespace openbpu::calibration {

enum class CalibrationKind { kActivation, kWeight };

struct CalibrationPoint {
  std::string tensor;  // the value's name in the float model
  CalibrationKind kind = CalibrationKind::kActivation;
  int axis = 1;  // per-channel axis: 1 for activations, the output-channel axis for weights
  // The quantized nodes this point belongs to (for the sensitivity analysis): its quantized
  // readers, and for an output point its producer. Node names, in graph order.
  std::vector<std::string> nodes;
};

struct CalibrationRules {
  // True if the quantizer will quantize this node.
  std::function<bool(const ir::Node&)> quantized_node;
  // The default table above.
  static CalibrationRules defaults();
};

// Whether the default table quantizes an op type (ai.onnx domain).
bool default_quantized_op(const std::string& op_type);

// The calibration points of a graph: activations in order of first use, then weights.
std::vector<CalibrationPoint> find_calibration_points(const ir::Graph& graph,
                                                      const CalibrationRules& rules);

}  // namespace openbpu::calibration
