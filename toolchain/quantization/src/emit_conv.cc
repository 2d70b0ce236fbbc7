// Accumulating anchors: Conv, ConvTranspose, Gemm, MatMul with a constant right-hand side and
// the input preprocessing (HzPreprocess) → HzSQuantizedConv / HzSQuantizedConvTranspose.
#include <cmath>
#include <numeric>

#include "emitter.h"
#include "openbpu/common/error.h"
#include "openbpu/kernels/axes.h"

namespace openbpu::quantization::detail {

namespace {

// A float convolution to quantize: weights [M, C/group, *kernel] (or ConvTranspose's
// [C, M/group, *kernel]), bias [M], geometry attributes.
struct FloatConv {
  bool transposed = false;
  Tensor weight;  // float32
  std::vector<float> bias;
  AttributeMap geometry;
  int64_t group = 1;
};

Tensor as_float32(const Tensor& t) {
  Tensor f(DataType::kFloat32, t.shape());
  for (int64_t i = 0; i < t.element_count(); ++i) f.data<float>()[i] = static_cast<float>(t.float_at(i));
  return f;
}

std::vector<float> bias_of(const ir::Value* b, int64_t channels, const std::string& node) {
  std::vector<float> bias(static_cast<size_t>(channels), 0.0f);
  if (b == nullptr) return bias;
  const Tensor& t = *b->constant();
  if (t.element_count() == 1) {
    std::fill(bias.begin(), bias.end(), static_cast<float>(t.float_at(0)));
  } else if (t.element_count() == channels) {
    for (int64_t i = 0; i < channels; ++i) bias[size_t(i)] = static_cast<float>(t.float_at(i));
  } else {
    raise("node '", node, "': bias ", t.describe(), " must have one value per output channel (", channels, ")");
  }
  return bias;
}

// Explicit pads for auto_pad SAME_UPPER / SAME_LOWER from the static input shape.
std::vector<int64_t> explicit_pads(const ir::Node& n, const std::vector<int64_t>& kernel,
                                   const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations) {
  const std::string auto_pad = n.attrs().get_string("auto_pad", "NOTSET");
  const size_t rank = kernel.size();
  if (auto_pad == "NOTSET" || auto_pad.empty()) {
    return n.attrs().get_ints("pads", std::vector<int64_t>(2 * rank, 0));
  }
  std::vector<int64_t> pads(2 * rank, 0);
  if (auto_pad == "VALID") return pads;
  const auto shape = n.input(0)->type().static_shape();
  if (!shape) raise("node '", n.name(), "': auto_pad ", auto_pad, " needs a static input shape");
  for (size_t i = 0; i < rank; ++i) {
    const int64_t in = (*shape)[i + 2];
    const int64_t out = (in + strides[i] - 1) / strides[i];
    const int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - in);
    const int64_t small = total / 2, big = total - small;
    pads[i] = auto_pad == "SAME_UPPER" ? small : big;
    pads[i + rank] = auto_pad == "SAME_UPPER" ? big : small;
  }
  return pads;
}

FloatConv conv_from_node(const ir::Node& n, bool transposed) {
  FloatConv c;
  c.transposed = transposed;
  c.weight = as_float32(*n.input(1)->constant());
  c.group = n.attrs().get_int("group", 1);
  const auto& ws = c.weight.shape();
  const int64_t out_channels = c.transposed ? ws[1] * c.group : ws[0];
  c.bias = bias_of(n.input(2), out_channels, n.name());
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  const size_t rank = kernel.size();
  const auto strides = n.attrs().get_ints("strides", std::vector<int64_t>(rank, 1));
  const auto dilations = n.attrs().get_ints("dilations", std::vector<int64_t>(rank, 1));
  c.geometry.set("kernel_shape", kernel);
  c.geometry.set("strides", strides);
  c.geometry.set("dilations", dilations);
  c.geometry.set("group", c.group);
  if (c.transposed) {
    if (n.attrs().get_string("auto_pad", "NOTSET") != "NOTSET") {
      raise("node '", n.name(), "': ConvTranspose with auto_pad is not supported on the BPU; set pads");
    }
    c.geometry.set("pads", n.attrs().get_ints("pads", std::vector<int64_t>(2 * rank, 0)));
    c.geometry.set("output_padding", n.attrs().get_ints("output_padding", std::vector<int64_t>(rank, 0)));
    if (n.attrs().has("output_shape")) c.geometry.set("output_shape", n.attrs().get_ints("output_shape"));
  } else {
    c.geometry.set("pads", explicit_pads(n, kernel, strides, dilations));
  }
  return c;
}

// Gemm / MatMul-constant as a 1x1 convolution: weight [N, K, 1, 1].
FloatConv conv_from_matrix(const ir::Node& n, bool gemm) {
  FloatConv c;
  const Tensor b = as_float32(*n.input(1)->constant());
  const bool trans_b = gemm && n.attrs().get_int("transB", 0) != 0;
  const float alpha = gemm ? n.attrs().get_float("alpha", 1.0f) : 1.0f;
  const float beta = gemm ? n.attrs().get_float("beta", 1.0f) : 1.0f;
  if (b.rank() != 2) raise("node '", n.name(), "': the constant operand must be 2-D, got ", b.describe());
  const int64_t k = trans_b ? b.dim(1) : b.dim(0);
  const int64_t out = trans_b ? b.dim(0) : b.dim(1);
  c.weight = Tensor(DataType::kFloat32, {out, k, 1, 1});
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t i = 0; i < k; ++i) {
      c.weight.data<float>()[o * k + i] = alpha * (trans_b ? b.data<float>()[o * k + i] : b.data<float>()[i * out + o]);
    }
  }
  c.bias = bias_of(gemm ? n.input(2) : nullptr, out, n.name());
  for (float& v : c.bias) v *= beta;
  c.geometry.set("kernel_shape", std::vector<int64_t>{1, 1});
  c.geometry.set("strides", std::vector<int64_t>{1, 1});
  c.geometry.set("dilations", std::vector<int64_t>{1, 1});
  c.geometry.set("pads", std::vector<int64_t>{0, 0, 0, 0});
  c.geometry.set("group", int64_t{1});
  return c;
}

