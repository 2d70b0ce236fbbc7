#include "layers.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>

namespace openbpu::frontend::caffe_import {
namespace {

using kernels::DataType;

int64_t product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= shape[i];
  return p;
}

Shape slice(const Shape& shape, size_t begin, size_t end) {
  return Shape(shape.begin() + static_cast<std::ptrdiff_t>(begin),
               shape.begin() + static_cast<std::ptrdiff_t>(end));
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

std::string str(const Shape& shape) {
  return kernels::shape_to_string(shape);
}

// A window size per spatial axis from Caffe's spellings: a repeated field (one value for every
// axis, or one per axis), a *_h / *_w pair (2-D only), or `fallback` when neither is set.
std::vector<int64_t> spatial_sizes(const LayerContext& ctx,
                                   const google::protobuf::RepeatedField<uint32_t>& values,
                                   bool has_h, uint32_t h, bool has_w, uint32_t w, size_t spatial,
                                   int64_t fallback, const std::string& what) {
  if (has_h || has_w) {
    if (!has_h || !has_w) ctx.fail(what, "_h and ", what, "_w must be set together");
    if (!values.empty()) ctx.fail("sets both ", what, " and ", what, "_h/", what, "_w");
    if (spatial != 2) ctx.fail(what, "_h/", what, "_w need a 2-D (4-axis) bottom");
    return {h, w};
  }
  if (values.empty()) return std::vector<int64_t>(spatial, fallback);
  if (values.size() == 1) return std::vector<int64_t>(spatial, values[0]);
  if (static_cast<size_t>(values.size()) != spatial) {
    ctx.fail(what, " has ", values.size(), " values; expected 1 or ", spatial,
             " (one per spatial axis)");
  }
  return std::vector<int64_t>(values.begin(), values.end());
}

void require_positive(const LayerContext& ctx, const std::vector<int64_t>& values,
                      const std::string& what) {
  for (int64_t v : values) {
    if (v <= 0) ctx.fail(what, " must be positive (got ", v, ")");
  }
}

std::vector<int64_t> doubled(const std::vector<int64_t>& pads) {
  std::vector<int64_t> both = pads;
  both.insert(both.end(), pads.begin(), pads.end());
  return both;
}

// Top 0 := node(op) of the single bottom, same shape.
void elementwise(LayerContext& ctx, const std::string& op, AttributeMap attrs = {},
                 std::vector<ir::Value*> extra_inputs = {}) {
  ctx.require_inputs(1, 1);
  ctx.require_outputs(1, 1);
  std::vector<ir::Value*> inputs{ctx.input(0)};
  inputs.insert(inputs.end(), extra_inputs.begin(), extra_inputs.end());
  ctx.set_output(0, ctx.add_node(op, inputs, std::move(attrs), ctx.input_shape(0)),
                 ctx.input_shape(0));
}

// Every top is the bottom under another name (no node).
void alias(LayerContext& ctx) {
  for (size_t i = 0; i < ctx.num_outputs(); ++i)
    ctx.set_output(i, ctx.input(0), ctx.input_shape(0));
}

// A Reshape to a static shape (a Caffe shape rule already applied).
ir::Value* reshape_to(LayerContext& ctx, ir::Value* x, const Shape& shape,
                      const std::string& suffix = "") {
  ir::Value* target = ctx.int64_constant(suffix.empty() ? "shape" : suffix + "_shape", shape);
  return ctx.add_node("Reshape", {x, target}, {}, shape, suffix);
}

// ------------------------------------------------------------------ layers

void convert_input(LayerContext& ctx) {
  ctx.require_inputs(0, 0);
  ctx.require_outputs(1, 1000000);
  const auto& shapes = ctx.layer().input_param().shape();
  if (shapes.empty()) ctx.fail("input_param declares no shape");
  if (shapes.size() != 1 && static_cast<size_t>(shapes.size()) != ctx.num_outputs()) {
    ctx.fail("input_param has ", shapes.size(), " shapes for ", ctx.num_outputs(),
             " tops (expected one, or one per top)");
  }
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    const auto& s = shapes.size() == 1 ? shapes[0] : shapes[static_cast<int>(i)];
    ctx.set_graph_input(i, Shape(s.dim().begin(), s.dim().end()));
  }
}

void convert_convolution(LayerContext& ctx, bool transposed) {
  ctx.require_inputs(1, 1);
  ctx.require_outputs(1, 1);
  const caffe::ConvolutionParameter& p = ctx.layer().convolution_param();
  const Shape& x = ctx.input_shape(0);
  const int64_t rank = ctx.input_rank(0);
  if (rank < 3) ctx.fail("needs a bottom with channels and spatial axes, got shape ", str(x));
  if (ctx.axis(p.axis(), rank, "axis") != 1) ctx.fail("only axis 1 (channels) is supported");
  const auto spatial = static_cast<size_t>(rank - 2);
  const auto kernel = spatial_sizes(ctx, p.kernel_size(), p.has_kernel_h(), p.kernel_h(),
                                    p.has_kernel_w(), p.kernel_w(), spatial, 0, "kernel");
  const auto strides = spatial_sizes(ctx, p.stride(), p.has_stride_h(), p.stride_h(),
                                     p.has_stride_w(), p.stride_w(), spatial, 1, "stride");
  const auto pads = spatial_sizes(ctx, p.pad(), p.has_pad_h(), p.pad_h(), p.has_pad_w(), p.pad_w(),
                                  spatial, 0, "pad");
  const auto dilations =
      spatial_sizes(ctx, p.dilation(), false, 0, false, 0, spatial, 1, "dilation");
  require_positive(ctx, kernel, "kernel_size");
  require_positive(ctx, strides, "stride");
  require_positive(ctx, dilations, "dilation");
  const auto outputs = static_cast<int64_t>(p.num_output());
  const auto group = static_cast<int64_t>(p.group());
  const int64_t channels = x[1];
  if (outputs <= 0) ctx.fail("num_output must be positive");
  if (group <= 0 || channels % group != 0 || outputs % group != 0) {
    ctx.fail("group ", group, " must divide the ", channels, " input channels and num_output ",
             outputs);
  }
  Shape w_shape = transposed ? Shape{channels, outputs / group} : Shape{outputs, channels / group};
  w_shape.insert(w_shape.end(), kernel.begin(), kernel.end());
  const bool bias = p.bias_term();
  ctx.require_blobs(bias ? 2 : 1, bias ? "weights, bias" : "weights");
  std::vector<ir::Value*> inputs{ctx.input(0),
                                 ctx.constant("weight", ctx.blob(0, w_shape, "weights"))};
  if (bias) inputs.push_back(ctx.constant("bias", ctx.blob(1, {outputs}, "bias")));

  Shape y{x[0], outputs};
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t in = x[2 + i];
    const int64_t extent = dilations[i] * (kernel[i] - 1) + 1;
    const int64_t out = transposed ? strides[i] * (in - 1) + extent - 2 * pads[i]
                                   : (in + 2 * pads[i] - extent) / strides[i] + 1;
    if (out <= 0 || (!transposed && in + 2 * pads[i] < extent)) {
      ctx.fail("kernel ", kernel[i], " (dilation ", dilations[i], ", pad ", pads[i],
               ") does not fit spatial axis ", i, " of size ", in);
    }
    y.push_back(out);
  }
  AttributeMap attrs;
  attrs.set("kernel_shape", kernel);
  attrs.set("strides", strides);
  attrs.set("pads", doubled(pads));
  attrs.set("dilations", dilations);
  attrs.set("group", group);
  ctx.set_output(
      0, ctx.add_node(transposed ? "ConvTranspose" : "Conv", inputs, std::move(attrs), y), y);
}

