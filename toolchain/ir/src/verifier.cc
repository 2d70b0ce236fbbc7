#include "openbpu/ir/verifier.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "openbpu/common/error.h"

namespace openbpu::ir {

namespace {

// Operators whose listed inputs must share one element type (the "T" of their ONNX schema).
// -1 means "all inputs from the first listed index onwards".
struct SameTypeRule {
  const char* op_type;
  std::vector<int> inputs;
};

const std::vector<SameTypeRule>& same_type_rules() {
  static const std::vector<SameTypeRule> rules = {
      {"Add", {0, 1}},      {"Sub", {0, 1}},          {"Mul", {0, 1}},
      {"Div", {0, 1}},      {"Mod", {0, 1}},          {"Equal", {0, 1}},
      {"Greater", {0, 1}},  {"Less", {0, 1}},         {"GreaterOrEqual", {0, 1}},
      {"LessOrEqual", {0, 1}}, {"And", {0, 1}},       {"Or", {0, 1}},
      {"Xor", {0, 1}},      {"BitShift", {0, 1}},     {"PRelu", {0, 1}},
      {"MatMul", {0, 1}},   {"Gemm", {0, 1, 2}},      {"Conv", {0, 1, 2}},
      {"ConvTranspose", {0, 1, 2}}, {"Where", {1, 2}}, {"Sum", {0, -1}},
      {"Mean", {0, -1}},    {"Max", {0, -1}},         {"Min", {0, -1}},
      {"Concat", {0, -1}},  {"BatchNormalization", {0, 1, 2}},
  };
  return rules;
}

void check_same_types(const Node& node, std::vector<std::string>& problems) {
  if (!node.domain().empty()) return;
  for (const SameTypeRule& rule : same_type_rules()) {
    if (node.op_type() != rule.op_type) continue;
    std::vector<size_t> indices;
    for (size_t k = 0; k < rule.inputs.size(); ++k) {
      if (rule.inputs[k] == -1) {
        for (size_t i = static_cast<size_t>(rule.inputs[k - 1]) + 1; i < node.inputs().size(); ++i) {
          indices.push_back(i);
        }
      } else {
        indices.push_back(static_cast<size_t>(rule.inputs[k]));
      }
    }
    const Value* first = nullptr;
    for (size_t i : indices) {
      const Value* v = node.input(i);
      if (v == nullptr || v->type().dtype == DataType::kUndefined) continue;
      if (first == nullptr) {
        first = v;
      } else if (v->type().dtype != first->type().dtype) {
        problems.push_back(str_cat("node '", node.name(), "' (", node.op_type(), "): inputs '",
                                   first->name(), "' (", kernels::dtype_name(first->type().dtype),
                                   ") and '", v->name(), "' (", kernels::dtype_name(v->type().dtype),
                                   ") must have the same element type"));
      }
    }
  }
}

}  // namespace

std::vector<std::string> verify(const Graph& graph) {
  std::vector<std::string> problems;
  std::unordered_map<const Node*, size_t> position;
  for (size_t i = 0; i < graph.nodes().size(); ++i) position[graph.nodes()[i]] = i;

  std::map<std::string, int> node_names;
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const Node* n = graph.nodes()[i];
    if (!n->name().empty() && ++node_names[n->name()] == 2) {
      problems.push_back(str_cat("node name '", n->name(), "' is used by more than one node"));
    }
    for (size_t k = 0; k < n->inputs().size(); ++k) {
      const Value* in = n->inputs()[k];
      if (in == nullptr) continue;
      const bool defined = in->producer() != nullptr || graph.is_input(in) || in->is_constant() ||
                           in->is_outer_scope();
      if (!defined) {
        problems.push_back(str_cat("node '", n->name(), "' (", n->op_type(), ") input ", k, " '",
                                   in->name(), "' is not produced by any node, not a graph input "
                                   "and not an initializer (dangling)"));
      } else if (in->producer() != nullptr) {
        auto it = position.find(in->producer());
        if (it == position.end()) {
          problems.push_back(str_cat("node '", n->name(), "' input '", in->name(),
                                     "' is produced by a node that is not in the graph"));
        } else if (it->second >= i) {
          problems.push_back(str_cat("node '", n->name(), "' (", n->op_type(), ") uses '",
                                     in->name(), "' before node '", in->producer()->name(),
                                     "' produces it (nodes not in topological order, or a cycle)"));
        }
      }
      const auto& uses = in->uses();
      const bool listed = std::any_of(uses.begin(), uses.end(), [&](const Use& u) {
        return u.node == n && u.input_index == static_cast<int>(k);
      });
      if (!listed) {
        problems.push_back(str_cat("value '", in->name(), "' does not list its use by node '",
                                   n->name(), "' input ", k));
      }
    }
    for (const Value* out : n->outputs()) {
      if (out != nullptr && out->producer() != n) {
        problems.push_back(str_cat("value '", out->name(), "' does not record node '", n->name(),
                                   "' as its producer"));
      }
      if (out != nullptr && graph.is_input(out)) {
        problems.push_back(str_cat("graph input '", out->name(), "' is also produced by node '",
                                   n->name(), "'"));
      }
    }
    check_same_types(*n, problems);
  }
  for (const Value* v : graph.values()) {
    for (const Use& u : v->uses()) {
      if (u.node->input(static_cast<size_t>(u.input_index)) != v) {
        problems.push_back(str_cat("value '", v->name(), "' lists a use by node '", u.node->name(),
                                   "' input ", u.input_index, " that the node does not have"));
      }
    }
    if (const std::optional<kernels::Shape> shape = v->type().static_shape()) {
      if (const std::string problem = kernels::tensor_size_problem(v->type().dtype, *shape); !problem.empty()) {
        const std::string role = v->producer() != nullptr ? str_cat("output of node '", v->producer()->name(), "'")
                                 : graph.is_input(v)      ? std::string("graph input")
                                 : v->is_constant()       ? std::string("initializer")
                                                          : std::string("value");
        problems.push_back(str_cat("tensor '", v->name(), "' (", role, "): ", problem));
      }
    }
    if (v->is_constant()) {
      const Tensor& data = *v->constant();
      if (v->type() != TensorType::of(data.dtype(), data.shape())) {
        problems.push_back(str_cat("initializer '", v->name(), "' is declared ",
                                   v->type().to_string(), " but holds ", data.describe()));
      }
    }
  }
  for (const Value* out : graph.outputs()) {
    if (out == nullptr) continue;
    if (out->producer() == nullptr && !graph.is_input(out) && !out->is_constant() &&
        !out->is_outer_scope()) {
      problems.push_back(str_cat("graph output '", out->name(), "' is not produced by any node"));
    }
  }
  for (const Node* n : graph.nodes()) {
    for (const GraphAttribute& ga : n->graph_attrs()) {
      for (const auto& sub : ga.graphs) {
        for (const std::string& p : verify(*sub)) {
          problems.push_back(str_cat("in subgraph '", ga.name, "' of node '", n->name(), "': ", p));
        }
      }
    }
  }
  return problems;
}

void verify_or_throw(const Graph& graph, const std::string& context) {
  const std::vector<std::string> problems = verify(graph);
  if (problems.empty()) return;
  std::string message = str_cat(context, ": the graph is invalid: ", problems.front());
  if (problems.size() > 1) {
    message += str_cat(" (and ", problems.size() - 1, " more problem",
                       problems.size() > 2 ? "s" : "", ":");
    for (size_t i = 1; i < problems.size() && i < 6; ++i) message += "\n  " + problems[i];
    if (problems.size() > 6) message += "\n  ...";
    message += ")";
  }
  raise(message);
}

}  // namespace openbpu::ir
