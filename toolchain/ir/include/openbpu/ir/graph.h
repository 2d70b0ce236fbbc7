// The toolchain's graph IR: Model → Graph → Node / Value.
//
// A Graph owns its Values and Nodes. A Value is a named tensor edge with a type (element type
// and a shape whose dimensions may be symbolic or unknown), an optional constant (initializer)
// and the list of its uses. A Node is one operator application: op type, domain, attributes
// (kernel-style attributes plus graph-valued attributes for control flow), inputs and outputs.
// Omitted optional inputs/outputs are nullptr. The node list is kept in execution order by
// topological_sort(); mutations keep use lists consistent, and verify() checks the invariants.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "openbpu/kernels/attributes.h"
#include "openbpu/kernels/tensor.h"

namespace openbpu::ir {

using kernels::AttributeMap;
using kernels::DataType;
using kernels::Tensor;

// One dimension: a known size, a named symbol ("batch"), or unknown.
struct Dim {
  int64_t value = -1;  // >= 0 when known
  std::string symbol;  // set for a symbolic dimension

  static Dim known(int64_t v) { return Dim{v, {}}; }
  static Dim symbolic(std::string s) { return Dim{-1, std::move(s)}; }
  static Dim unknown() { return Dim{}; }
  bool is_known() const { return value >= 0; }
  bool operator==(const Dim&) const = default;
};

struct TensorType {
  DataType dtype = DataType::kUndefined;
  std::optional<std::vector<Dim>> shape;  // nullopt: rank unknown

  static TensorType of(DataType dtype, const kernels::Shape& shape);
  bool has_rank() const { return shape.has_value(); }
  // The shape if every dimension is known.
  std::optional<kernels::Shape> static_shape() const;
  // "float32[1,3,?,batch]" / "float32[*]" (unknown rank) / "?" (unknown type)
  std::string to_string() const;
  bool operator==(const TensorType&) const = default;
};

class Graph;
class Node;

struct Use {
  Node* node;
  int input_index;
};

class Value {
 public:
  const std::string& name() const { return name_; }
  const TensorType& type() const { return type_; }
  void set_type(TensorType type) { type_ = std::move(type); }

  Node* producer() const { return producer_; }
  int producer_output() const { return producer_output_; }
  const std::vector<Use>& uses() const { return uses_; }

  // Initializer data; nullptr if the value is not a constant.
  const Tensor* constant() const { return constant_ ? &*constant_ : nullptr; }
  bool is_constant() const { return constant_.has_value(); }
  // Sets (or replaces) the constant data and the type to match it.
  void set_constant(Tensor data);
  void clear_constant() { constant_.reset(); }

  // A value referenced by a subgraph but defined in an enclosing graph.
  bool is_outer_scope() const { return outer_scope_; }

  const std::string& doc_string() const { return doc_string_; }
  void set_doc_string(std::string s) { doc_string_ = std::move(s); }

 private:
  friend class Graph;
  std::string name_;
  TensorType type_;
  Node* producer_ = nullptr;
  int producer_output_ = -1;
  std::vector<Use> uses_;
  std::optional<Tensor> constant_;
  bool outer_scope_ = false;
  std::string doc_string_;
};

// A graph-valued attribute (If/Loop/Scan bodies): one graph, or a list of graphs.
struct GraphAttribute {
  std::string name;
  std::vector<std::shared_ptr<Graph>> graphs;
  bool is_list = false;
};

class Node {
 public:
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  const std::string& op_type() const { return op_type_; }
  void set_op_type(std::string op_type) { op_type_ = std::move(op_type); }
  // "" is the default ONNX domain.
  const std::string& domain() const { return domain_; }
  void set_domain(std::string domain) { domain_ = std::move(domain); }

  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  Value* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  Value* output(size_t i) const { return i < outputs_.size() ? outputs_[i] : nullptr; }

  AttributeMap& attrs() { return attrs_; }
  const AttributeMap& attrs() const { return attrs_; }
  std::vector<GraphAttribute>& graph_attrs() { return graph_attrs_; }
  const std::vector<GraphAttribute>& graph_attrs() const { return graph_attrs_; }

  const std::string& doc_string() const { return doc_string_; }
  void set_doc_string(std::string s) { doc_string_ = std::move(s); }

  Graph* owner() const { return owner_; }

 private:
  friend class Graph;
  Graph* owner_ = nullptr;
  std::string name_;
  std::string op_type_;
  std::string domain_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  AttributeMap attrs_;
  std::vector<GraphAttribute> graph_attrs_;
  std::string doc_string_;
};

// Description of a node to add: op, domain, name, input values, output names.
struct NodeSpec {
  std::string op_type;
  std::vector<Value*> inputs;
  std::vector<std::string> output_names;  // "" for an omitted optional output
  std::string name;
  std::string domain;
  AttributeMap attrs;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  const std::string& doc_string() const { return doc_string_; }
  void set_doc_string(std::string s) { doc_string_ = std::move(s); }

