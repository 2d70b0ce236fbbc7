// bind_fixed_inputs(): the fixed_inputs key applied to the model (an OpenBPU key; the reference
// has none: its users edit the ONNX model by hand to freeze a sample-rate or mode input).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "group_parsers.h"
#include "openbpu/ir/graph.h"
#include "spelling.h"

namespace openbpu::config {
namespace {

using kernels::DataType;

template <typename T>
void fill(kernels::Tensor& t, const std::vector<double>& values) {
  T* p = t.data<T>();
  for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<T>(values[i]);
}

// The tensor of `values` in `dtype`, or nullopt for a type fixed_inputs does not write.
std::optional<kernels::Tensor> tensor_of(DataType dtype, const kernels::Shape& shape, const std::vector<double>& values) {
  kernels::Tensor t(dtype, shape);
  switch (dtype) {
    case DataType::kFloat32: fill<float>(t, values); break;
    case DataType::kFloat64: fill<double>(t, values); break;
    case DataType::kInt8: fill<int8_t>(t, values); break;
    case DataType::kInt16: fill<int16_t>(t, values); break;
    case DataType::kInt32: fill<int32_t>(t, values); break;
    case DataType::kInt64: fill<int64_t>(t, values); break;
    case DataType::kUint8: fill<uint8_t>(t, values); break;
    case DataType::kUint16: fill<uint16_t>(t, values); break;
    case DataType::kUint32: fill<uint32_t>(t, values); break;
    case DataType::kUint64: fill<uint64_t>(t, values); break;
    case DataType::kBool: fill<bool>(t, values); break;
    default: return std::nullopt;
  }
  return t;
}

// The input's shape with the value count for its one dim that is not fixed; nullopt if the
// count cannot fill it.
std::optional<kernels::Shape> shape_for(const ir::TensorType& type, int64_t count) {
  if (!type.shape) return count == 1 ? std::optional<kernels::Shape>(kernels::Shape{}) : std::nullopt;
  kernels::Shape shape;
  int64_t known = 1, open = 0;
  for (const ir::Dim& d : *type.shape) {
    shape.push_back(d.is_known() ? d.value : -1);
    if (d.is_known()) known *= d.value; else ++open;
  }
  if (open == 0) return known == count ? std::optional(shape) : std::nullopt;
  if (open > 1 || known == 0 || count % known != 0) return std::nullopt;
  for (int64_t& d : shape) {
    if (d < 0) d = count / known;
  }
  return shape;
}

}  // namespace

std::optional<FixedInput> fixed_input_of(std::string_view entry, std::string* problem) {
  const size_t eq = entry.find('=');
  FixedInput fixed;
  fixed.name = eq == std::string_view::npos ? "" : trimmed(entry.substr(0, eq));
  if (fixed.name.empty()) {
    *problem = "'" + std::string(entry) + "' must be NAME=VALUE[,VALUE...], e.g. 'sr=16000'";
    return std::nullopt;
  }
  for (const std::string& text : split_trimmed(entry.substr(eq + 1), ',')) {
    const auto value = number_from_text(text);
    if (!value) {
      *problem = "'" + std::string(entry) + "': '" + text + "' is not a number";
      return std::nullopt;
    }
    fixed.values.push_back(*value);
  }
  return fixed;
}

std::vector<std::string> bind_fixed_inputs(const CompileConfig& config, ir::Model& model) {
  std::vector<std::string> lines;
  IssueList issues;
  ir::Graph& graph = *model.graph;
  for (const FixedInput& fixed : config.input.fixed_inputs) {
    auto problem = [&](const std::string& text) {
      issues.add("input_parameters", "fixed_inputs", "input '" + fixed.name + "': " + text);
    };
    ir::Value* input = graph.find_value(fixed.name);
    if (input == nullptr || !graph.is_input(input) || input->is_constant()) {
      problem("is not an input of the model");
      continue;
    }
    if (config.input.names_given &&
        std::any_of(config.input.inputs.begin(), config.input.inputs.end(),
                    [&](const InputSpec& s) { return s.name == fixed.name; })) {
      problem("is in input_name too; a fixed input is not an input of the converted model");
      continue;
    }
    const DataType dtype = input->type().dtype;
    const bool integral = !kernels::dtype_is_float(dtype);
    if (integral && std::any_of(fixed.values.begin(), fixed.values.end(),
                                [](double v) { return v != std::floor(v); })) {
      problem("the input is " + std::string(kernels::dtype_name(dtype)) + "; its values must be integers");
      continue;
    }
    const auto shape = shape_for(input->type(), static_cast<int64_t>(fixed.values.size()));
    if (!shape) {
      problem(std::to_string(fixed.values.size()) + " value(s) do not fill its shape " + input->type().to_string());
      continue;
    }
    auto data = tensor_of(dtype, *shape, fixed.values);
    if (!data) {
      problem("its type " + input->type().to_string() + " cannot be fixed (numbers and bool only)");
      continue;
    }
    std::vector<ir::Value*> inputs;
    for (ir::Value* v : graph.inputs()) {
      if (v != input) inputs.push_back(v);
    }
    graph.set_inputs(std::move(inputs));
    input->set_constant(std::move(*data));
    std::string values;
    for (double v : fixed.values) {
      char text[32];
      std::snprintf(text, sizeof text, "%.9g", v);
      values += (values.empty() ? "" : ",") + std::string(text);
    }
    lines.push_back("input '" + fixed.name + "' fixed to " + values + " (" + input->type().to_string() +
                    ", fixed_inputs): a constant of the converted model, not one of its inputs");
  }
  if (!issues.empty()) throw ConfigError(issues.take());
  return lines;
}

}  // namespace openbpu::config
