// Internal: the state of one quantize_model() run and the emitters of each operator family.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "openbpu/quantization/quantizer.h"
#include "openbpu/simulator/integer_arithmetic.h"

namespace openbpu::quantization::detail {

using kernels::AttributeMap;
using kernels::DataType;
using kernels::Tensor;
using simulator::FixedPointMultiplier;

// Scale and width of a quantized tensor.
struct QuantParams {
  float scale = 1.0f;
  int bits = 8;
  DataType dtype() const { return bits == 16 ? DataType::kInt16 : DataType::kInt8; }
};

class Emitter {
 public:
  Emitter(const ir::Model& source, const std::map<std::string, TensorCalibration>& calibration,
          const simulator::MarchSpec& march, const QuantizationPlan& plan);

  ir::Model take_model() { return std::move(model_); }
  const ir::Model& source() const { return source_; }
  const QuantizationPlan& plan() const { return plan_; }
  const simulator::MarchSpec& march() const { return march_; }
  ir::Graph& graph() { return *model_.graph; }

  // Quantization parameters of a quantized source tensor (follows inherited scales).
  QuantParams params(const ir::Value* v) const;
  // Per-output-channel weight thresholds (calibration, or the constant's abs max).
  std::vector<float> weight_thresholds(const ir::Value* w, int axis) const;

  // The new graph's float / integer version of a source tensor, emitting Dequantize / Quantize
  // (or copying a constant) on first use.
  ir::Value* float_value(const ir::Value* v);
  // float_value under the source tensor's own name (a subgraph of a CPU control-flow node reads
  // it by name): the integer version, which had that name, steps aside.
  ir::Value* float_value_named(const ir::Value* v);
  ir::Value* int_value(const ir::Value* v);
  // A constant of the new graph (unique name derived from `base`).
  ir::Value* add_constant(const std::string& base, Tensor data);
  // Records the integer / float version of a source tensor produced by an emitted node.
  void set_int_value(const ir::Value* v, ir::Value* nv) { int_values_[v] = nv; }
  const std::map<const ir::Value*, ir::Value*>& int_values() const { return int_values_; }
  // The real scales of an emitted integer tensor (int32 tails: per channel).
  QuantizedTensor describe_int(const ir::Value* source, const ir::Value* nv);
  void set_float_value(const ir::Value* v, ir::Value* nv) { float_values_[v] = nv; }
  bool has_int_value(const ir::Value* v) const { return int_values_.count(v) != 0; }
  // An int32 accumulator output: its real scale per channel along `axis`.
  void set_int32_scales(const ir::Value* nv, std::vector<float> scales, int64_t axis) {
    int32_scales_[nv] = {std::move(scales), axis};
  }

  // Name for the integer tensor that stands for source tensor v.
  std::string int_name(const ir::Value* v);
  // Adds a node to the new graph; output values are created with the given names and types.
  ir::Node* add_node(const std::string& op, const std::string& domain, const std::string& name,
                     std::vector<ir::Value*> inputs, std::vector<std::string> outputs,
                     AttributeMap attrs);

  // Per-node reports, filled as nodes are emitted.
  std::map<const ir::Node*, NodeReport>& reports() { return reports_; }

 private:
  const ir::Model& source_;
  const std::map<std::string, TensorCalibration>& calibration_;
  const simulator::MarchSpec& march_;
  const QuantizationPlan& plan_;
  ir::Model model_;
  std::map<const ir::Value*, ir::Value*> float_values_;
  std::map<const ir::Value*, ir::Value*> int_values_;
  std::map<const ir::Node*, NodeReport> reports_;
  std::map<const ir::Value*, std::pair<std::vector<float>, int64_t>> int32_scales_;
};

// Emitters (each returns after adding the node(s) for `node` and recording its outputs).
void emit_cpu_node(Emitter& e, const ir::Node& node);
// A BPU node by its registry row; a fusion anchor with its group.
void emit_bpu_node(Emitter& e, const ir::Node& node, const bpu_support::OpDef& def, const Fusion* fusion);
// kMove and kConcat (which requantizes its inputs to the output's scale).
void emit_passive(Emitter& e, const ir::Node& node, bool requantize_inputs);
void emit_accumulating_anchor(Emitter& e, const ir::Node& node, const bpu_support::OpDef& def, const Fusion& fusion);
void emit_elementwise(Emitter& e, const ir::Node& node, const bpu_support::OpDef& def, const Fusion& fusion);
void emit_compare(Emitter& e, const ir::Node& node, const bpu_support::OpDef& def);  // Equal, Greater, Less
void emit_where(Emitter& e, const ir::Node& node);
void emit_lut(Emitter& e, const ir::Node& node);
// kGlobalAveragePool, kAveragePool, kReduceMean.
void emit_pool_or_reduce(Emitter& e, const ir::Node& node, const bpu_support::OpDef& def);
void emit_argmax(Emitter& e, const ir::Node& node, const bpu_support::OpDef& def);  // ArgMax, ArgMin
void emit_softmax(Emitter& e, const ir::Node& node);
void emit_resize(Emitter& e, const ir::Node& node);
void emit_matmul(Emitter& e, const ir::Node& node);

// Helpers shared by the emitters.
std::vector<int64_t> ints_of(const FixedPointMultiplier& m);
std::string type_name(DataType t);
// Activation clamp bounds of a fused Relu / Clip in the output's quantized domain.
void set_clamp(AttributeMap& attrs, const ir::Node* activation, const QuantParams& out,
               const ir::Model& source);

}  // namespace openbpu::quantization::detail
