// parse_compile_config(): the groups of the file, then each group, then the rules across them.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "config_keys.h"
#include "group_parsers.h"
#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"

namespace openbpu::config {

CompileConfig parse_compile_config(const std::string& yaml_text, const std::string& origin,
                                   ConfigFlavour flavour, ModelType model_type) {
  CompileConfig config;
  config.flavour = flavour;
  config.model_type = model_type;
  config.origin = origin;
  IssueList issues;
  ParseContext ctx{flavour, model_type, origin, config, issues};

  YAML::Node root;
  std::string too_large;
  try {
    root = load_yaml_bounded(yaml_text, &too_large);
  } catch (const YAML::Exception& e) {
    throw ConfigError({{"", "",
                        origin + ":" + std::to_string(e.mark.line + 1) + ":" +
                            std::to_string(e.mark.column + 1) + ": yaml syntax error: " + e.msg}});
  }
  if (!too_large.empty()) throw ConfigError({{"", "", origin + ": " + too_large}});
  const std::string groups_text =
      "model_parameters, input_parameters, calibration_parameters "
      "and compiler_parameters must all exist; custom_op is optional";
  if (!root.IsMap()) {
    throw ConfigError({{"", "",
                        origin + ": expected the groups of a conversion config (" + groups_text +
                            "), got " + (is_given(root) ? describe(root) : "an empty file")}});
  }

  // The top-level keys: known groups, each once, each a mapping.
  std::map<std::string, YAML::Node, std::less<>> groups;
  std::set<std::string, std::less<>> unreadable;  // groups that are not mappings
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string name = it->first.IsScalar() ? it->first.Scalar() : describe(it->first);
    const auto known = all_groups();
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string text = "Unknown group '" + name + "'";
      if (auto owner = group_owning(name, flavour)) {
        text += " ('" + name + "' is a key of group '" + std::string(*owner) +
                "'; indent it under that group)";
      } else {
        text += did_you_mean(name, known);
      }
      issues.add("", "", text);
      continue;
    }
    if (groups.count(name) != 0) {
      issues.add("", "", "Group '" + name + "' is given more than once; keep one");
      continue;
    }
    groups[name] = it->second;
    if (!it->second.IsMap() && !it->second.IsNull()) {
      issues.add(name, "", "expected a mapping of keys, got " + describe(it->second));
      unreadable.insert(name);
    }
  }
  std::vector<std::string> missing;
  for (auto group : required_groups()) {
    if (groups.count(group) == 0) missing.emplace_back(group);
  }
  if (!missing.empty()) {
    issues.add("", "", "Missing groups: " + quoted_list(missing) + " (" + groups_text + ")");
  }

  ParseState state;
  auto run = [&](std::string_view name, auto&& parse) {
    auto it = groups.find(name);
    if (it == groups.end() || unreadable.count(name) != 0) return;
    YamlGroup group(name, it->second, flavour, issues);
    parse(group);
    group.report_unread_keys();
  };
  run(kModelGroup, [&](YamlGroup& g) { parse_model_parameters(g, ctx, state); });
  run(kInputGroup, [&](YamlGroup& g) { parse_input_parameters(g, ctx, state); });
  run(kCalibrationGroup, [&](YamlGroup& g) { parse_calibration_parameters(g, ctx, state); });
  run(kCompilerGroup, [&](YamlGroup& g) { parse_compiler_parameters(g, ctx); });
  if (auto it = groups.find(kCustomOpGroup); it != groups.end() && it->second.IsMap()) {
    run(kCustomOpGroup, [&](YamlGroup& g) { parse_custom_op(g, ctx); });
  }
  check_cross_group_rules(ctx, state, issues);

  if (!issues.empty()) throw ConfigError(issues.take());
  return config;
}

CompileConfig load_compile_config(const std::string& path, ConfigFlavour flavour,
                                  ModelType model_type) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxConfigFileBytes) {
    throw ConfigError({{"", "", "the config file '" + path + "' is " + std::to_string(size) +
                                    " bytes; a conversion config is at most " + std::to_string(kMaxConfigFileBytes) +
                                    " bytes (4 MiB)"}});
  }
  std::string text;
  try {
    text = read_file(path, kMaxConfigFileBytes);  // also bounds what is not a regular file
  } catch (const Error& e) {
    throw ConfigError({{"", "", std::string("cannot read the config file: ") + e.what()}});
  }
  return parse_compile_config(text, path, flavour, model_type);
}

std::map<std::string, NodeSetting> CompileConfig::node_settings() const {
  std::map<std::string, NodeSetting> out = model.node_info;
  for (const auto& [name, type] : model.set_node_data_type) {
    if (!out[name].output_type) out[name].output_type = type;
  }
  for (const auto& name : calibration.run_on_cpu) {
    if (!out[name].on) out[name].on = ExecutionUnit::kCpu;
  }
  for (const auto& name : calibration.run_on_bpu) {
    if (!out[name].on) out[name].on = ExecutionUnit::kBpu;
  }
  return out;
}

OptimizeLevel CompileConfig::optimize_level() const {
  if (compiler.optimize_level) return *compiler.optimize_level;
  return flavour == ConfigFlavour::kHbCompile ? OptimizeLevel::kO2 : OptimizeLevel::kO3;
}

InputSource CompileConfig::input_source_of(size_t index) const {
  const InputSpec& spec = input.inputs.at(index);
  if (auto it = compiler.input_source.find(spec.name); it != compiler.input_source.end()) {
    return it->second;
  }
  return spec.type_rt == InputType::kNv12 ? InputSource::kPyramid : InputSource::kDdr;
}

}  // namespace openbpu::config