void convert_pooling(LayerContext& ctx) {
  ctx.require_inputs(1, 1);
  ctx.require_outputs(1, 1);
  const caffe::PoolingParameter& p = ctx.layer().pooling_param();
  const Shape& x = ctx.input_shape(0);
  if (x.size() != 4) ctx.fail("needs a 4-D (N, C, H, W) bottom, got shape ", str(x));
  if (p.pool() == caffe::PoolingParameter::STOCHASTIC)
    ctx.fail("STOCHASTIC pooling is not supported");
  const bool is_max = p.pool() == caffe::PoolingParameter::MAX;
  const auto strides = spatial_sizes(ctx, p.stride(), p.has_stride_h(), p.stride_h(),
                                     p.has_stride_w(), p.stride_w(), 2, 1, "stride");
  const auto pads =
      spatial_sizes(ctx, p.pad(), p.has_pad_h(), p.pad_h(), p.has_pad_w(), p.pad_w(), 2, 0, "pad");
  require_positive(ctx, strides, "stride");
  if (p.global_pooling()) {
    if (!p.kernel_size().empty() || p.has_kernel_h() || p.has_kernel_w()) {
      ctx.fail("global_pooling takes its window from the bottom; kernel_size must not be set");
    }
    if (pads != std::vector<int64_t>{0, 0} || strides != std::vector<int64_t>{1, 1}) {
      ctx.fail("global_pooling needs pad 0 and stride 1");
    }
    const Shape y{x[0], x[1], 1, 1};
    ctx.set_output(
        0, ctx.add_node(is_max ? "GlobalMaxPool" : "GlobalAveragePool", {ctx.input(0)}, {}, y), y);
    return;
  }
  const auto kernel = spatial_sizes(ctx, p.kernel_size(), p.has_kernel_h(), p.kernel_h(),
                                    p.has_kernel_w(), p.kernel_w(), 2, 0, "kernel");
  require_positive(ctx, kernel, "kernel_size");
  const bool round_up = p.round_mode() == caffe::PoolingParameter::CEIL;
  bool ceil_mode = false;
  Shape y{x[0], x[1]};
  for (size_t i = 0; i < 2; ++i) {
    const int64_t in = x[2 + i], k = kernel[i], s = strides[i], pad = pads[i];
    if (pad >= k) ctx.fail("pad ", pad, " must be smaller than the kernel ", k);
    const int64_t room = in + 2 * pad - k;
    if (room < 0)
      ctx.fail("kernel ", k, " (pad ", pad, ") does not fit spatial axis ", i, " of size ", in);
    const int64_t down = room / s + 1;
    int64_t up = ceil_div(room, s) + 1;
    // Caffe (and the kernels' ceil_mode) drop a last window that starts in the end padding.
    if (pad > 0 && (up - 1) * s >= in + pad) --up;
    if (round_up && up != down) {
      if (pad == 0 && (up - 1) * s >= in) {
        ctx.fail("the last window would start past the input (kernel ", k, " smaller than stride ",
                 s, " with rounding up); not supported");
      }
      ceil_mode = true;
    }
    y.push_back(round_up ? up : down);
  }
  AttributeMap attrs;
  attrs.set("kernel_shape", kernel);
  attrs.set("strides", strides);
  attrs.set("pads", doubled(pads));
  if (ceil_mode) attrs.set("ceil_mode", int64_t{1});
  // Caffe divides by the window clipped to the padded input: padding counts.
  if (!is_max && (pads[0] > 0 || pads[1] > 0)) attrs.set("count_include_pad", int64_t{1});
  ctx.set_output(
      0, ctx.add_node(is_max ? "MaxPool" : "AveragePool", {ctx.input(0)}, std::move(attrs), y), y);
}

