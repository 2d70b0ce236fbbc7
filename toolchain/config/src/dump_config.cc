// dump_config(): the "Dump config:" yaml of the log.
#include <map>

#include "group_parsers.h"

namespace openbpu::config {
namespace {

using Group = std::map<std::string, YAML::Node>;  // sorted keys

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ";" : "") + items[i];
  return out;
}

template <typename E>
std::string joined_enums(const std::vector<E>& values) {
  std::vector<std::string> items;
  for (E v : values) items.emplace_back(to_string(v));
  return joined(items);
}

std::string numbers_text(const std::vector<double>& values) {
  if (values.empty()) return "None";
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) out += (i ? " " : "") + format_number(values[i]);
  return out;
}

YAML::Node node_setting_node(const NodeSetting& s) {
  YAML::Node out(YAML::NodeType::Map);
  if (s.on) out["ON"] = std::string(to_string(*s.on));
  if (s.input_type) out["InputType"] = std::string(to_string(*s.input_type));
  for (const auto& [index, type] : s.input_type_by_index) {
    out["InputType" + std::to_string(index)] = std::string(to_string(type));
  }
  if (s.output_type) out["OutputType"] = std::string(to_string(*s.output_type));
  return out;
}

YAML::Node quant_config_node(const QuantConfig& q) {
  YAML::Node out(YAML::NodeType::Map);
  YAML::Node model(YAML::NodeType::Map);
  model["all_node_type"] = std::string(to_string(q.model_config.all_node_type));
  model["model_output_type"] = std::string(to_string(q.model_config.model_output_type));
  const auto& a = q.model_config.activation;
  if (a.calibration_type || a.max_percentile || a.per_channel || a.asymmetric) {
    YAML::Node activation(YAML::NodeType::Map);
    if (a.asymmetric) activation["asymmetric"] = *a.asymmetric;
    if (a.calibration_type) {
      activation["calibration_type"] = std::string(to_string(*a.calibration_type));
    }
    if (a.max_percentile) activation["max_percentile"] = format_number(*a.max_percentile);
    if (a.per_channel) activation["per_channel"] = *a.per_channel;
    model["activation"] = activation;
  }
  if (q.model_config.weight_per_channel) {
    model["weight"]["per_channel"] = *q.model_config.weight_per_channel;
  }
  out["model_config"] = model;
  for (const auto& [level, entries] :
       {std::pair{"node_config", &q.node_config}, std::pair{"op_config", &q.op_config}}) {
    if (entries->empty()) continue;
    YAML::Node level_node(YAML::NodeType::Map);
    for (const auto& [name, type] : *entries) {
      level_node[name]["qtype"] = std::string(to_string(type));
    }
    out[level] = level_node;
  }
  return out;
}

Group model_group(const CompileConfig& config) {
  const ModelParameters& m = config.model;
  Group g;
  if (config.model_type == ModelType::kOnnx) {
    g["onnx_model"] = m.onnx_model;
  } else {
    g["caffe_model"] = m.caffe_model;
    g["prototxt"] = m.prototxt;
  }
  g["march"] = std::string(to_string(m.march));
  g["output_model_file_prefix"] = m.output_model_file_prefix;
  g["working_dir"] = m.working_dir;
  g["layer_out_dump"] = m.layer_out_dump;
  if (!m.output_nodes.empty()) g["output_nodes"] = joined(m.output_nodes);
  if (!m.remove_node_type.empty()) g["remove_node_type"] = joined_enums(m.remove_node_type);
  if (!m.remove_node_name.empty()) g["remove_node_name"] = joined(m.remove_node_name);
  if (!m.debug_mode.empty()) g["debug_mode"] = joined_enums(m.debug_mode);
  if (!m.node_info.empty()) {
    YAML::Node info(YAML::NodeType::Map);
    for (const auto& [name, setting] : m.node_info) info[name] = node_setting_node(setting);
    g["node_info"] = info;
  }
  if (!m.set_node_data_type.empty()) {
    std::vector<std::string> items;
    for (const auto& [name, type] : m.set_node_data_type) {
      items.push_back(name + ":" + std::string(to_string(type)));
    }
    g["set_node_data_type"] = joined(items);
  }
  if (m.log_level) g["log_level"] = std::string(to_string(*m.log_level));
  return g;
}

