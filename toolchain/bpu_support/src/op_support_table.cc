#include <algorithm>
#include <sstream>

#include "openbpu/bpu_support/op_support.h"

namespace openbpu::bpu_support {

namespace {

using ir::Node;
using kernels::Shape;

// ---------------------------------------------------------------- node facts

std::optional<std::vector<ir::Dim>> dims_of(const ir::Value* v) {
  if (v == nullptr || !v->type().shape) return std::nullopt;
  return *v->type().shape;
}

std::optional<size_t> rank_of(const ir::Value* v) {
  auto d = dims_of(v);
  if (!d) return std::nullopt;
  return d->size();
}

// Dimension i if known.
std::optional<int64_t> dim_of(const ir::Value* v, size_t i) {
  auto d = dims_of(v);
  if (!d || i >= d->size() || !(*d)[i].is_known()) return std::nullopt;
  return (*d)[i].value;
}

bool is_constant(const ir::Value* v) { return v != nullptr && v->is_constant(); }

std::vector<int64_t> ints_attr(const Node& n, std::string_view name, std::vector<int64_t> fallback) {
  const auto* v = n.attrs().find(name);
  if (v == nullptr || !std::holds_alternative<std::vector<int64_t>>(*v)) return fallback;
  return std::get<std::vector<int64_t>>(*v);
}

int64_t int_attr(const Node& n, std::string_view name, int64_t fallback) {
  const auto* v = n.attrs().find(name);
  if (v == nullptr || !std::holds_alternative<int64_t>(*v)) return fallback;
  return std::get<int64_t>(*v);
}

std::string string_attr(const Node& n, std::string_view name, std::string fallback) {
  const auto* v = n.attrs().find(name);
  if (v == nullptr || !std::holds_alternative<std::string>(*v)) return fallback;
  return std::get<std::string>(*v);
}

// Kernel spatial sizes: the attribute, or the weight's trailing dims.
std::vector<int64_t> kernel_shape(const Node& n) {
  auto k = ints_attr(n, "kernel_shape", {});
  if (k.empty() && n.input(1) != nullptr) {
    if (auto d = dims_of(n.input(1)); d && d->size() > 2) {
      for (size_t i = 2; i < d->size(); ++i) k.push_back((*d)[i].is_known() ? (*d)[i].value : 1);
    }
  }
  return k;
}

bool all_in(const std::vector<int64_t>& values, int64_t lo, int64_t hi) {
  return std::all_of(values.begin(), values.end(), [&](int64_t v) { return v >= lo && v <= hi; });
}

std::string range(int64_t lo, int64_t hi) {
  std::ostringstream s;
  s << "[" << lo << ", " << hi << "]";
  return s.str();
}

// ---------------------------------------------------------------- reusable constraints

Constraint rank_is(std::string_view id, size_t rank, std::string text) {
  return {id, [text](const MarchSpec&) { return text; },
          [rank](const Node& n, const MarchSpec&) {
            auto r = rank_of(n.input(0));
            return !r || *r == rank;
          }};
}

// Rank of the first `featuremaps` inputs (constants excluded).
Constraint rank_between(std::string_view id, size_t lo, size_t hi, size_t featuremaps = 1) {
  return {id,
          [lo, hi](const MarchSpec&) {
            return "input rank must be in " + range(static_cast<int64_t>(lo), static_cast<int64_t>(hi));
          },
          [lo, hi, featuremaps](const Node& n, const MarchSpec&) {
            for (size_t i = 0; i < featuremaps && i < n.inputs().size(); ++i) {
              const ir::Value* in = n.input(i);
              if (in == nullptr || in->is_constant()) continue;
              auto r = rank_of(in);
              if (r && (*r < lo || *r > hi)) return false;
            }
            return true;
          }};
}

Constraint input_constant(std::string_view id, size_t index, std::string what) {
  return {id, [what](const MarchSpec&) { return what + " must be a constant"; },
          [index](const Node& n, const MarchSpec&) {
            return n.input(index) == nullptr || is_constant(n.input(index));
          }};
}

Constraint dims_within_limit() {
  return {"tensor.dims",
          [](const MarchSpec& m) {
            return "every dimension after N must be in " + range(1, m.tensor_dim_max);
          },
          [](const Node& n, const MarchSpec& m) {
            for (const ir::Value* v : n.inputs()) {
              auto d = dims_of(v);
              if (!d || (v && v->is_constant())) continue;
              for (size_t i = 1; i < d->size(); ++i) {
                if ((*d)[i].is_known() && ((*d)[i].value < 1 || (*d)[i].value > m.tensor_dim_max)) {
                  return false;
                }
              }
            }
            return true;
          }};
}

Constraint kernel_size(std::string_view id, int MarchSpec::*limit, std::string what) {
  return {id,
          [limit, what](const MarchSpec& m) {
            return what + " H and W must be in " + range(1, m.*limit);
          },
          [limit](const Node& n, const MarchSpec& m) { return all_in(kernel_shape(n), 1, m.*limit); }};
}

Constraint strides_in_range(std::string_view id, int MarchSpec::*limit) {
  return {id, [limit](const MarchSpec& m) { return "stride H and W must be in " + range(1, m.*limit); },
          [limit](const Node& n, const MarchSpec& m) {
            return all_in(ints_attr(n, "strides", {1, 1}), 1, m.*limit);
          }};
}

Constraint pads_in_range(std::string_view id) {
  return {id, [](const MarchSpec& m) { return "pads must be in " + range(0, m.conv_stride_max); },
          [](const Node& n, const MarchSpec& m) {
            return all_in(ints_attr(n, "pads", {0, 0, 0, 0}), 0, m.conv_stride_max);
          }};
}

Constraint channels_per_group(std::string_view id) {
  return {id,
          [](const MarchSpec& m) {
            return "input and output channels per group must be in " + range(1, m.channels_max);
          },
          [](const Node& n, const MarchSpec& m) {
            const int64_t group = std::max<int64_t>(1, int_attr(n, "group", 1));
            auto c = dim_of(n.input(0), 1);
            auto w0 = dim_of(n.input(1), 0);
            if (c && *c / group > m.channels_max) return false;
            if (w0 && *w0 / (n.op_type() == "ConvTranspose" ? 1 : group) > m.channels_max) return false;
            return true;
          }};
}

Constraint no_batch_broadcast() {
  return {"elementwise.broadcast",
          [](const MarchSpec&) {
            return std::string("inputs must agree on dimension 0 (no broadcasting along N)");
          },
          [](const Node& n, const MarchSpec&) {
            auto a = dims_of(n.input(0));
            auto b = dims_of(n.input(1));
            if (!a || !b || a->empty() || b->empty()) return true;
            if (a->size() != b->size()) return true;  // leading dims broadcast from rank
            const ir::Dim& x = a->front();
            const ir::Dim& y = b->front();
            return !(x.is_known() && y.is_known() && x.value != y.value);
          }};
}

Constraint at_most_one_constant() {
  return {"elementwise.constants",
          [](const MarchSpec&) { return std::string("at most one input may be a constant"); },
          [](const Node& n, const MarchSpec&) {
            int constants = 0;
            for (const ir::Value* v : n.inputs()) constants += is_constant(v) ? 1 : 0;
            return constants <= 1;
          }};
}

Constraint attr_equals(std::string_view id, std::string_view attr, int64_t value, int64_t fallback) {
  return {id,
          [attr, value](const MarchSpec&) {
            std::ostringstream s;
            s << attr << " must be " << value;
            return s.str();
          },
          [attr, value, fallback](const Node& n, const MarchSpec&) {
            return int_attr(n, attr, fallback) == value;
          }};
}

Constraint not_along_batch(std::string_view id, std::string_view attr, int64_t fallback) {
  return {id, [attr](const MarchSpec&) { return std::string(attr) + " must not be 0 (the N axis)"; },
          [attr, fallback](const Node& n, const MarchSpec&) {
            int64_t axis = int_attr(n, attr, fallback);
            auto r = rank_of(n.input(0));
            if (r && axis < 0) axis += static_cast<int64_t>(*r);
            return axis != 0;
          }};
}

const std::vector<March> kAllMarches = {March::kBernoulli2, March::kBayes, March::kBayesE,
                                        March::kNashE, March::kNashM};

std::vector<OpSupport> build_table() {
  std::vector<OpSupport> t;
  auto conv_constraints = [] {
    return std::vector<Constraint>{
        rank_is("conv.rank", 4, "input must be 4-D (N, C, H, W)"),
        input_constant("conv.weight", 1, "W"),
        input_constant("conv.bias", 2, "B"),
        kernel_size("conv.kernel", &MarchSpec::conv_kernel_max, "kernel"),
        strides_in_range("conv.stride", &MarchSpec::conv_stride_max),
        {"conv.dilation",
         [](const MarchSpec& m) { return "dilation must be in " + range(1, m.conv_dilation_max); },
         [](const Node& n, const MarchSpec& m) {
           return all_in(ints_attr(n, "dilations", {1, 1}), 1, m.conv_dilation_max);
         }},
        pads_in_range("conv.pads"),
        channels_per_group("conv.channels"),
        dims_within_limit(),
    };
  };
  t.push_back({"Conv", "HzSQuantizedConv", OpKind::kCompute, kAllMarches, true, false,
               conv_constraints(), "2-D convolution with bias, fused residual Add and ReLU/Clip"});
  // The input preprocessing that stage 1 inserts (domain horizon): a 1x1 convolution.
  t.push_back({"HzPreprocess", "HzSQuantizedPreprocess", OpKind::kCompute, kAllMarches, false,
               false, {dims_within_limit()},
               "horizon-domain input preprocessing: colour conversion, mean and scale"});
  t.push_back({"ConvTranspose", "HzSQuantizedConvTranspose", OpKind::kCompute, kAllMarches, true,
               false,
               {rank_is("deconv.rank", 4, "input must be 4-D (N, C, H, W)"),
                input_constant("deconv.weight", 1, "W"), input_constant("deconv.bias", 2, "B"),
                kernel_size("deconv.kernel", &MarchSpec::conv_transpose_kernel_max, "kernel"),
                strides_in_range("deconv.stride", &MarchSpec::conv_transpose_kernel_max),
                {"deconv.dilation", [](const MarchSpec&) { return std::string("dilation must be 1"); },
                 [](const Node& n, const MarchSpec&) { return all_in(ints_attr(n, "dilations", {1, 1}), 1, 1); }},
                channels_per_group("deconv.channels"), dims_within_limit()},
               "transposed 2-D convolution"});
  t.push_back({"Gemm", "HzSQuantizedConv", OpKind::kCompute, kAllMarches, true, false,
               {input_constant("gemm.weight", 1, "B"), input_constant("gemm.bias", 2, "C"),
                attr_equals("gemm.trans_a", "transA", 0, 0), rank_is("gemm.rank", 2, "A must be 2-D"),
                dims_within_limit()},
               "lowered to a 1x1 convolution"});
  t.push_back({"MatMul", "HzSQuantizedMatmul", OpKind::kCompute, kAllMarches, true, false,
               {rank_between("matmul.rank", 2, 4, 2), dims_within_limit()},
               "featuremap x featuremap, or x constant (as a 1x1 convolution)"});
  for (auto [op, type] : {std::pair{"Add", "HzSElementwiseAdd"}, std::pair{"Sub", "HzSElementwiseSub"},
                          std::pair{"Mul", "HzSElementwiseMul"}}) {
    t.push_back({op, type, OpKind::kCompute, kAllMarches, true, false,
                 {rank_between("elementwise.rank", 1, 5, 2), no_batch_broadcast(), at_most_one_constant(),
                  dims_within_limit()},
                 "elementwise with broadcasting; Add after a Conv fuses into it"});
  }
  t.push_back({"GlobalAveragePool", "HzSQuantizedGlobalAveragePool", OpKind::kCompute, kAllMarches,
               true, false, {rank_is("gap.rank", 4, "input must be 4-D"), dims_within_limit()}, ""});
  t.push_back({"AveragePool", "HzSQuantizedAveragePool", OpKind::kCompute, kAllMarches, true, false,
               {rank_is("avgpool.rank", 4, "input must be 4-D"),
                kernel_size("avgpool.kernel", &MarchSpec::pool_kernel_max, "kernel"),
                strides_in_range("avgpool.stride", &MarchSpec::conv_stride_max), pads_in_range("avgpool.pads"),
                dims_within_limit()},
               ""});
  t.push_back({"ReduceMean", "HzSQuantizedReduceMean", OpKind::kCompute, kAllMarches, true, false,
               {rank_between("reduce.rank", 2, 4),
                {"reduce.axes_constant",
                 [](const MarchSpec&) { return std::string("axes must be an attribute or a constant"); },
                 [](const Node& n, const MarchSpec&) { return n.input(1) == nullptr || is_constant(n.input(1)); }},
                dims_within_limit()},
               ""});
  // ArgMax reads the quantized input directly (a positive per-tensor scale keeps the order) and
  // writes int32 indices; the quantizer adds a CPU Cast to int64 where int64 is needed.
  t.push_back({"ArgMax", "HzQuantizedArgMax", OpKind::kCompute, kAllMarches, true, false,
               {{"argmax.rank",
                 [](const MarchSpec& m) {
                   return std::string(m.axis_ops_4d_only ? "input must be 4-D (N, C, H, W)"
                                                         : "input may have any rank");
                 },
                 [](const Node& n, const MarchSpec& m) {
                   auto r = rank_of(n.input(0));
                   return !m.axis_ops_4d_only || !r || *r == 4;
                 }},
                {"argmax.axis",
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
                {"argmax.extent",
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
                attr_equals("argmax.select_last_index", "select_last_index", 0, 0),
                {"argmax.keepdims", [](const MarchSpec&) { return std::string("keepdims must be 0 or 1"); },
                 [](const Node& n, const MarchSpec&) {
                   const int64_t k = int_attr(n, "keepdims", 1);
                   return k == 0 || k == 1;
                 }}},
               "int32 indices of the first maximum; a CPU Cast makes them int64 where needed"});
  // Softmax along one axis (the optimizer gives opset < 13 Softmax nodes that meaning): integer
  // exp (a Q30 exp2 table) and one reciprocal per row, output of the input's width. CPU unless
  // run_on_bpu, except on marches whose table says softmax_on_bpu_default.
  t.push_back({"Softmax", "HzQuantizedSoftmax", OpKind::kCompute, kAllMarches, true, true,
               {{"softmax.rank",
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
               "integer softmax along one axis (Q30 exp2 table, one reciprocal per row)",
               &MarchSpec::softmax_on_bpu_default});
  t.push_back({"Resize", "HzQuantizedResizeUpsample", OpKind::kCompute, kAllMarches, true, false,
               {rank_is("resize.rank", 4, "input must be 4-D (N, C, H, W)"),
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
               "resizes H and W; N and C unchanged"});
  t.push_back({"Upsample", "HzQuantizedResizeUpsample", OpKind::kCompute, kAllMarches, true, false,
               {rank_is("upsample.rank", 4, "input must be 4-D (N, C, H, W)"), dims_within_limit()}, ""});
  // Lookup-table functions.
  for (const char* op : {"Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Exp", "Log", "Erf", "Sqrt",
                         "Reciprocal", "Softplus", "Softsign", "Elu", "Selu", "Celu", "LeakyRelu",
                         "ThresholdedRelu", "Abs", "Neg", "Sin", "Cos", "Atan", "Mish"}) {
    t.push_back({op, "HzLut", OpKind::kLut, kAllMarches, true, false,
                 {rank_between("lut.rank", 1, 5), dims_within_limit()},
                 "table lookup (int8: 256 entries; int16: 256 linear segments)"});
  }
  t.push_back({"Pow", "HzLut", OpKind::kLut, kAllMarches, true, false,
               {input_constant("pow.exponent", 1, "the exponent"), dims_within_limit()},
               "constant exponent only"});
  // Passive operators: the output keeps the input's scale.
  // ReLU and Clip fuse into the producing Conv (clamp attributes); alone they are a table.
  t.push_back({"Relu", "HzLut", OpKind::kLut, kAllMarches, true, false, {dims_within_limit()},
               "fuses into the producing Conv"});
  t.push_back({"Clip", "HzLut", OpKind::kLut, kAllMarches, true, false,
               {input_constant("clip.min", 1, "min"), input_constant("clip.max", 2, "max"),
                dims_within_limit()},
               "fuses into the producing Conv (ReLU6)"});
  t.push_back({"MaxPool", "HzQuantizedMaxPool", OpKind::kPassive, kAllMarches, true, false,
               {rank_is("maxpool.rank", 4, "input must be 4-D"),
                kernel_size("maxpool.kernel", &MarchSpec::pool_kernel_max, "kernel"),
                strides_in_range("maxpool.stride", &MarchSpec::conv_stride_max),
                {"maxpool.dilation", [](const MarchSpec&) { return std::string("dilation must be 1"); },
                 [](const Node& n, const MarchSpec&) { return all_in(ints_attr(n, "dilations", {1, 1}), 1, 1); }},
                {"maxpool.indices", [](const MarchSpec&) { return std::string("the Indices output is not supported"); },
                 [](const Node& n, const MarchSpec&) { return n.output(1) == nullptr; }},
                dims_within_limit()},
               ""});
  t.push_back({"GlobalMaxPool", "HzQuantizedGlobalMaxPool", OpKind::kPassive, kAllMarches, true, false,
               {rank_is("gmp.rank", 4, "input must be 4-D"),
                {"gmp.size", [](const MarchSpec& m) { return "H and W must be in " + range(1, m.pool_kernel_max); },
                 [](const Node& n, const MarchSpec& m) {
                   auto h = dim_of(n.input(0), 2), w = dim_of(n.input(0), 3);
                   return (!h || *h <= m.pool_kernel_max) && (!w || *w <= m.pool_kernel_max);
                 }}},
               ""});
  t.push_back({"Concat", "Concat", OpKind::kPassive, kAllMarches, true, false,
               {not_along_batch("concat.axis", "axis", 1), dims_within_limit()},
               "inputs are requantized to one scale"});
  t.push_back({"Split", "Split", OpKind::kPassive, kAllMarches, true, false,
               {not_along_batch("split.axis", "axis", 0),
                input_constant("split.sizes", 1, "split"), dims_within_limit()}, ""});
  t.push_back({"Slice", "Slice", OpKind::kPassive, kAllMarches, true, false,
               {input_constant("slice.starts", 1, "starts"), input_constant("slice.ends", 2, "ends"),
                input_constant("slice.axes", 3, "axes"), input_constant("slice.steps", 4, "steps")},
               ""});
  t.push_back({"Reshape", "Reshape", OpKind::kPassive, kAllMarches, true, false,
               {input_constant("reshape.shape", 1, "shape")}, ""});
  t.push_back({"Flatten", "Reshape", OpKind::kPassive, kAllMarches, true, false, {}, ""});
  t.push_back({"Squeeze", "Reshape", OpKind::kPassive, kAllMarches, true, false,
               {input_constant("squeeze.axes", 1, "axes")}, ""});
  t.push_back({"Unsqueeze", "Reshape", OpKind::kPassive, kAllMarches, true, false,
               {input_constant("unsqueeze.axes", 1, "axes")}, ""});
  t.push_back({"Transpose", "Transpose", OpKind::kPassive, kAllMarches, true, false,
               {rank_between("transpose.rank", 2, 5)}, ""});
  t.push_back({"Pad", "HzPad", OpKind::kPassive, kAllMarches, true, false,
               {{"pad.mode", [](const MarchSpec&) { return std::string("mode must be constant"); },
                 [](const Node& n, const MarchSpec&) { return string_attr(n, "mode", "constant") == "constant"; }},
                input_constant("pad.pads", 1, "pads"),
                {"pad.value", [](const MarchSpec&) { return std::string("the pad value must be 0"); },
                 [](const Node& n, const MarchSpec&) {
                   const ir::Value* v = n.input(2);
                   if (v == nullptr) return true;
                   if (!v->is_constant()) return false;
                   const auto& c = *v->constant();
                   for (int64_t i = 0; i < c.element_count(); ++i) {
                     if (c.float_at(i) != 0.0) return false;
                   }
                   return true;
                 }}},
               ""});
  t.push_back({"DepthToSpace", "DepthToSpace", OpKind::kPassive, kAllMarches, true, false,
               {rank_is("d2s.rank", 4, "input must be 4-D")}, ""});
  t.push_back({"SpaceToDepth", "SpaceToDepth", OpKind::kPassive, kAllMarches, true, false,
               {rank_is("s2d.rank", 4, "input must be 4-D")}, ""});
  t.push_back({"Gather", "Gather", OpKind::kPassive, kAllMarches, true, false,
               {input_constant("gather.indices", 1, "indices"), rank_between("gather.rank", 1, 4)}, ""});
  return t;
}

}  // namespace

std::span<const OpSupport> op_support_table() {
  static const std::vector<OpSupport> table = build_table();
  return table;
}

const OpSupport* find_op_support(std::string_view op_type) {
  for (const OpSupport& s : op_support_table()) {
    if (s.op_type == op_type) return &s;
  }
  return nullptr;
}

bool cpu_by_default(const OpSupport& support, const MarchSpec& march) {
  return support.cpu_by_default && !(support.bpu_by_default_on != nullptr && march.*support.bpu_by_default_on);
}

std::string SupportVerdict::reason() const {
  std::string out;
  for (const std::string& r : broken_rules) out += (out.empty() ? "" : "; ") + r;
  return out;
}

SupportVerdict check_node(const ir::Node& node, const MarchSpec& march) {
  SupportVerdict v;
  const bool horizon_preprocess = node.domain() == "horizon" && node.op_type() == "HzPreprocess";
  if (!node.domain().empty() && !horizon_preprocess) {
    v.broken_rules.push_back("operator " + node.domain() + "::" + node.op_type() +
                             " has no BPU implementation");
    return v;
  }
  v.support = find_op_support(node.op_type());
  if (v.support == nullptr) {
    v.broken_rules.push_back("operator " + node.op_type() + " has no BPU implementation");
    return v;
  }
  const auto& marches = v.support->marches;
  if (std::find(marches.begin(), marches.end(), march.march) == marches.end()) {
    v.broken_rules.push_back("operator " + node.op_type() + " has no BPU implementation on " +
                             std::string(march.name));
    return v;
  }
  for (const Constraint& c : v.support->constraints) {
    if (!c.holds(node, march)) v.broken_rules.push_back(c.rule(march));
  }
  v.on_bpu_possible = v.broken_rules.empty();
  return v;
}

std::string supported_ops_markdown() {
  std::ostringstream out;
  out << "# Operators on the BPU\n\n"
         "Generated from the operator support table "
         "(`toolchain/bpu_support/src/op_support_table.cc`) by `hb_mapper supported-ops`; a test "
         "keeps this file in sync. An operator runs on the BPU when the march supports it and "
         "every rule holds; otherwise it runs on the CPU in float, and `hb_mapper checker` prints "
         "the broken rule. The limits come from the virtual BPU's march table "
         "(`simulator/src/march.cc`).\n\n";
  for (const MarchSpec& m : simulator::all_marches()) {
    out << "## " << m.name << " (" << m.chip << ")\n\n";
    out << "| ONNX operator | BPU type | kind | int16 | rules |\n|---|---|---|---|---|\n";
    for (const OpSupport& s : op_support_table()) {
      if (std::find(s.marches.begin(), s.marches.end(), m.march) == s.marches.end()) continue;
      const char* kind = s.kind == OpKind::kCompute ? "compute" : s.kind == OpKind::kLut ? "lut" : "passive";
      out << "| " << s.op_type << " | " << s.bpu_type << " | " << kind << " | "
          << (s.int16 && m.supports_int16() ? "yes" : "no") << " | ";
      std::string rules;
      for (const Constraint& c : s.constraints) rules += (rules.empty() ? "" : "; ") + c.rule(m);
      if (cpu_by_default(s, m)) rules += (rules.empty() ? "" : "; ") + std::string("CPU unless run_on_bpu");
      if (!s.note.empty()) rules += (rules.empty() ? "" : " — ") + std::string(s.note);
      out << (rules.empty() ? "—" : rules) << " |\n";
    }
    out << "\n";
  }
  out << "Every other operator runs on the CPU (float kernels of `runtime/kernels`).\n";
  return out.str();
}

}  // namespace openbpu::bpu_support
