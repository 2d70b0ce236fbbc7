#include "openbpu/config/config_error.h"

namespace openbpu::config {
namespace {

std::string joined_lines(const std::vector<ConfigIssue>& issues) {
  std::string out;
  for (const auto& issue : issues) {
    for (const auto& line : issue.lines()) {
      if (!out.empty()) out += '\n';
      out += line;
    }
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
  std::vector<std::string> out;
  for (const auto& issue : issues_) {
    for (auto& line : issue.lines()) out.push_back(std::move(line));
  }
  return out;
}

}  // namespace openbpu::config