void convert_inner_product(LayerContext& ctx) {
  ctx.require_inputs(1, 1);
  ctx.require_outputs(1, 1);
  const caffe::InnerProductParameter& p = ctx.layer().inner_product_param();
  const Shape& x = ctx.input_shape(0);
  const int64_t rank = ctx.input_rank(0);
  const auto axis = static_cast<size_t>(ctx.axis(p.axis(), rank, "axis"));
  const auto n = static_cast<int64_t>(p.num_output());
  if (n <= 0) ctx.fail("num_output must be positive");
  const int64_t m = product(x, 0, axis);
  const int64_t k = product(x, axis, x.size());
  const bool bias = p.bias_term();
  ctx.require_blobs(bias ? 2 : 1, bias ? "weights, bias" : "weights");
  std::vector<ir::Value*> inputs{ctx.input(0)};
  if (rank != 2 || axis != 1) {
    AttributeMap flatten;
    flatten.set("axis", static_cast<int64_t>(axis));
    inputs[0] = ctx.add_node("Flatten", {ctx.input(0)}, std::move(flatten), Shape{m, k}, "flatten");
  }
  inputs.push_back(
      ctx.constant("weight", ctx.blob(0, p.transpose() ? Shape{k, n} : Shape{n, k}, "weights")));
  if (bias) inputs.push_back(ctx.constant("bias", ctx.blob(1, {n}, "bias")));
  AttributeMap attrs;
  if (!p.transpose()) attrs.set("transB", int64_t{1});
  ir::Value* y = ctx.add_node("Gemm", inputs, std::move(attrs), Shape{m, n});
  Shape caffe_shape = slice(x, 0, axis);
  caffe_shape.push_back(n);
  if (caffe_shape != Shape{m, n}) y = reshape_to(ctx, y, caffe_shape, "reshape");
  ctx.set_output(0, y, caffe_shape);
}

