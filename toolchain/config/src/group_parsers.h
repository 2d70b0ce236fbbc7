// The per-group parsers parse_compile_config() runs, in this order, over one ParseContext.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "config_reader.h"

namespace openbpu::config {

// Filled as groups are parsed; later groups use it.
struct ParseState {
  bool march_known = false;      // model_parameters.march parsed and valid for the flavour
  bool inputs_known = false;     // input_parameters gave a consistent per-input list
  bool node_info_given = false;  // node_info found (in either group)
  std::string node_info_group;   // the group it was found in
};

void parse_model_parameters(YamlGroup& group, ParseContext& ctx, ParseState& state);
void parse_input_parameters(YamlGroup& group, ParseContext& ctx, ParseState& state);
void parse_calibration_parameters(YamlGroup& group, ParseContext& ctx, ParseState& state);
void parse_compiler_parameters(YamlGroup& group, ParseContext& ctx);
void parse_custom_op(YamlGroup& group, ParseContext& ctx);
// Rules across groups: march-specific keys, node placement conflicts, input_source vs inputs.
void check_cross_group_rules(ParseContext& ctx, const ParseState& state, IssueList& issues);

// node_info in either syntax (mapping, or 'name:int16;name2:int16'), read from `group`'s key.
std::map<std::string, NodeSetting> parse_node_info(const YAML::Node& node, YamlGroup& group,
                                                   std::string_view key);
// set_node_data_type: 'name:int16;name2' (a bare name means int16).
std::map<std::string, QuantDataType> parse_set_node_data_type(const YAML::Node& node,
                                                              YamlGroup& group,
                                                              std::string_view key);
// quant_config: a json file path (relative to the yaml's directory), inline json text, or an
// inline yaml mapping.
std::optional<QuantConfig> parse_quant_config(const YAML::Node& node, YamlGroup& group,
                                              const ParseContext& ctx);

// Why `source` cannot feed `input` (the resizer size rule), if it cannot.
std::optional<std::string> resizer_size_problem(const CompileConfig& config, const InputSpec& input,
                                                InputSource source);

// Channels of an image input_type_train; nullopt for featuremap (its shape says).
std::optional<int64_t> image_channels(InputType type);
// "1x3x224x224"
std::string shape_text(const std::vector<int64_t>& shape);
// The rules on input `index`'s shape (which must be set): rank, channels vs
// input_layout_train, even H/W for nv12/yuv444, featuremap mean/scale count vs channels,
// input_batch's first dim, the resizer size. Used by the parser (shape from the yaml) and by
// resolve_against_model (shape from the model).
void check_input_shape(const CompileConfig& config, size_t index, IssueList& issues);

// "input 'data'" / "input #2" / "" (single unnamed input), for messages about one input.
std::string input_label(const CompileConfig& config, size_t index);
// The label followed by ": ", or "" when there is no label.
std::string input_prefix(const CompileConfig& config, size_t index);

}  // namespace openbpu::config
