// resolve_against_model(): what the config can only learn or check with the model in hand.
#include <algorithm>

#include "group_parsers.h"
#include "openbpu/ir/graph.h"

namespace openbpu::config {
namespace {

std::string dims_text(const ir::TensorType& type) {
  if (!type.shape) return "[unknown rank]";
  std::string out = "[";
  for (size_t i = 0; i < type.shape->size(); ++i) {
    const ir::Dim& d = (*type.shape)[i];
    out += (i ? ", " : "") +
           (d.is_known() ? std::to_string(d.value) : (d.symbol.empty() ? "?" : d.symbol));
  }
  return out + "]";
}

// Checks that every name in `names` is a node (or, with `values_too`, a value) of the graph.
void check_node_names(const std::vector<std::string>& names, std::string_view group,
                      std::string_view key, const std::vector<std::string>& node_names,
                      const ir::Graph& graph, bool values_too, IssueList& issues) {
  for (const auto& name : names) {
    if (std::find(node_names.begin(), node_names.end(), name) != node_names.end()) continue;
    if (values_too && graph.find_value(name) != nullptr) continue;
    issues.add(group, key,
               "node '" + name + "' is not in the model" + did_you_mean(name, node_names));
  }
}

// The names of the graph's nodes and, with `branches`, of the nodes in its subgraphs (If
// branches are inlined by stage 2 when their condition folds, under the same names).
void collect_node_names(const ir::Graph& graph, bool branches, std::vector<std::string>& names) {
  for (const ir::Node* node : graph.nodes()) {
    names.push_back(node->name());
    if (!branches) continue;
    for (const ir::GraphAttribute& attr : node->graph_attrs()) {
      for (const auto& sub : attr.graphs) collect_node_names(*sub, true, names);
    }
  }
}

template <typename Map>
std::vector<std::string> keys_of(const Map& map) {
  std::vector<std::string> out;
  for (const auto& [k, v] : map) out.push_back(k);
  return out;
}

}  // namespace

void resolve_against_model(CompileConfig& config, const ir::Model& model) {
  IssueList issues;
  const ir::Graph& graph = *model.graph;
  std::vector<const ir::Value*> model_inputs;
  std::vector<std::string> model_names;
  for (const ir::Value* v : graph.inputs()) {
    if (v->is_constant()) continue;  // initializers listed as graph inputs (old ONNX)
    model_inputs.push_back(v);
    model_names.push_back(v->name());
  }
  auto& inputs = config.input.inputs;
  const std::string count_text = std::to_string(model_inputs.size()) +
                                 (model_inputs.size() == 1 ? " input" : " inputs") + " (" +
                                 quoted_list(model_names) + ")";

  // Which model input each config input is.
  config.notes.push_back("Model has " + std::to_string(model_inputs.size()) +
                         " inputs according to model file");
  if (!config.input.names_given) {
    if (model_inputs.size() > 1) {
      issues.add("input_parameters", "input_name",
                 "the model has " + count_text +
                     "; input_name must name them, in the order of the other input keys");
    } else if (inputs.size() != model_inputs.size()) {
      issues.add(
          "input_parameters", "input_type_train",
          "gives " + std::to_string(inputs.size()) + " inputs but the model has " + count_text);
    } else if (inputs.size() == 1) {
      inputs[0].name = model_names[0];
      config.notes.push_back(
          "Model name not given in yaml_file, using model name from model "
          "file: ['" +
          model_names[0] + "']");
    }
  } else {
    std::vector<std::string> config_names;
    for (const auto& input : inputs) config_names.push_back(input.name);
    for (const auto& name : config_names) {
      if (std::find(model_names.begin(), model_names.end(), name) == model_names.end()) {
        issues.add("input_parameters", "input_name",
                   "'" + name + "' is not an input of the model, which has " + count_text +
                       did_you_mean(name, model_names));
      }
    }
    for (const auto& name : model_names) {
      if (std::find(config_names.begin(), config_names.end(), name) == config_names.end()) {
        issues.add("input_parameters", "input_name",
                   "the model's input '" + name + "' is missing from input_name");
      }
    }
  }
  if (!issues.empty()) throw ConfigError(issues.take());

  // Shapes: from the model where the yaml has none.
  for (size_t i = 0; i < inputs.size(); ++i) {
    InputSpec& spec = inputs[i];
    const ir::Value* value = graph.find_value(spec.name);
    const ir::TensorType& type = value->type();
    const bool from_model = spec.shape.empty();
    if (from_model) {
      auto shape = type.static_shape();
      if (!shape) {
        issues.add("input_parameters", "input_shape",
                   input_prefix(config, i) + "the model gives dims " + dims_text(type) +
                       ", which are not all fixed; give input_shape");
        continue;
      }
      spec.shape = *shape;
      config.notes.push_back(
          "Model input shape of '" + spec.name +
          "' not given in yaml_file, using shape from model file: " + dims_text(type));
    } else if (type.shape) {
      if (type.shape->size() != spec.shape.size()) {
        issues.add("input_parameters", "input_shape",
                   input_prefix(config, i) + "input_shape '" + shape_text(spec.shape) +
                       "' has rank " + std::to_string(spec.shape.size()) +
                       " but the model's input has " + dims_text(type));
        continue;
      }
      for (size_t d = 0; d < spec.shape.size(); ++d) {
        const ir::Dim& dim = (*type.shape)[d];
        if (dim.is_known() && dim.value != spec.shape[d]) {
          config.warnings.push_back("input_parameters: " + input_prefix(config, i) +
                                    "input_shape '" + shape_text(spec.shape) +
                                    "' replaces the model's " + dims_text(type));
          break;
        }
      }
    }
    if (from_model) check_input_shape(config, i, issues);
  }

  // input_source of inputs without input_name (their names were not known when parsing).
  for (const auto& [name, source] : config.compiler.input_source) {
    auto it = std::find(model_names.begin(), model_names.end(), name);
    if (it == model_names.end()) {
      issues.add("compiler_parameters", "input_source",
                 "'" + name + "' is not an input of the model, which has " + count_text +
                     did_you_mean(name, model_names));
    } else if (!config.input.names_given) {
      const InputSpec& input = inputs.at(0);  // unnamed: the single input
      if (source != InputSource::kDdr && input.type_rt != InputType::kNv12 &&
          input.type_rt != InputType::kGray) {
        issues.add("compiler_parameters", "input_source",
                   "input '" + name + "': '" + std::string(to_string(source)) +
                       "' delivers nv12 or gray images; input_type_rt is '" +
                       std::string(to_string(input.type_rt)) + "' (use ddr)");
      }
    }
  }

  // Node names: the keys that place or type nodes may also name nodes of If branches; the
  // model's outputs and removals are decided before stage 2 and name main-graph nodes.
  std::vector<std::string> node_names, all_node_names;
  collect_node_names(graph, false, node_names);
  collect_node_names(graph, true, all_node_names);
  const auto& m = config.model;
  const auto& c = config.calibration;
  check_node_names(keys_of(m.node_info), "model_parameters", "node_info", all_node_names, graph, false,
                   issues);
  check_node_names(keys_of(m.set_node_data_type), "model_parameters", "set_node_data_type",
                   all_node_names, graph, false, issues);
  check_node_names(m.output_nodes, "model_parameters", "output_nodes", node_names, graph, true,
                   issues);
  check_node_names(m.remove_node_name, "model_parameters", "remove_node_name", node_names, graph,
                   false, issues);
  check_node_names(c.run_on_cpu, "calibration_parameters", "run_on_cpu", all_node_names, graph, false,
                   issues);
  check_node_names(c.run_on_bpu, "calibration_parameters", "run_on_bpu", all_node_names, graph, false,
                   issues);
  if (c.quant_config) {
    check_node_names(keys_of(c.quant_config->node_config), "calibration_parameters", "quant_config",
                     all_node_names, graph, false, issues);
  }
  if (!issues.empty()) throw ConfigError(issues.take());
}

}  // namespace openbpu::config
