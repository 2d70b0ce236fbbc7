#include "openbpu/quantization/quantizer.h"

#include <algorithm>
#include <cmath>

#include "emitter.h"
#include "openbpu/common/error.h"
#include "openbpu/kernels/axes.h"

namespace openbpu::quantization {

namespace detail {

std::vector<int64_t> ints_of(const FixedPointMultiplier& m) { return {m.multiplier, m.shift}; }

std::string type_name(DataType t) {
  switch (t) {
    case DataType::kInt8: return "int8";
    case DataType::kInt16: return "int16";
    case DataType::kInt32: return "int32";
    case DataType::kFloat32: return "float";
    default: return std::string(kernels::dtype_name(t));
  }
}

Emitter::Emitter(const ir::Model& source,
                 const std::map<std::string, TensorCalibration>& calibration,
                 const simulator::MarchSpec& march, const QuantizationPlan& plan)
    : source_(source), calibration_(calibration), march_(march), plan_(plan) {
  model_.ir_version = std::max<int64_t>(source.ir_version, 7);
  model_.opsets = source.opsets;
  model_.set_opset_version("horizon", 1);
  model_.producer_name = "OpenBPU hb_mapper";
  model_.domain = source.domain;
  model_.model_version = source.model_version;
  model_.doc_string = source.doc_string;
  model_.metadata = source.metadata;
  model_.graph->set_name(source.graph->name());
  for (const ir::Value* in : source.graph->inputs()) {
    if (in->is_constant()) continue;
    ir::Value* nv = model_.graph->add_value(in->name(), in->type());
    model_.graph->add_input(nv);
    float_values_[in] = nv;
  }
}

QuantParams Emitter::params(const ir::Value* v) const {
  while (true) {
    auto it = plan_.inherits_scale.find(v);
    if (it == plan_.inherits_scale.end()) break;
    v = it->second;
  }
  QuantParams p;
  if (v->type().dtype != DataType::kUndefined && !kernels::dtype_is_float(v->type().dtype)) {
    return p;  // integer graph input (image: pixel − 128): scale 1, 8 bits
  }
  auto it = calibration_.find(v->name());
  if (it == calibration_.end() || it->second.thresholds.empty()) {
    raise("tensor '", v->name(), "' is quantized but the calibrated model has no threshold for it");
  }
  const TensorCalibration& c = it->second;
  p.bits = march_.supports_int16() ? c.bits : 8;
  p.scale = simulator::symmetric_scale(c.thresholds.front(), p.bits);
  return p;
}

std::vector<float> Emitter::weight_thresholds(const ir::Value* w, int axis) const {
  auto it = calibration_.find(w->name());
  const Tensor& data = *w->constant();
  const int64_t channels = data.shape().empty() ? 1 : data.dim(axis);
  if (it != calibration_.end() && static_cast<int64_t>(it->second.thresholds.size()) == channels) {
    return it->second.thresholds;
  }
  // Per-channel absolute maximum of the constant.
  std::vector<float> th(static_cast<size_t>(channels), 0.0f);
  const int64_t inner = kernels::dims_product(data.shape(), static_cast<size_t>(axis) + 1, data.shape().size());
  for (int64_t i = 0; i < data.element_count(); ++i) {
    const int64_t c = (i / inner) % channels;
    th[static_cast<size_t>(c)] = std::max(th[static_cast<size_t>(c)], static_cast<float>(std::fabs(data.float_at(i))));
  }
  return th;
}

QuantizedTensor Emitter::describe_int(const ir::Value* source, const ir::Value* nv) {
  QuantizedTensor t;
  t.name = nv->name();
  if (auto s32 = int32_scales_.find(nv); s32 != int32_scales_.end()) {
    t.scales = s32->second.first;
    t.axis = s32->second.second;
  } else {
    t.scales = {params(source).scale};
  }
  return t;
}

ir::Value* Emitter::add_constant(const std::string& base, Tensor data) {
  return model_.graph->add_constant(model_.graph->unique_value_name(base), std::move(data));
}

std::string Emitter::int_name(const ir::Value* v) {
  const bool float_side = v->producer() == nullptr || plan_.role(v->producer()) == Role::kCpu;
  const bool output = source_.graph->is_output(v);
  const std::string base = (float_side || output) ? v->name() + "_quantized" : v->name();
  return model_.graph->unique_value_name(base);
}

ir::Node* Emitter::add_node(const std::string& op, const std::string& domain,
                            const std::string& name, std::vector<ir::Value*> inputs,
                            std::vector<std::string> outputs, AttributeMap attrs) {
  ir::NodeSpec spec{op, std::move(inputs), std::move(outputs),
                    model_.graph->unique_node_name(name), domain, std::move(attrs)};
  return model_.graph->add_node(std::move(spec));
}

ir::Value* Emitter::float_value(const ir::Value* v) {
  if (auto it = float_values_.find(v); it != float_values_.end()) return it->second;
  if (v->is_constant()) {
    ir::Value* c = model_.graph->find_value(v->name());
    if (c == nullptr) c = model_.graph->add_constant(v->name(), *v->constant());
    float_values_[v] = c;
    return c;
  }
  auto it = int_values_.find(v);
  if (it == int_values_.end()) {
    raise("tensor '", v->name(), "' is read before it is produced (quantizer order)");
  }
  ir::Value* q = it->second;
  const bool output = source_.graph->is_output(v);
  if (v->type().dtype == DataType::kBool) {
    // A comparison's int8 mask: 0/1 becomes false/true.
    AttributeMap to;
    to.set("to", int64_t{9});  // TensorProto.BOOL
    const std::string name = output ? v->name() : model_.graph->unique_value_name(v->name() + "_bool");
    ir::Node* cast = add_node("Cast", "", v->name() + "_cast_bool", {q}, {name}, to);
    cast->output(0)->set_type(v->type());
    float_values_[v] = cast->output(0);
    return cast->output(0);
  }
  AttributeMap attrs;
  if (auto s32 = int32_scales_.find(q); s32 != int32_scales_.end()) {
    // int32 tail: per-channel scale input_scale·weight_scale.
    attrs.set("scales", s32->second.first);
    attrs.set("axis", s32->second.second);
  } else {
    attrs.set("scales", std::vector<float>{params(v).scale});
    attrs.set("axis", int64_t{1});
  }
  const std::string name = output ? v->name() : model_.graph->unique_value_name(v->name() + "_dequantized");
  ir::Node* n = add_node("Dequantize", "horizon", v->name() + "_HzDequantize", {q}, {name}, attrs);
  ir::TensorType t = v->type();
  t.dtype = DataType::kFloat32;
  n->output(0)->set_type(t);
  float_values_[v] = n->output(0);
  return n->output(0);
}

ir::Value* Emitter::float_value_named(const ir::Value* v) {
  ir::Value* f = float_value(v);
  if (f->name() == v->name()) return f;
  ir::Graph& g = *model_.graph;
  if (ir::Value* holder = g.find_value(v->name())) g.rename_value(holder, g.unique_value_name(v->name() + "_quantized"));
  g.rename_value(f, v->name());
  return f;
}

ir::Value* Emitter::int_value(const ir::Value* v) {
  if (auto it = int_values_.find(v); it != int_values_.end()) return it->second;
  if (v->is_constant()) raise("constant '", v->name(), "' must be quantized by its reader");
  ir::Value* f = float_value(v);
  if (f->type().dtype == DataType::kBool) {
    // A bool mask read on the BPU (a Where's condition): int8 0/1, scale 1.
    AttributeMap to;
    to.set("to", int64_t{3});  // TensorProto.INT8
    ir::Node* cast = add_node("Cast", "", v->name() + "_cast_int8", {f}, {int_name(v)}, to);
    ir::TensorType t = v->type();
    t.dtype = DataType::kInt8;
    cast->output(0)->set_type(t);
    int_values_[v] = cast->output(0);
    return cast->output(0);
  }
  if (!kernels::dtype_is_float(f->type().dtype) && f->type().dtype != DataType::kUndefined) {
    int_values_[v] = f;  // already an integer (image graph input)
    return f;
  }
  const QuantParams p = params(v);
  AttributeMap attrs;
  attrs.set("scale", p.scale);
  attrs.set("bits", static_cast<int64_t>(p.bits));
  ir::Node* n = add_node("Quantize", "horizon", v->name() + "_HzQuantize", {f}, {int_name(v)}, attrs);
  ir::TensorType t = v->type();
  t.dtype = p.dtype();
  n->output(0)->set_type(t);
  int_values_[v] = n->output(0);
  return n->output(0);
}

void set_clamp(AttributeMap& attrs, const ir::Node* activation, const QuantParams& out,
               const ir::Model& source) {
  if (activation == nullptr) return;
  const int64_t qmax = out.bits == 16 ? 32767 : 127;
  const bpu_support::OpDef* def = bpu_support::find_op_def(*activation);
  if (def != nullptr && def->activation == bpu_support::FusedActivation::kRelu) {
    attrs.set("clip_min", int64_t{0});
    return;
  }
  // Clip: bounds from constant inputs (opset ≥ 11) or attributes.
  double lo = -INFINITY, hi = INFINITY;
  if (source.opset_version("") < 11) {
    lo = activation->attrs().get_float("min", -INFINITY);
    hi = activation->attrs().get_float("max", INFINITY);
  } else {
    if (activation->input(1) != nullptr) lo = activation->input(1)->constant()->float_at(0);
    if (activation->input(2) != nullptr) hi = activation->input(2)->constant()->float_at(0);
  }
  auto to_q = [&](double x) {
    const double q = std::nearbyint(x / out.scale);
    return static_cast<int64_t>(std::clamp(q, static_cast<double>(-qmax - 1), static_cast<double>(qmax)));
  };
  if (std::isfinite(lo)) attrs.set("clip_min", to_q(lo));
  if (std::isfinite(hi)) attrs.set("clip_max", to_q(hi));
}

void emit_cpu_node(Emitter& e, const ir::Node& node) {
  std::vector<ir::Value*> inputs;
  for (const ir::Value* in : node.inputs()) inputs.push_back(in == nullptr ? nullptr : e.float_value(in));
  std::vector<std::string> outputs;
  for (const ir::Value* out : node.outputs()) outputs.push_back(out == nullptr ? "" : out->name());
  // A control-flow node keeps its graphs; the values they read from the main graph are float.
  for (const std::string& name : ir::implicit_input_names(node)) {
    if (const ir::Value* v = e.source().graph->find_value(name)) e.float_value_named(v);
  }
  ir::Node* n = e.add_node(node.op_type(), node.domain(), node.name(), inputs, outputs, node.attrs());
  n->graph_attrs() = node.graph_attrs();
  for (size_t i = 0; i < node.outputs().size(); ++i) {
    if (node.output(i) == nullptr) continue;
    n->output(i)->set_type(node.output(i)->type());
    e.set_float_value(node.output(i), n->output(i));
  }
}

void emit_bpu_node(Emitter& e, const ir::Node& node, const bpu_support::OpDef& def, const Fusion* fusion) {
  using bpu_support::QuantizeAs;
  if (fusion != nullptr) {
    if (def.quantize == QuantizeAs::kElementwise) {
      emit_elementwise(e, node, def, *fusion);
    } else {
      emit_accumulating_anchor(e, node, def, *fusion);
    }
    return;
  }
  switch (def.quantize) {
    case QuantizeAs::kTable: emit_lut(e, node); return;
    case QuantizeAs::kGlobalAveragePool:
    case QuantizeAs::kAveragePool:
    case QuantizeAs::kReduceMean: emit_pool_or_reduce(e, node, def); return;
    case QuantizeAs::kArgMax: emit_argmax(e, node, def); return;
    case QuantizeAs::kCompare: emit_compare(e, node, def); return;
    case QuantizeAs::kSelect: emit_where(e, node); return;
    case QuantizeAs::kSoftmax: emit_softmax(e, node); return;
    case QuantizeAs::kResize: emit_resize(e, node); return;
    case QuantizeAs::kMatMul: emit_matmul(e, node); return;
    case QuantizeAs::kMove: emit_passive(e, node, false); return;
    case QuantizeAs::kConcat: emit_passive(e, node, true); return;
    case QuantizeAs::kConv:
    case QuantizeAs::kGemm:
    case QuantizeAs::kPreprocess:
    case QuantizeAs::kElementwise: break;
  }
  raise("node '", node.name(), "' (", node.op_type(), ") is a fusion anchor without its fusion group");
}

void emit_passive(Emitter& e, const ir::Node& node, bool requantize_inputs) {
  std::vector<ir::Value*> inputs;
  const bool concat = requantize_inputs;
  QuantParams out_params;
  if (concat) out_params = e.params(node.output(0));
  for (size_t i = 0; i < node.inputs().size(); ++i) {
    const ir::Value* in = node.input(i);
    if (in == nullptr) {
      inputs.push_back(nullptr);
      continue;
    }
    if (in->is_constant()) {
      inputs.push_back(e.float_value(in));  // shapes, axes, pads, indices, ...
      continue;
    }
    ir::Value* q = e.int_value(in);
    if (concat) {
      const QuantParams p = e.params(in);
      if (p.scale != out_params.scale || p.bits != out_params.bits) {
        AttributeMap a;
        const auto m = simulator::to_fixed_point(static_cast<double>(p.scale) / out_params.scale);
        a.set("multiplier", static_cast<int64_t>(m.multiplier));
        a.set("shift", static_cast<int64_t>(m.shift));
        a.set("output_type", type_name(out_params.dtype()));
        a.set("input_scale", p.scale);
        a.set("output_scale", out_params.scale);
        ir::Node* r = e.add_node(std::string(bpu_support::kRequantizeType), "horizon", node.name() + "_requantize_input" + std::to_string(i),
                                 {q}, {e.graph().unique_value_name(in->name() + "_requantized")}, a);
        ir::TensorType t = in->type();
        t.dtype = out_params.dtype();
        r->output(0)->set_type(t);
        q = r->output(0);
      }
    }
    inputs.push_back(q);
  }
  std::vector<std::string> outputs;
  for (const ir::Value* out : node.outputs()) outputs.push_back(out == nullptr ? "" : e.int_name(out));
  ir::Node* n = e.add_node(node.op_type(), node.domain(), node.name(), inputs, outputs, node.attrs());
  for (size_t i = 0; i < node.outputs().size(); ++i) {
    const ir::Value* out = node.output(i);
    if (out == nullptr) continue;
    ir::TensorType t = out->type();
    t.dtype = e.params(out).dtype();
    n->output(i)->set_type(t);
    e.set_int_value(out, n->output(i));
  }
}

}  // namespace detail

QuantizeResult quantize_model(const ir::Model& float_model,
                              const std::map<std::string, TensorCalibration>& calibration,
                              const simulator::MarchSpec& march, const QuantizeOptions& options) {
  using detail::Emitter;
  const ir::Graph& g = *float_model.graph;
  const QuantizationPlan plan = plan_quantization(g, march, options.plan);
  Emitter e(float_model, calibration, march, plan);

  QuantizeResult result;
  for (const ir::Node* n : g.nodes()) {
    const Role role = plan.role(n);
    const bpu_support::NodePlacement& placement = plan.partition.at(n);
    NodeReport report;
    report.node = n->name();
    report.op_type = n->op_type();
    report.unit = role == Role::kCpu ? bpu_support::Unit::kCpu : bpu_support::Unit::kBpu;
    report.subgraph = placement.subgraph;
    report.cpu_reason = placement.reason;
    report.bpu_type = placement.support != nullptr && role != Role::kCpu
                          ? std::string(placement.support->bpu_type)
                          : n->op_type();
    if (!n->inputs().empty() && n->input(0) != nullptr) report.input_tensor = n->input(0)->name();
    if (!n->outputs().empty() && n->output(0) != nullptr) report.output_tensor = n->output(0)->name();
    try {
      switch (role) {
        case Role::kCpu: detail::emit_cpu_node(e, *n); break;
        case Role::kFusedActivation:
        case Role::kFusedResidual:
          // Emitted by the anchor: the row shows the anchor's operator, input and output.
          for (const auto& [anchor, fusion] : plan.fusions) {
            if (fusion.activation != n && fusion.residual_add != n) continue;
            const bpu_support::NodePlacement& ap = plan.partition.at(anchor);
            if (ap.support != nullptr) report.bpu_type = std::string(ap.support->bpu_type);
            if (!anchor->inputs().empty() && anchor->input(0) != nullptr) report.input_tensor = anchor->input(0)->name();
            if (fusion.output != nullptr) report.output_tensor = fusion.output->name();
          }
          break;
        case Role::kBpu: {
          auto fusion = plan.fusions.find(n);
          const bool anchor = fusion != plan.fusions.end();
          detail::emit_bpu_node(e, *n, *placement.support, anchor ? &fusion->second : nullptr);
          if (anchor) report.output_tensor = fusion->second.output->name();
          break;
        }
      }
    } catch (const kernels::KernelError& err) {
      raise("quantizing node '", n->name(), "' (", n->op_type(), "): ", err.what());
    } catch (const Error& err) {
      raise("quantizing node '", n->name(), "' (", n->op_type(), "): ", err.what());
    }
    result.nodes.push_back(std::move(report));
  }
  for (const ir::Value* out : g.outputs()) e.graph().add_output(e.float_value(out));

  for (const auto& [source, nv] : e.int_values()) result.tensors[source->name()] = e.describe_int(source, nv);
  // Types and thresholds for the report.
  ir::Model model = e.take_model();
  for (NodeReport& r : result.nodes) {
    const ir::Value* in = r.input_tensor.empty() ? nullptr : g.find_value(r.input_tensor);
    if (r.unit == bpu_support::Unit::kBpu && in != nullptr && plan.is_quantized(in)) {
      auto it = calibration.find(in->name());
      if (it != calibration.end() && !it->second.thresholds.empty()) r.input_threshold = it->second.thresholds.front();
    }
    auto dtype_of = [&](const std::string& source_name, bool prefer_int) {
      const ir::Value* sv = g.find_value(source_name);
      if (sv == nullptr) return std::string("--");
      if (r.unit == bpu_support::Unit::kCpu || !prefer_int || !plan.is_quantized(sv)) {
        return detail::type_name(sv->type().dtype == kernels::DataType::kUndefined ? kernels::DataType::kFloat32
                                                                                     : sv->type().dtype);
      }
      const ir::Value* nv = model.graph->find_value(source_name);
      if (nv == nullptr) nv = model.graph->find_value(source_name + "_quantized");
      return nv ? detail::type_name(nv->type().dtype) : std::string("--");
    };
    r.in_type = in ? dtype_of(in->name(), true) : "--";
    r.out_type = r.output_tensor.empty() ? "--" : dtype_of(r.output_tensor, true);
  }
  result.model = std::move(model);
  return result;
}

}  // namespace openbpu::quantization
