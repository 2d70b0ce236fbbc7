// Every key the config reader knows: its group and which tool reads it. The unknown-key check
// uses this table to say where a misplaced key belongs and which key a typo meant.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "openbpu/config/compile_config.h"

namespace openbpu::config {

inline constexpr std::string_view kModelGroup = "model_parameters";
inline constexpr std::string_view kInputGroup = "input_parameters";
inline constexpr std::string_view kCalibrationGroup = "calibration_parameters";
inline constexpr std::string_view kCompilerGroup = "compiler_parameters";
inline constexpr std::string_view kCustomOpGroup = "custom_op";

// The four required groups, then the optional one.
std::span<const std::string_view> required_groups();
std::span<const std::string_view> all_groups();

enum class KeyReader { kBoth, kHbMapperOnly, kHbCompileOnly };

struct ConfigKey {
  std::string_view group;
  std::string_view key;
  KeyReader reader = KeyReader::kBoth;
};

std::span<const ConfigKey> config_keys();
bool key_read_by(const ConfigKey& key, ConfigFlavour flavour);
// The keys of `group` that `flavour` reads.
std::vector<std::string_view> keys_of_group(std::string_view group, ConfigFlavour flavour);
// The entry for `key` in `group`, if any (whatever the flavour).
std::optional<ConfigKey> find_key(std::string_view group, std::string_view key);
// Another group that has `key` for `flavour`, if any.
std::optional<std::string_view> group_owning(std::string_view key, ConfigFlavour flavour);

}  // namespace openbpu::config
