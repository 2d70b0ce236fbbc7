// Stage 4: the calibrated model → the quantized model (docs/quantized_ops.md).
//
// strip_calibration() takes the HzCalibration nodes out of a calibrated model and returns their
// thresholds by tensor name; the remaining graph is the optimized float model again. Then
// quantize_model() re-plans (plan.h) and emits the quantized model: BPU groups become
// horizon-domain integer operators, passive operators run on integers, CPU nodes stay float,
// and Quantize / Dequantize nodes sit on every CPU↔BPU edge. The integer parameters come from
// the one arithmetic definition (simulator/integer_arithmetic.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "openbpu/ir/graph.h"
#include "openbpu/quantization/plan.h"

namespace openbpu::quantization {

struct TensorCalibration {
  std::vector<float> thresholds;  // one, or one per channel along `axis`
  int bits = 8;
  int axis = 1;
  bool weight = false;
  bool enabled = true;
  std::string method;
};

// Removes the HzCalibration nodes of `model` (reconnecting their readers to the calibrated
// tensor, and restoring graph output names) and returns their settings by tensor name.
std::map<std::string, TensorCalibration> strip_calibration(ir::Model& model);

struct QuantizeOptions {
  PlanOptions plan;
};

// What happened to one node of the float model (for the node table and the log).
struct NodeReport {
  std::string node;           // float model node name
  std::string op_type;
  bpu_support::Unit unit = bpu_support::Unit::kCpu;
  int subgraph = -1;
  std::string bpu_type;       // e.g. HzSQuantizedConv; op type on the CPU
  std::string input_tensor;   // first data input (for the threshold column)
  std::string output_tensor;  // the tensor the node's result lives in (group output if fused)
  float input_threshold = -1;
  std::string in_type;        // "int8", "int16", "float", ...
  std::string out_type;
  std::string cpu_reason;
};

// Where a float-model tensor lives as an integer in the quantized model.
struct QuantizedTensor {
  std::string name;           // the integer tensor's name in the quantized model
  std::vector<float> scales;  // one, or one per channel along `axis` (int32 tails)
  int64_t axis = 1;
};

struct QuantizeResult {
  ir::Model model;
  std::vector<NodeReport> nodes;  // float model order
  // Float-model tensor name → its integer version (for per-node comparisons).
  std::map<std::string, QuantizedTensor> tensors;
};

// `float_model` is the stripped calibrated model (it must outlive nothing: the result owns its
// graph). Throws Error naming the node for anything the quantizer cannot express.
QuantizeResult quantize_model(const ir::Model& float_model,
                              const std::map<std::string, TensorCalibration>& calibration,
                              const simulator::MarchSpec& march, const QuantizeOptions& options = {});

}  // namespace openbpu::quantization
