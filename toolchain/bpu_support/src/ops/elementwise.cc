// Elementwise arithmetic of two featuremaps (or a featuremap and a constant) with broadcasting.
#include "../op_rules.h"
#include "families.h"

namespace openbpu::bpu_support::ops {

using namespace rules;  // NOLINT(google-build-using-namespace): the rule vocabulary
using simulator::isa::ElementwiseOp;

void add_elementwise(std::vector<OpDef>& registry) {
  auto row = [&](std::string_view op, std::string_view type, ElementwiseOp instruction, std::vector<Constraint> extra,
                 std::string_view note) {
    std::vector<Constraint> constraints = std::move(extra);
    for (Constraint c : {rank_between("elementwise.rank", 1, 5, 2), no_batch_broadcast(), at_most_one_constant(),
                         dims_within_limit()}) {
      constraints.push_back(std::move(c));
    }
    registry.push_back({.op_type = op, .bpu_type = type, .kind = OpKind::kCompute,
                        .quantize = QuantizeAs::kElementwise, .lower = LowerAs::kElementwise,
                        .constraints = std::move(constraints), .note = note, .elementwise = instruction});
  };
  for (auto [op, type, instruction] : {std::tuple{"Add", "HzSElementwiseAdd", ElementwiseOp::kAdd},
                                       std::tuple{"Sub", "HzSElementwiseSub", ElementwiseOp::kSub},
                                       std::tuple{"Mul", "HzSElementwiseMul", ElementwiseOp::kMul}}) {
    row(op, type, instruction, {}, "elementwise with broadcasting; Add after a Conv fuses into it");
  }
  // Max and Min take one or more inputs in ONNX; the BPU compares two, each rescaled to the
  // output's scale (ISA version 4).
  const Constraint two_inputs{"minmax.inputs", [](const MarchSpec&) { return std::string("must have two inputs"); },
                              [](const Node& n, const MarchSpec&) { return n.inputs().size() == 2; }};
  row("Max", "HzSElementwiseMax", ElementwiseOp::kMax, {two_inputs}, "elementwise maximum of two inputs");
  row("Min", "HzSElementwiseMin", ElementwiseOp::kMin, {two_inputs}, "elementwise minimum of two inputs");

  // Comparisons (ISA version 6) write an int8 mask (1 true, 0 false) that a Where on the BPU
  // reads as it is; a CPU reader gets it back as bool. On the CPU unless run_on_bpu names them,
  // as in the reference: near a threshold the quantized operands may compare otherwise.
  const Constraint float_operands{"compare.float", [](const MarchSpec&) { return std::string("inputs must be float tensors"); },
                                  [](const Node& n, const MarchSpec&) {
                                    for (const ir::Value* v : n.inputs()) {
                                      const kernels::DataType t = v == nullptr ? kernels::DataType::kUndefined : v->type().dtype;
                                      if (t != kernels::DataType::kUndefined && !kernels::dtype_is_float(t)) return false;
                                    }
                                    return true;
                                  }};
  for (auto [op, type, instruction] : {std::tuple{"Equal", "HzSElementwiseEqual", ElementwiseOp::kEqual},
                                       std::tuple{"Greater", "HzSElementwiseGreater", ElementwiseOp::kGreater},
                                       std::tuple{"Less", "HzSElementwiseLess", ElementwiseOp::kLess}}) {
    registry.push_back({.op_type = op, .bpu_type = type, .kind = OpKind::kCompute, .quantize = QuantizeAs::kCompare,
                        .lower = LowerAs::kElementwise,
                        .constraints = {float_operands, rank_between("elementwise.rank", 1, 5, 2), no_batch_broadcast(),
                                        at_most_one_constant(), dims_within_limit()},
                        .note = "an int8 mask; CPU unless run_on_bpu", .cpu_by_default = true,
                        .elementwise = instruction});
  }
  // Where: the mask (a BPU comparison's, a constant, or a CPU bool made int8) picks between the
  // operands, each rescaled to the output's scale. With one constant operand the output has the
  // other's scale, so an infinite or huge fill (attention masks: -inf, -1e9) stands in as the
  // lowest or highest value of that scale instead of stretching it.
  const Constraint where_values{"where.values", [](const MarchSpec&) { return std::string("X and Y must be float tensors"); },
                                [](const Node& n, const MarchSpec&) {
                                  for (size_t i = 1; i < 3; ++i) {
                                    const ir::Value* v = n.input(i);
                                    const kernels::DataType t = v == nullptr ? kernels::DataType::kUndefined : v->type().dtype;
                                    if (t != kernels::DataType::kUndefined && !kernels::dtype_is_float(t)) return false;
                                  }
                                  return true;
                                }};
  registry.push_back({.op_type = "Where", .bpu_type = "HzSWhere", .kind = OpKind::kCompute, .quantize = QuantizeAs::kSelect,
                      .lower = LowerAs::kSelect,
                      .constraints = {where_values, rank_between("where.rank", 1, 5, 3), dims_within_limit()},
                      .note = "a mask selects; a constant fill takes the other operand's scale"});
}

}  // namespace openbpu::bpu_support::ops