void convert_relu(LayerContext& ctx) {
  const float slope = ctx.layer().relu_param().negative_slope();
  if (slope == 0.0f) return elementwise(ctx, "Relu");
  AttributeMap attrs;
  attrs.set("alpha", slope);
  elementwise(ctx, "LeakyRelu", std::move(attrs));
}

void convert_relu6(LayerContext& ctx) {
  elementwise(ctx, "Clip", {}, {ctx.float_scalar("min", 0.0f), ctx.float_scalar("max", 6.0f)});
}

void convert_batch_norm(LayerContext& ctx) {
  ctx.require_inputs(1, 1);
  ctx.require_outputs(1, 1);
  const Shape& x = ctx.input_shape(0);
  if (x.size() < 2) ctx.fail("needs a bottom with a channel axis, got shape ", str(x));
  const int64_t c = x[1];
  ctx.require_blobs(3, "mean, variance, scale factor");
  Tensor mean = ctx.blob(0, {c}, "mean");
  Tensor variance = ctx.blob(1, {c}, "variance");
  const float s = ctx.blob(2, {1}, "scale factor").data<float>()[0];
  // Caffe stores running sums; the statistics are the sums divided by the factor.
  const float factor = s == 0.0f ? 0.0f : 1.0f / s;
  for (int64_t i = 0; i < c; ++i) {
    mean.data<float>()[i] *= factor;
    variance.data<float>()[i] *= factor;
  }
  Tensor gamma(DataType::kFloat32, {c});
  std::fill_n(gamma.data<float>(), c, 1.0f);
  std::vector<ir::Value*> inputs{ctx.input(0), ctx.constant("scale", std::move(gamma)),
                                 ctx.constant("bias", Tensor(DataType::kFloat32, {c})),
                                 ctx.constant("mean", std::move(mean)),
                                 ctx.constant("variance", std::move(variance))};
  AttributeMap attrs;
  attrs.set("epsilon", ctx.layer().batch_norm_param().eps());
  ctx.set_output(0, ctx.add_node("BatchNormalization", inputs, std::move(attrs), x), x);
}

