// The hb_model_info layout (model_writer.h: describe_model).
#include <cstdio>
#include <map>
#include <sstream>

#include "openbpu/compiler/model_writer.h"

namespace openbpu::compiler {

namespace {

// "key                 : value" with the key padded to 20 columns, as the original prints.
void line(std::ostringstream& out, const std::string& key, const std::string& value) {
  out << key;
  for (size_t i = key.size(); i < 20; ++i) out << ' ';
  out << ": " << value << "\n";
}

// <InputDataType.F32: 5>: the original's enum repr; the two values the reference shows are
// numbered as there, the others by name only.
std::string type_repr(format::TensorType t) {
  switch (t) {
    case format::TensorType::TENSOR_TYPE_F32: return "<InputDataType.F32: 5>";
    case format::TensorType::IMG_TYPE_NV12: return "<InputDataType.NV12: 7>";
    default: {
      std::string name = format::EnumNameTensorType(t);
      const std::string prefix = name.rfind("TENSOR_TYPE_", 0) == 0 ? "TENSOR_TYPE_" : "IMG_TYPE_";
      return "<InputDataType." + name.substr(prefix.size()) + ">";
    }
  }
}

std::string types(const std::vector<format::TensorInfo>& tensors) {
  std::string s = "[";
  for (size_t i = 0; i < tensors.size(); ++i) s += (i ? ", " : "") + type_repr(tensors[i].tensor_type);
  return s + "]";
}

// A float as %.9g: enough digits to give back the same float.
std::string exact(float v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", static_cast<double>(v));
  return buffer;
}

template <typename T, typename Fn>
std::string list(const std::vector<T>& values, Fn&& text) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + text(values[i]);
  return s + "]";
}

}  // namespace

std::string attribute_value(const format::AttributeInfo& a) {
  auto quoted = [](const std::string& v) { return "'" + v + "'"; };
  switch (a.type) {
    case format::AttributeType::INT: return std::to_string(a.i);
    case format::AttributeType::FLOAT: return exact(a.f);
    case format::AttributeType::STRING: return quoted(a.s);
    case format::AttributeType::INTS:
      return list(a.ints, [](int64_t v) { return std::to_string(v); });
    case format::AttributeType::FLOATS: return list(a.floats, exact);
    case format::AttributeType::STRINGS: return list(a.strings, quoted);
    case format::AttributeType::TENSOR:
      return a.t ? std::string("tensor ") + format::EnumNameTensorType(a.t->data_type) + " " +
                       list(a.t->shape, [](int64_t v) { return std::to_string(v); })
                 : "tensor";
    default: return "?";
  }
}

std::string describe_deleted_node(const format::DeletedNodeInfo& node, bool with_name) {
  auto quoted = [](const std::string& v) { return "'" + v + "'"; };
  std::string s = with_name ? "name: " + node.name + "; " : "";
  s += "op_type: " + node.op_type + "; inputs: " + list(node.inputs, quoted) +
       "; outputs: " + list(node.outputs, quoted);
  for (const format::AttributeInfo& a : node.attributes)
    s += "; " + a.name + ": " + attribute_value(a);
  return s;
}

std::string describe_model(const format::ModelInfo& model) {
  std::ostringstream out;
  out << "############# model deps info #############\n";
  for (const auto& [key, value] : model.deps_info) line(out, key, value);
  // Sections of compile_parameters, in first-appearance order; inputs grouped by name.
  std::vector<std::string> sections;
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> by_section;
  std::vector<std::string> input_names;
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> by_input;
  for (const auto& [key, value] : model.compile_parameters) {
    const size_t dot = key.find('.');
    const std::string section = dot == std::string::npos ? "compiler_parameters" : key.substr(0, dot);
    std::string rest = dot == std::string::npos ? key : key.substr(dot + 1);
    if (!by_section.count(section)) sections.push_back(section);
    if (section == "input_parameters") {
      const size_t d2 = rest.rfind('.');
      const std::string input = rest.substr(0, d2);
      if (!by_input.count(input)) input_names.push_back(input);
      by_input[input].emplace_back(rest.substr(d2 + 1), value);
      by_section[section];
    } else {
      by_section[section].emplace_back(rest, value);
    }
  }
  for (const std::string& section : sections) {
    out << "############# " << section << " info #############\n";
    if (section == "input_parameters") {
      for (const std::string& input : input_names) {
        out << "------\n---------input info : " << input << " ---------\n";
        for (const auto& [key, value] : by_input[input]) line(out, key, value);
        out << "---------input info : " << input << " end -------\n";
      }
      out << "------\n";
      continue;
    }
    for (const auto& [key, value] : by_section[section]) line(out, key, value);
  }
  out << "--------- input/output types -------------------\n";
  line(out, "model input types", types(model.inputs));
  line(out, "model output types", types(model.outputs));
  if (!model.deleted_nodes.empty()) {
    out << "--------- deleted nodes -------------------\n";
    for (const format::DeletedNodeInfo& d : model.deleted_nodes) {
      out << "deleted nodes: " << d.name << "  (" << describe_deleted_node(d, false) << ")\n";
    }
  }
  std::string text = out.str();
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace openbpu::compiler
