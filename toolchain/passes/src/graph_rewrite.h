// What the passes share: reading constants and shapes, creating nodes and constants with unique
// names and known types, replacing a value while keeping the graph's output names, and erasing
// the nodes a rewrite left without uses.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "openbpu/ir/graph.h"
#include "openbpu/kernels/attributes.h"
#include "openbpu/kernels/tensor.h"

namespace openbpu::passes {

using kernels::DataType;
using kernels::Shape;
using kernels::Tensor;

// ---- reading the graph

// The value's constant data, or nullptr.
const Tensor* constant_of(const ir::Value* value);
// The value's shape if all its dims are known.
std::optional<Shape> static_shape_of(const ir::Value* value);
// The value's rank if known.
std::optional<int64_t> rank_of(const ir::Value* value);
// True if the value has exactly one use and is not a graph output.
bool has_single_use(const ir::Graph& graph, const ir::Value* value);
// A constant float or integer tensor whose elements all equal one number: that number.
std::optional<double> uniform_constant(const ir::Value* value);
// A float32 constant's elements.
std::optional<std::vector<float>> float32_values(const ir::Value* value);
// An integer constant's elements as int64.
std::optional<std::vector<int64_t>> int_values(const ir::Value* value);
// The model's ai.onnx opset.
int64_t onnx_opset(const ir::Model& model);
// Is the node an ai.onnx operator of this type?
bool is_op(const ir::Node* node, std::string_view op_type);
// Producer of input `index` if it is an ai.onnx `op_type` node, else nullptr.
ir::Node* producer_if(const ir::Node* node, size_t index, std::string_view op_type);
// Axis in [0, rank) for a possibly negative axis; nullopt if out of range.
std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank);

// ---- building tensors
Tensor float32_tensor(const Shape& shape, const std::vector<float>& values);
Tensor int64_tensor(const Shape& shape, const std::vector<int64_t>& values);

// ---- rewriting
class GraphRewriter {
 public:
  explicit GraphRewriter(ir::Graph& graph);

  ir::Graph& graph() { return graph_; }

  // A constant named after `base` (made unique).
  ir::Value* add_constant(const std::string& base, Tensor data);
  // A node inserted before `before` (appended if nullptr), its outputs named after
  // `output_bases` (made unique) and typed with `output_types` (missing → unknown).
  ir::Node* add_node(ir::Node* before, std::string op_type, std::vector<ir::Value*> inputs,
                     const std::vector<std::string>& output_bases,
                     std::vector<ir::TensorType> output_types = {},
                     kernels::AttributeMap attrs = {});

  // Whether replace_value(old_value, replacement) is possible: if `old_value` is a graph output,
  // `replacement` must be able to take its name (not a graph input or output itself, no name
  // used by a subgraph).
  bool can_replace(const ir::Value* old_value, const ir::Value* replacement) const;
  // Makes every use of `old_value` use `replacement`. If `old_value` is a graph output, or if
  // `take_name` is set and renaming is allowed, `replacement` takes `old_value`'s name (so
  // tensor names survive the rewrite). Returns false and changes nothing if !can_replace.
  // `replacement` also takes `old_value`'s type if its own is unknown.
  bool replace_value(ir::Value* old_value, ir::Value* replacement, bool take_name);

  // Removes `node` if none of its outputs is used, is a graph output or is referenced by a
  // subgraph, and then its inputs' producers that became unused, recursively.
  void erase_if_dead(ir::Node* node);
  // The current node list, to iterate over while rewriting; was_removed tells which of its
  // nodes a rewrite has erased since (do not touch those).
  std::vector<ir::Node*> snapshot();
  bool was_removed(const ir::Node* node) const { return removed_.count(node) != 0; }
  // One sweep: `rewrite` on every node of a snapshot that no rewrite has removed yet; returns
  // how many times it returned true.
  int sweep(const std::function<bool(ir::Node*)>& rewrite);

  // Names referenced by subgraphs of the graph's nodes (outer-scope values): such values are
  // kept and never renamed.
  bool pinned(const ir::Value* value) const;

 private:
  ir::Graph& graph_;
  std::unordered_set<const ir::Node*> removed_;
  std::set<std::string> pinned_names_;
};

}  // namespace openbpu::passes