Group input_group(const CompileConfig& config) {
  const InputParameters& in = config.input;
  Group g;
  std::vector<std::string> names, train, rt, layout_train, layout_rt, space, shapes, norm, mean,
      scale;
  bool any_name = false, any_shape = false, any_mean = false, any_scale = false;
  for (const auto& input : in.inputs) {
    names.push_back(input.name.empty() ? "None" : input.name);
    any_name |= !input.name.empty();
    train.emplace_back(to_string(input.type_train));
    rt.emplace_back(to_string(input.type_rt));
    layout_train.emplace_back(to_string(input.layout_train));
    layout_rt.emplace_back(input.layout_rt ? to_string(*input.layout_rt) : "None");
    space.emplace_back(to_string(input.space_and_range));
    shapes.push_back(input.shape.empty() ? "None" : shape_text(input.shape));
    any_shape |= !input.shape.empty();
    norm.emplace_back(to_string(input.norm_type));
    mean.push_back(numbers_text(input.mean));
    any_mean |= !input.mean.empty();
    scale.push_back(numbers_text(input.scale));
    any_scale |= !input.scale.empty();
  }
  if (any_name) g["input_name"] = joined(names);
  g["input_type_train"] = joined(train);
  g["input_type_rt"] = joined(rt);
  g["input_layout_train"] = joined(layout_train);
  if (std::any_of(in.inputs.begin(), in.inputs.end(),
                  [](const InputSpec& s) { return s.layout_rt.has_value(); })) {
    g["input_layout_rt"] = joined(layout_rt);
  }
  g["input_space_and_range"] = joined(space);
  if (any_shape) g["input_shape"] = joined(shapes);
  g["input_batch"] = in.input_batch;
  if (config.flavour == ConfigFlavour::kHbCompile) g["separate_batch"] = in.separate_batch;
  g["norm_type"] = joined(norm);
  if (any_mean) g["mean_value"] = joined(mean);
  if (any_scale) g["scale_value"] = joined(scale);
  if (!in.fixed_inputs.empty()) {
    std::vector<std::string> fixed;
    for (const FixedInput& f : in.fixed_inputs) {
      std::string values;
      for (double v : f.values) values += (values.empty() ? "" : ",") + format_number(v);
      fixed.push_back(f.name + "=" + values);
    }
    g["fixed_inputs"] = joined(fixed);
  }
  return g;
}

Group calibration_group(const CompileConfig& config) {
  const CalibrationParameters& c = config.calibration;
  Group g;
  if (!c.cal_data_dir.empty()) g["cal_data_dir"] = joined(c.cal_data_dir);
  if (!c.cal_data_type.empty()) g["cal_data_type"] = joined_enums(c.cal_data_type);
  g["preprocess_on"] = c.preprocess_on;
  g["calibration_type"] = std::string(to_string(c.calibration_type));
  if (c.calibration_type == CalibrationType::kMax) {
    g["max_percentile"] = format_number(c.max_percentile);
  }
  g["per_channel"] = c.per_channel;
  if (!c.run_on_cpu.empty()) g["run_on_cpu"] = joined(c.run_on_cpu);
  if (!c.run_on_bpu.empty()) g["run_on_bpu"] = joined(c.run_on_bpu);
  if (!c.optimization.empty()) {
    std::vector<std::string> items;
    for (const auto& rule : c.optimization) items.push_back(rule.spelling);
    g["optimization"] = joined(items);
  }
  if (c.quant_config) g["quant_config"] = quant_config_node(*c.quant_config);
  return g;
}

Group compiler_group(const CompileConfig& config) {
  const CompilerParameters& p = config.compiler;
  Group g;
  g["compile_mode"] = std::string(to_string(p.compile_mode));
  if (p.balance_factor) g["balance_factor"] = *p.balance_factor;
  g["debug"] = p.debug;
  g["core_num"] = p.core_num;
  g["optimize_level"] = std::string(to_string(config.optimize_level()));
  std::map<std::string, std::string> sources;
  for (const auto& [name, source] : p.input_source) sources[name] = std::string(to_string(source));
  for (size_t i = 0; i < config.input.inputs.size(); ++i) {
    const std::string& name = config.input.inputs[i].name;
    if (!name.empty()) sources[name] = std::string(to_string(config.input_source_of(i)));
  }
  if (!sources.empty()) {
    YAML::Node node(YAML::NodeType::Map);
    for (const auto& [name, source] : sources) node[name] = source;
    g["input_source"] = node;
  }
  g["max_time_per_fc"] = p.max_time_per_fc;
  if (p.jobs) g["jobs"] = *p.jobs;
  g["advice"] = p.advice;
  if (!p.extra_params.empty()) {
    YAML::Node node(YAML::NodeType::Map);
    for (const auto& [name, value] : p.extra_params) node[name] = value;
    g["extra_params"] = node;
  }
  return g;
}

Group custom_op_group(const CustomOp& op) {
  Group g;
  g["custom_op_method"] = std::string(to_string(op.custom_op_method));
  if (!op.op_register_files.empty()) g["op_register_files"] = joined(op.op_register_files);
  if (!op.custom_op_dir.empty()) g["custom_op_dir"] = op.custom_op_dir;
  return g;
}

}  // namespace

std::string dump_config(const CompileConfig& config) {
  std::map<std::string, Group> groups = {
      {"model_parameters", model_group(config)},
      {"input_parameters", input_group(config)},
      {"calibration_parameters", calibration_group(config)},
      {"compiler_parameters", compiler_group(config)},
  };
  if (config.custom_op) groups["custom_op"] = custom_op_group(*config.custom_op);
  YAML::Node root(YAML::NodeType::Map);
  for (const auto& [name, keys] : groups) {
    YAML::Node group(YAML::NodeType::Map);
    for (const auto& [key, value] : keys) group[key] = value;
    root[name] = group;
  }
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

}  // namespace openbpu::config
