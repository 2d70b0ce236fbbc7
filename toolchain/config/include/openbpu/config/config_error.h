// The error a bad conversion config produces: every problem found, in the original tools' style.
//
// Each problem is a ConfigIssue. Formatted, an issue in a group reads
//
//   Key 'model_parameters' error:
//   Missing keys: 'caffe_model', 'prototxt'
//
// and an issue about one key of a group
//
//   Key 'model_parameters' error:
//   Key 'march' error: 'bayes_e' is not one of 'bernoulli2', 'bayes', 'bayes-e' (did you mean
//   'bayes-e'?)
//
// Issues outside any group (yaml syntax, missing groups) are one line. Consecutive issues of one
// group share its "Key '<group>' error:" line. The host CLIs print
// every line of lines() as an ERROR line and then "yaml file parse failed. Please double check
// your input" (kParseFailedLine), and exit non-zero.
#pragma once

#include <string>
#include <vector>

#include "openbpu/common/error.h"

namespace openbpu::config {

inline constexpr const char* kParseFailedLine =
    "yaml file parse failed. Please double check your input";

struct ConfigIssue {
  std::string group;  // "model_parameters", ...; "" for a problem of the whole file
  std::string key;    // the key the rule is about; "" for a problem of the whole group
  std::string text;   // the rule and the bad value

  // The issue as printed: one line without a group, two lines with one (see above).
  std::vector<std::string> lines() const;
};

class ConfigError : public Error {
 public:
  explicit ConfigError(std::vector<ConfigIssue> issues);

  const std::vector<ConfigIssue>& issues() const { return issues_; }
  // Every issue's lines, in order; consecutive issues of one group share the group's header
  // line. what() is these joined with '\n'.
  std::vector<std::string> lines() const;

 private:
  std::vector<ConfigIssue> issues_;
};

}  // namespace openbpu::config