void convert_scale(LayerContext& ctx) {
  ctx.require_inputs(1, 2);
  ctx.require_outputs(1, 1);
  const caffe::ScaleParameter& p = ctx.layer().scale_param();
  const Shape& x = ctx.input_shape(0);
  const int64_t rank = ctx.input_rank(0);
  const bool bias = p.bias_term();
  const bool learned = ctx.num_inputs() == 1;
  // The factor covers axes [axis, axis + n) of the bottom; trailing axes broadcast.
  Shape covered;
  size_t axis = 0;
  if (learned || !ctx.input_shape(1).empty()) {
    axis = static_cast<size_t>(ctx.axis(p.axis(), rank, "axis"));
    int64_t n = 0;
    if (learned) {
      if (p.num_axes() < -1) ctx.fail("num_axes must be -1 or more (got ", p.num_axes(), ")");
      n = p.num_axes() == -1 ? rank - static_cast<int64_t>(axis) : p.num_axes();
    } else {
      n = ctx.input_rank(1);
    }
    if (static_cast<int64_t>(axis) + n > rank) {
      ctx.fail("the scale covers ", n, " axes from axis ", axis, ", beyond the bottom's ", rank);
    }
    covered = slice(x, axis, axis + static_cast<size_t>(n));
  }
  Shape factor_shape = covered;
  if (!covered.empty()) factor_shape.resize(x.size() - axis, 1);
  ir::Value* factor = nullptr;
  size_t next_blob = 0;
  if (learned) {
    ctx.require_blobs(bias ? 2 : 1, bias ? "scale, bias" : "scale");
    factor = ctx.constant("scale", ctx.blob(next_blob++, factor_shape, "scale"));
  } else {
    if (bias) ctx.require_blobs(1, "bias");
    if (!ctx.input_shape(1).empty() && ctx.input_shape(1) != covered) {
      ctx.fail("the scale bottom has shape ", str(ctx.input_shape(1)), ", expected ", str(covered),
               " (axes from ", axis, " of ", str(x), ")");
    }
    factor = ctx.input(1);
    if (factor_shape != ctx.input_shape(1))
      factor = reshape_to(ctx, factor, factor_shape, "reshape");
  }
  ir::Value* y = ctx.add_node("Mul", {ctx.input(0), factor}, {}, x);
  if (bias) {
    ir::Value* b = ctx.constant("bias", ctx.blob(next_blob, factor_shape, "bias"));
    y = ctx.add_node("Add", {y, b}, {}, x, "bias");
  }
  ctx.set_output(0, y, x);
}

void convert_eltwise(LayerContext& ctx) {
  ctx.require_inputs(2, 1000000);
  ctx.require_outputs(1, 1);
  const caffe::EltwiseParameter& p = ctx.layer().eltwise_param();
  const Shape& x = ctx.input_shape(0);
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    if (ctx.input_shape(i) != x) {
      ctx.fail("bottom ", i, " has shape ", str(ctx.input_shape(i)), ", bottom 0 has ", str(x),
               " (Eltwise needs equal shapes)");
    }
  }
  std::vector<ir::Value*> terms;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) terms.push_back(ctx.input(i));
  ir::Value* y = nullptr;
  switch (p.operation()) {
    case caffe::EltwiseParameter::SUM: {
      if (!p.coeff().empty() && static_cast<size_t>(p.coeff_size()) != terms.size()) {
        ctx.fail("has ", p.coeff_size(), " coeff values for ", terms.size(), " bottoms");
      }
      for (size_t i = 0; i < terms.size() && !p.coeff().empty(); ++i) {
        const float c = p.coeff(static_cast<int>(i));
        if (c == 1.0f) continue;
        const std::string role = str_cat("coeff", i);
        terms[i] = ctx.add_node("Mul", {terms[i], ctx.float_scalar(role, c)}, {}, x, role);
      }
      y = ctx.add_node(terms.size() == 2 ? "Add" : "Sum", terms, {}, x);
      break;
    }
    case caffe::EltwiseParameter::PROD: {
      y = terms[0];
      for (size_t i = 1; i < terms.size(); ++i) {
        y = ctx.add_node("Mul", {y, terms[i]}, {}, x,
                         i + 1 == terms.size() ? "" : str_cat("mul", i));
      }
      break;
    }
    case caffe::EltwiseParameter::MAX: y = ctx.add_node("Max", terms, {}, x); break;
  }
  ctx.set_output(0, y, x);
}

