// Elementwise arithmetic of two featuremaps (or a featuremap and a constant) with broadcasting.
#include "../op_rules.h"
#include "families.h"

namespace openbpu::bpu_support::ops {

using namespace rules;  // NOLINT(google-build-using-namespace): the rule vocabulary
using simulator::isa::ElementwiseOp;

void add_elementwise(std::vector<OpDef>& registry) {
  for (auto [op, type, instruction] : {std::tuple{"Add", "HzSElementwiseAdd", ElementwiseOp::kAdd},
                                       std::tuple{"Sub", "HzSElementwiseSub", ElementwiseOp::kSub},
                                       std::tuple{"Mul", "HzSElementwiseMul", ElementwiseOp::kMul}}) {
    registry.push_back({.op_type = op, .bpu_type = type, .kind = OpKind::kCompute,
                        .quantize = QuantizeAs::kElementwise, .lower = LowerAs::kElementwise,
                        .constraints = {rank_between("elementwise.rank", 1, 5, 2), no_batch_broadcast(),
                                        at_most_one_constant(), dims_within_limit()},
                        .note = "elementwise with broadcasting; Add after a Conv fuses into it",
                        .elementwise = instruction});
  }
}

}  // namespace openbpu::bpu_support::ops
