#include "model_variants.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "openbpu/base/float16.h"
#include "openbpu/common/error.h"

namespace openbpu::bench {

using kernels::DataType;
using kernels::Tensor;

namespace {

Tensor to_half(const Tensor& t) {
  Tensor h(DataType::kFloat16, t.shape());
  base::float_to_float16(t.data<float>(), reinterpret_cast<uint16_t*>(h.raw_data()), t.element_count());
  return h;
}

ir::Node* cast_node(ir::Graph& g, ir::Value* in, const std::string& out, int64_t to, ir::Node* before) {
  kernels::AttributeMap attrs;
  attrs.set("to", to);
  return g.add_node({"Cast", {in}, {out}, g.unique_node_name(out + "_cast"), "", attrs}, before);
}

}  // namespace

// Inputs that stay float32 in a float16 model: Resize's roi and scales.
bool keeps_float32(const ir::Value& v) {
  for (const ir::Use& use : v.uses()) {
    if (use.node->op_type() == "Resize" && use.input_index >= 1) return true;
  }
  return false;
}

void make_float16_export(ir::Model& model) {
  ir::Graph& g = *model.graph;
  for (ir::Value* c : g.constants()) {
    if (c->constant()->dtype() == DataType::kFloat32 && !keeps_float32(*c)) {
      c->set_constant(to_half(*c->constant()));
    }
  }
  for (ir::Value* v : g.values()) {
    if (v->is_constant() || g.is_input(v) || g.is_output(v) || v->type().dtype != DataType::kFloat32 ||
        keeps_float32(*v)) {
      continue;
    }
    ir::TensorType t = v->type();
    t.dtype = DataType::kFloat16;
    v->set_type(t);
  }
  ir::Node* first = g.nodes().empty() ? nullptr : g.nodes().front();
  for (ir::Value* in : std::vector<ir::Value*>(g.inputs())) {
    if (in->type().dtype != DataType::kFloat32 || in->is_constant()) continue;
    ir::Node* cast = cast_node(g, in, g.unique_value_name(in->name() + "_fp16"), 10, first);
    ir::TensorType t = in->type();
    t.dtype = DataType::kFloat16;
    cast->output(0)->set_type(t);
    for (const ir::Use& use : std::vector<ir::Use>(in->uses())) {
      if (use.node != cast) g.set_node_input(use.node, static_cast<size_t>(use.input_index), cast->output(0));
    }
  }
  for (ir::Value* out : std::vector<ir::Value*>(g.outputs())) {
    if (out->type().dtype != DataType::kFloat32 || out->producer() == nullptr) continue;
    // The producer writes a float16 value; a Cast gives the output its name and type back.
    const std::string name = out->name();
    g.rename_value(out, g.unique_value_name(name + "_fp16"));
    ir::TensorType t = out->type();
    t.dtype = DataType::kFloat16;
    out->set_type(t);
    ir::Node* cast = cast_node(g, out, name, 1, nullptr);
    t.dtype = DataType::kFloat32;
    cast->output(0)->set_type(t);
    std::vector<ir::Value*> outputs = g.outputs();
    std::replace(outputs.begin(), outputs.end(), out, cast->output(0));
    g.set_outputs(outputs);
  }
  g.topological_sort();
}

// DynamicQuantizeLinear needs opset 11, where Clip's bounds became inputs: the attribute form
// rewritten as ONNX's version converter does.
void upgrade_to_opset_11(ir::Model& model) {
  ir::Graph& g = *model.graph;
  if (model.opset_version("") >= 11) return;
  for (ir::Node* n : g.nodes()) {
    if (n->op_type() != "Clip" || !n->domain().empty()) continue;
    const float lo = n->attrs().get_float("min", std::numeric_limits<float>::lowest());
    const float hi = n->attrs().get_float("max", std::numeric_limits<float>::max());
    g.add_node_input(n, g.add_constant(g.unique_value_name(n->name() + "_min"), Tensor::scalar<float>(lo)));
    g.add_node_input(n, g.add_constant(g.unique_value_name(n->name() + "_max"), Tensor::scalar<float>(hi)));
    kernels::AttributeMap attrs;
    n->attrs() = attrs;
  }
  model.set_opset_version("", 11);
}

int make_dynamic_quantized_export(ir::Model& model) {
  ir::Graph& g = *model.graph;
  upgrade_to_opset_11(model);
  int replaced = 0;
  for (ir::Node* conv : std::vector<ir::Node*>(g.nodes())) {
    if (conv->op_type() != "Conv" || !conv->domain().empty() || conv->inputs().size() < 2) continue;
    const ir::Value* wv = conv->input(1);
    if (wv == nullptr || !wv->is_constant() || wv->constant()->dtype() != DataType::kFloat32) continue;
    if (conv->inputs().size() > 2 && conv->input(2) != nullptr && !conv->input(2)->is_constant()) continue;
    const Tensor& w = *wv->constant();
    float w_max = 0;
    for (int64_t i = 0; i < w.element_count(); ++i) w_max = std::max(w_max, std::fabs(w.data<float>()[i]));
    const float w_scale = w_max > 0 ? w_max / 127.0f : 1.0f;
    Tensor wq(DataType::kUint8, w.shape());
    for (int64_t i = 0; i < w.element_count(); ++i) {
      wq.data<uint8_t>()[i] = static_cast<uint8_t>(std::nearbyint(w.data<float>()[i] / w_scale) + 128);
    }
    const std::string base = conv->name();
    auto name = [&](const std::string& suffix) { return g.unique_value_name(base + suffix); };
    ir::Value* w_const = g.add_constant(name("_w_quantized"), wq);
    ir::Value* w_zero = g.add_constant(name("_w_zero_point"), Tensor::scalar<uint8_t>(128));
    ir::Value* w_scale_v = g.add_constant(name("_w_scale"), Tensor::scalar<float>(w_scale));
    ir::Node* dq = g.add_node({"DynamicQuantizeLinear", {conv->input(0)},
                               {name("_x_quantized"), name("_x_scale"), name("_x_zero_point")},
                               g.unique_node_name(base + "_quantize"), "", {}}, conv);
    kernels::AttributeMap attrs = conv->attrs();
    ir::Node* ci = g.add_node({"ConvInteger", {dq->output(0), w_const, dq->output(2), w_zero},
                               {name("_int32")}, g.unique_node_name(base + "_integer"), "", attrs}, conv);
    ir::Node* to_float = cast_node(g, ci->output(0), name("_float"), 1, conv);
    ir::Node* scale = g.add_node({"Mul", {dq->output(1), w_scale_v}, {name("_scale")},
                                  g.unique_node_name(base + "_scale"), "", {}}, conv);
    ir::Node* y = g.add_node({"Mul", {to_float->output(0), scale->output(0)}, {name("_scaled")},
                              g.unique_node_name(base + "_rescale"), "", {}}, conv);
    ir::Value* result = y->output(0);
    if (conv->inputs().size() > 2 && conv->input(2) != nullptr) {
      const Tensor& bias = *conv->input(2)->constant();
      ir::Value* b = g.add_constant(name("_bias"), bias.reshaped({bias.element_count(), 1, 1}));
      result = g.add_node({"Add", {result, b}, {name("_biased")}, g.unique_node_name(base + "_bias"), "", {}},
                          conv)->output(0);
    }
    result->set_type(conv->output(0)->type());
    const std::string out_name = conv->output(0)->name();
    const bool is_output = g.is_output(conv->output(0));
    g.replace_all_uses(conv->output(0), result);
    g.remove_node(conv);
    if (is_output) g.rename_value(result, out_name);
    ++replaced;
  }
  g.remove_unused_values();
  g.topological_sort();
  return replaced;
}

}  // namespace openbpu::bench
