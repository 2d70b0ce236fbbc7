#include "subgraph_copy.h"

#include <algorithm>

namespace openbpu::passes {

std::vector<ir::Value*> copy_subgraph(ir::Graph& graph, const ir::Graph& sub, const SubgraphCopy& how) {
  auto name_in_graph = [&](const std::string& name) {
    const auto it = how.renamed.find(name);
    return it == how.renamed.end() ? name : it->second;
  };
  auto mapped = [&](const ir::Value* v) -> ir::Value* {
    if (v == nullptr) return nullptr;
    const auto it = how.bound.find(v);
    return it != how.bound.end() ? it->second : graph.find_value(name_in_graph(v->name()));
  };
  for (const ir::Value* c : sub.constants()) {
    if (!how.bound.count(c)) graph.add_constant(name_in_graph(c->name()), *c->constant());
  }
  for (const ir::Node* n : sub.nodes()) {
    ir::NodeSpec spec{n->op_type(), {}, {}, graph.unique_node_name(n->name() + how.node_suffix), n->domain(), n->attrs()};
    for (const ir::Value* in : n->inputs()) spec.inputs.push_back(mapped(in));
    for (const ir::Value* out : n->outputs()) spec.output_names.push_back(out == nullptr ? "" : name_in_graph(out->name()));
    ir::Node* copy = graph.add_node(std::move(spec), how.before);
    copy->graph_attrs() = n->graph_attrs();
    for (size_t k = 0; k < n->outputs().size(); ++k) {
      if (n->output(k) != nullptr) copy->output(k)->set_type(n->output(k)->type());
    }
  }
  std::vector<ir::Value*> outputs;
  for (const ir::Value* out : sub.outputs()) outputs.push_back(mapped(out));
  return outputs;
}

bool names_fit(const ir::Graph& graph, const ir::Graph& sub, const std::map<std::string, std::string>& renamed,
               const std::set<std::string>& taken, bool bound_inputs) {
  std::set<std::string> own;
  for (const std::string& name : own_value_names(sub)) {
    const auto it = renamed.find(name);
    const std::string& as = it == renamed.end() ? name : it->second;
    if (graph.find_value(as) != nullptr || taken.count(as)) return false;
    own.insert(name);
  }
  for (const ir::Node* n : sub.nodes()) {
    for (const ir::Value* in : n->inputs()) {
      if (in == nullptr || own.count(in->name()) || (bound_inputs && sub.is_input(in))) continue;
      if (!in->is_outer_scope() || graph.find_value(in->name()) == nullptr) return false;
    }
  }
  for (const ir::Value* out : sub.outputs()) {
    if (!own.count(out->name()) && !(bound_inputs && sub.is_input(out)) && graph.find_value(out->name()) == nullptr) return false;
  }
  return true;
}

std::vector<std::string> own_value_names(const ir::Graph& sub) {
  std::vector<std::string> names;
  for (const ir::Value* v : sub.values()) {
    if (!v->is_outer_scope() && !sub.is_input(v)) names.push_back(v->name());
  }
  return names;
}

}  // namespace openbpu::passes
