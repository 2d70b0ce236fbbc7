#include "openbpu/ir/graph.h"

#include <algorithm>
#include <queue>
#include <sstream>

#include "openbpu/common/error.h"

namespace openbpu::ir {

TensorType TensorType::of(DataType dtype, const kernels::Shape& shape) {
  TensorType t;
  t.dtype = dtype;
  t.shape.emplace();
  for (int64_t d : shape) t.shape->push_back(Dim::known(d));
  return t;
}

std::optional<kernels::Shape> TensorType::static_shape() const {
  if (!shape) return std::nullopt;
  kernels::Shape out;
  for (const Dim& d : *shape) {
    if (!d.is_known()) return std::nullopt;
    out.push_back(d.value);
  }
  return out;
}

std::string TensorType::to_string() const {
  if (dtype == DataType::kUndefined && !shape) return "?";
  std::ostringstream out;
  out << (dtype == DataType::kUndefined ? "?" : std::string(kernels::dtype_name(dtype)));
  if (!shape) {
    out << "[*]";
    return out.str();
  }
  out << '[';
  for (size_t i = 0; i < shape->size(); ++i) {
    const Dim& d = (*shape)[i];
    out << (i ? "," : "");
    if (d.is_known()) {
      out << d.value;
    } else if (!d.symbol.empty()) {
      out << d.symbol;
    } else {
      out << '?';
    }
  }
  out << ']';
  return out.str();
}

void Value::set_constant(Tensor data) {
  type_ = TensorType::of(data.dtype(), data.shape());
  constant_ = std::move(data);
}

// ---------------------------------------------------------------- values

Value* Graph::make_value(const std::string& name) {
  if (!name.empty() && values_by_name_.count(name) != 0) {
    raise("graph '", name_, "': value name '", name, "' is defined twice");
  }
  auto v = std::make_unique<Value>();
  v->name_ = name;
  Value* raw = v.get();
  value_storage_.push_back(std::move(v));
  if (!name.empty()) values_by_name_[name] = raw;
  return raw;
}

Value* Graph::add_value(const std::string& name, TensorType type) {
  Value* v = make_value(name);
  v->type_ = std::move(type);
  return v;
}

Value* Graph::add_constant(const std::string& name, Tensor data) {
  Value* v = make_value(name);
  v->set_constant(std::move(data));
  return v;
}

Value* Graph::add_outer_scope_value(const std::string& name) {
  Value* v = make_value(name);
  v->outer_scope_ = true;
  return v;
}

Value* Graph::find_value(const std::string& name) const {
  auto it = values_by_name_.find(name);
  return it == values_by_name_.end() ? nullptr : it->second;
}

std::vector<Value*> Graph::values() const {
  std::vector<Value*> out;
  out.reserve(value_storage_.size());
  for (const auto& v : value_storage_) out.push_back(v.get());
  return out;
}

std::vector<Value*> Graph::constants() const {
  std::vector<Value*> out;
  for (const auto& v : value_storage_) {
    if (v->is_constant()) out.push_back(v.get());
  }
  return out;
}

std::string Graph::unique_value_name(const std::string& base) const {
  if (values_by_name_.count(base) == 0) return base;
  for (int i = 1;; ++i) {
    std::string candidate = base + "_" + std::to_string(i);
    if (values_by_name_.count(candidate) == 0) return candidate;
  }
}

std::string Graph::unique_node_name(const std::string& base) const {
  auto taken = [&](const std::string& n) {
    return std::any_of(order_.begin(), order_.end(), [&](const Node* x) { return x->name() == n; });
  };
  if (!taken(base)) return base;
  for (int i = 1;; ++i) {
    std::string candidate = base + "_" + std::to_string(i);
    if (!taken(candidate)) return candidate;
  }
}

void Graph::rename_value(Value* value, const std::string& new_name) {
  if (value->name_ == new_name) return;
  if (values_by_name_.count(new_name) != 0) {
    raise("graph '", name_, "': cannot rename '", value->name_, "' to '", new_name,
          "': the name is taken");
  }
  const bool annotated = annotated_.erase(value->name_) != 0;
  values_by_name_.erase(value->name_);
  value->name_ = new_name;
  values_by_name_[new_name] = value;
  if (annotated) annotated_[new_name] = true;
}

namespace {

void collect_outer_names(const Graph& graph, std::set<std::string>& names) {
  for (const Node* node : graph.nodes()) {
    for (const GraphAttribute& attr : node->graph_attrs()) {
      for (const auto& sub : attr.graphs) {
        for (const Value* v : sub->values()) {
          if (v->is_outer_scope()) names.insert(v->name());
        }
        collect_outer_names(*sub, names);
      }
    }
  }
}

}  // namespace

std::set<std::string> Graph::subgraph_outer_names() const {
  std::set<std::string> names;
  collect_outer_names(*this, names);
  return names;
}

std::vector<std::string> implicit_input_names(const Node& node) {
  std::set<std::string> names;
  for (const GraphAttribute& a : node.graph_attrs()) {
    for (const auto& sub : a.graphs) names.merge(sub->names_read_from_outside());
  }
  return {names.begin(), names.end()};
}

std::vector<const Node*> nodes_standing_for(const Graph& graph, const std::string& name) {
  std::vector<const Node*> exact, made;
  for (const Node* n : graph.nodes()) {
    const std::string& s = n->name();
    if (s == name) exact.push_back(n);
    if (s.size() > name.size() && s.compare(0, name.size(), name) == 0 && (s[name.size()] == '.' || s[name.size()] == '@')) {
      made.push_back(n);
    }
  }
  return exact.empty() ? made : exact;
}

std::set<std::string> Graph::names_read_from_outside() const {
  std::set<std::string> names;
  for (const auto& v : value_storage_) {
    if (v->outer_scope_) names.insert(v->name_);
  }
  for (const std::string& n : subgraph_outer_names()) {
    const Value* v = find_value(n);
    if (v == nullptr || v->outer_scope_) names.insert(n);
  }
  return names;
}

size_t Graph::remove_unused_values() {
  size_t removed = 0;
  const std::set<std::string> read_by_subgraphs = subgraph_outer_names();
  for (auto it = value_storage_.begin(); it != value_storage_.end();) {
    Value* v = it->get();
    if (v->producer_ == nullptr && v->uses_.empty() && !is_input(v) && !is_output(v) &&
        read_by_subgraphs.count(v->name_) == 0) {
      values_by_name_.erase(v->name_);
      annotated_.erase(v->name_);
      it = value_storage_.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

// ---------------------------------------------------------------- interface

void Graph::add_input(Value* value) { inputs_.push_back(value); }
void Graph::add_output(Value* value) { outputs_.push_back(value); }
void Graph::set_inputs(std::vector<Value*> inputs) { inputs_ = std::move(inputs); }
void Graph::set_outputs(std::vector<Value*> outputs) { outputs_ = std::move(outputs); }

bool Graph::is_input(const Value* value) const {
  return std::find(inputs_.begin(), inputs_.end(), value) != inputs_.end();
}

bool Graph::is_output(const Value* value) const {
  return std::find(outputs_.begin(), outputs_.end(), value) != outputs_.end();
}

// ---------------------------------------------------------------- nodes

Node* Graph::add_node(NodeSpec spec, Node* before) {
  std::vector<Value*> outputs;
  for (const std::string& name : spec.output_names) {
    outputs.push_back(name.empty() ? nullptr : make_value(name));
  }
  return add_node_with_outputs(std::move(spec), outputs, before);
}

Node* Graph::add_node_with_outputs(NodeSpec spec, const std::vector<Value*>& outputs,
                                   Node* before) {
  auto node = std::make_unique<Node>();
  Node* n = node.get();
  n->owner_ = this;
  n->name_ = std::move(spec.name);
  n->op_type_ = std::move(spec.op_type);
  n->domain_ = spec.domain == "ai.onnx" ? std::string() : std::move(spec.domain);
  n->attrs_ = std::move(spec.attrs);
  for (Value* out : outputs) {
    if (out != nullptr && out->producer_ != nullptr) {
      raise("graph '", name_, "': value '", out->name_, "' is produced by both node '",
            out->producer_->name_, "' and node '", n->name_, "'");
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i] != nullptr) {
      outputs[i]->producer_ = n;
      outputs[i]->producer_output_ = static_cast<int>(i);
    }
  }
  n->outputs_ = outputs;
  for (Value* in : spec.inputs) add_node_input(n, in);
  node_storage_.push_back(std::move(node));
  if (before == nullptr) {
    order_.push_back(n);
  } else {
    auto it = std::find(order_.begin(), order_.end(), before);
    order_.insert(it, n);
  }
  return n;
}

void Graph::add_node_input(Node* node, Value* value) {
  node->inputs_.push_back(value);
  if (value != nullptr) {
    value->uses_.push_back(Use{node, static_cast<int>(node->inputs_.size() - 1)});
  }
}

void Graph::set_node_input(Node* node, size_t index, Value* value) {
  if (index >= node->inputs_.size()) node->inputs_.resize(index + 1, nullptr);
  Value* old = node->inputs_[index];
  if (old != nullptr) {
    auto& uses = old->uses_;
    uses.erase(std::remove_if(uses.begin(), uses.end(),
                              [&](const Use& u) {
                                return u.node == node && u.input_index == static_cast<int>(index);
                              }),
               uses.end());
  }
  node->inputs_[index] = value;
  if (value != nullptr) value->uses_.push_back(Use{node, static_cast<int>(index)});
}

void Graph::replace_all_uses(Value* from, Value* to) {
  if (from == to) return;
  const std::vector<Use> uses = from->uses_;
  for (const Use& u : uses) set_node_input(u.node, static_cast<size_t>(u.input_index), to);
  for (Value*& out : outputs_) {
    if (out == from) out = to;
  }
}

void Graph::detach_inputs(Node* node) {
  for (size_t i = 0; i < node->inputs_.size(); ++i) set_node_input(node, i, nullptr);
}

void Graph::remove_node(Node* node) {
  for (Value* out : node->outputs_) {
    if (out == nullptr) continue;
    if (!out->uses_.empty()) {
      raise("cannot remove node '", node->name_, "': its output '", out->name_, "' is used by node '",
            out->uses_.front().node->name_, "'");
    }
    if (is_output(out)) {
      raise("cannot remove node '", node->name_, "': its output '", out->name_,
            "' is a graph output");
    }
  }
  detach_inputs(node);
  for (Value* out : node->outputs_) {
    if (out == nullptr) continue;
    values_by_name_.erase(out->name_);
    annotated_.erase(out->name_);
    value_storage_.erase(std::find_if(value_storage_.begin(), value_storage_.end(),
                                      [&](const auto& p) { return p.get() == out; }));
  }
  order_.erase(std::find(order_.begin(), order_.end(), node));
  node_storage_.erase(std::find_if(node_storage_.begin(), node_storage_.end(),
                                   [&](const auto& p) { return p.get() == node; }));
}

void Graph::topological_sort() {
  // Kahn's algorithm; among ready nodes the one earliest in the current order goes first.
  std::unordered_map<const Node*, size_t> position;
  for (size_t i = 0; i < order_.size(); ++i) position[order_[i]] = i;
  std::vector<size_t> pending(order_.size(), 0);
  std::vector<std::vector<size_t>> consumers(order_.size());
  for (size_t i = 0; i < order_.size(); ++i) {
    std::vector<size_t> producers;
    for (const Value* in : order_[i]->inputs_) {
      if (in != nullptr && in->producer_ != nullptr) {
        auto it = position.find(in->producer_);
        if (it != position.end() && it->second != i) producers.push_back(it->second);
        if (it != position.end() && it->second == i) {
          raise("graph '", name_, "': node '", order_[i]->name_, "' (", order_[i]->op_type_,
                ") consumes its own output '", in->name_, "' (cycle)");
        }
      }
    }
    std::sort(producers.begin(), producers.end());
    producers.erase(std::unique(producers.begin(), producers.end()), producers.end());
    pending[i] = producers.size();
    for (size_t p : producers) consumers[p].push_back(i);
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < order_.size(); ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<Node*> sorted;
  sorted.reserve(order_.size());
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    sorted.push_back(order_[i]);
    for (size_t c : consumers[i]) {
      if (--pending[c] == 0) ready.push(c);
    }
  }
  if (sorted.size() != order_.size()) {
    for (size_t i = 0; i < order_.size(); ++i) {
      if (pending[i] != 0) {
        raise("graph '", name_, "' has a cycle through node '", order_[i]->name_, "' (",
              order_[i]->op_type_, ")");
      }
    }
  }
  order_ = std::move(sorted);
}

// ---------------------------------------------------------------- model

int64_t Model::opset_version(const std::string& domain) const {
  const std::string d = domain == "ai.onnx" ? "" : domain;
  for (const OpsetImport& o : opsets) {
    if ((o.domain == "ai.onnx" ? "" : o.domain) == d) return o.version;
  }
  return 0;
}

void Model::set_opset_version(const std::string& domain, int64_t version) {
  const std::string d = domain == "ai.onnx" ? "" : domain;
  for (OpsetImport& o : opsets) {
    if ((o.domain == "ai.onnx" ? "" : o.domain) == d) {
      o.version = version;
      return;
    }
  }
  opsets.push_back({d, version});
}

}  // namespace openbpu::ir
