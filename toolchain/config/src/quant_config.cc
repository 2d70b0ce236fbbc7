// quant_config (hb_compile): quantization settings at model, op-type and node level.
//
// Schema (json, or the same structure as an inline yaml mapping):
//   {
//     "model_config": {
//       "all_node_type": "int8" | "int16" | "float16",          default int8
//       "model_output_type": "int8" | "int16" | "float32",      default float32
//       "activation": {"calibration_type": "default" | "mix" | "kl" | "max",
//                      "max_percentile": 0..1, "per_channel": bool, "asymmetric": bool},
//       "weight": {"per_channel": bool}
//     },
//     "op_config":   {"<OpType>":    {"qtype": "int8" | "int16" | "float16" | "float32"}},
//     "node_config": {"<node name>": {"qtype": ...}}
//   }
// Priority: node_config > op_config > model_config (op types match in any case).
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "group_parsers.h"
#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"

namespace openbpu::config {
namespace {

using json = nlohmann::json;

json json_from_yaml(const YAML::Node& node) {
  if (node.IsMap()) {
    json out = json::object();
    for (auto it = node.begin(); it != node.end(); ++it) {
      out[it->first.Scalar()] = json_from_yaml(it->second);
    }
    return out;
  }
  if (node.IsSequence()) {
    json out = json::array();
    for (const auto& item : node) out.push_back(json_from_yaml(item));
    return out;
  }
  if (!node.IsScalar()) return nullptr;
  const std::string& text = node.Scalar();
  if (node.Tag() == "!") return text;  // quoted: a string
  if (auto b = bool_from_text(text)) return *b;
  if (auto i = int_from_text(text)) return *i;
  if (auto d = number_from_text(text)) return *d;
  return text;
}

std::string json_type_name(const json& value) {
  if (value.is_object()) return "an object";
  if (value.is_array()) return "a list";
  if (value.is_string()) return "'" + value.get<std::string>() + "'";
  return value.dump();
}

class QuantConfigReader {
 public:
  QuantConfigReader(YamlGroup& group, QuantConfig& out) : group_(group), out_(out) {}
  bool ok() const { return ok_; }

  void read(const json& root) {
    static constexpr std::string_view kLevels[] = {"model_config", "op_config", "node_config"};
    if (!root.is_object()) {
      fail("", "expected an object with " + quoted_list(kLevels) + ", got " + json_type_name(root));
      return;
    }
    for (const auto& [key, value] : root.items()) {
      if (key == "model_config") {
        read_model_config(value);
      } else if (key == "op_config") {
        read_qtype_map(key, value, &out_.op_config);
      } else if (key == "node_config") {
        read_qtype_map(key, value, &out_.node_config);
      } else if (key == "subgraph_config") {
        fail(key, "is not supported by OpenBPU; list the subgraph's nodes in node_config");
      } else {
        fail("", "unknown key '" + key + "'" + did_you_mean(key, kLevels) + "; the levels are " +
                     quoted_list(kLevels));
      }
    }
  }

 private:
  void fail(const std::string& path, const std::string& text) {
    group_.error("quant_config", path.empty() ? text : path + ": " + text);
    ok_ = false;
  }

  template <typename E>
  std::optional<E> read_enum(const std::string& path, const json& value,
                             std::span<const E> allowed) {
    const auto names = spellings_of<E>(allowed);
    if (!value.is_string()) {
      fail(path, "expected one of " + quoted_list(names) + ", got " + json_type_name(value));
      return std::nullopt;
    }
    const std::string text = value.get<std::string>();
    auto parsed = parse_enum<E>(text);
    for (E v : allowed) {
      if (parsed && *parsed == v) return v;
    }
    fail(path, not_one_of(text, names));
    return std::nullopt;
  }

  std::optional<bool> read_bool(const std::string& path, const json& value) {
    if (value.is_boolean()) return value.get<bool>();
    fail(path, "expected true or false, got " + json_type_name(value));
    return std::nullopt;
  }

  bool expect_object(const std::string& path, const json& value) {
    if (value.is_object()) return true;
    fail(path, "expected an object, got " + json_type_name(value));
    return false;
  }

  void unknown(const std::string& path, const std::string& key,
               std::span<const std::string_view> known) {
    fail(path, "unknown key '" + key + "'" + did_you_mean(key, known) +
                   "; known keys: " + quoted_list(known));
  }

  void read_model_config(const json& value) {
    static constexpr std::string_view kKeys[] = {"all_node_type", "model_output_type", "activation",
                                                 "weight"};
    static constexpr QuantDataType kAllNodeTypes[] = {QuantDataType::kInt8, QuantDataType::kInt16,
                                                      QuantDataType::kFloat16};
    static constexpr QuantDataType kOutputTypes[] = {QuantDataType::kInt8, QuantDataType::kInt16,
                                                     QuantDataType::kFloat32};
    if (!expect_object("model_config", value)) return;
    QuantModelConfig& m = out_.model_config;
    for (const auto& [key, v] : value.items()) {
      const std::string path = "model_config." + key;
      if (key == "all_node_type") {
        if (auto t = read_enum<QuantDataType>(path, v, kAllNodeTypes)) m.all_node_type = *t;
      } else if (key == "model_output_type") {
        if (auto t = read_enum<QuantDataType>(path, v, kOutputTypes)) m.model_output_type = *t;
      } else if (key == "activation") {
        read_activation(path, v);
      } else if (key == "weight") {
        if (!expect_object(path, v)) continue;
        for (const auto& [wkey, wv] : v.items()) {
          static constexpr std::string_view kWeightKeys[] = {"per_channel"};
          if (wkey == "per_channel") {
            m.weight_per_channel = read_bool(path + ".per_channel", wv);
          } else {
            unknown(path, wkey, kWeightKeys);
          }
        }
      } else {
        unknown("model_config", key, kKeys);
      }
    }
  }

