#include "openbpu/ir/dump.h"

#include <iomanip>
#include <sstream>

namespace openbpu::ir {

namespace {

std::string value_ref(const Value* v) { return v == nullptr ? "_" : "%" + v->name(); }

std::string format_float(double f) {
  std::ostringstream out;
  out << std::setprecision(7) << f;
  return out.str();
}

std::string tensor_text(const Tensor& t) {
  std::string s = t.describe();
  if (t.element_count() <= 8 && kernels::dtype_size(t.dtype()) > 0) {
    s += "{";
    for (int64_t i = 0; i < t.element_count(); ++i) {
      s += i ? "," : "";
      s += kernels::dtype_is_float(t.dtype()) ? format_float(t.float_at(i))
                                              : std::to_string(t.int_at(i));
    }
    s += "}";
  }
  return s;
}

template <typename T, typename F>
std::string list_text(const std::vector<T>& items, F f) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? "," : "") + f(items[i]);
  return s + "]";
}

std::string attr_text(const kernels::AttributeValue& v) {
  struct Visitor {
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(float f) const { return format_float(f); }
    std::string operator()(const std::string& s) const { return "\"" + s + "\""; }
    std::string operator()(const Tensor& t) const { return tensor_text(t); }
    std::string operator()(const std::vector<int64_t>& v) const {
      return list_text(v, [](int64_t i) { return std::to_string(i); });
    }
    std::string operator()(const std::vector<float>& v) const {
      return list_text(v, [](float f) { return format_float(f); });
    }
    std::string operator()(const std::vector<std::string>& v) const {
      return list_text(v, [](const std::string& s) { return "\"" + s + "\""; });
    }
    std::string operator()(const std::vector<Tensor>& v) const {
      return list_text(v, [](const Tensor& t) { return tensor_text(t); });
    }
  };
  return std::visit(Visitor{}, v);
}

void dump_graph(const Graph& g, const DumpOptions& options, int indent, std::ostringstream& out) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  out << pad << "graph " << g.name() << " (";
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    out << (i ? ", " : "") << value_ref(g.inputs()[i]) << ": " << g.inputs()[i]->type().to_string();
  }
  out << ") -> (";
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    out << (i ? ", " : "") << value_ref(g.outputs()[i]);
  }
  out << ") {\n";
  for (const Value* c : g.constants()) {
    out << pad << "  init %" << c->name() << ": " << tensor_text(*c->constant()) << "\n";
  }
  for (const Node* n : g.nodes()) {
    out << pad << "  " << dump_node(*n, options) << "\n";
    for (const GraphAttribute& ga : n->graph_attrs()) {
      out << pad << "    " << ga.name << ":\n";
      for (const auto& sub : ga.graphs) dump_graph(*sub, options, indent + 6, out);
    }
  }
  out << pad << "}\n";
}

}  // namespace

std::string dump_node(const Node& node, const DumpOptions& options) {
  std::ostringstream out;
  for (size_t i = 0; i < node.outputs().size(); ++i) {
    const Value* v = node.outputs()[i];
    out << (i ? ", " : "") << value_ref(v);
    if (options.types && v != nullptr) out << ": " << v->type().to_string();
  }
  if (!node.outputs().empty()) out << " = ";
  if (!node.domain().empty()) out << node.domain() << "::";
  out << node.op_type();
  if (node.attrs().size() > 0 || !node.graph_attrs().empty()) {
    out << '[';
    bool first = true;
    for (const auto& [name, value] : node.attrs().items()) {
      out << (first ? "" : ", ") << name << '=' << attr_text(value);
      first = false;
    }
    for (const GraphAttribute& ga : node.graph_attrs()) {
      out << (first ? "" : ", ") << ga.name << "=<graph>";
      first = false;
    }
    out << ']';
  }
  out << '(';
  for (size_t i = 0; i < node.inputs().size(); ++i) {
    out << (i ? ", " : "") << value_ref(node.inputs()[i]);
  }
  out << ')';
  return out.str();
}

std::string dump(const Graph& graph, const DumpOptions& options) {
  std::ostringstream out;
  dump_graph(graph, options, 0, out);
  return out.str();
}

std::string dump(const Model& model, const DumpOptions& options) {
  std::ostringstream out;
  out << "model ir_version=" << model.ir_version << " opsets=[";
  for (size_t i = 0; i < model.opsets.size(); ++i) {
    out << (i ? "," : "") << (model.opsets[i].domain.empty() ? "ai.onnx" : model.opsets[i].domain)
        << ':' << model.opsets[i].version;
  }
  out << "]\n" << dump(*model.graph, options);
  return out.str();
}

}  // namespace openbpu::ir
