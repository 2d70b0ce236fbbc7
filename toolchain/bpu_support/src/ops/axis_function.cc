// Functions along one axis: ArgMax, ArgMin, Softmax.
#include "../op_rules.h"
#include "families.h"

namespace openbpu::bpu_support::ops {

using namespace rules;  // NOLINT(google-build-using-namespace): the rule vocabulary

void add_axis_functions(std::vector<OpDef>& registry) {
  // ArgMax / ArgMin read the quantized input directly (a positive per-tensor scale keeps the
  // order) and write int32 indices; the quantizer adds a CPU Cast to int64 where int64 is needed.
  for (const bool min : {false, true}) {
    auto id = [min](const char* max_id, const char* min_id) { return std::string_view(min ? min_id : max_id); };
    registry.push_back(
        {.op_type = min ? "ArgMin" : "ArgMax", .bpu_type = min ? "HzQuantizedArgMin" : "HzQuantizedArgMax",
         .kind = OpKind::kCompute, .quantize = QuantizeAs::kArgMax, .lower = min ? LowerAs::kArgMin : LowerAs::kArgMax,
         .constraints = {{id("argmax.rank", "argmin.rank"),
                     [](const MarchSpec& m) {
                       return std::string(m.axis_ops_4d_only ? "input must be 4-D (N, C, H, W)"
                                                             : "input may have any rank");
                     },
                     [](const Node& n, const MarchSpec& m) {
                       auto r = rank_of(n.input(0));
                       return !m.axis_ops_4d_only || !r || *r == 4;
                     }},
                    {id("argmax.axis", "argmin.axis"),
                     [](const MarchSpec& m) {
                       return std::string(m.axis_ops_4d_only ? "axis must be 1 (C)" : "axis may be any axis");
                     },
                     [](const Node& n, const MarchSpec& m) {
                       if (!m.axis_ops_4d_only) return true;
                       int64_t axis = int_attr(n, "axis", 0);
                       auto r = rank_of(n.input(0));
                       if (r && axis < 0) axis += static_cast<int64_t>(*r);
                       return axis == 1;
                     }},
                    {id("argmax.extent", "argmin.extent"),
                     [](const MarchSpec& m) {
                       return "the reduced axis must have " + range(1, m.argmax_extent_max) + " elements";
                     },
                     [](const Node& n, const MarchSpec& m) {
                       auto r = rank_of(n.input(0));
                       if (!r || *r == 0) return true;
                       int64_t axis = int_attr(n, "axis", 0);
                       if (axis < 0) axis += static_cast<int64_t>(*r);
                       if (axis < 0 || axis >= static_cast<int64_t>(*r)) return false;
                       auto extent = dim_of(n.input(0), static_cast<size_t>(axis));
                       return !extent || (*extent >= 1 && *extent <= m.argmax_extent_max);
                     }},
                    attr_equals(id("argmax.select_last_index", "argmin.select_last_index"), "select_last_index", 0, 0),
                    {id("argmax.keepdims", "argmin.keepdims"),
                     [](const MarchSpec&) { return std::string("keepdims must be 0 or 1"); },
                     [](const Node& n, const MarchSpec&) {
                       const int64_t k = int_attr(n, "keepdims", 1);
                       return k == 0 || k == 1;
                     }}},
         .note = min ? "int32 indices of the first minimum; a CPU Cast makes them int64 where needed"
                     : "int32 indices of the first maximum; a CPU Cast makes them int64 where needed"});
  }
  // Softmax along one axis (the optimizer gives opset < 13 Softmax nodes that meaning): integer
  // exp (a Q30 exp2 table) and one reciprocal per row, output of the input's width. CPU unless
  // run_on_bpu, except on marches whose table says softmax_on_bpu_default.
  registry.push_back(
      {.op_type = "Softmax", .bpu_type = "HzQuantizedSoftmax", .kind = OpKind::kCompute,
       .quantize = QuantizeAs::kSoftmax, .lower = LowerAs::kSoftmax,
       .constraints = {{"softmax.rank",
                   [](const MarchSpec& m) {
                     return std::string(m.axis_ops_4d_only ? "input must be 4-D (N, C, H, W)"
                                                           : "input may have any rank >= 1");
                   },
                   [](const Node& n, const MarchSpec& m) {
                     auto r = rank_of(n.input(0));
                     return !r || (m.axis_ops_4d_only ? *r == 4 : *r >= 1);
                   }},
                  {"softmax.axis",
                   [](const MarchSpec& m) {
                     return std::string(m.softmax_channel_axis_only ? "axis must be 1 (C)"
                                        : m.axis_ops_4d_only        ? "axis must be 1, 2 or 3"
                                                                    : "axis may be any axis");
                   },
                   [](const Node& n, const MarchSpec& m) {
                     auto r = rank_of(n.input(0));
                     if (!r) return true;
                     int64_t axis = int_attr(n, "axis", -1);
                     if (axis < 0) axis += static_cast<int64_t>(*r);
                     if (axis < 0 || axis >= static_cast<int64_t>(*r)) return false;
                     if (m.softmax_channel_axis_only) return axis == 1;
                     return !m.axis_ops_4d_only || axis >= 1;
                   }}},
       .note = "integer softmax along one axis (Q30 exp2 table, one reciprocal per row)",
       .cpu_by_default = true, .bpu_by_default_on = &MarchSpec::softmax_on_bpu_default});
}

}  // namespace openbpu::bpu_support::ops
