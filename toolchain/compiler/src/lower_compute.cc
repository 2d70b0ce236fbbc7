// Lowering of the horizon-domain compute operators (docs/quantized_ops.md) to instructions.
#include <algorithm>
#include <cstring>

#include "openbpu/kernels/convolution.h"
#include "openbpu/kernels/quantized_tables.h"
#include "segment_builder.h"

namespace openbpu::compiler {

namespace {

using kernels::AttributeMap;

const kernels::Tensor& constant_input(const ir::Node& node, size_t i, const char* what) {
  const ir::Value* v = node.input(i);
  if (v == nullptr || v->constant() == nullptr) raise(where(node), ": input ", i, " (", what, ") must be a constant");
  return *v->constant();
}

const ir::Value* optional_input(const ir::Node& node, size_t i) {
  const ir::Value* v = node.input(i);
  return v != nullptr && !v->name().empty() ? v : nullptr;
}

std::pair<int32_t, int32_t> type_range(isa::ElementType t) {
  switch (t) {
    case isa::ElementType::kInt8: return {-128, 127};
    case isa::ElementType::kInt16: return {-32768, 32767};
    default: return {INT32_MIN, INT32_MAX};
  }
}

// The clamp of an operator with clip_min / clip_max (default: the output type's range).
std::pair<int32_t, int32_t> read_clamp(const AttributeMap& attrs, isa::ElementType out) {
  const auto [lo, hi] = type_range(out);
  return {static_cast<int32_t>(attrs.get_int("clip_min", lo)),
          static_cast<int32_t>(attrs.get_int("clip_max", hi))};
}

// A rank-3 [N, C, L] operand seen as [N, C, 1, L].
isa::TensorDesc as_4d(const isa::TensorDesc& d, const ir::Node& node) {
  if (d.rank == 4) return d;
  if (d.rank == 3) return insert_unit_axis(d, 2);
  raise(where(node), ": the BPU convolves and pools 1-D or 2-D feature maps (rank 3 or 4), got rank ", d.rank);
}

void conv(SegmentBuilder& b, const ir::Node& node, bool transpose) {
  const AttributeMap& attrs = node.attrs();
  const Placed& x = b.get(node.input(0));
  const kernels::Tensor& w = constant_input(node, 1, "weights");
  const ir::Value* bias = optional_input(node, 2);
  const ir::Value* residual = transpose ? nullptr : optional_input(node, 3);
  Placed& y = b.define(node.output(0));
  isa::ConvInstruction in{};
  in.input = as_4d(x.desc, node);
  in.output = as_4d(y.desc, node);
  const bool one_d = x.desc.rank == 3;
  const int64_t group = attrs.get_int("group", 1);
  const uint32_t C = in.input.dims[1], M = in.output.dims[1];
  if (w.rank() != (one_d ? 3 : 4)) raise(where(node), ": weights ", w.describe(), " do not match the input rank");
  const int64_t KH = one_d ? 1 : w.dim(2), KW = w.dim(one_d ? 2 : 3);
  const int64_t Cg = C / group, Mg = M / group;
  // Pack weights [M][KH][KW][Cg].
  std::vector<int8_t> packed(static_cast<size_t>(M * KH * KW * Cg));
  const int8_t* pw = w.data<int8_t>();
  for (int64_t m = 0; m < M; ++m) {
    const int64_t g = m / Mg;
    for (int64_t kh = 0; kh < KH; ++kh) {
      for (int64_t kw = 0; kw < KW; ++kw) {
        for (int64_t c = 0; c < Cg; ++c) {
          // Conv: w[m][c][kh][kw]; ConvTranspose: w[g*Cg + c][m - g*Mg][kh][kw].
          const int64_t src = transpose ? (((g * Cg + c) * Mg + (m - g * Mg)) * KH + kh) * KW + kw
                                        : ((m * Cg + c) * KH + kh) * KW + kw;
          packed[size_t(((m * KH + kh) * KW + kw) * Cg + c)] = pw[src];
        }
      }
    }
  }
  if (w.element_count() != static_cast<int64_t>(packed.size())) {
    raise(where(node), ": weights ", w.describe(), " do not match ", C, " input and ", M,
          " output channels in ", group, " groups");
  }
  in.weights = b.constant(packed.data(), packed.size());
  in.bias = isa::kNoAddress;
  if (bias != nullptr) {
    const kernels::Tensor& t = constant_input(node, 2, "bias");
    in.bias = b.constant(t.raw_data(), t.byte_size());
  }
  in.requant = isa::kNoAddress;
  if (y.desc.type != isa::ElementType::kInt32) {
    in.requant = b.multipliers(attrs.get_ints("multipliers"), attrs.get_ints("shifts"), where(node));
  }
  in.residual = isa::TensorDesc{};
  in.residual_requant = isa::kNoAddress;
  int residual_buffer = -1;
  if (residual != nullptr) {
    const Placed& r = b.get(residual);
    in.residual = as_4d(r.desc, node);
    residual_buffer = r.buffer;
    in.residual_requant = b.multipliers(attrs.get_ints("residual_multipliers"),
                                        attrs.get_ints("residual_shifts"), where(node));
  }
  const std::vector<int64_t> strides = attrs.get_ints("strides", {});
  const std::vector<int64_t> dilations = attrs.get_ints("dilations", {});
  const std::vector<int64_t> pads = attrs.get_ints("pads", {});
  auto at = [&](const std::vector<int64_t>& v, size_t axis2d, int64_t fallback) -> int64_t {
    if (v.empty()) return fallback;
    if (one_d) return axis2d == 0 ? fallback : v[0];
    return v[axis2d];
  };
  in.kernel_h = static_cast<uint32_t>(KH);
  in.kernel_w = static_cast<uint32_t>(KW);
  in.stride_h = static_cast<uint32_t>(at(strides, 0, 1));
  in.stride_w = static_cast<uint32_t>(at(strides, 1, 1));
  in.dilation_h = static_cast<uint32_t>(at(dilations, 0, 1));
  in.dilation_w = static_cast<uint32_t>(at(dilations, 1, 1));
  in.pad_top = static_cast<int32_t>(at(pads, 0, 0));
  in.pad_left = static_cast<int32_t>(at(pads, 1, 0));
  in.group = static_cast<uint32_t>(group);
  std::tie(in.clip_min, in.clip_max) = read_clamp(attrs, y.desc.type);
  in.tiling = {0, 0};
  b.emit(transpose ? isa::Opcode::kConvTranspose : isa::Opcode::kConv, in,
         {x.buffer, y.buffer, residual_buffer});
}

void matmul(SegmentBuilder& b, const ir::Node& node) {
  const Placed& a = b.get(node.input(0));
  const Placed& c = b.get(node.input(1));
  const Placed& y = b.define(node.output(0));
  if (a.desc.rank < 2 || c.desc.rank < 2) {
    raise(where(node), ": the BPU multiplies matrices of rank >= 2; 1-D operands are not lowered");
  }
  isa::MatMulInstruction in{};
  in.output = y.desc;
  // Batch axes broadcast to the output's; the two matrix axes stay.
  auto batch_view = [&](isa::TensorDesc d) {
    while (d.rank < y.desc.rank) d = insert_unit_axis(d, 0);
    for (uint32_t i = 0; i + 2 < d.rank; ++i) {
      if (d.dims[i] == 1 && y.desc.dims[i] != 1) {
        d.dims[i] = y.desc.dims[i];
        d.strides[i] = 0;
      }
    }
    return d;
  };
  in.a = batch_view(a.desc);
  in.b = batch_view(c.desc);
  in.multiplier = static_cast<int32_t>(node.attrs().get_int("multiplier", 0));
  in.shift = static_cast<int32_t>(node.attrs().get_int("shift", 0));
  b.emit(isa::Opcode::kMatMul, in, {a.buffer, c.buffer, y.buffer});
}

void elementwise(SegmentBuilder& b, const ir::Node& node, isa::ElementwiseOp op) {
  const AttributeMap& attrs = node.attrs();
  const Placed& a = b.get(node.input(0));
  const Placed& c = b.get(node.input(1));
  const Placed& y = b.define(node.output(0));
  isa::ElementwiseInstruction in{};
  in.op = op;
  in.a = broadcast_to(a.desc, y.desc);
  in.b = broadcast_to(c.desc, y.desc);
  in.output = y.desc;
  if (op == isa::ElementwiseOp::kMul) {
    in.multiplier_a = static_cast<int32_t>(attrs.get_int("multiplier"));
    in.shift_a = static_cast<int32_t>(attrs.get_int("shift"));
  } else {
    const std::vector<int64_t> m = attrs.get_ints("input_multipliers");
    const std::vector<int64_t> s = attrs.get_ints("input_shifts");
    if (m.size() != 2 || s.size() != 2) raise(where(node), ": input_multipliers/input_shifts need 2 entries");
    in.multiplier_a = static_cast<int32_t>(m[0]);
    in.shift_a = static_cast<int32_t>(s[0]);
    in.multiplier_b = static_cast<int32_t>(m[1]);
    in.shift_b = static_cast<int32_t>(s[1]);
    in.intermediate_shift = static_cast<uint32_t>(attrs.get_int("intermediate_shift", 8));
  }
  std::tie(in.clip_min, in.clip_max) = read_clamp(attrs, y.desc.type);
  b.emit(isa::Opcode::kElementwise, in, {a.buffer, c.buffer, y.buffer});
}

// HzSWhere(condition, a, b): one kSelect, every operand broadcast to the output.
void select(SegmentBuilder& b, const ir::Node& node) {
  const AttributeMap& attrs = node.attrs();
  const Placed& c = b.get(node.input(0));
  const Placed& x = b.get(node.input(1));
  const Placed& z = b.get(node.input(2));
  const Placed& y = b.define(node.output(0));
  const std::vector<int64_t> m = attrs.get_ints("input_multipliers");
  const std::vector<int64_t> s = attrs.get_ints("input_shifts");
  if (m.size() != 2 || s.size() != 2) raise(where(node), ": input_multipliers/input_shifts need 2 entries");
  isa::SelectInstruction in{};
  in.condition = broadcast_to(c.desc, y.desc);
  in.a = broadcast_to(x.desc, y.desc);
  in.b = broadcast_to(z.desc, y.desc);
  in.output = y.desc;
  in.multiplier_a = static_cast<int32_t>(m[0]);
  in.shift_a = static_cast<int32_t>(s[0]);
  in.multiplier_b = static_cast<int32_t>(m[1]);
  in.shift_b = static_cast<int32_t>(s[1]);
  in.intermediate_shift = static_cast<uint32_t>(attrs.get_int("intermediate_shift", 8));
  b.emit(isa::Opcode::kSelect, in, {c.buffer, x.buffer, z.buffer, y.buffer});
}

// The table of an HzLut for its input type (int8[256] or int32[257]).
const kernels::Tensor& lut_table(const ir::Node& node, isa::ElementType input) {
  const kernels::Tensor& table = constant_input(node, 1, "table");
  const bool int8 = input == isa::ElementType::kInt8;
  if ((int8 && (table.dtype() != kernels::DataType::kInt8 || table.element_count() != 256)) ||
      (!int8 && (table.dtype() != kernels::DataType::kInt32 || table.element_count() != 257))) {
    raise(where(node), ": table ", table.describe(), " does not fit the input type (int8[256] or int32[257])");
  }
  return table;
}

void lut(SegmentBuilder& b, const ir::Node& node) {
  const Placed& x = b.get(node.input(0));
  const Placed& y = b.define(node.output(0));
  const kernels::Tensor& table = lut_table(node, x.desc.type);
  isa::LutInstruction in{};
  in.input = x.desc;
  in.output = y.desc;
  in.table = b.constant(table.raw_data(), table.byte_size());
  b.emit(isa::Opcode::kLut, in, {x.buffer, y.buffer});
}

// HzQuantizedSoftmax: kSoftmax along the node's axis with its two multipliers.
void softmax(SegmentBuilder& b, const ir::Node& node) {
  const AttributeMap& attrs = node.attrs();
  const Placed& x = b.get(node.input(0));
  const Placed& y = b.define(node.output(0));
  int64_t axis = attrs.get_int("axis");
  if (axis < 0) axis += x.desc.rank;
  if (axis < 0 || axis >= static_cast<int64_t>(x.desc.rank)) raise(where(node), ": axis ", axis, " is outside the input");
  isa::SoftmaxInstruction in{};
  in.input = x.desc;
  in.output = y.desc;
  in.axis = static_cast<uint32_t>(axis);
  in.exponent_multiplier = static_cast<int32_t>(attrs.get_int("exponent_multiplier"));
  in.exponent_shift = static_cast<int32_t>(attrs.get_int("exponent_shift"));
  in.output_multiplier = static_cast<int32_t>(attrs.get_int("output_multiplier"));
  in.output_shift = static_cast<int32_t>(attrs.get_int("output_shift"));
  b.emit(isa::Opcode::kSoftmax, in, {x.buffer, y.buffer});
}

void requantize(SegmentBuilder& b, const ir::Node& node) {
  const AttributeMap& attrs = node.attrs();
  const Placed& x = b.get(node.input(0));
  const Placed& y = b.define(node.output(0));
  isa::RequantizeInstruction in{};
  in.input = x.desc;
  in.output = y.desc;
  if (attrs.has("multipliers")) {
    const std::vector<int64_t> m = attrs.get_ints("multipliers");
    int64_t axis = attrs.get_int("axis", 1);
    if (axis < 0) axis += x.desc.rank;
    in.table = b.multipliers(m, attrs.get_ints("shifts"), where(node));
    in.count = static_cast<uint32_t>(m.size());
    in.axis = static_cast<uint32_t>(axis);
  } else {
    in.table = b.multipliers({attrs.get_int("multiplier")}, {attrs.get_int("shift")}, where(node));
    in.count = 1;
    in.axis = 0;
  }
  b.emit(isa::Opcode::kRequantize, in, {x.buffer, y.buffer});
}

// GlobalAveragePool / ReduceMean (kMean), GlobalMaxPool (kMax): a reduction over the axes in
// `mask`; the output buffer holds the kept-dims tensor (same bytes as the keepdims=0 tensor when
// dense).
void reduce(SegmentBuilder& b, const ir::Node& node, uint32_t mask, isa::ReduceOp op) {
  const Placed& x = b.get(node.input(0));
  isa::TensorDesc kept = x.desc;
  for (uint32_t d = 0; d < kept.rank; ++d) {
    if ((mask >> d) & 1u) kept.dims[d] = 1;
  }
  const bool keepdims = b.info(node.output(0)).shape.size() == x.desc.rank;
  Placed& y = b.define(node.output(0), keepdims);
  isa::ReduceInstruction in{};
  in.op = op;
  in.input = x.desc;
  if (keepdims) {
    in.output = y.desc;
  } else {
    kernels::Shape dims(kept.dims, kept.dims + kept.rank);
    in.output = simulator::dense_desc(y.desc.address, y.desc.type, dims);
  }
  in.axes_mask = mask;
  if (op == isa::ReduceOp::kMean) {
    in.multiplier = static_cast<int32_t>(node.attrs().get_int("multiplier"));
    in.shift = static_cast<int32_t>(node.attrs().get_int("shift"));
  }
  b.emit(isa::Opcode::kReduce, in, {x.buffer, y.buffer});
}

// HzQuantizedArgMax / ArgMin: kReduce kArgMax / kArgMin along one axis, int32 output (the
// kept-dims tensor, as reduce).
void arg_extreme(SegmentBuilder& b, const ir::Node& node, isa::ReduceOp op) {
  const Placed& x = b.get(node.input(0));
  int64_t axis = node.attrs().get_int("axis", 0);
  if (axis < 0) axis += x.desc.rank;
  if (axis < 0 || axis >= static_cast<int64_t>(x.desc.rank)) raise(where(node), ": axis ", axis, " is outside the input");
  isa::TensorDesc kept = x.desc;
  kept.dims[static_cast<size_t>(axis)] = 1;
  const bool keepdims = b.info(node.output(0)).shape.size() == x.desc.rank;
  Placed& y = b.define(node.output(0), keepdims);
  isa::ReduceInstruction in{};
  in.op = op;
  in.input = x.desc;
  if (keepdims) {
    in.output = y.desc;
  } else {
    kernels::Shape dims(kept.dims, kept.dims + kept.rank);
    in.output = simulator::dense_desc(y.desc.address, y.desc.type, dims);
  }
  in.axes_mask = 1u << static_cast<uint32_t>(axis);
  b.emit(isa::Opcode::kReduce, in, {x.buffer, y.buffer});
}

void pool(SegmentBuilder& b, const ir::Node& node, bool average) {
  const AttributeMap& attrs = node.attrs();
  const Placed& x = b.get(node.input(0));
  const Placed& y = b.define(node.output(0));
  const kernels::WindowAttributes window = kernels::WindowAttributes::read(node.op_type(), attrs);
  const size_t r = window.kernel_shape.size();
  if (r < 1 || r > 2 || x.desc.rank != r + 2) raise(where(node), ": the BPU pools 1-D or 2-D windows");
  kernels::WindowGeometry g;
  for (size_t i = 0; i < r; ++i) g.in.push_back(x.desc.dims[2 + i]);
  g.kernel = window.kernel_shape;
  kernels::resolve_window(node.op_type(), window, attrs.get_int("ceil_mode", 0) == 1, g);
  const bool one_d = r == 1;
  isa::PoolInstruction in{};
  in.input = as_4d(x.desc, node);
  in.output = as_4d(y.desc, node);
  in.kernel_h = static_cast<uint32_t>(one_d ? 1 : g.kernel[0]);
  in.kernel_w = static_cast<uint32_t>(g.kernel[r - 1]);
  in.stride_h = static_cast<uint32_t>(one_d ? 1 : g.strides[0]);
  in.stride_w = static_cast<uint32_t>(g.strides[r - 1]);
  in.dilation_h = static_cast<uint32_t>(one_d ? 1 : g.dilations[0]);
  in.dilation_w = static_cast<uint32_t>(g.dilations[r - 1]);
  in.pad_top = static_cast<int32_t>(one_d ? 0 : g.pads_begin[0]);
  in.pad_left = static_cast<int32_t>(g.pads_begin[r - 1]);
  if (in.output.dims[2] != (one_d ? 1 : g.out[0]) || in.output.dims[3] != g.out[r - 1]) {
    raise(where(node), ": output ", kernels::shape_to_string(b.info(node.output(0)).shape), " does not match the window");
  }
  in.row_counts = in.col_counts = in.table = isa::kNoAddress;
  if (average) {
    const std::array<std::vector<int64_t>, 3> counts =
        kernels::average_pool_axis_counts(g, attrs.get_int("count_include_pad", 0) == 1);
    auto words = [](const std::vector<int64_t>& v) { return std::vector<int32_t>(v.begin(), v.end()); };
    in.row_counts = b.constant_words(words(counts[1]));
    in.col_counts = b.constant_words(words(counts[2]));
    in.table = b.multipliers(attrs.get_ints("multipliers"), attrs.get_ints("shifts"), where(node));
  }
  in.tiling = {0, 0};
  b.emit(average ? isa::Opcode::kAveragePool : isa::Opcode::kMaxPool, in, {x.buffer, y.buffer});
}

void resize(SegmentBuilder& b, const ir::Node& node) {
  const AttributeMap& attrs = node.attrs();
  const Placed& x = b.get(node.input(0));
  const Placed& y = b.define(node.output(0));
  if (x.desc.rank != 4) raise(where(node), ": the input must be N x C x H x W");
  const std::string mode = attrs.get_string("mode", "nearest");
  const std::string coordinates = attrs.get_string("coordinate_transformation_mode", "half_pixel");
  const std::string nearest = attrs.get_string("nearest_mode", "round_prefer_floor");
  isa::ResizeInstruction in{};
  in.mode = mode == "linear" ? isa::ResizeMode::kLinear : isa::ResizeMode::kNearest;
  in.input = x.desc;
  in.output = y.desc;
  auto table = [&](int64_t input, int64_t output) {
    const kernels::ResizeAxisTable t = kernels::quantized_resize_axis(mode, coordinates, nearest, input, output);
    std::vector<int32_t> words;
    for (size_t i = 0; i < t.i0.size(); ++i) {
      words.push_back(static_cast<int32_t>(t.i0[i]));
      words.push_back(static_cast<int32_t>(t.i1[i]));
      words.push_back(static_cast<int32_t>(t.fraction[i]));
    }
    return b.constant_words(words);
  };
  in.row_table = table(x.desc.dims[2], y.desc.dims[2]);
  in.col_table = table(x.desc.dims[3], y.desc.dims[3]);
  b.emit(isa::Opcode::kResize, in, {x.buffer, y.buffer});
}

}  // namespace

void lower_lut_product(SegmentBuilder& b, const LutProductChain& chain) {
  const Placed& x = b.get(chain.x);
  const Placed& y = b.define(chain.mul->output(0));
  isa::LutProductInstruction in{};
  in.input = broadcast_to(x.desc, y.desc);
  in.output = y.desc;
  in.table_type = element_type(b.info(chain.lut->input(0)).dtype, where(*chain.lut));
  const kernels::Tensor& table = lut_table(*chain.lut, in.table_type);
  in.table = b.constant(table.raw_data(), table.byte_size());
  if (chain.requantize != nullptr) {
    in.rescale = 1;
    in.rescale_multiplier = static_cast<int32_t>(chain.requantize->attrs().get_int("multiplier"));
    in.rescale_shift = static_cast<int32_t>(chain.requantize->attrs().get_int("shift"));
  }
  const AttributeMap& attrs = chain.mul->attrs();
  in.multiplier = static_cast<int32_t>(attrs.get_int("multiplier"));
  in.shift = static_cast<int32_t>(attrs.get_int("shift"));
  std::tie(in.clip_min, in.clip_max) = read_clamp(attrs, y.desc.type);
  b.emit(isa::Opcode::kLutProduct, in, {x.buffer, y.buffer});
}

bool lower_compute(SegmentBuilder& b, const ir::Node& node, const Lowering& lowering) {
  using bpu_support::LowerAs;
  switch (lowering.how) {
    case LowerAs::kConv: conv(b, node, false); return true;
    case LowerAs::kConvTranspose: conv(b, node, true); return true;
    case LowerAs::kMatMul: matmul(b, node); return true;
    case LowerAs::kElementwise: elementwise(b, node, lowering.def->elementwise); return true;
    case LowerAs::kLut: lut(b, node); return true;
    case LowerAs::kSelect: select(b, node); return true;
    case LowerAs::kRequantize: requantize(b, node); return true;
    case LowerAs::kGlobalAveragePool:
    case LowerAs::kGlobalMaxPool: {
      const uint32_t rank = b.get(node.input(0)).desc.rank;
      const bool mean = lowering.how == LowerAs::kGlobalAveragePool;
      reduce(b, node, ((1u << rank) - 1) & ~3u, mean ? isa::ReduceOp::kMean : isa::ReduceOp::kMax);
      return true;
    }
    case LowerAs::kReduceMean: {
      const uint32_t rank = b.get(node.input(0)).desc.rank;
      uint32_t mask = 0;
      const std::vector<int64_t> axes = node.attrs().get_ints("axes", {});
      for (int64_t a : axes) mask |= 1u << static_cast<uint32_t>(a < 0 ? a + rank : a);
      if (axes.empty()) mask = (1u << rank) - 1;
      reduce(b, node, mask, isa::ReduceOp::kMean);
      return true;
    }
    case LowerAs::kReduceMax: {
      const uint32_t rank = b.get(node.input(0)).desc.rank;
      std::vector<int64_t> axes = node.attrs().get_ints("axes", {});
      if (node.input(1) != nullptr && node.input(1)->constant() != nullptr) axes = node.input(1)->constant()->to_int64_vector();
      uint32_t mask = 0;
      for (int64_t a : axes) mask |= 1u << static_cast<uint32_t>(a < 0 ? a + rank : a);
      if (axes.empty()) mask = (1u << rank) - 1;
      reduce(b, node, mask, isa::ReduceOp::kMax);
      return true;
    }
    case LowerAs::kArgMax: arg_extreme(b, node, isa::ReduceOp::kArgMax); return true;
    case LowerAs::kArgMin: arg_extreme(b, node, isa::ReduceOp::kArgMin); return true;
    case LowerAs::kSoftmax: softmax(b, node); return true;
    case LowerAs::kAveragePool: pool(b, node, true); return true;
    case LowerAs::kMaxPool:
      if (node.outputs().size() > 1 && node.output(1) != nullptr && !node.output(1)->name().empty()) {
        raise(where(node), ": the Indices output of MaxPool is not produced by the BPU");
      }
      pool(b, node, false);
      return true;
    case LowerAs::kResize: resize(b, node); return true;
    default: return false;
  }
}

}  // namespace openbpu::compiler
