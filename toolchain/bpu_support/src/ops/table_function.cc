// Elementwise functions by lookup table (HzLut): int8 has 256 entries, int16 256 linear
// segments. Relu and Clip fuse into a preceding anchor as its output clamp.
#include "../op_rules.h"
#include "families.h"

namespace openbpu::bpu_support::ops {

using namespace rules;  // NOLINT(google-build-using-namespace): the rule vocabulary

void add_table_functions(std::vector<OpDef>& registry) {
  auto table = [&](std::string_view op, std::vector<Constraint> constraints, std::string_view note,
                   FusedActivation activation = FusedActivation::kNone) {
    registry.push_back({.op_type = op, .bpu_type = "HzLut", .kind = OpKind::kLut, .quantize = QuantizeAs::kTable,
                        .lower = LowerAs::kLut, .constraints = std::move(constraints), .note = note,
                        .activation = activation});
  };
  for (const char* op : {"Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Exp", "Log", "Erf", "Sqrt",
                         "Reciprocal", "Softplus", "Softsign", "Elu", "Selu", "Celu", "LeakyRelu",
                         "ThresholdedRelu", "Abs", "Neg", "Sin", "Cos", "Atan", "Mish", "Ceil", "Floor",
                         "Round", "Sign"}) {
    table(op, {rank_between("lut.rank", 1, 5), dims_within_limit()},
          "table lookup (int8: 256 entries; int16: 256 linear segments)");
  }
  table("Pow", {input_constant("pow.exponent", 1, "the exponent"), dims_within_limit()}, "constant exponent only");
  // ReLU and Clip fuse into the producing anchor (clamp attributes); alone they are a table.
  table("Relu", {dims_within_limit()}, "fuses into the producing Conv", FusedActivation::kRelu);
  table("Clip", {input_constant("clip.min", 1, "min"), input_constant("clip.max", 2, "max"), dims_within_limit()},
        "fuses into the producing Conv (ReLU6)", FusedActivation::kClip);
}

}  // namespace openbpu::bpu_support::ops
