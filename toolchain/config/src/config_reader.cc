#include "config_reader.h"

#include <charconv>
#include <cmath>
#include <sstream>
#include <yaml-cpp/eventhandler.h>

#include "config_keys.h"

namespace openbpu::config {

std::optional<bool> bool_from_text(std::string_view text) {
  const std::string lower = lowercase(trimmed(text));
  if (lower == "true" || lower == "yes" || lower == "on") return true;
  if (lower == "false" || lower == "no" || lower == "off") return false;
  return std::nullopt;
}

std::optional<int64_t> int_from_text(std::string_view text) {
  const std::string t = trimmed(text);
  if (t.empty()) return std::nullopt;
  const char* begin = t.data() + (t[0] == '+' ? 1 : 0);
  int64_t value = 0;
  auto result = std::from_chars(begin, t.data() + t.size(), value);
  if (result.ec != std::errc() || result.ptr != t.data() + t.size()) return std::nullopt;
  return value;
}

std::optional<double> number_from_text(std::string_view text) {
  const std::string t = trimmed(text);
  if (t.empty()) return std::nullopt;
  const char* begin = t.data() + (t[0] == '+' ? 1 : 0);
  double value = 0;
  auto result = std::from_chars(begin, t.data() + t.size(), value);
  if (result.ec != std::errc() || result.ptr != t.data() + t.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

namespace {

struct TooManyNodes {};

// Counts the nodes of a document as yaml-cpp's parser emits them; throws TooManyNodes past the
// limit, which ends the parse.
class YamlNodeCounter final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override { count(); }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { count(); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override { count(); }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    count();
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    count();
  }
  void OnMapEnd() override {}

 private:
  void count() {
    if (++nodes_ > kMaxYamlNodes) throw TooManyNodes{};
  }
  size_t nodes_ = 0;
};

}  // namespace

YAML::Node load_yaml_bounded(const std::string& text, std::string* too_large) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  YamlNodeCounter counter;
  try {
    parser.HandleNextDocument(counter);
  } catch (const TooManyNodes&) {
    *too_large = "holds more than " + std::to_string(kMaxYamlNodes) +
                 " yaml nodes (keys, values and list items); a conversion config holds at most " +
                 std::to_string(kMaxYamlNodes);
    return YAML::Node();
  }
  return YAML::Load(text);
}

std::string describe(const YAML::Node& node) {
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return "nothing";
}

bool is_given(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return false;
  if (node.IsScalar() && trimmed(node.Scalar()).empty()) return false;
  return true;
}

std::optional<std::vector<std::string>> items_of(const YAML::Node& node, std::string* problem) {
  std::vector<std::string> items;
  if (node.IsScalar()) {
    items = split_trimmed(node.Scalar(), ';');
  } else if (node.IsSequence()) {
    for (const auto& item : node) {
      if (!item.IsScalar()) {
        *problem = "expected names separated by ';' (or a list of names), got a nested " +
                   std::string(item.IsMap() ? "mapping" : "list");
        return std::nullopt;
      }
      items.push_back(trimmed(item.Scalar()));
    }
  } else {
    *problem = "expected names separated by ';', got " + describe(node);
    return std::nullopt;
  }
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].empty()) {
      *problem = "item " + std::to_string(i + 1) + " of " + std::to_string(items.size()) +
                 " is empty (two ';' in a row?)";
      return std::nullopt;
    }
  }
  return items;
}

std::string not_one_of(std::string_view text, std::span<const std::string_view> allowed) {
  return "'" + std::string(text) + "' is not one of " + quoted_list(allowed) +
         did_you_mean(text, allowed);
}

YamlGroup::YamlGroup(std::string_view name, const YAML::Node& node, ConfigFlavour flavour,
                     IssueList& issues)
    : name_(name), flavour_(flavour), issues_(issues) {
  if (!node.IsMap()) return;
  std::set<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : describe(it->first);
    if (!seen.insert(key).second) {
      error(key, "given more than once in group '" + name_ + "'; keep one");
      continue;
    }
    entries_.emplace_back(key, it->second);
  }
}

std::optional<YAML::Node> YamlGroup::value(std::string_view key) {
  read_.insert(std::string(key));
  for (const auto& [k, v] : entries_) {
    if (k == key) return is_given(v) ? std::optional<YAML::Node>(v) : std::nullopt;
  }
  return std::nullopt;
}

bool YamlGroup::given(std::string_view key) const {
  for (const auto& [k, v] : entries_) {
    if (k == key) return is_given(v);
  }
  return false;
}

void YamlGroup::mark_read(std::string_view key) {
  read_.insert(std::string(key));
}

std::optional<std::string> YamlGroup::text(std::string_view key) {
  auto node = value(key);
  if (!node) return std::nullopt;
  if (!node->IsScalar()) {
    error(key, "expected a single value, got " + describe(*node));
    return std::nullopt;
  }
  return trimmed(node->Scalar());
}

std::optional<bool> YamlGroup::flag(std::string_view key) {
  auto raw = text(key);
  if (!raw) return std::nullopt;
  auto value = bool_from_text(*raw);
  if (!value) error(key, "expected True or False, got '" + *raw + "'");
  return value;
}

std::optional<int64_t> YamlGroup::integer(std::string_view key, int64_t lo, int64_t hi,
                                          std::string_view rule) {
  auto raw = text(key);
  if (!raw) return std::nullopt;
  auto value = int_from_text(*raw);
  if (!value || *value < lo || *value > hi) {
    const std::string expected =
        rule.empty() ? "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]"
                     : std::string(rule);
    error(key, "expected " + expected + ", got '" + *raw + "'");
    return std::nullopt;
  }
  return value;
}

std::optional<double> YamlGroup::number(std::string_view key, double lo, double hi) {
  auto raw = text(key);
  if (!raw) return std::nullopt;
  auto value = number_from_text(*raw);
  if (!value || *value < lo || *value > hi) {
    error(key, "expected a number in [" + format_number(lo) + ", " + format_number(hi) +
                   "], got '" + *raw + "'");
    return std::nullopt;
  }
  return value;
}

std::optional<std::vector<std::string>> YamlGroup::items(std::string_view key) {
  auto node = value(key);
  if (!node) return std::nullopt;
  std::string problem;
  auto items = items_of(*node, &problem);
  if (!items) error(key, problem);
  return items;
}

void YamlGroup::report_unread_keys() {
  const auto known = keys_of_group(name_, flavour_);
  for (const auto& [key, node] : entries_) {
    if (read_.count(key) != 0) continue;
    if (auto entry = find_key(name_, key); entry && !key_read_by(*entry, flavour_)) {
      const bool compile_only = entry->reader == KeyReader::kHbCompileOnly;
      error(key, std::string("only ") + (compile_only ? "hb_compile" : "hb_mapper") +
                     " reads this key; remove it from a config for " +
                     (compile_only ? "hb_mapper" : "hb_compile"));
      continue;
    }
    if (auto owner = group_owning(key, flavour_); owner && *owner != name_) {
      group_error("Unknown key '" + key + "' in group '" + name_ + "' (it belongs in group '" +
                  std::string(*owner) + "')");
      continue;
    }
    std::string text = "Unknown key '" + key + "' in group '" + name_ + "'";
    if (auto close = closest_spelling(key, known)) {
      text += " (did you mean '" + *close + "'?)";
    } else {
      text += " (keys of this group: " + quoted_list(known) + ")";
    }
    group_error(text);
  }
}

}  // namespace openbpu::config
