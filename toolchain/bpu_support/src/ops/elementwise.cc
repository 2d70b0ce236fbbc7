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
}

}  // namespace openbpu::bpu_support::ops