// The input preprocessing (docs/quantized_ops.md, HzPreprocess) as y = W v' + b with v' the
// integer input (pixel − 128 for images, the quantized featuremap otherwise).
FloatConv conv_from_preprocess(const ir::Node& n, int64_t channels, bool image) {
  const auto& a = n.attrs();
  const std::string rt = a.get_string("input_type_rt", "featuremap");
  const std::string train = a.get_string("input_type_train", "featuremap");
  const bool video = a.get_string("color_range", "full") == "video";
  std::vector<float> mean = a.get_floats("mean", {});
  std::vector<float> scale = a.get_floats("scale", {});
  auto per_channel = [&](std::vector<float> v, float fallback) {
    if (v.empty()) return std::vector<float>(size_t(channels), fallback);
    if (v.size() == 1) return std::vector<float>(size_t(channels), v[0]);
    if (static_cast<int64_t>(v.size()) != channels) {
      raise("node '", n.name(), "': ", v.size(), " mean/scale values for ", channels, " channels");
    }
    return v;
  };
  mean = per_channel(mean, 0.0f);
  scale = per_channel(scale, 1.0f);
  // Colour matrix M and offset o on v = x + 128 (0..255): u = M v + o.
  std::vector<double> m(static_cast<size_t>(channels * channels), 0.0), o(static_cast<size_t>(channels), 0.0);
  for (int64_t c = 0; c < channels; ++c) m[size_t(c * channels + c)] = 1.0;
  const bool yuv_in = rt == "nv12" || rt == "yuv444";
  if (yuv_in && (train == "rgb" || train == "bgr") && channels == 3) {
    // Video range first: Y' = (Y−16)·255/219, U' = (U−128)·255/224 + 128.
    const double ky = video ? 255.0 / 219.0 : 1.0, oy = video ? -16.0 * 255.0 / 219.0 : 0.0;
    const double kc = video ? 255.0 / 224.0 : 1.0;
    // rgb rows from (Y', U'−128, V'−128).
    const double rows[3][3] = {{1.0, 0.0, 1.402}, {1.0, -0.344136, -0.714136}, {1.0, 1.772, 0.0}};
    for (int r = 0; r < 3; ++r) {
      const int dst = train == "rgb" ? r : 2 - r;
      m[size_t(dst * 3 + 0)] = rows[r][0] * ky;
      m[size_t(dst * 3 + 1)] = rows[r][1] * kc;
      m[size_t(dst * 3 + 2)] = rows[r][2] * kc;
      o[size_t(dst)] = rows[r][0] * oy - 128.0 * (rows[r][1] * kc + rows[r][2] * kc);
    }
  } else if (((rt == "rgb" && train == "bgr") || (rt == "bgr" && train == "rgb")) && channels == 3) {
    std::fill(m.begin(), m.end(), 0.0);
    for (int c = 0; c < 3; ++c) m[size_t(c * 3 + (2 - c))] = 1.0;
  }
  FloatConv conv;
  conv.weight = Tensor(DataType::kFloat32, {channels, channels, 1, 1});
  conv.bias.assign(size_t(channels), 0.0f);
  for (int64_t c = 0; c < channels; ++c) {
    double b = o[size_t(c)] - mean[size_t(c)];
    for (int64_t k = 0; k < channels; ++k) {
      const double w = m[size_t(c * channels + k)];
      conv.weight.data<float>()[c * channels + k] = static_cast<float>(w * scale[size_t(c)]);
      if (image) b += w * 128.0;  // v = x + 128
    }
    conv.bias[size_t(c)] = static_cast<float>(b * scale[size_t(c)]);
  }
  conv.geometry.set("kernel_shape", std::vector<int64_t>{1, 1});
  conv.geometry.set("strides", std::vector<int64_t>{1, 1});
  conv.geometry.set("dilations", std::vector<int64_t>{1, 1});
  conv.geometry.set("pads", std::vector<int64_t>{0, 0, 0, 0});
  conv.geometry.set("group", int64_t{1});
  return conv;
}