void convert_concat(LayerContext& ctx) {
  ctx.require_inputs(1, 1000000);
  ctx.require_outputs(1, 1);
  const caffe::ConcatParameter& p = ctx.layer().concat_param();
  const int64_t rank = ctx.input_rank(0);
  int64_t axis = 0;
  if (p.has_concat_dim()) {
    axis = static_cast<int64_t>(p.concat_dim());
    if (axis >= rank) ctx.fail("concat_dim ", axis, " is out of range for a ", rank, "-D bottom");
  } else {
    axis = ctx.axis(p.axis(), rank, "axis");
  }
  Shape y = ctx.input_shape(0);
  std::vector<ir::Value*> inputs{ctx.input(0)};
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    const Shape& s = ctx.input_shape(i);
    bool ok = s.size() == y.size();
    for (size_t d = 0; ok && d < s.size(); ++d) ok = d == static_cast<size_t>(axis) || s[d] == y[d];
    if (!ok) {
      ctx.fail("bottom ", i, " has shape ", str(s), ", which does not match bottom 0 ",
               str(ctx.input_shape(0)), " outside axis ", axis);
    }
    y[static_cast<size_t>(axis)] += s[static_cast<size_t>(axis)];
    inputs.push_back(ctx.input(i));
  }
  AttributeMap attrs;
  attrs.set("axis", axis);
  ctx.set_output(0, ctx.add_node("Concat", inputs, std::move(attrs), y), y);
}

void convert_softmax(LayerContext& ctx) {
  ctx.require_inputs(1, 1);
  ctx.require_outputs(1, 1);
  const Shape& x = ctx.input_shape(0);
  const int64_t rank = ctx.input_rank(0);
  const int64_t axis = ctx.axis(ctx.layer().softmax_param().axis(), rank, "axis");
  // Opset 11 Softmax normalises over all axes from `axis` on: Caffe's softmax when the later
  // axes have one element each.
  if (product(x, static_cast<size_t>(axis) + 1, x.size()) == 1) {
    AttributeMap attrs;
    attrs.set("axis", axis);
    ctx.set_output(0, ctx.add_node("Softmax", {ctx.input(0)}, std::move(attrs), x), x);
    return;
  }
  // Otherwise move the axis last, normalise, move it back.
  std::vector<int64_t> perm, inverse(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis) perm.push_back(d);
  }
  perm.push_back(axis);
  Shape moved;
  for (size_t d = 0; d < perm.size(); ++d) {
    moved.push_back(x[static_cast<size_t>(perm[d])]);
    inverse[static_cast<size_t>(perm[d])] = static_cast<int64_t>(d);
  }
  AttributeMap in_attrs, softmax_attrs, out_attrs;
  in_attrs.set("perm", perm);
  softmax_attrs.set("axis", rank - 1);
  out_attrs.set("perm", inverse);
  ir::Value* t =
      ctx.add_node("Transpose", {ctx.input(0)}, std::move(in_attrs), moved, "transpose_in");
  t = ctx.add_node("Softmax", {t}, std::move(softmax_attrs), moved);
  t = ctx.add_node("Transpose", {t}, std::move(out_attrs), x, "transpose_out");
  ctx.set_output(0, t, x);
}

void convert_flatten(LayerContext& ctx) {
  ctx.require_inputs(1, 1);
  ctx.require_outputs(1, 1);
  const caffe::FlattenParameter& p = ctx.layer().flatten_param();
  const Shape& x = ctx.input_shape(0);
  const int64_t rank = ctx.input_rank(0);
  const auto axis = static_cast<size_t>(ctx.axis(p.axis(), rank, "axis"));
  const auto end = static_cast<size_t>(ctx.axis(p.end_axis(), rank, "end_axis"));
  if (end < axis) ctx.fail("end_axis ", end, " comes before axis ", axis);
  Shape y = slice(x, 0, axis);
  y.push_back(product(x, axis, end + 1));
  for (size_t d = end + 1; d < x.size(); ++d) y.push_back(x[d]);
  if (axis == 1 && end + 1 == x.size()) {
    AttributeMap attrs;
    attrs.set("axis", int64_t{1});
    ctx.set_output(0, ctx.add_node("Flatten", {ctx.input(0)}, std::move(attrs), y), y);
  } else {
    ctx.set_output(0, reshape_to(ctx, ctx.input(0), y), y);
  }
}

