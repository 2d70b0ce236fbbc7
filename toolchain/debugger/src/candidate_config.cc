#include "openbpu/debugger/candidate_config.h"

#include <yaml-cpp/yaml.h>

#include <sstream>

#include "openbpu/common/error.h"

namespace openbpu::debugger {

NodeSetting NodeSetting::merged(const NodeSetting& other) const {
  NodeSetting m{cpu || other.cpu, input_int16 || other.input_int16,
                output_int16 || other.output_int16};
  if (m.cpu) m.input_int16 = m.output_int16 = false;
  return m;
}

std::string describe(const NodeSetting& s) {
  if (s.cpu) return "{'ON': 'CPU'}";
  std::string text;
  if (s.input_int16) text += "'InputType': 'int16'";
  if (s.output_int16) text += std::string(text.empty() ? "" : ", ") + "'OutputType': 'int16'";
  return "{" + text + "}";
}

namespace {

// node_info as a mapping node: the mapping form as it is (also written as a quoted string),
// the string form `name:type; name2` as OutputType entries.
YAML::Node node_info_mapping(const YAML::Node& node, const std::string& origin) {
  if (!node || node.IsNull()) return YAML::Node(YAML::NodeType::Map);
  if (node.IsMap()) return YAML::Clone(node);
  if (!node.IsScalar()) raise(origin, ": node_info is neither a mapping nor a string");
  const std::string text = node.as<std::string>();
  const size_t start = text.find_first_not_of(" \t");
  if (start != std::string::npos && text[start] == '{') {
    YAML::Node parsed = YAML::Load(text);
    if (!parsed.IsMap()) raise(origin, ": node_info '", text, "' is not a mapping");
    return parsed;
  }
  YAML::Node map(YAML::NodeType::Map);
  std::istringstream items(text);
  std::string item;
  while (std::getline(items, item, ';')) {
    const size_t a = item.find_first_not_of(" \t"), b = item.find_last_not_of(" \t");
    if (a == std::string::npos) continue;
    item = item.substr(a, b - a + 1);
    const size_t colon = item.rfind(':');
    const std::string name = colon == std::string::npos ? item : item.substr(0, colon);
    const std::string type = colon == std::string::npos ? "int16" : item.substr(colon + 1);
    map[name]["OutputType"] = type;
  }
  return map;
}

}  // namespace

std::string edited_config(const std::string& yaml_text, const std::string& origin,
                          const CandidateEdit& edit) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    raise(origin, ": not valid yaml: ", e.what());
  }
  if (!root.IsMap()) raise(origin, ": not a yaml mapping of parameter groups");
  YAML::Node model = root["model_parameters"];
  if (!model || !model.IsMap()) raise(origin, ": no model_parameters group");
  if (!edit.working_dir.empty()) model["working_dir"] = edit.working_dir;
  if (edit.dump_calibration_data) model["debug_mode"] = "dump_calibration_data";
  if (!edit.nodes.empty()) {
    // The group that holds node_info (docs/config.md: model_parameters or calibration_parameters).
    // (yaml-cpp: assigning a Node writes into the node it refers to; initialise, never assign.)
    YAML::Node calibration = root["calibration_parameters"];
    const bool in_calibration =
        !model["node_info"] && calibration && calibration.IsMap() && calibration["node_info"];
    YAML::Node group = in_calibration ? calibration : model;
    YAML::Node info = node_info_mapping(group["node_info"], origin);
    for (const auto& [name, setting] : edit.nodes) {
      YAML::Node entry = info[name];
      if (!entry || !entry.IsMap()) entry = YAML::Node(YAML::NodeType::Map);
      if (setting.cpu) {
        entry.remove("InputType");
        entry.remove("OutputType");
        entry["ON"] = "CPU";
      }
      if (setting.input_int16) entry["InputType"] = "int16";
      if (setting.output_int16) entry["OutputType"] = "int16";
      info[name] = entry;
    }
    group["node_info"] = info;
  }
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

}  // namespace openbpu::debugger