  // ---- values
  // Creates a value; Error if the name is already used in this graph.
  Value* add_value(const std::string& name, TensorType type = {});
  // Creates a value holding constant data (an initializer).
  Value* add_constant(const std::string& name, Tensor data);
  // Creates a value standing for an enclosing graph's value of that name (subgraphs only).
  Value* add_outer_scope_value(const std::string& name);
  Value* find_value(const std::string& name) const;
  // All values in creation order.
  std::vector<Value*> values() const;
  // Values holding constants, in creation order.
  std::vector<Value*> constants() const;
  // A name not used in this graph, derived from `base` ("base", "base_1", ...).
  std::string unique_value_name(const std::string& base) const;
  std::string unique_node_name(const std::string& base) const;
  // Renames a value; Error if the new name is taken.
  void rename_value(Value* value, const std::string& new_name);
  // Removes values that are not produced, not used, not a graph input or output, and not read
  // by name by a subgraph of one of the nodes.
  size_t remove_unused_values();
  // The names that subgraphs of the nodes (If/Loop/Scan bodies, at any depth) read from
  // enclosing scopes.
  std::set<std::string> subgraph_outer_names() const;
  // The names this graph (a subgraph) reads from enclosing scopes: its outer-scope values and
  // what graphs nested in it read that it does not define.
  std::set<std::string> names_read_from_outside() const;

  // ---- graph interface
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  void add_input(Value* value);
  void add_output(Value* value);
  void set_inputs(std::vector<Value*> inputs);
  void set_outputs(std::vector<Value*> outputs);
  bool is_input(const Value* value) const;
  bool is_output(const Value* value) const;
  // Extra type annotations for intermediate values (ONNX value_info) are the Values' types;
  // this flags which of them were declared in the source model, to write them back.
  void mark_annotated(Value* value) { annotated_[value->name()] = true; }
  bool is_annotated(const Value* value) const { return annotated_.count(value->name()) != 0; }

  // ---- nodes
  const std::vector<Node*>& nodes() const { return order_; }
  // Appends a node (or inserts it before `before`). Output values are created with the given
  // names; Error if a name is taken. Returns the node.
  Node* add_node(NodeSpec spec, Node* before = nullptr);
  // Appends a node whose outputs are existing values without a producer.
  Node* add_node_with_outputs(NodeSpec spec, const std::vector<Value*>& outputs,
                              Node* before = nullptr);
  // Points input `index` of `node` at `value` (nullptr to omit it), updating use lists.
  void set_node_input(Node* node, size_t index, Value* value);
  // Appends an input to a node.
  void add_node_input(Node* node, Value* value);
  // Makes every use of `from` (node inputs and graph outputs) use `to` instead.
  void replace_all_uses(Value* from, Value* to);
  // Removes a node. Its outputs must be unused and not graph outputs (Error otherwise); they
  // are removed with it.
  void remove_node(Node* node);
  // Sorts nodes so that every node comes after the producers of its inputs, keeping the
  // existing order where possible. Error naming a node on the cycle if there is one.
  void topological_sort();

 private:
  Value* make_value(const std::string& name);
  void detach_inputs(Node* node);

  std::string name_;
  std::string doc_string_;
  std::vector<std::unique_ptr<Value>> value_storage_;
  std::unordered_map<std::string, Value*> values_by_name_;
  std::vector<std::unique_ptr<Node>> node_storage_;
  std::vector<Node*> order_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::map<std::string, bool> annotated_;
};

// What the graph attributes of a control-flow node read from the graph around it, in name order:
// the node's implicit inputs, in the order every executor and the model file give them.
std::vector<std::string> implicit_input_names(const Node& node);

// The nodes a node name from the config stands for after stage 2: the node of that name, or, if
// there is none, the nodes stage 2 made of it — recurrent_unrolling names them "<name>.<part>",
// control_flow_flattening's unrolled copies "<name>@<i>". Empty if neither exists.
std::vector<const Node*> nodes_standing_for(const Graph& graph, const std::string& name);

struct OpsetImport {
  std::string domain;  // "" for ai.onnx
  int64_t version = 0;
};

struct Model {
  int64_t ir_version = 8;
  std::vector<OpsetImport> opsets;
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string doc_string;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::shared_ptr<Graph> graph = std::make_shared<Graph>();

  // The imported opset version of a domain ("" / "ai.onnx" alike), or 0 if not imported.
  int64_t opset_version(const std::string& domain) const;
  void set_opset_version(const std::string& domain, int64_t version);
};

}  // namespace openbpu::ir
