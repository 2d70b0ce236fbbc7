// node_info (both syntaxes) and set_node_data_type.
#include <regex>

#include "group_parsers.h"

namespace openbpu::config {
namespace {

constexpr QuantDataType kNodeTypes[] = {QuantDataType::kInt8, QuantDataType::kInt16};

// One node's mapping: {'ON': 'BPU', 'InputType': 'int16', 'InputType1': 'int16', 'OutputType': ...}
std::optional<NodeSetting> parse_node_setting(const std::string& node_name, const YAML::Node& body,
                                              YamlGroup& group, std::string_view key) {
  const std::string where = "node '" + node_name + "': ";
  if (!body.IsMap()) {
    group.error(key, where +
                         "expected a mapping such as {'ON': 'BPU', 'InputType': 'int16', "
                         "'OutputType': 'int16'}, got " +
                         describe(body));
    return std::nullopt;
  }
  static const std::regex kIndexedInput("inputtype([0-9]+)");
  static const std::regex kIndexedOutput("outputtype([0-9]+)");
  static constexpr std::string_view kSubKeys[] = {"ON", "InputType", "InputType<k>", "OutputType"};
  NodeSetting setting;
  bool ok = true;
  for (auto it = body.begin(); it != body.end(); ++it) {
    const std::string sub = it->first.Scalar();
    const std::string lower = lowercase(sub);
    if (!it->second.IsScalar()) {
      group.error(key, where + "'" + sub + "' expects a single value, got " + describe(it->second));
      ok = false;
      continue;
    }
    const std::string value = trimmed(it->second.Scalar());
    std::smatch match;
    auto data_type = [&]() -> std::optional<QuantDataType> {
      auto parsed = parse_enum<QuantDataType>(value);
      if (parsed && (*parsed == QuantDataType::kInt8 || *parsed == QuantDataType::kInt16)) {
        return parsed;
      }
      const auto names = spellings_of<QuantDataType>(kNodeTypes);
      group.error(key, where + "'" + sub + "': " + not_one_of(value, names));
      ok = false;
      return std::nullopt;
    };
    if (lower == "on") {
      if (auto unit = parse_enum<ExecutionUnit>(value)) {
        setting.on = unit;
      } else {
        static constexpr std::string_view kUnits[] = {"BPU", "CPU"};
        group.error(key, where + "'ON': " + not_one_of(value, kUnits));
        ok = false;
      }
    } else if (lower == "inputtype") {
      if (auto t = data_type()) setting.input_type = t;
    } else if (lower == "outputtype") {
      if (auto t = data_type()) setting.output_type = t;
    } else if (std::regex_match(lower, match, kIndexedInput)) {
      const int index = std::stoi(match[1].str());
      if (auto t = data_type()) setting.input_type_by_index[index] = *t;
    } else if (std::regex_match(lower, match, kIndexedOutput)) {
      group.error(key, where + "'" + sub +
                           "': OutputType applies to every output of the node; per-output "
                           "OutputType<k> is not supported");
      ok = false;
    } else {
      group.error(key, where + "unknown setting '" + sub + "'" + did_you_mean(sub, kSubKeys) +
                           "; node_info settings are " + quoted_list(kSubKeys));
      ok = false;
    }
  }
  if (ok && setting == NodeSetting{}) {
    group.error(key, where + "sets nothing; give 'ON', 'InputType' or 'OutputType'");
    return std::nullopt;
  }
  if (!ok) return std::nullopt;
  return setting;
}

// 'name:int16;name2:int16' -> name -> type. A bare name means int16.
std::optional<std::map<std::string, QuantDataType>> parse_name_type_list(const YAML::Node& node,
                                                                         YamlGroup& group,
                                                                         std::string_view key) {
  std::string problem;
  auto items = items_of(node, &problem);
  if (!items) {
    group.error(key, problem);
    return std::nullopt;
  }
  std::map<std::string, QuantDataType> out;
  bool ok = true;
  for (const auto& item : *items) {
    const size_t colon = item.rfind(':');
    const std::string name = trimmed(colon == std::string::npos ? item : item.substr(0, colon));
    const std::string type_text =
        colon == std::string::npos ? "int16" : trimmed(item.substr(colon + 1));
    if (name.empty()) {
      group.error(key, "'" + item + "' has no node name; write 'node_name:int16'");
      ok = false;
      continue;
    }
    auto type = parse_enum<QuantDataType>(type_text);
    if (!type || (*type != QuantDataType::kInt8 && *type != QuantDataType::kInt16)) {
      const auto names = spellings_of<QuantDataType>(kNodeTypes);
      group.error(key, "node '" + name + "': " + not_one_of(type_text, names));
      ok = false;
      continue;
    }
    if (!out.emplace(name, *type).second) {
      group.error(key, "node '" + name + "' is listed more than once");
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return out;
}

}  // namespace

std::map<std::string, NodeSetting> parse_node_info(const YAML::Node& node, YamlGroup& group,
                                                   std::string_view key) {
  std::map<std::string, NodeSetting> out;
  YAML::Node mapping = node;
  if (node.IsScalar() && trimmed(node.Scalar()).starts_with("{")) {
    std::string too_large;
    try {
      mapping = load_yaml_bounded(node.Scalar(), &too_large);
    } catch (const YAML::Exception& e) {
      group.error(key, "the mapping in the string does not parse: " + e.msg);
      return out;
    }
    if (!too_large.empty()) {
      group.error(key, "the mapping in the string " + too_large);
      return out;
    }
  }
  if (mapping.IsMap()) {
    for (auto it = mapping.begin(); it != mapping.end(); ++it) {
      const std::string name = trimmed(it->first.Scalar());
      if (out.count(name) != 0) {
        group.error(key, "node '" + name + "' is listed more than once");
        continue;
      }
      if (auto setting = parse_node_setting(name, it->second, group, key)) out[name] = *setting;
    }
    return out;
  }
  // The string syntax sets data types only: 'name:int16' is the node's OutputType, as the
  // set_node_data_type key it replaces.
  auto types = parse_name_type_list(mapping, group, key);
  if (!types) return out;
  for (const auto& [name, type] : *types) out[name].output_type = type;
  return out;
}

std::map<std::string, QuantDataType> parse_set_node_data_type(const YAML::Node& node,
                                                              YamlGroup& group,
                                                              std::string_view key) {
  auto types = parse_name_type_list(node, group, key);
  return types ? *types : std::map<std::string, QuantDataType>{};
}

}  // namespace openbpu::config