// Per-output-channel absolute maxima of the weight.
std::vector<float> output_channel_max(const FloatConv& c) {
  const auto& s = c.weight.shape();
  const int64_t kernel = kernels::dims_product(s, 2, s.size());
  const float* w = c.weight.data<float>();
  if (!c.transposed) {
    std::vector<float> th(static_cast<size_t>(s[0]), 0.0f);
    const int64_t per = s[1] * kernel;
    for (int64_t m = 0; m < s[0]; ++m) {
      for (int64_t i = 0; i < per; ++i) th[size_t(m)] = std::max(th[size_t(m)], std::fabs(w[m * per + i]));
    }
    return th;
  }
  // ConvTranspose: W [C, M/group, k...]; output channel m = g·(M/group) + j.
  const int64_t in_per_group = s[0] / c.group, out_per_group = s[1];
  std::vector<float> th(static_cast<size_t>(out_per_group * c.group), 0.0f);
  for (int64_t ci = 0; ci < s[0]; ++ci) {
    const int64_t g = ci / in_per_group;
    for (int64_t j = 0; j < out_per_group; ++j) {
      for (int64_t k = 0; k < kernel; ++k) {
        float& t = th[size_t(g * out_per_group + j)];
        t = std::max(t, std::fabs(w[(ci * out_per_group + j) * kernel + k]));
      }
    }
  }
  return th;
}

Tensor quantize_weight(const FloatConv& c, const std::vector<float>& scales) {
  const auto& s = c.weight.shape();
  Tensor q(DataType::kInt8, s);
  const int64_t kernel = kernels::dims_product(s, 2, s.size());
  const float* w = c.weight.data<float>();
  int8_t* out = q.data<int8_t>();
  for (int64_t i = 0; i < c.weight.element_count(); ++i) {
    int64_t m;
    if (!c.transposed) {
      m = i / (s[1] * kernel);
    } else {
      const int64_t ci = i / (s[1] * kernel), j = (i / kernel) % s[1];
      m = (ci / (s[0] / c.group)) * s[1] + j;
    }
    out[i] = simulator::quantize_int8(w[i], scales[size_t(m)]);
  }
  return q;
}

}  // namespace

