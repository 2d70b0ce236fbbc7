#include "linear_as_conv.h"

namespace openbpu::passes {

ir::TensorType typed(DataType dtype, const std::optional<Shape>& shape) {
  if (shape) return ir::TensorType::of(dtype, *shape);
  ir::TensorType t;
  t.dtype = dtype;
  return t;
}

ir::Value* insert_linear_as_conv(GraphRewriter& rw, ir::Node* before, const LinearAsConv& spec) {
  const DataType f32 = DataType::kFloat32;
  ir::Value* to_shape =
      rw.add_constant(spec.name + ".to_nchw",
                      int64_tensor({static_cast<int64_t>(spec.to_nchw.size())}, spec.to_nchw));
  ir::Node* reshape_in = rw.add_node(before, "Reshape", {spec.input, to_shape},
                                     {spec.name + ".nchw"}, {typed(f32, spec.nchw_shape)});
  ir::Value* w =
      rw.add_constant(spec.name + ".weight",
                      float32_tensor({spec.out_channels, spec.in_channels, 1, 1}, spec.weight));
  std::vector<ir::Value*> conv_inputs = {reshape_in->output(0), w};
  if (spec.bias) {
    conv_inputs.push_back(
        rw.add_constant(spec.name + ".bias", float32_tensor({spec.out_channels}, *spec.bias)));
  }
  std::optional<Shape> conv_shape = spec.nchw_shape;
  if (conv_shape) (*conv_shape)[1] = spec.out_channels;
  kernels::AttributeMap attrs;
  attrs.set("kernel_shape", std::vector<int64_t>{1, 1});
  ir::Node* conv = rw.add_node(before, "Conv", conv_inputs, {spec.name + ".conv"},
                               {typed(f32, conv_shape)}, attrs);
  ir::Value* from_shape =
      rw.add_constant(spec.name + ".from_nchw",
                      int64_tensor({static_cast<int64_t>(spec.from_nchw.size())}, spec.from_nchw));
  return rw
      .add_node(before, "Reshape", {conv->output(0), from_shape}, {spec.name}, {spec.result_type})
      ->output(0);
}

}  // namespace openbpu::passes
