// calibration_parameters.
#include <algorithm>
#include <regex>

#include "group_parsers.h"

namespace openbpu::config {
namespace {

bool ends_with_f32(std::string dir) {
  while (dir.size() > 1 && (dir.back() == '/' || dir.back() == '\\')) dir.pop_back();
  return dir.ends_with("_f32");
}

std::optional<OptimizationRule> optimization_rule(const std::string& text) {
  static const std::regex kModelOutput("set_model_output_(int8|int16)");
  static const std::regex kOpTensor("set_([A-Za-z0-9_]+?)_(input|output)_(int8|int16)");
  OptimizationRule rule;
  rule.spelling = text;
  std::smatch match;
  if (std::regex_match(text, match, kModelOutput)) {
    rule.kind = OptimizationRule::Kind::kModelOutput;
    rule.data_type = *parse_enum<QuantDataType>(match[1].str());
    return rule;
  }
  if (text == "keep_edge_operators_on_bpu") {
    rule.kind = OptimizationRule::Kind::kEdgeOperatorsOnBpu;
    return rule;
  }
  if (text == "set_all_nodes_int16") {
    rule.kind = OptimizationRule::Kind::kAllNodes;
    rule.data_type = QuantDataType::kInt16;
    return rule;
  }
  if (std::regex_match(text, match, kOpTensor)) {
    rule.kind = match[2].str() == "input" ? OptimizationRule::Kind::kOpInput
                                          : OptimizationRule::Kind::kOpOutput;
    rule.op_type = match[1].str();
    rule.data_type = *parse_enum<QuantDataType>(match[3].str());
    return rule;
  }
  return std::nullopt;
}

}  // namespace

void parse_calibration_parameters(YamlGroup& g, ParseContext& ctx, ParseState& state) {
  CalibrationParameters& c = ctx.config.calibration;
  const auto& inputs = ctx.config.input.inputs;
  if (auto type = g.choice<CalibrationType>("calibration_type")) c.calibration_type = *type;
  const bool needs_data =
      c.calibration_type != CalibrationType::kLoad && c.calibration_type != CalibrationType::kSkip;

  // cal_data_dir: one per input, unless load/skip. 'load' uses it when given (max for the
  // tensors the QDQ model has no threshold for, the report's comparison, bias correction).
  if (auto dirs = g.items("cal_data_dir")) {
    if (c.calibration_type == CalibrationType::kSkip) {
      ctx.warn("calibration_parameters: cal_data_dir is not used by calibration_type 'skip'");
    }
    if (state.inputs_known && dirs->size() != inputs.size()) {
      g.error("cal_data_dir", "has " + std::to_string(dirs->size()) + " directories for " +
                                  std::to_string(inputs.size()) +
                                  " inputs; give one per input, separated by ';'");
    }
    c.cal_data_dir = *dirs;
  } else if (needs_data && !g.given("cal_data_dir")) {
    g.group_error("Missing keys: 'cal_data_dir' (calibration_type '" +
                  std::string(to_string(c.calibration_type)) +
                  "' reads calibration data; only 'load' and 'skip' need none)");
  }

  // cal_data_type: one value for all inputs or one per input; else from the directory name.
  if (auto types = g.items("cal_data_type")) {
    std::vector<CalDataType> parsed;
    for (const auto& t : *types) {
      if (auto v = g.choice_from_text<CalDataType>("cal_data_type", t)) parsed.push_back(*v);
    }
    if (parsed.size() == types->size()) {
      if (parsed.size() != 1 && parsed.size() != c.cal_data_dir.size()) {
        g.error("cal_data_type", "has " + std::to_string(parsed.size()) + " values for " +
                                     std::to_string(c.cal_data_dir.size()) +
                                     " cal_data_dir entries; give one value, or one per entry");
      } else {
        c.cal_data_type_given = true;
        for (size_t i = 0; i < c.cal_data_dir.size(); ++i) {
          const CalDataType type = parsed.size() == 1 ? parsed[0] : parsed[i];
          const bool suffix_f32 = ends_with_f32(c.cal_data_dir[i]);
          if (suffix_f32 != (type == CalDataType::kFloat32)) {
            ctx.warn("calibration_parameters: the name of '" + c.cal_data_dir[i] + "' suggests " +
                     (suffix_f32 ? "float32" : "uint8") + " but cal_data_type is " +
                     std::string(to_string(type)) + "; cal_data_type is used");
          }
          c.cal_data_type.push_back(type);
        }
      }
    }
  } else {
    for (const auto& dir : c.cal_data_dir) {
      const CalDataType type = ends_with_f32(dir) ? CalDataType::kFloat32 : CalDataType::kUint8;
      ctx.note("cal_data_type not given: reading '" + dir + "' as " + std::string(to_string(type)) +
               " (directory name " + (type == CalDataType::kFloat32 ? "ends" : "does not end") +
               " in _f32)");
      c.cal_data_type.push_back(type);
    }
  }

  if (auto on = g.flag("preprocess_on")) {
    c.preprocess_on = *on;
    if (*on && state.inputs_known) {
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].type_train == InputType::kFeaturemap) {
          g.error("preprocess_on", input_prefix(ctx.config, i) +
                                       "preprocess_on reads images; it cannot prepare a "
                                       "featuremap input");
        }
      }
    }
  }
  if (auto p = g.number("max_percentile", 0.0, 1.0)) {
    c.max_percentile = *p;
    if (c.calibration_type != CalibrationType::kMax) {
      ctx.warn("calibration_parameters: max_percentile is used by calibration_type 'max' only");
    }
  }
  if (auto per_channel = g.flag("per_channel")) {
    c.per_channel = *per_channel;
    if (*per_channel && c.calibration_type == CalibrationType::kDefault) {
      ctx.warn(
          "calibration_parameters: per_channel is not used by calibration_type 'default' "
          "(its search decides)");
    }
  }
  if (auto nodes = g.items("run_on_cpu")) c.run_on_cpu = *nodes;
  if (auto nodes = g.items("run_on_bpu")) c.run_on_bpu = *nodes;

  // optimization: ';' or ',' separated.
  if (auto node = g.value("optimization")) {
    if (!node->IsScalar() && !node->IsSequence()) {
      g.error("optimization",
              "expected names such as 'set_model_output_int8', got " + describe(*node));
    } else {
      std::vector<std::string> texts;
      auto add = [&](const std::string& text) {
        for (auto& part : split_trimmed(text, ';')) {
          for (auto& piece : split_trimmed(part, ',')) texts.push_back(piece);
        }
      };
      if (node->IsScalar())
        add(node->Scalar());
      else
        for (const auto& item : *node) add(item.IsScalar() ? item.Scalar() : describe(item));
      for (const auto& text : texts) {
        if (auto rule = optimization_rule(text)) {
          c.optimization.push_back(*rule);
        } else {
          g.error("optimization", "'" + text +
                                      "' is not an optimization; use set_model_output_int8, "
                                      "set_model_output_int16, set_all_nodes_int16, "
                                      "set_<OpType>_input|output_int8|int16 or "
                                      "keep_edge_operators_on_bpu");
        }
      }
    }
  }

  // node_info may also sit here.
  if (auto node = g.value("node_info")) {
    if (state.node_info_given) {
      g.error("node_info", "given in both model_parameters and calibration_parameters; keep one");
    } else {
      ctx.config.model.node_info = parse_node_info(*node, g, "node_info");
      state.node_info_given = true;
      state.node_info_group = "calibration_parameters";
    }
  }
  if (ctx.flavour == ConfigFlavour::kHbCompile) {
    if (auto node = g.value("quant_config")) c.quant_config = parse_quant_config(*node, g, ctx);
  }
}

}  // namespace openbpu::config