void convert_reshape(LayerContext& ctx) {
  ctx.require_inputs(1, 1);
  ctx.require_outputs(1, 1);
  const caffe::ReshapeParameter& p = ctx.layer().reshape_param();
  const Shape& x = ctx.input_shape(0);
  const auto rank = static_cast<int64_t>(x.size());
  const int64_t start = p.axis() >= 0 ? p.axis() : rank + p.axis() + 1;
  if (start < 0 || start > rank) ctx.fail("axis ", p.axis(), " is out of range for shape ", str(x));
  if (p.num_axes() < -1) ctx.fail("num_axes must be -1 or more (got ", p.num_axes(), ")");
  const int64_t end = p.num_axes() == -1 ? rank : start + p.num_axes();
  if (end > rank) {
    ctx.fail("axis ", p.axis(), " with num_axes ", p.num_axes(), " is beyond shape ", str(x));
  }
  const Shape spec(p.shape().dim().begin(), p.shape().dim().end());
  Shape y = slice(x, 0, static_cast<size_t>(start));
  int64_t inferred = -1;
  for (size_t i = 0; i < spec.size(); ++i) {
    const int64_t d = spec[i];
    if (d == 0) {
      const auto from = static_cast<size_t>(start) + i;
      if (from >= static_cast<size_t>(end))
        ctx.fail("shape dim ", i, " is 0 (copy) but the bottom has no axis ", from,
                 " in the reshaped range");
      y.push_back(x[from]);
    } else if (d == -1) {
      if (inferred >= 0) ctx.fail("shape has more than one -1");
      inferred = static_cast<int64_t>(y.size());
      y.push_back(1);
    } else if (d < -1) {
      ctx.fail("shape dim ", i, " is ", d, "; dims must be positive, 0 (copy) or -1 (infer)");
    } else {
      y.push_back(d);
    }
  }
  for (auto d = static_cast<size_t>(end); d < x.size(); ++d) y.push_back(x[d]);
  const int64_t total = product(x, 0, x.size());
  const int64_t known = product(y, 0, y.size());
  if (inferred >= 0) {
    if (known == 0 || total % known != 0)
      ctx.fail("cannot infer the -1 of shape ", str(spec), " from bottom ", str(x));
    y[static_cast<size_t>(inferred)] = total / known;
  } else if (known != total) {
    ctx.fail("shape ", str(y), " has ", known, " elements, the bottom ", str(x), " has ", total);
  }
  if (start == 0 && end == rank) {
    // Same rules as ONNX Reshape (0 copies, -1 infers): keep the spec as written.
    ir::Value* target = ctx.int64_constant("shape", spec);
    ctx.set_output(0, ctx.add_node("Reshape", {ctx.input(0), target}, {}, y), y);
  } else {
    ctx.set_output(0, reshape_to(ctx, ctx.input(0), y), y);
  }
}

void convert_permute(LayerContext& ctx) {
  ctx.require_inputs(1, 1);
  ctx.require_outputs(1, 1);
  const Shape& x = ctx.input_shape(0);
  const int64_t rank = ctx.input_rank(0);
  std::vector<int64_t> perm;
  std::vector<bool> used(static_cast<size_t>(rank), false);
  for (uint32_t a : ctx.layer().permute_param().order()) {
    if (a >= rank) ctx.fail("order has axis ", a, ", out of range for shape ", str(x));
    if (used[a]) ctx.fail("order lists axis ", a, " twice");
    used[a] = true;
    perm.push_back(a);
  }
  for (int64_t a = 0; a < rank; ++a) {
    if (!used[static_cast<size_t>(a)]) perm.push_back(a);
  }
  Shape y;
  for (int64_t a : perm) y.push_back(x[static_cast<size_t>(a)]);
  AttributeMap attrs;
  attrs.set("perm", perm);
  ctx.set_output(0, ctx.add_node("Transpose", {ctx.input(0)}, std::move(attrs), y), y);
}

