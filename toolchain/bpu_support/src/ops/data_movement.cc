// Data movement and selection: the output keeps the input's scale (Concat requantizes its
// inputs to one scale).
#include <algorithm>

#include "../op_rules.h"
#include "families.h"

namespace openbpu::bpu_support::ops {

using namespace rules;  // NOLINT(google-build-using-namespace): the rule vocabulary

void add_data_movement(std::vector<OpDef>& registry) {
  auto move = [&](std::string_view op, std::string_view bpu_type, LowerAs lower, std::vector<Constraint> constraints,
                  std::string_view note = "", QuantizeAs quantize = QuantizeAs::kMove) {
    registry.push_back({.op_type = op, .bpu_type = bpu_type, .kind = OpKind::kPassive, .quantize = quantize,
                        .lower = lower, .constraints = std::move(constraints), .note = note});
  };
  move("MaxPool", "HzQuantizedMaxPool", LowerAs::kMaxPool,
       {rank_is("maxpool.rank", 4, "input must be 4-D"),
                       kernel_size("maxpool.kernel", &MarchSpec::pool_kernel_max, "kernel"),
                       strides_in_range("maxpool.stride", &MarchSpec::conv_stride_max),
                       {"maxpool.dilation", [](const MarchSpec&) { return std::string("dilation must be 1"); },
                        [](const Node& n, const MarchSpec&) { return all_in(ints_attr(n, "dilations", {1, 1}), 1, 1); }},
                       {"maxpool.indices", [](const MarchSpec&) { return std::string("the Indices output is not supported"); },
                        [](const Node& n, const MarchSpec&) { return n.output(1) == nullptr; }},
                       dims_within_limit()});
  move("GlobalMaxPool", "HzQuantizedGlobalMaxPool", LowerAs::kGlobalMaxPool,
       {rank_is("gmp.rank", 4, "input must be 4-D"),
                       {"gmp.size", [](const MarchSpec& m) { return "H and W must be in " + range(1, m.pool_kernel_max); },
                        [](const Node& n, const MarchSpec& m) {
                          auto h = dim_of(n.input(0), 2), w = dim_of(n.input(0), 3);
                          return (!h || *h <= m.pool_kernel_max) && (!w || *w <= m.pool_kernel_max);
                        }}});
  move("Concat", "Concat", LowerAs::kConcat, {not_along_batch("concat.axis", "axis", 1), dims_within_limit()},
       "inputs are requantized to one scale", QuantizeAs::kConcat);
  move("Split", "Split", LowerAs::kSplit,
       {not_along_batch("split.axis", "axis", 0), input_constant("split.sizes", 1, "split"), dims_within_limit()});
  move("Slice", "Slice", LowerAs::kSlice,
       {input_constant("slice.starts", 1, "starts"), input_constant("slice.ends", 2, "ends"),
        input_constant("slice.axes", 3, "axes"), input_constant("slice.steps", 4, "steps")});
  move("Reshape", "Reshape", LowerAs::kReshape, {input_constant("reshape.shape", 1, "shape")});
  move("Flatten", "Reshape", LowerAs::kReshape, {});
  move("Squeeze", "Reshape", LowerAs::kReshape, {input_constant("squeeze.axes", 1, "axes")});
  move("Unsqueeze", "Reshape", LowerAs::kReshape, {input_constant("unsqueeze.axes", 1, "axes")});
  move("Transpose", "Transpose", LowerAs::kTranspose, {rank_between("transpose.rank", 2, 5)});
  move("Pad", "HzPad", LowerAs::kPad,
       {{"pad.mode", [](const MarchSpec&) { return std::string("mode must be constant"); },
                        [](const Node& n, const MarchSpec&) { return string_attr(n, "mode", "constant") == "constant"; }},
                       input_constant("pad.pads", 1, "pads"),
                       {"pad.value", [](const MarchSpec&) { return std::string("the pad value must be 0"); },
                        [](const Node& n, const MarchSpec&) {
                          if (n.attrs().has("value") && n.attrs().get_float("value") != 0.0f) return false;  // opset < 11
                          const ir::Value* v = n.input(2);
                          if (v == nullptr) return true;
                          if (!v->is_constant()) return false;
                          const auto& c = *v->constant();
                          for (int64_t i = 0; i < c.element_count(); ++i) {
                            if (c.float_at(i) != 0.0) return false;
                          }
                          return true;
                        }}});
  move("DepthToSpace", "DepthToSpace", LowerAs::kDepthToSpace, {rank_is("d2s.rank", 4, "input must be 4-D")});
  move("SpaceToDepth", "SpaceToDepth", LowerAs::kSpaceToDepth, {rank_is("s2d.rank", 4, "input must be 4-D")});
  move("ReduceMax", "HzQuantizedReduceMax", LowerAs::kReduceMax,
       {rank_between("reducemax.rank", 2, 4),
        axes_constant("reducemax.axes_constant"),
        dims_within_limit()},
       "the maximum keeps the input's scale");
  move("Expand", "Expand", LowerAs::kExpand,
       {input_constant("expand.shape", 1, "shape"),
        {"expand.rank", [](const MarchSpec&) { return std::string("the output must have rank 1 to 6"); },
         [](const Node& n, const MarchSpec&) {
           const ir::Value* y = n.output(0);
           return y == nullptr || !y->type().has_rank() || (!y->type().shape->empty() && y->type().shape->size() <= 6);
         }}},
       "one copy, broadcast axes read with stride 0");
  move("Tile", "Tile", LowerAs::kTile,
       {input_constant("tile.repeats", 1, "repeats"),
        {"tile.rank", [](const MarchSpec&) { return std::string("rank + repeated axes must be at most 6"); },
         [](const Node& n, const MarchSpec&) {
           const ir::Value* r = n.input(1);
           if (r == nullptr || !r->is_constant()) return true;  // tile.repeats says why
           const std::vector<int64_t> repeats = r->constant()->to_int64_vector();
           const size_t tiled = static_cast<size_t>(std::count_if(repeats.begin(), repeats.end(), [](int64_t k) { return k > 1; }));
           return repeats.size() + tiled <= 6;
         }}},
       "one copy, the input read once per repeat with stride 0");
  move("Gather", "Gather", LowerAs::kGather,
       {input_constant("gather.indices", 1, "indices"), rank_between("gather.rank", 1, 4)});
  move("GatherElements", "GatherElements", LowerAs::kGatherElements,
       {input_constant("gatherelements.indices", 1, "indices"), rank_between("gatherelements.rank", 1, 6)},
       "one indexed read per output element from a table of the indices");
}

}  // namespace openbpu::bpu_support::ops