void emit_accumulating_anchor(Emitter& e, const ir::Node& n, const bpu_support::OpDef& def, const Fusion& fusion) {
  using bpu_support::QuantizeAs;
  const ir::Value* x = n.input(0);
  FloatConv conv;
  bool matrix = false;
  if (def.quantize == QuantizeAs::kPreprocess) {
    const auto shape = x->type().static_shape();
    if (!shape || shape->size() != 4) raise("the preprocessed input '", x->name(), "' must have a static 4-D shape");
    const bool nhwc = n.attrs().get_string("input_layout", "NCHW") == "NHWC";
    const bool image = !kernels::dtype_is_float(x->type().dtype);
    conv = conv_from_preprocess(n, nhwc ? (*shape)[3] : (*shape)[1], image);
  } else if (def.quantize == QuantizeAs::kConv) {
    conv = conv_from_node(n, def.lower == bpu_support::LowerAs::kConvTranspose);
  } else {
    conv = conv_from_matrix(n, def.quantize == QuantizeAs::kGemm);
    matrix = true;
  }

  // Input (reshaped / transposed to N, C, H, W where needed).
  ir::Value* xi = e.int_value(x);
  const QuantParams in = e.params(x);
  const auto in_shape = x->type().static_shape();
  const bool nhwc = n.domain() == "horizon" && n.attrs().get_string("input_layout", "NCHW") == "NHWC";
  std::vector<int64_t> rows_shape;  // the leading dims of a matrix input
  if (matrix) {
    if (!in_shape) raise("node '", n.name(), "': the input needs a static shape");
    rows_shape.assign(in_shape->begin(), in_shape->end() - 1);
    const int64_t rows = std::accumulate(rows_shape.begin(), rows_shape.end(), int64_t{1}, std::multiplies<>());
    const int64_t k = in_shape->back();
    ir::Value* shape4 = e.add_constant(n.name() + "_to_nchw_shape",
                                       Tensor::from_values<int64_t>({4}, std::vector<int64_t>{rows, k, 1, 1}));
    ir::Node* r = e.add_node("Reshape", "", n.name() + "_to_nchw", {xi, shape4},
                             {e.graph().unique_value_name(x->name() + "_nchw")}, {});
    r->output(0)->set_type(ir::TensorType::of(in.dtype(), {rows, k, 1, 1}));
    xi = r->output(0);
  } else if (nhwc) {
    AttributeMap perm;
    perm.set("perm", std::vector<int64_t>{0, 3, 1, 2});
    ir::Node* t = e.add_node("Transpose", "", n.name() + "_to_nchw", {xi}, {e.graph().unique_value_name(x->name() + "_nchw")}, perm);
    const auto& s = *in_shape;
    t->output(0)->set_type(ir::TensorType::of(in.dtype(), {s[0], s[3], s[1], s[2]}));
    xi = t->output(0);
  }

  // Weights and bias.
  std::vector<float> th = output_channel_max(conv);
  if (!conv.transposed && n.domain().empty() && !matrix) {
    const auto calibrated = e.weight_thresholds(n.input(1), 0);
    if (calibrated.size() == th.size()) th = calibrated;
  }
  std::vector<float> wscales;
  for (float t : th) wscales.push_back(simulator::symmetric_scale(t, 8));
  const Tensor wq = quantize_weight(conv, wscales);
  const int64_t out_channels = static_cast<int64_t>(wscales.size());
  Tensor bq(DataType::kInt32, {out_channels});
  for (int64_t m = 0; m < out_channels; ++m) {
    bq.data<int32_t>()[m] = simulator::quantize_bias(conv.bias[size_t(m)], in.scale, wscales[size_t(m)]);
  }

  AttributeMap attrs = conv.geometry;
  std::vector<ir::Value*> inputs = {xi, e.add_constant(n.name() + "_weight_quantized", wq),
                                    e.add_constant(n.name() + "_bias_quantized", bq)};
  QuantParams out;
  DataType out_type = DataType::kInt32;
  if (!fusion.int32_output) {
    out = e.params(fusion.output);
    out_type = out.dtype();
    std::vector<int64_t> mult, shift;
    for (int64_t m = 0; m < out_channels; ++m) {
      const auto f = simulator::requantization_multiplier(static_cast<double>(in.scale) * wscales[size_t(m)], out.scale);
      mult.push_back(f.multiplier);
      shift.push_back(f.shift);
    }
    attrs.set("multipliers", mult);
    attrs.set("shifts", shift);
    attrs.set("output_scale", out.scale);
  }
  if (fusion.residual != nullptr) {
    inputs.push_back(e.int_value(fusion.residual));
    const QuantParams r = e.params(fusion.residual);
    std::vector<int64_t> mult, shift;
    for (int64_t m = 0; m < out_channels; ++m) {
      const auto f = simulator::to_fixed_point(static_cast<double>(r.scale) / (static_cast<double>(in.scale) * wscales[size_t(m)]));
      mult.push_back(f.multiplier);
      shift.push_back(f.shift);
    }
    attrs.set("residual_multipliers", mult);
    attrs.set("residual_shifts", shift);
    attrs.set("residual_scale", r.scale);
  }
  attrs.set("output_type", type_name(out_type));
  attrs.set("input_scale", in.scale);
  attrs.set("weight_scales", wscales);
  if (fusion.activation != nullptr) {
    QuantParams clamp_domain = out;
    if (fusion.int32_output) clamp_domain.bits = 32;
    set_clamp(attrs, fusion.activation, clamp_domain, e.source());
  }

  const std::string bpu_op = conv.transposed ? "HzSQuantizedConvTranspose" : "HzSQuantizedConv";
  const std::string name = n.domain() == "horizon" ? n.name() : n.name();
  const ir::Value* y = fusion.output;
  const bool reshape_back = matrix || nhwc;
  const std::string out_name = reshape_back ? e.graph().unique_value_name(y->name() + "_nchw") : e.int_name(y);
  ir::Node* q = e.add_node(bpu_op, "horizon", name, inputs, {out_name}, attrs);
  ir::Value* result = q->output(0);
  const auto y_shape = y->type().static_shape();
  if (matrix) {
    const int64_t rows = std::accumulate(rows_shape.begin(), rows_shape.end(), int64_t{1}, std::multiplies<>());
    result->set_type(ir::TensorType::of(out_type, {rows, out_channels, 1, 1}));
    std::vector<int64_t> back = rows_shape;
    back.push_back(out_channels);
    ir::Value* shape = e.add_constant(n.name() + "_from_nchw_shape", Tensor::from_values<int64_t>({static_cast<int64_t>(back.size())}, back));
    ir::Node* r = e.add_node("Reshape", "", n.name() + "_from_nchw", {result, shape}, {e.int_name(y)}, {});
    r->output(0)->set_type(ir::TensorType::of(out_type, back));
    result = r->output(0);
  } else if (nhwc) {
    const auto& s = *in_shape;
    result->set_type(ir::TensorType::of(out_type, {s[0], out_channels, s[1], s[2]}));
    AttributeMap perm;
    perm.set("perm", std::vector<int64_t>{0, 2, 3, 1});
    ir::Node* t = e.add_node("Transpose", "", n.name() + "_from_nchw", {result}, {e.int_name(y)}, perm);
    t->output(0)->set_type(ir::TensorType::of(out_type, {s[0], s[1], s[2], out_channels}));
    result = t->output(0);
  } else {
    ir::TensorType t = y->type();
    t.dtype = out_type;
    result->set_type(t);
  }
  e.set_int_value(y, result);
  if (fusion.int32_output) {
    std::vector<float> scales;
    for (float w : wscales) scales.push_back(in.scale * w);
    e.set_int32_scales(result, scales, matrix ? static_cast<int64_t>(rows_shape.size()) : 1);
  }
}

}  // namespace openbpu::quantization::detail