void convert_slice(LayerContext& ctx) {
  ctx.require_inputs(1, 1);
  ctx.require_outputs(1, 1000000);
  const caffe::SliceParameter& p = ctx.layer().slice_param();
  const Shape& x = ctx.input_shape(0);
  const int64_t rank = ctx.input_rank(0);
  int64_t axis = 0;
  if (p.has_slice_dim()) {
    axis = static_cast<int64_t>(p.slice_dim());
    if (axis >= rank) ctx.fail("slice_dim ", axis, " is out of range for shape ", str(x));
  } else {
    axis = ctx.axis(p.axis(), rank, "axis");
  }
  const int64_t dim = x[static_cast<size_t>(axis)];
  const auto tops = static_cast<int64_t>(ctx.num_outputs());
  std::vector<int64_t> sizes;
  if (!p.slice_point().empty()) {
    if (p.slice_point_size() != tops - 1) {
      ctx.fail("has ", p.slice_point_size(), " slice points for ", tops, " tops (expected ",
               tops - 1, ")");
    }
    int64_t previous = 0;
    for (uint32_t point : p.slice_point()) {
      if (point <= previous || point >= dim) {
        ctx.fail("slice points must increase strictly inside (0, ", dim, ") on axis ", axis,
                 "; got ", point, " after ", previous);
      }
      sizes.push_back(point - previous);
      previous = point;
    }
    sizes.push_back(dim - previous);
  } else {
    if (dim % tops != 0) {
      ctx.fail("axis ", axis, " of size ", dim, " does not split into ", tops, " equal parts");
    }
    sizes.assign(static_cast<size_t>(tops), dim / tops);
  }
  if (tops == 1) return alias(ctx);
  std::vector<Shape> shapes;
  for (int64_t size : sizes) {
    Shape s = x;
    s[static_cast<size_t>(axis)] = size;
    shapes.push_back(s);
  }
  AttributeMap attrs;
  attrs.set("axis", axis);
  attrs.set("split", sizes);
  const std::vector<ir::Value*> outs =
      ctx.add_node("Split", {ctx.input(0)}, std::move(attrs), shapes);
  for (size_t i = 0; i < outs.size(); ++i) ctx.set_output(i, outs[i], shapes[i]);
}

void convert_split(LayerContext& ctx) {
  ctx.require_inputs(1, 1);
  ctx.require_outputs(1, 1000000);
  alias(ctx);
}

void convert_dropout(LayerContext& ctx) {
  ctx.require_inputs(1, 1);
  ctx.require_outputs(1, 1);
  alias(ctx);
}

}  // namespace

LayerConverter find_layer_converter(std::string_view type) {
  static const std::unordered_map<std::string_view, LayerConverter> converters = {
      {"Input", convert_input},
      {"Convolution", [](LayerContext& c) { convert_convolution(c, false); }},
      {"Deconvolution", [](LayerContext& c) { convert_convolution(c, true); }},
      {"Pooling", convert_pooling},
      {"InnerProduct", convert_inner_product},
      {"ReLU", convert_relu},
      {"ReLU6", convert_relu6},
      {"Sigmoid", [](LayerContext& c) { elementwise(c, "Sigmoid"); }},
      {"TanH", [](LayerContext& c) { elementwise(c, "Tanh"); }},
      {"BatchNorm", convert_batch_norm},
      {"Scale", convert_scale},
      {"Eltwise", convert_eltwise},
      {"Concat", convert_concat},
      {"Softmax", convert_softmax},
      {"Flatten", convert_flatten},
      {"Reshape", convert_reshape},
      {"Permute", convert_permute},
      {"Slice", convert_slice},
      {"Split", convert_split},
      {"Dropout", convert_dropout},
  };
  auto it = converters.find(type);
  return it == converters.end() ? nullptr : it->second;
}

}  // namespace openbpu::frontend::caffe_import
