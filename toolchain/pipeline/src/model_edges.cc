#include "openbpu/pipeline/model_edges.h"

#include <algorithm>
#include <set>

#include "openbpu/common/error.h"

namespace openbpu::pipeline {
namespace {

// The op type a removable node type names in the quantized model.
std::string op_type_of(config::RemovableNodeType t) {
  switch (t) {
    case config::RemovableNodeType::kQuantize: return "Quantize";
    case config::RemovableNodeType::kDequantize: return "Dequantize";
    case config::RemovableNodeType::kTranspose: return "Transpose";
    case config::RemovableNodeType::kCast: return "Cast";
    case config::RemovableNodeType::kReshape: return "Reshape";
    case config::RemovableNodeType::kSoftmax: return "Softmax";
  }
  return "";
}

// The node's only non-constant input, or nullptr.
ir::Value* data_input(const ir::Node& n) {
  ir::Value* found = nullptr;
  for (ir::Value* in : n.inputs()) {
    if (in == nullptr || in->is_constant()) continue;
    if (found != nullptr) return nullptr;
    found = in;
  }
  return found;
}

enum class Edge { kNone, kOutput, kInput };

Edge edge_of(const ir::Graph& g, const ir::Node& n) {
  if (n.outputs().size() != 1 || n.output(0) == nullptr) return Edge::kNone;
  ir::Value* in = data_input(n);
  if (in == nullptr) return Edge::kNone;
  const ir::Value* out = n.output(0);
  if (g.is_output(out) && out->uses().empty() && !g.is_output(in)) {
    const size_t times = static_cast<size_t>(std::count(g.outputs().begin(), g.outputs().end(), out));
    if (times == 1) return Edge::kOutput;
  }
  if (g.is_input(in) && in->uses().size() == 1 && !g.is_output(out)) return Edge::kInput;
  return Edge::kNone;
}

std::string remove_at_edge(ir::Graph& g, ir::Node* n, Edge edge) {
  const std::string line = "removed node '" + n->name() + "' (" + n->op_type() + ") at the model's " +
                           (edge == Edge::kOutput ? "output" : "input");
  ir::Value* in = data_input(*n);
  ir::Value* out = n->output(0);
  if (edge == Edge::kOutput) {
    std::vector<ir::Value*> outputs = g.outputs();
    std::replace(outputs.begin(), outputs.end(), out, in);
    g.set_outputs(outputs);
    g.remove_node(n);
    return line + ": output '" + in->name() + "' " + in->type().to_string();
  }
  const std::string name = out->name();
  ir::Value* fresh = g.add_value(g.unique_value_name(name + "_input"), out->type());
  g.replace_all_uses(out, fresh);
  std::vector<ir::Value*> inputs = g.inputs();
  std::replace(inputs.begin(), inputs.end(), in, fresh);
  g.set_inputs(inputs);
  g.remove_node(n);
  g.remove_unused_values();
  g.rename_value(fresh, name);
  return line + ": input '" + name + "' " + fresh->type().to_string();
}

}  // namespace

std::vector<std::string> apply_output_nodes(ir::Model& model, const std::vector<std::string>& names) {
  if (names.empty()) return {};
  ir::Graph& g = *model.graph;
  std::vector<ir::Value*> outputs;
  std::vector<std::string> lines;
  for (const std::string& name : names) {
    ir::Value* v = nullptr;
    for (ir::Node* n : g.nodes()) {
      if (n->name() == name && n->output(0) != nullptr) v = n->output(0);
    }
    if (v == nullptr) v = g.find_value(name);
    if (v == nullptr || v->is_constant()) {
      raise("model_parameters.output_nodes: '", name, "' is neither a node nor a tensor of the model");
    }
    if (std::find(outputs.begin(), outputs.end(), v) == outputs.end()) outputs.push_back(v);
    lines.push_back("output_nodes: model output '" + v->name() + "' (from '" + name + "')");
  }
  g.set_outputs(outputs);
  // Nodes that reach no output any more.
  for (bool changed = true; changed;) {
    changed = false;
    const std::vector<ir::Node*> nodes = g.nodes();
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      ir::Node* n = *it;
      const bool dead = std::all_of(n->outputs().begin(), n->outputs().end(), [&](const ir::Value* o) {
        return o == nullptr || (o->uses().empty() && !g.is_output(o));
      });
      if (dead) {
        g.remove_node(n);
        changed = true;
      }
    }
  }
  g.remove_unused_values();
  return lines;
}

std::vector<std::string> remove_edge_nodes(ir::Model& model, const std::vector<config::RemovableNodeType>& types,
                                           const std::vector<std::string>& names) {
  ir::Graph& g = *model.graph;
  std::vector<std::string> lines;
  for (config::RemovableNodeType t : types) {
    const std::string op = op_type_of(t);
    for (bool changed = true; changed;) {
      changed = false;
      for (ir::Node* n : g.nodes()) {
        if (n->op_type() != op) continue;
        const Edge e = edge_of(g, *n);
        if (e == Edge::kNone) continue;
        lines.push_back(remove_at_edge(g, n, e));
        changed = true;
        break;
      }
    }
  }
  for (const std::string& name : names) {
    ir::Node* node = nullptr;
    for (ir::Node* n : g.nodes()) {
      if (n->name() == name) node = n;
    }
    if (node == nullptr) {
      raise("model_parameters.remove_node_name: the quantized model has no node '", name,
            "' (it may have been fused or removed before)");
    }
    const Edge e = edge_of(g, *node);
    if (e == Edge::kNone) {
      raise("model_parameters.remove_node_name: node '", name, "' (", node->op_type(),
            ") is not at the model's input or output edge (one data input, one output, and a graph input or "
            "output that only it touches); only edge nodes can be removed");
    }
    lines.push_back(remove_at_edge(g, node, e));
  }
  return lines;
}

}  // namespace openbpu::pipeline
