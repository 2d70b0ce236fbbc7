// Resize and Upsample of H and W: the output keeps the input's scale.
#include "../op_rules.h"
#include "families.h"

namespace openbpu::bpu_support::ops {

using namespace rules;  // NOLINT(google-build-using-namespace): the rule vocabulary

void add_resizes(std::vector<OpDef>& registry) {
  registry.push_back(
      {.op_type = "Resize", .bpu_type = "HzQuantizedResizeUpsample", .kind = OpKind::kCompute,
       .quantize = QuantizeAs::kResize, .lower = LowerAs::kResize,
       .constraints = {rank_is("resize.rank", 4, "input must be 4-D (N, C, H, W)"),
                  {"resize.mode",
                   [](const MarchSpec&) { return std::string("mode must be nearest or linear"); },
                   [](const Node& n, const MarchSpec&) {
                     const std::string mode = string_attr(n, "mode", "nearest");
                     return mode == "nearest" || mode == "linear" || mode == "bilinear";
                   }},
                  {"resize.coordinates",
                   [](const MarchSpec&) {
                     return std::string(
                         "coordinate_transformation_mode must be half_pixel, pytorch_half_pixel, "
                         "asymmetric or align_corners");
                   },
                   [](const Node& n, const MarchSpec&) {
                     const std::string c = string_attr(n, "coordinate_transformation_mode", "half_pixel");
                     return c == "half_pixel" || c == "pytorch_half_pixel" || c == "asymmetric" ||
                            c == "align_corners";
                   }},
                  {"resize.sizes_constant",
                   [](const MarchSpec&) { return std::string("scales/sizes must be constants"); },
                   [](const Node& n, const MarchSpec&) {
                     for (size_t i = 1; i < n.inputs().size(); ++i) {
                       if (n.input(i) != nullptr && !is_constant(n.input(i))) return false;
                     }
                     return true;
                   }},
                  dims_within_limit()},
       .note = "resizes H and W; N and C unchanged"});
  registry.push_back({.op_type = "Upsample", .bpu_type = "HzQuantizedResizeUpsample", .kind = OpKind::kCompute,
                      .quantize = QuantizeAs::kResize, .lower = LowerAs::kResize,
                      .constraints = {rank_is("upsample.rank", 4, "input must be 4-D (N, C, H, W)"),
                                      dims_within_limit()}});
}

}  // namespace openbpu::bpu_support::ops