  void read_activation(const std::string& path, const json& value) {
    static constexpr std::string_view kKeys[] = {"calibration_type", "max_percentile",
                                                 "per_channel", "asymmetric"};
    static constexpr CalibrationType kTypes[] = {CalibrationType::kDefault, CalibrationType::kMix,
                                                 CalibrationType::kKl, CalibrationType::kMax};
    if (!expect_object(path, value)) return;
    QuantActivationConfig& a = out_.model_config.activation;
    for (const auto& [key, v] : value.items()) {
      const std::string at = path + "." + key;
      if (key == "calibration_type") {
        a.calibration_type = read_enum<CalibrationType>(at, v, kTypes);
      } else if (key == "max_percentile") {
        if (!v.is_number() || v.get<double>() < 0.0 || v.get<double>() > 1.0) {
          fail(at, "expected a number in [0, 1], got " + json_type_name(v));
        } else {
          a.max_percentile = v.get<double>();
        }
      } else if (key == "per_channel") {
        a.per_channel = read_bool(at, v);
      } else if (key == "asymmetric") {
        a.asymmetric = read_bool(at, v);
      } else {
        unknown(path, key, kKeys);
      }
    }
  }

  void read_qtype_map(const std::string& level, const json& value,
                      std::map<std::string, QuantDataType>* out) {
    static constexpr QuantDataType kQtypes[] = {QuantDataType::kInt8, QuantDataType::kInt16,
                                                QuantDataType::kFloat16, QuantDataType::kFloat32};
    static constexpr std::string_view kEntryKeys[] = {"qtype"};
    if (!expect_object(level, value)) return;
    for (const auto& [name, entry] : value.items()) {
      const std::string path = level + "[\"" + name + "\"]";
      if (!expect_object(path, entry)) continue;
      if (!entry.contains("qtype")) fail(path, "missing 'qtype'");
      for (const auto& [key, v] : entry.items()) {
        if (key != "qtype") {
          unknown(path, key, kEntryKeys);
        } else if (auto t = read_enum<QuantDataType>(path + ".qtype", v, kQtypes)) {
          (*out)[name] = *t;
        }
      }
    }
  }

  YamlGroup& group_;
  QuantConfig& out_;
  bool ok_ = true;
};

std::string without_json_exception_prefix(std::string text) {
  if (text.starts_with("[json.exception.")) {
    const size_t end = text.find("] ");
    if (end != std::string::npos) text.erase(0, end + 2);
  }
  return text;
}

}  // namespace

QuantDataType QuantConfig::qtype_for(const std::string& node_name,
                                     const std::string& op_type) const {
  if (auto it = node_config.find(node_name); it != node_config.end()) return it->second;
  for (const auto& [type, qtype] : op_config) {
    if (equals_ignoring_case(type, op_type)) return qtype;
  }
  return model_config.all_node_type;
}

std::optional<QuantConfig> parse_quant_config(const YAML::Node& node, YamlGroup& group,
                                              const ParseContext& ctx) {
  QuantConfig config;
  json root;
  if (node.IsMap()) {
    config.source = "inline";
    root = json_from_yaml(node);
  } else if (node.IsScalar()) {
    const std::string text = trimmed(node.Scalar());
    std::string json_text;
    if (text.starts_with("{")) {
      config.source = "inline";
      json_text = text;
    } else {
      std::filesystem::path path(text);
      if (path.is_relative() && !ctx.origin.empty()) {
        path = std::filesystem::path(ctx.origin).parent_path() / path;
      }
      try {
        json_text = read_file(path, kMaxQuantConfigBytes);
      } catch (const Error& e) {
        group.error("quant_config", "cannot read the json file '" + text + "' (looked for '" + path.string() +
                                        "'): " + e.what());
        return std::nullopt;
      }
      config.source = text;
    }
    try {
      root = json::parse(json_text);
    } catch (const json::exception& e) {  // parse_error, and out_of_range for a number too large
      group.error(
          "quant_config",
          (config.source == "inline" ? std::string("the inline json") : "'" + config.source + "'") +
              " is not valid json: " + without_json_exception_prefix(e.what()));
      return std::nullopt;
    }
  } else {
    group.error("quant_config",
                "expected a json file path, json text or a mapping, got " + describe(node));
    return std::nullopt;
  }
  QuantConfigReader reader(group, config);
  reader.read(root);
  if (!reader.ok()) return std::nullopt;
  return config;
}

}  // namespace openbpu::config
