// The quantization plan: decided on the optimized float model, before calibration, so that the
// calibrated model fake-quantizes exactly the tensors the quantized model stores as integers.
//
// - Placement: the partitioner's BPU/CPU decision per node.
// - Fusion: a BPU anchor (Conv, ConvTranspose, Gemm, MatMul with a constant right-hand side,
//   HzPreprocess, Add/Sub/Mul) absorbs a following residual Add (Conv only: Conv → Add whose
//   other input is quantized) and a following Relu / Clip with constant bounds, when the anchor's
//   output has that single reader on the BPU. The fused intermediate tensors never exist.
// - Quantized tensors: every non-constant input of a BPU node and every output of a BPU node
//   or fusion group. A tensor is calibrated (gets an HzCalibration node) unless it inherits its
//   scale: outputs of passive single-input operators (Reshape, Transpose, MaxPool, Slice, ...)
//   and of Resize have their input's scale, a Where with one constant operand its other's. A
//   comparison's mask (bool) is int8 0/1 at scale 1, uncalibrated. The int32 indices of an
//   ArgMax on the BPU are not a quantized tensor (no scale, no threshold).
// - int32 tails: an accumulating anchor (Conv, ConvTranspose, Gemm, MatMul-constant) whose
//   output only CPU nodes or graph outputs read, with no activation or a ReLU, outputs int32
//   (scale input_scale·weight_scale per channel) unless set_model_output_int8/int16 asks
//   otherwise; such an output needs no threshold.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "openbpu/bpu_support/partitioner.h"

namespace openbpu::quantization {

enum class Role {
  kCpu,              // float node on the CPU
  kBpu,              // a BPU node that is emitted (anchor or standalone)
  kFusedActivation,  // Relu/Clip absorbed by its anchor
  kFusedResidual,    // Add absorbed by its Conv anchor
};

struct Fusion {
  const ir::Node* residual_add = nullptr;  // Add fused into a Conv
  const ir::Value* residual = nullptr;     // the Add's other input
  const ir::Node* activation = nullptr;    // Relu / Clip fused at the end
  const ir::Value* output = nullptr;       // the group's output tensor
  bool int32_output = false;
};

struct PlanOptions {
  bpu_support::PlacementOverrides overrides;
  // set_model_output_int8 / int16: model-tail anchors output int8 / int16 instead of int32.
  int model_output_bits = 32;
};

struct CalibrationTarget {
  std::string tensor;
  bool weight = false;  // per output channel along `axis`
  int axis = 1;
  std::vector<std::string> nodes;  // the BPU nodes it belongs to (readers, or the producer)
};

struct QuantizationPlan {
  bpu_support::Partition partition;
  std::map<const ir::Node*, Role> roles;
  std::map<const ir::Node*, Fusion> fusions;  // by anchor
  std::set<const ir::Value*> quantized;       // tensors stored as integers
  std::map<const ir::Value*, const ir::Value*> inherits_scale;  // output → input
  std::vector<CalibrationTarget> calibration;  // activations (graph order), then weights

  Role role(const ir::Node* node) const;
  bool is_quantized(const ir::Value* v) const { return quantized.count(v) != 0; }
};

// True for operators whose output has the input's scale (they move or select values).
bool inherits_input_scale(const ir::Node& node);

QuantizationPlan plan_quantization(const ir::Graph& graph, const simulator::MarchSpec& march,
                                   const PlanOptions& options = {});

}  // namespace openbpu::quantization
