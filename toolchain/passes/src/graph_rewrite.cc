#include "graph_rewrite.h"

#include <algorithm>
#include <cmath>

#include "openbpu/common/error.h"

namespace openbpu::passes {

const Tensor* constant_of(const ir::Value* value) {
  return value == nullptr ? nullptr : value->constant();
}

std::optional<Shape> static_shape_of(const ir::Value* value) {
  if (value == nullptr) return std::nullopt;
  if (value->is_constant()) return value->constant()->shape();
  return value->type().static_shape();
}

std::optional<int64_t> rank_of(const ir::Value* value) {
  if (value == nullptr) return std::nullopt;
  if (value->is_constant()) return value->constant()->rank();
  if (!value->type().shape) return std::nullopt;
  return static_cast<int64_t>(value->type().shape->size());
}

bool has_single_use(const ir::Graph& graph, const ir::Value* value) {
  return value != nullptr && value->uses().size() == 1 && !graph.is_output(value);
}

std::optional<double> uniform_constant(const ir::Value* value) {
  const Tensor* t = constant_of(value);
  if (t == nullptr || t->element_count() == 0 || kernels::dtype_size(t->dtype()) == 0) {
    return std::nullopt;
  }
  const double first = t->float_at(0);
  for (int64_t i = 1; i < t->element_count(); ++i) {
    if (t->float_at(i) != first) return std::nullopt;
  }
  return first;
}

std::optional<std::vector<float>> float32_values(const ir::Value* value) {
  const Tensor* t = constant_of(value);
  if (t == nullptr || t->dtype() != DataType::kFloat32) return std::nullopt;
  const auto v = t->values<float>();
  return std::vector<float>(v.begin(), v.end());
}

std::optional<std::vector<int64_t>> int_values(const ir::Value* value) {
  const Tensor* t = constant_of(value);
  if (t == nullptr || kernels::dtype_is_float(t->dtype()) || t->dtype() == DataType::kBool ||
      kernels::dtype_size(t->dtype()) == 0) {
    return std::nullopt;
  }
  return t->to_int64_vector();
}

int64_t onnx_opset(const ir::Model& model) {
  return model.opset_version("");
}

bool is_op(const ir::Node* node, std::string_view op_type) {
  return node != nullptr && node->domain().empty() && node->op_type() == op_type;
}

ir::Node* producer_if(const ir::Node* node, size_t index, std::string_view op_type) {
  const ir::Value* v = node->input(index);
  if (v == nullptr || !is_op(v->producer(), op_type)) return nullptr;
  return v->producer();
}

std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

Tensor float32_tensor(const Shape& shape, const std::vector<float>& values) {
  return Tensor::from_values<float>(shape, values);
}

Tensor int64_tensor(const Shape& shape, const std::vector<int64_t>& values) {
  return Tensor::from_values<int64_t>(shape, values);
}

// ---------------------------------------------------------------- GraphRewriter

GraphRewriter::GraphRewriter(ir::Graph& graph) : graph_(graph), pinned_names_(graph.subgraph_outer_names()) {}

bool GraphRewriter::pinned(const ir::Value* value) const {
  return pinned_names_.count(value->name()) != 0;
}

std::vector<ir::Node*> GraphRewriter::snapshot() {
  removed_.clear();
  return graph_.nodes();
}

int GraphRewriter::sweep(const std::function<bool(ir::Node*)>& rewrite) {
  int rewrites = 0;
  for (ir::Node* node : snapshot()) {
    if (!was_removed(node) && rewrite(node)) ++rewrites;
  }
  return rewrites;
}

ir::Value* GraphRewriter::add_constant(const std::string& base, Tensor data) {
  return graph_.add_constant(graph_.unique_value_name(base), std::move(data));
}

ir::Node* GraphRewriter::add_node(ir::Node* before, std::string op_type,
                                  std::vector<ir::Value*> inputs,
                                  const std::vector<std::string>& output_bases,
                                  std::vector<ir::TensorType> output_types,
                                  kernels::AttributeMap attrs) {
  std::vector<ir::Value*> outputs;
  for (size_t i = 0; i < output_bases.size(); ++i) {
    ir::TensorType type = i < output_types.size() ? output_types[i] : ir::TensorType{};
    outputs.push_back(graph_.add_value(graph_.unique_value_name(output_bases[i]), std::move(type)));
  }
  ir::NodeSpec spec;
  spec.op_type = std::move(op_type);
  spec.inputs = std::move(inputs);
  spec.name = graph_.unique_node_name(output_bases.empty() ? spec.op_type : output_bases.front());
  spec.attrs = std::move(attrs);
  ir::Node* node = graph_.add_node_with_outputs(std::move(spec), outputs, before);
  removed_.erase(node);  // a new node may reuse the address of one removed earlier
  return node;
}

bool GraphRewriter::can_replace(const ir::Value* old_value, const ir::Value* replacement) const {
  if (old_value == replacement || pinned(old_value)) return false;
  if (!graph_.is_output(old_value)) return true;
  return !graph_.is_input(replacement) && !graph_.is_output(replacement) && !pinned(replacement);
}

bool GraphRewriter::replace_value(ir::Value* old_value, ir::Value* replacement, bool take_name) {
  if (!can_replace(old_value, replacement)) return false;
  const bool rename =
      graph_.is_output(old_value) || (take_name && !graph_.is_input(replacement) &&
                                      !graph_.is_output(replacement) && !pinned(replacement));
  if (replacement->type().dtype == DataType::kUndefined && !replacement->is_constant()) {
    replacement->set_type(old_value->type());
  } else if (!replacement->is_constant() && !replacement->type().static_shape() &&
             old_value->type().static_shape() &&
             old_value->type().dtype == replacement->type().dtype) {
    replacement->set_type(old_value->type());
  }
  graph_.replace_all_uses(old_value, replacement);
  if (rename) {
    const std::string name = old_value->name();
    graph_.rename_value(old_value, graph_.unique_value_name(name + ".replaced"));
    graph_.rename_value(replacement, name);
  }
  return true;
}

void GraphRewriter::erase_if_dead(ir::Node* node) {
  if (node == nullptr || removed_.count(node) != 0) return;
  for (const ir::Value* out : node->outputs()) {
    if (out != nullptr && (!out->uses().empty() || graph_.is_output(out) || pinned(out))) return;
  }
  std::vector<ir::Node*> producers;
  for (const ir::Value* in : node->inputs()) {
    if (in != nullptr && in->producer() != nullptr) producers.push_back(in->producer());
  }
  graph_.remove_node(node);
  removed_.insert(node);
  for (ir::Node* p : producers) erase_if_dead(p);
}

}  // namespace openbpu::passes
