#include "openbpu/config/config_error.h"

namespace openbpu::config {
namespace {

// Every issue's lines; consecutive issues of one group share its "Key '<group>' error:" line.
std::vector<std::string> all_lines(const std::vector<ConfigIssue>& issues) {
  std::vector<std::string> out;
  for (size_t i = 0; i < issues.size(); ++i) {
    auto lines = issues[i].lines();
    const bool same_group =
        i > 0 && !issues[i].group.empty() && issues[i].group == issues[i - 1].group;
    for (size_t j = same_group ? 1 : 0; j < lines.size(); ++j) out.push_back(std::move(lines[j]));
  }
  return out;
}

std::string joined_lines(const std::vector<ConfigIssue>& issues) {
  std::string out;
  for (const auto& line : all_lines(issues)) {
    if (!out.empty()) out += '\n';
    out += line;
  }
  return out;
}

}  // namespace

std::vector<std::string> ConfigIssue::lines() const {
  if (group.empty()) return {text};
  std::string detail = key.empty() ? text : "Key '" + key + "' error: " + text;
  return {"Key '" + group + "' error:", detail};
}

ConfigError::ConfigError(std::vector<ConfigIssue> issues)
    : Error(joined_lines(issues)), issues_(std::move(issues)) {}

std::vector<std::string> ConfigError::lines() const {
  return all_lines(issues_);
}

}  // namespace openbpu::config
