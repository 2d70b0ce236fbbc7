// Reading one yaml group with typed accessors that record problems instead of throwing, so that
// one run reports every mistake in the file.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "openbpu/config/compile_config.h"
#include "spelling.h"

namespace openbpu::config {

class IssueList {
 public:
  void add(std::string_view group, std::string_view key, std::string text) {
    issues_.push_back({std::string(group), std::string(key), std::move(text)});
  }
  bool empty() const { return issues_.empty(); }
  size_t size() const { return issues_.size(); }
  std::vector<ConfigIssue> take() { return std::move(issues_); }

 private:
  std::vector<ConfigIssue> issues_;
};

// Everything a group parser needs besides its group.
struct ParseContext {
  ConfigFlavour flavour;
  ModelType model_type;
  std::string origin;
  CompileConfig& config;
  IssueList& issues;
  void warn(std::string text) { config.warnings.push_back(std::move(text)); }
  void note(std::string text) { config.notes.push_back(std::move(text)); }
};

// Scalar text conversions shared by the group readers, node_info and quant_config.
// Booleans: true/false/yes/no/on/off in any case (YAML 1.1, as the original's reader).
std::optional<bool> bool_from_text(std::string_view text);
std::optional<int64_t> int_from_text(std::string_view text);
std::optional<double> number_from_text(std::string_view text);
// The largest config file read (checked from its size before reading) and the most yaml nodes
// (keys, values, list items, mappings, lists) one yaml text may hold: a node_info or run_on_cpu
// naming every node of a large model takes a few hundred kilobytes and a few tens of thousands
// of nodes; a million nodes would take gigabytes in yaml-cpp's tree and minutes of checks. The
// file limit also bounds yaml-cpp's scanner, which queues every token of a flow collection that
// could be a key (one at the root of a text: about 40 bytes of memory per byte of text).
inline constexpr uint64_t kMaxConfigFileBytes = 4u << 20;
// A quant_config json file (often written by a script, a node per entry).
inline constexpr uint64_t kMaxQuantConfigBytes = 64u << 20;
inline constexpr size_t kMaxYamlNodes = 100000;
// The yaml of `text` (its first document) as YAML::Load gives it, after counting its nodes with
// yaml-cpp's event parser, which builds no tree and stops at the first node past kMaxYamlNodes.
// Throws YAML::Exception for a syntax error (as YAML::Load) and *too_large (a message: "holds
// more than 100000 yaml nodes ...") is set instead of parsing when the limit is passed.
YAML::Node load_yaml_bounded(const std::string& text, std::string* too_large);
// How a value is named in a message: 'text' for a scalar, "a list", "a mapping".
std::string describe(const YAML::Node& node);
// A value is "not given" when absent, null, or an empty string.
bool is_given(const YAML::Node& node);
// The ';'-separated items of a scalar, or the scalar items of a sequence. nullopt (and
// `problem` set) when the node has another shape or an item is empty.
std::optional<std::vector<std::string>> items_of(const YAML::Node& node, std::string* problem);
// "'x' is not one of 'a', 'b' (did you mean 'a'?)"
std::string not_one_of(std::string_view text, std::span<const std::string_view> allowed);

template <typename E>
std::vector<std::string_view> spellings_of(std::span<const E> values) {
  std::vector<std::string_view> out;
  for (E v : values) out.push_back(to_string(v));
  return out;
}
template <typename E>
std::vector<E> all_values() {
  std::vector<E> out;
  for (const auto& s : enum_spellings<E>()) out.push_back(s.value);
  return out;
}

class YamlGroup {
 public:
  // `node` must be a mapping or null (an empty group).
  YamlGroup(std::string_view name, const YAML::Node& node, ConfigFlavour flavour,
            IssueList& issues);

  std::string_view name() const { return name_; }
  // The value of `key` if the yaml gives one (see is_given); marks the key as read.
  std::optional<YAML::Node> value(std::string_view key);
  // Whether the yaml gives `key` a value, without marking it read.
  bool given(std::string_view key) const;
  // Marks a key read without reading it (a key a flavour ignores on purpose).
  void mark_read(std::string_view key);
  void error(std::string_view key, std::string text) { issues_.add(name_, key, std::move(text)); }
  void group_error(std::string text) { issues_.add(name_, "", std::move(text)); }

  std::optional<std::string> text(std::string_view key);
  std::optional<bool> flag(std::string_view key);
  // An integer in [lo, hi]; `rule` replaces "an integer in [lo, hi]" in the message if given.
  std::optional<int64_t> integer(std::string_view key, int64_t lo, int64_t hi,
                                 std::string_view rule = {});
  std::optional<double> number(std::string_view key, double lo, double hi);
  std::optional<std::vector<std::string>> items(std::string_view key);

  // One of `allowed` (all values of E if empty).
  template <typename E>
  std::optional<E> choice(std::string_view key, std::span<const E> allowed = {}) {
    auto raw = text(key);
    if (!raw) return std::nullopt;
    return choice_from_text<E>(key, *raw, allowed);
  }
  template <typename E>
  std::optional<E> choice_from_text(std::string_view key, std::string_view raw,
                                    std::span<const E> allowed = {}) {
    std::vector<E> values =
        allowed.empty() ? all_values<E>() : std::vector<E>(allowed.begin(), allowed.end());
    auto parsed = parse_enum<E>(raw);
    for (E v : values) {
      if (parsed && *parsed == v) return v;
    }
    const auto names = spellings_of<E>(values);
    error(key, not_one_of(raw, names));
    return std::nullopt;
  }

  // Reports every key present in the yaml that no accessor read: another flavour's key, a key
  // of another group, or a typo (with did-you-mean).
  void report_unread_keys();

 private:
  std::string name_;
  ConfigFlavour flavour_;
  IssueList& issues_;
  std::vector<std::pair<std::string, YAML::Node>> entries_;
  std::set<std::string, std::less<>> read_;
};

}  // namespace openbpu::config
