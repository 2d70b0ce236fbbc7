// Elementwise, lookup-table, pooling/reduction, resize and featuremap-matmul emitters.
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "emitter.h"
#include "openbpu/common/error.h"
#include "openbpu/kernels/axes.h"
#include "openbpu/kernels/registry.h"

namespace openbpu::quantization::detail {

namespace {

int64_t qmax(int bits) { return bits == 16 ? 32767 : 127; }

// A constant quantized at `p` (saturating; ±inf to the ends of the range, NaN to 0).
ir::Value* quantize_constant_at(Emitter& e, const ir::Value* c, const QuantParams& p, const std::string& base) {
  const Tensor& t = *c->constant();
  Tensor q(p.dtype(), t.shape());
  for (int64_t i = 0; i < t.element_count(); ++i) {
    const float v = static_cast<float>(t.float_at(i));
    if (p.bits == 16) {
      q.data<int16_t>()[i] = simulator::quantize_int16(v, p.scale);
    } else {
      q.data<int8_t>()[i] = simulator::quantize_int8(v, p.scale);
    }
  }
  return e.add_constant(base, q);
}

// A constant operand of an elementwise operator, quantized per tensor at its own abs max.
std::pair<ir::Value*, QuantParams> quantize_constant(Emitter& e, const ir::Value* c, int bits,
                                                     const std::string& base) {
  const Tensor& t = *c->constant();
  float amax = 0.0f;
  for (int64_t i = 0; i < t.element_count(); ++i) {
    const float v = static_cast<float>(std::fabs(t.float_at(i)));
    if (std::isfinite(v)) amax = std::max(amax, v);
  }
  QuantParams p{simulator::symmetric_scale(amax, bits), bits};
  return {quantize_constant_at(e, c, p, base), p};
}

ir::Value* finish(Emitter& e, ir::Node* n, const ir::Value* source_output, DataType dtype) {
  ir::TensorType t = source_output->type();
  t.dtype = dtype;
  n->output(0)->set_type(t);
  e.set_int_value(source_output, n->output(0));
  return n->output(0);
}

std::vector<int64_t> static_shape_of(const ir::Value* v, const std::string& node) {
  const auto s = v->type().static_shape();
  if (!s) raise("node '", node, "': tensor '", v->name(), "' needs a static shape");
  return *s;
}

// Evaluates the float operator of `node` on `inputs` (its data input replaced by `x`).
std::vector<float> evaluate_float(const Emitter& e, const ir::Node& node, const std::vector<float>& x) {
  kernels::NodeInfo info{node.name(), node.op_type(), node.domain(),
                         static_cast<int>(e.source().opset_version(node.domain())), node.attrs(),
                         static_cast<int>(node.inputs().size()), 1};
  auto kernel = kernels::create_kernel(info);
  Tensor in = Tensor::from_values<float>({static_cast<int64_t>(x.size())}, x);
  std::vector<Tensor> extra;
  std::vector<const Tensor*> inputs = {&in};
  for (size_t i = 1; i < node.inputs().size(); ++i) {
    const ir::Value* v = node.input(i);
    inputs.push_back(v == nullptr ? nullptr : v->constant());
  }
  std::vector<Tensor> outputs(1);
  kernels::KernelContext ctx(inputs, outputs, kernels::Allocator::default_allocator(), nullptr);
  kernel->run(ctx);
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = static_cast<float>(outputs[0].float_at(static_cast<int64_t>(i)));
  return y;
}

AttributeMap multiplier_attrs(const FixedPointMultiplier& m) {
  AttributeMap a;
  a.set("multiplier", static_cast<int64_t>(m.multiplier));
  a.set("shift", static_cast<int64_t>(m.shift));
  return a;
}

// The operands' fixed-point multipliers to `scale` with `shift` fractional bits (per-input
// rescaling of kAdd … kLess and kSelect).
void set_rescaling(AttributeMap& attrs, const std::vector<QuantParams>& in, double scale, int shift) {
  std::vector<int64_t> mult, shifts;
  for (const QuantParams& p : in) {
    const auto f = simulator::to_fixed_point(static_cast<double>(p.scale) / scale * (1 << shift));
    mult.push_back(f.multiplier);
    shifts.push_back(f.shift);
  }
  attrs.set("input_multipliers", mult);
  attrs.set("input_shifts", shifts);
  attrs.set("intermediate_shift", int64_t{shift});
}

// The two operands of a binary elementwise node as integers with their parameters: a constant
// quantized at its own abs max at `bits`, a featuremap as it is.
void binary_operands(Emitter& e, const ir::Node& n, int bits, std::vector<ir::Value*>& inputs,
                     std::vector<QuantParams>& in) {
  for (size_t i = 0; i < 2; ++i) {
    const ir::Value* v = n.input(i);
    if (v->is_constant()) {
      auto [c, p] = quantize_constant(e, v, bits, n.name() + "_operand" + std::to_string(i) + "_quantized");
      inputs.push_back(c);
      in.push_back(p);
    } else {
      inputs.push_back(e.int_value(v));
      in.push_back(e.params(v));
    }
  }
}

}  // namespace

// Operators that keep their input's width (HzLut, pools, ReduceMean): the output parameters at
// the input's width with the target's threshold.
QuantParams at_input_width(const QuantParams& in, const QuantParams& target) {
  QuantParams out = target;
  if (out.bits != in.bits) {
    out.scale = target.scale * static_cast<float>(qmax(target.bits)) / static_cast<float>(qmax(in.bits));
    out.bits = in.bits;
  }
  return out;
}

// Emits `op` for float node `n` with output parameters `out` (at_input_width) and, when the
// planned output `target` has another width, an HzRequantize to it.
void emit_with_width_change(Emitter& e, const ir::Node& n, const std::string& op, std::vector<ir::Value*> inputs,
                            AttributeMap attrs, const QuantParams& out, const QuantParams& target) {
  const ir::Value* y = n.output(0);
  const bool requantize = out.bits != target.bits;
  const std::string name = requantize ? e.graph().unique_value_name(y->name() + "_" + op) : e.int_name(y);
  ir::Node* q = e.add_node(op, "horizon", n.name(), std::move(inputs), {name}, attrs);
  if (!requantize) {
    finish(e, q, y, out.dtype());
    return;
  }
  ir::TensorType t = y->type();
  t.dtype = out.dtype();
  q->output(0)->set_type(t);
  AttributeMap r = multiplier_attrs(simulator::to_fixed_point(static_cast<double>(out.scale) / target.scale));
  r.set("output_type", type_name(target.dtype()));
  r.set("input_scale", out.scale);
  r.set("output_scale", target.scale);
  ir::Node* rq = e.add_node(std::string(bpu_support::kRequantizeType), "horizon", n.name() + "_requantize", {q->output(0)}, {e.int_name(y)}, r);
  finish(e, rq, y, target.dtype());
}

void emit_elementwise(Emitter& e, const ir::Node& n, const bpu_support::OpDef& def, const Fusion& fusion) {
  const QuantParams out = e.params(fusion.output);
  std::vector<ir::Value*> inputs;
  std::vector<QuantParams> in;
  binary_operands(e, n, out.bits, inputs, in);
  AttributeMap attrs;
  const std::string op(def.bpu_type);
  if (def.elementwise == simulator::isa::ElementwiseOp::kMul) {
    attrs = multiplier_attrs(simulator::requantization_multiplier(
        static_cast<double>(in[0].scale) * in[1].scale, out.scale));
  } else {
    set_rescaling(attrs, in, out.scale, 8);
  }
  attrs.set("output_type", type_name(out.dtype()));
  attrs.set("input_scales", std::vector<float>{in[0].scale, in[1].scale});
  attrs.set("output_scale", out.scale);
  set_clamp(attrs, fusion.activation, out, e.source());
  ir::Node* q = e.add_node(op, "horizon", n.name(), inputs, {e.int_name(fusion.output)}, attrs);
  finish(e, q, fusion.output, out.dtype());
}

// Equal / Greater / Less: both operands at the finer of their scales (8 fractional bits), an int8
// mask out (1 true, 0 false; scale 1).
void emit_compare(Emitter& e, const ir::Node& n, const bpu_support::OpDef& def) {
  int bits = 8;
  for (const ir::Value* v : n.inputs()) {
    if (!v->is_constant()) bits = std::max(bits, e.params(v).bits);
  }
  std::vector<ir::Value*> inputs;
  std::vector<QuantParams> in;
  binary_operands(e, n, bits, inputs, in);
  AttributeMap attrs;
  set_rescaling(attrs, in, std::min(in[0].scale, in[1].scale), 8);
  attrs.set("output_type", std::string("int8"));
  attrs.set("input_scales", std::vector<float>{in[0].scale, in[1].scale});
  attrs.set("output_scale", 1.0f);
  ir::Node* q = e.add_node(std::string(def.bpu_type), "horizon", n.name(), inputs, {e.int_name(n.output(0))}, attrs);
  finish(e, q, n.output(0), DataType::kInt8);
}

// Where(condition, X, Y): the condition as an int8 mask (a BPU comparison's, a constant's, or a
// CPU bool cast); X and Y rescaled to the output's scale. A constant X or Y is quantized at the
// output's scale (plan.cc: then the output has the other operand's scale), so -inf or -1e9
// saturates to the lowest value there.
void emit_where(Emitter& e, const ir::Node& n) {
  const ir::Value* y = n.output(0);
  const QuantParams out = e.params(y);
  std::vector<ir::Value*> inputs;
  const ir::Value* cond = n.input(0);
  if (cond->is_constant()) {
    const Tensor& c = *cond->constant();
    Tensor mask(DataType::kInt8, c.shape());
    for (int64_t i = 0; i < c.element_count(); ++i) mask.data<int8_t>()[i] = c.float_at(i) != 0.0 ? 1 : 0;
    inputs.push_back(e.add_constant(n.name() + "_mask", std::move(mask)));
  } else {
    inputs.push_back(e.int_value(cond));
  }
  std::vector<QuantParams> in;
  for (size_t i = 1; i < 3; ++i) {
    const ir::Value* v = n.input(i);
    if (v->is_constant()) {
      inputs.push_back(quantize_constant_at(e, v, out, n.name() + "_operand" + std::to_string(i) + "_quantized"));
      in.push_back(out);
    } else {
      inputs.push_back(e.int_value(v));
      in.push_back(e.params(v));
    }
  }
  AttributeMap attrs;
  set_rescaling(attrs, in, out.scale, 8);
  attrs.set("output_type", type_name(out.dtype()));
  attrs.set("input_scales", std::vector<float>{in[0].scale, in[1].scale});
  attrs.set("output_scale", out.scale);
  finish(e, e.add_node("HzSWhere", "horizon", n.name(), inputs, {e.int_name(y)}, attrs), y, out.dtype());
}

// In input codes, the magnitude beyond which the table's function stays within half an output
// step of its value at the end of the input's range (a saturating Sigmoid, Tanh, Erf: a few
// codes; a function that keeps moving: qmax).
int64_t useful_input_codes(const Emitter& e, const ir::Node& n, const QuantParams& in, double out_scale) {
  const int64_t q = qmax(in.bits);
  std::vector<float> xs(size_t(2 * q + 1));
  for (int64_t k = -q; k <= q; ++k) xs[size_t(k + q)] = static_cast<float>(k) * in.scale;
  const std::vector<float> ys = evaluate_float(e, n, xs);
  auto at = [&](int64_t k) { return static_cast<double>(ys[size_t(k + q)]); };
  const double tolerance = out_scale / 2;
  int64_t hi = q, lo = -q;  // the innermost codes from which the function is flat outwards
  while (hi > 0 && std::fabs(at(hi - 1) - at(q)) <= tolerance) --hi;
  while (lo < 0 && std::fabs(at(lo + 1) - at(-q)) <= tolerance) ++lo;
  return std::max(hi, -lo);
}

// x requantized to `scale` at its own width (saturating beyond the new range).
ir::Value* requantized_input(Emitter& e, const ir::Node& n, const ir::Value* x, const QuantParams& in, float scale) {
  AttributeMap a = multiplier_attrs(simulator::to_fixed_point(static_cast<double>(in.scale) / scale));
  a.set("output_type", type_name(in.dtype()));
  a.set("input_scale", in.scale);
  a.set("output_scale", scale);
  ir::Node* r = e.add_node(std::string(bpu_support::kRequantizeType), "horizon", n.name() + "_narrow_input",
                           {e.int_value(x)}, {e.graph().unique_value_name(x->name() + "_narrowed")}, a);
  ir::TensorType t = x->type();
  t.dtype = in.dtype();
  r->output(0)->set_type(t);
  return r->output(0);
}

void emit_lut(Emitter& e, const ir::Node& n) {
  const ir::Value* x = n.input(0);
  const ir::Value* y = n.output(0);
  QuantParams in = e.params(x);
  const QuantParams target = e.params(y);
  // The table keeps the input's width; a width change follows as a requantization.
  const QuantParams out = at_input_width(in, target);
  // An int16 table interpolates 256 segments: a saturating function over a wide input range (a
  // recurrent cell state into Tanh) would spend them on its flat ends, so the input is
  // requantized to the range where the function moves when that is under half the input's
  // range. (An int8 table is exact per input code: narrowing would only add a rounding.)
  ir::Value* input = nullptr;
  const int64_t codes = in.bits == 16 ? useful_input_codes(e, n, in, out.scale) : 0;
  if (codes >= 2 && codes < qmax(in.bits) / 2) {
    const float narrow = in.scale * static_cast<float>(codes) / static_cast<float>(qmax(in.bits));
    input = requantized_input(e, n, x, in, narrow);
    in.scale = narrow;
  } else {
    input = e.int_value(x);
  }
  ir::Value* table;
  if (in.bits == 8) {
    std::vector<float> xs(256);
    for (int q = -128; q <= 127; ++q) xs[size_t(q + 128)] = static_cast<float>(q) * in.scale;
    const auto lut = simulator::lut_int8_from_values(evaluate_float(e, n, xs), out.scale);
    Tensor t(DataType::kInt8, {256});
    std::copy(lut.table.begin(), lut.table.end(), t.data<int8_t>());
    table = e.add_constant(n.name() + "_table", t);
  } else {
    std::vector<float> xs(257);
    for (int k = 0; k <= 256; ++k) xs[size_t(k)] = static_cast<float>(simulator::lut_int16_knot_input(k, in.scale));
    const auto lut = simulator::lut_int16_from_values(evaluate_float(e, n, xs), out.scale);
    Tensor t(DataType::kInt32, {257});
    std::copy(lut.knots.begin(), lut.knots.end(), t.data<int32_t>());
    table = e.add_constant(n.name() + "_knots", t);
  }
  AttributeMap attrs;
  attrs.set("function", n.op_type());
  attrs.set("input_scale", in.scale);
  attrs.set("output_scale", out.scale);
  emit_with_width_change(e, n, "HzLut", {input, table}, attrs, out, target);
}

void emit_pool_or_reduce(Emitter& e, const ir::Node& n, const bpu_support::OpDef& def) {
  const ir::Value* x = n.input(0);
  const ir::Value* y = n.output(0);
  const QuantParams in = e.params(x);
  const QuantParams target = e.params(y);
  // The operator keeps its input's width; a width change follows as a requantization.
  const QuantParams out = at_input_width(in, target);
  const auto shape = static_shape_of(x, n.name());
  AttributeMap attrs;
  const std::string op(def.bpu_type);
  if (def.quantize == bpu_support::QuantizeAs::kGlobalAveragePool) {
    const int64_t count = kernels::dims_product(shape, 2, shape.size());
    attrs = multiplier_attrs(simulator::to_fixed_point(static_cast<double>(in.scale) / (static_cast<double>(count) * out.scale)));
  } else if (def.quantize == bpu_support::QuantizeAs::kReduceMean) {
    std::vector<int64_t> axes = n.attrs().get_ints("axes", {});
    if (n.input(1) != nullptr) axes = n.input(1)->constant()->to_int64_vector();
    if (axes.empty()) {
      axes.resize(shape.size());
      std::iota(axes.begin(), axes.end(), 0);
    }
    axes = kernels::normalize_axes(axes, static_cast<int64_t>(shape.size()));
    int64_t count = 1;
    for (int64_t a : axes) count *= shape[size_t(a)];
    attrs = multiplier_attrs(simulator::to_fixed_point(static_cast<double>(in.scale) / (static_cast<double>(count) * out.scale)));
    attrs.set("axes", axes);
    attrs.set("keepdims", n.attrs().get_int("keepdims", 1));
  } else {  // kAveragePool
    const auto kernel = n.attrs().get_ints("kernel_shape");
    const int64_t window = std::accumulate(kernel.begin(), kernel.end(), int64_t{1}, std::multiplies<>());
    std::vector<int64_t> mult, shift;
    for (int64_t count = 1; count <= window; ++count) {
      const auto f = simulator::to_fixed_point(static_cast<double>(in.scale) / (static_cast<double>(count) * out.scale));
      mult.push_back(f.multiplier);
      shift.push_back(f.shift);
    }
    attrs.set("multipliers", mult);
    attrs.set("shifts", shift);
    for (const char* a : {"kernel_shape", "strides", "pads"}) {
      if (n.attrs().has(a)) attrs.set(a, n.attrs().get_ints(a));
    }
    if (n.attrs().get_string("auto_pad", "NOTSET") != "NOTSET") {
      raise("AveragePool with auto_pad is not supported on the BPU; set pads");
    }
    attrs.set("ceil_mode", n.attrs().get_int("ceil_mode", 0));
    attrs.set("count_include_pad", n.attrs().get_int("count_include_pad", 0));
  }
  attrs.set("input_scale", in.scale);
  attrs.set("output_scale", out.scale);
  emit_with_width_change(e, n, op, {e.int_value(x)}, attrs, out, target);
}

// Softmax on the BPU: HzQuantizedSoftmax along one axis, straight to the planned output width
// (int16 probabilities from int8 logits need no requantization). The exponent and output
// multipliers are computed here once (integer_arithmetic.h, softmax_multipliers) and carried as
// attributes, so the executor and the virtual BPU read the same integers.
void emit_softmax(Emitter& e, const ir::Node& n) {
  const ir::Value* x = n.input(0);
  ir::Value* qx = e.int_value(x);
  if (e.describe_int(x, qx).scales.size() > 1) {
    raise("the input '", x->name(), "' is quantized per channel; the BPU softmax needs one input scale "
          "(keep the node on the CPU with run_on_cpu)");
  }
  const QuantParams in = e.params(x);
  const QuantParams out = e.params(n.output(0));
  const auto shape = static_shape_of(x, n.name());
  const int64_t rank = static_cast<int64_t>(shape.size());
  // Before opset 13 Softmax normalises over the flattened axes [axis, rank); the optimizer's
  // softmax_axis_canonicalization leaves only nodes where that is the one axis `axis`.
  const bool legacy = e.source().opset_version("") < 13;
  const int64_t axis = kernels::normalize_axis(n.attrs().get_int("axis", legacy ? 1 : -1), rank);
  for (int64_t d = axis + 1; legacy && d < rank; ++d) {
    if (shape[size_t(d)] != 1) {
      raise("node '", n.name(), "': opset ", e.source().opset_version(""), " Softmax normalises over axes ", axis, "..", rank - 1,
            " of ", kernels::shape_to_string(shape), "; the BPU softmax runs along one axis");
    }
  }
  simulator::SoftmaxMultipliers m;
  try {
    m = simulator::softmax_multipliers(in.scale, out.scale);
  } catch (const std::invalid_argument& err) {
    raise("node '", n.name(), "': input scale ", in.scale, ": ", err.what());
  }
  AttributeMap attrs;
  attrs.set("axis", axis);
  attrs.set("output_type", type_name(out.dtype()));
  attrs.set("exponent_multiplier", static_cast<int64_t>(m.exponent.multiplier));
  attrs.set("exponent_shift", static_cast<int64_t>(m.exponent.shift));
  attrs.set("output_multiplier", static_cast<int64_t>(m.output.multiplier));
  attrs.set("output_shift", static_cast<int64_t>(m.output.shift));
  attrs.set("input_scale", in.scale);
  attrs.set("output_scale", out.scale);
  finish(e, e.add_node("HzQuantizedSoftmax", "horizon", n.name(), {qx}, {e.int_name(n.output(0))}, attrs),
         n.output(0), out.dtype());
}

// ArgMax / ArgMin on the BPU: the row's node (HzQuantizedArgMax / ArgMin) reads the int8/int16
// input and writes int32 indices; where int64 is needed (a graph output or a CPU reader) a CPU
// Cast(to=INT64) follows, so the graph's output types stay those of the float model.
void emit_argmax(Emitter& e, const ir::Node& n, const bpu_support::OpDef& def) {
  const ir::Value* x = n.input(0);
  const ir::Value* y = n.output(0);
  ir::Value* qx = e.int_value(x);
  const QuantizedTensor described = e.describe_int(x, qx);
  if (described.scales.size() > 1) {
    raise("the input '", x->name(), "' is quantized per channel; the ", n.op_type(), " of its integers is not the ",
          n.op_type(), " of its real values (keep the node on the CPU with run_on_cpu)");
  }
  const auto shape = static_shape_of(x, n.name());
  AttributeMap attrs;
  attrs.set("axis", kernels::normalize_axis(n.attrs().get_int("axis", 0), static_cast<int64_t>(shape.size())));
  attrs.set("keepdims", n.attrs().get_int("keepdims", 1));
  attrs.set("input_scale", e.params(x).scale);
  const bool output = e.source().graph->is_output(y);
  bool cpu_reader = false;
  for (const ir::Use& u : y->uses()) cpu_reader = cpu_reader || e.plan().role(u.node) == Role::kCpu;
  const std::string int32_name = e.graph().unique_value_name(y->name() + (output || cpu_reader ? "_int32" : ""));
  ir::Node* q = e.add_node(std::string(def.bpu_type), "horizon", n.name(), {qx}, {int32_name}, attrs);
  ir::TensorType t = y->type();
  t.dtype = DataType::kInt32;
  q->output(0)->set_type(t);
  if (!output && !cpu_reader) return;
  AttributeMap to;
  to.set("to", int64_t{7});  // TensorProto.INT64
  const std::string name = output ? y->name() : e.graph().unique_value_name(y->name() + "_int64");
  ir::Node* cast = e.add_node("Cast", "", n.name() + "_cast_int64", {q->output(0)}, {name}, to);
  t.dtype = DataType::kInt64;
  cast->output(0)->set_type(t);
  e.set_float_value(y, cast->output(0));
}

void emit_resize(Emitter& e, const ir::Node& n) {
  const ir::Value* x = n.input(0);
  const ir::Value* y = n.output(0);
  const auto out_shape = static_shape_of(y, n.name());
  if (out_shape.size() != 4) raise("Resize output must be 4-D");
  AttributeMap attrs;
  std::string mode = n.attrs().get_string("mode", "nearest");
  if (mode == "bilinear") mode = "linear";
  attrs.set("mode", mode);
  const bool legacy = n.op_type() == "Upsample" || e.source().opset_version("") < 11;
  attrs.set("coordinate_transformation_mode",
            legacy ? std::string("asymmetric") : n.attrs().get_string("coordinate_transformation_mode", "half_pixel"));
  attrs.set("nearest_mode", legacy ? std::string("floor") : n.attrs().get_string("nearest_mode", "round_prefer_floor"));
  attrs.set("output_size", std::vector<int64_t>{out_shape[2], out_shape[3]});
  const QuantParams in = e.params(x);
  attrs.set("input_scale", in.scale);
  ir::Node* q = e.add_node("HzQuantizedResizeUpsample", "horizon", n.name(), {e.int_value(x)}, {e.int_name(y)}, attrs);
  finish(e, q, y, in.dtype());
}

void emit_matmul(Emitter& e, const ir::Node& n) {
  const ir::Value* a = n.input(0);
  const ir::Value* b = n.input(1);
  const ir::Value* y = n.output(0);
  const QuantParams pa = e.params(a), pb = e.params(b), out = e.params(y);
  AttributeMap attrs = multiplier_attrs(simulator::requantization_multiplier(
      static_cast<double>(pa.scale) * pb.scale, out.scale));
  attrs.set("output_type", type_name(out.dtype()));
  attrs.set("input_scales", std::vector<float>{pa.scale, pb.scale});
  attrs.set("output_scale", out.scale);
  ir::Node* q = e.add_node("HzSQuantizedMatmul", "horizon", n.name(), {e.int_value(a), e.int_value(b)}, {e.int_name(y)}, attrs);
  finish(e, q, y, out.dtype());
}

}  // namespace openbpu::quantization::detail
