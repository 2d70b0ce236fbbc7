#include "config_keys.h"

namespace openbpu::config {
namespace {

constexpr KeyReader kCompile = KeyReader::kHbCompileOnly;
constexpr KeyReader kBoth = KeyReader::kBoth;

constexpr ConfigKey kKeys[] = {
    {kModelGroup, "prototxt", kBoth},
    {kModelGroup, "caffe_model", kBoth},
    {kModelGroup, "onnx_model", kBoth},
    {kModelGroup, "march", kBoth},
    {kModelGroup, "output_model_file_prefix", kBoth},
    {kModelGroup, "working_dir", kBoth},
    {kModelGroup, "layer_out_dump", kBoth},
    {kModelGroup, "output_nodes", kBoth},
    {kModelGroup, "remove_node_type", kBoth},
    {kModelGroup, "remove_node_name", kBoth},
    {kModelGroup, "debug_mode", kBoth},
    {kModelGroup, "node_info", kBoth},
    {kModelGroup, "set_node_data_type", kBoth},
    {kModelGroup, "log_level", kBoth},

    {kInputGroup, "input_name", kBoth},
    {kInputGroup, "input_type_train", kBoth},
    {kInputGroup, "input_type_rt", kBoth},
    {kInputGroup, "input_layout_train", kBoth},
    {kInputGroup, "input_layout_rt", kBoth},
    {kInputGroup, "input_space_and_range", kBoth},
    {kInputGroup, "input_shape", kBoth},
    {kInputGroup, "input_batch", kBoth},
    {kInputGroup, "separate_batch", kCompile},
    {kInputGroup, "norm_type", kBoth},
    {kInputGroup, "mean_value", kBoth},
    {kInputGroup, "scale_value", kBoth},
    {kInputGroup, "fixed_inputs", kBoth},  // OpenBPU

    {kCalibrationGroup, "cal_data_dir", kBoth},
    {kCalibrationGroup, "cal_data_type", kBoth},
    {kCalibrationGroup, "preprocess_on", kBoth},
    {kCalibrationGroup, "calibration_type", kBoth},
    {kCalibrationGroup, "max_percentile", kBoth},
    {kCalibrationGroup, "per_channel", kBoth},
    {kCalibrationGroup, "run_on_cpu", kBoth},
    {kCalibrationGroup, "run_on_bpu", kBoth},
    {kCalibrationGroup, "optimization", kBoth},
    {kCalibrationGroup, "quant_config", kCompile},
    {kCalibrationGroup, "node_info", kBoth},  // also accepted here (see model_parameters)

    {kCompilerGroup, "compile_mode", kBoth},
    {kCompilerGroup, "balance_factor", kCompile},
    {kCompilerGroup, "debug", kBoth},
    {kCompilerGroup, "core_num", kBoth},
    {kCompilerGroup, "optimize_level", kBoth},
    {kCompilerGroup, "input_source", kBoth},
    {kCompilerGroup, "max_time_per_fc", kBoth},
    {kCompilerGroup, "jobs", kBoth},
    {kCompilerGroup, "advice", kBoth},
    {kCompilerGroup, "extra_params", kCompile},

    {kCustomOpGroup, "custom_op_method", kBoth},
    {kCustomOpGroup, "op_register_files", kBoth},
    {kCustomOpGroup, "custom_op_dir", kBoth},
};

}  // namespace

std::span<const std::string_view> required_groups() {
  static constexpr std::string_view kGroups[] = {kModelGroup, kInputGroup, kCalibrationGroup,
                                                 kCompilerGroup};
  return kGroups;
}

std::span<const std::string_view> all_groups() {
  static constexpr std::string_view kGroups[] = {kModelGroup, kInputGroup, kCalibrationGroup,
                                                 kCompilerGroup, kCustomOpGroup};
  return kGroups;
}

std::span<const ConfigKey> config_keys() {
  return kKeys;
}

bool key_read_by(const ConfigKey& key, ConfigFlavour flavour) {
  switch (key.reader) {
    case KeyReader::kBoth: return true;
    case KeyReader::kHbMapperOnly: return flavour == ConfigFlavour::kHbMapper;
    case KeyReader::kHbCompileOnly: return flavour == ConfigFlavour::kHbCompile;
  }
  return false;
}

std::vector<std::string_view> keys_of_group(std::string_view group, ConfigFlavour flavour) {
  std::vector<std::string_view> out;
  for (const auto& key : kKeys) {
    if (key.group == group && key_read_by(key, flavour)) out.push_back(key.key);
  }
  return out;
}

std::optional<ConfigKey> find_key(std::string_view group, std::string_view key) {
  for (const auto& entry : kKeys) {
    if (entry.group == group && entry.key == key) return entry;
  }
  return std::nullopt;
}

std::optional<std::string_view> group_owning(std::string_view key, ConfigFlavour flavour) {
  for (const auto& entry : kKeys) {
    if (entry.key == key && key_read_by(entry, flavour)) return entry.group;
  }
  return std::nullopt;
}

}  // namespace openbpu::config
