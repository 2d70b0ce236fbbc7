// Averages: global and windowed average pooling, ReduceMean.
#include "../op_rules.h"
#include "families.h"

namespace openbpu::bpu_support::ops {

using namespace rules;  // NOLINT(google-build-using-namespace): the rule vocabulary

void add_reductions(std::vector<OpDef>& registry) {
  registry.push_back({.op_type = "GlobalAveragePool", .bpu_type = "HzSQuantizedGlobalAveragePool",
                      .kind = OpKind::kCompute, .quantize = QuantizeAs::kGlobalAveragePool,
                      .lower = LowerAs::kGlobalAveragePool,
                      .constraints = {rank_is("gap.rank", 4, "input must be 4-D"), dims_within_limit()}});
  registry.push_back({.op_type = "AveragePool", .bpu_type = "HzSQuantizedAveragePool", .kind = OpKind::kCompute,
                      .quantize = QuantizeAs::kAveragePool, .lower = LowerAs::kAveragePool,
                      .constraints = {rank_is("avgpool.rank", 4, "input must be 4-D"),
                                      kernel_size("avgpool.kernel", &MarchSpec::pool_kernel_max, "kernel"),
                                      strides_in_range("avgpool.stride", &MarchSpec::conv_stride_max),
                                      pads_in_range("avgpool.pads"), dims_within_limit()}});
  registry.push_back(
      {.op_type = "ReduceMean", .bpu_type = "HzSQuantizedReduceMean", .kind = OpKind::kCompute,
       .quantize = QuantizeAs::kReduceMean, .lower = LowerAs::kReduceMean,
       .constraints = {rank_between("reduce.rank", 2, 4),
                       axes_constant("reduce.axes_constant"),
                       dims_within_limit()}});
}

}  // namespace openbpu::bpu_support::ops
