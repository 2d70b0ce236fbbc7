#include "spelling.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

namespace openbpu::config {
namespace {

// Optimal string alignment distance (Levenshtein plus adjacent transpositions), case-folded.
size_t edit_distance(std::string_view a_text, std::string_view b_text) {
  const std::string a = lowercase(a_text);
  const std::string b = lowercase(b_text);
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

template <typename S>
std::optional<std::string> closest_of(std::string_view text, std::span<const S> candidates) {
  const size_t limit = std::max<size_t>(1, text.size() / 3);
  size_t best = std::numeric_limits<size_t>::max();
  std::optional<std::string> found;
  bool tie = false;
  for (const auto& candidate : candidates) {
    const size_t distance = edit_distance(text, candidate);
    if (distance > limit || distance >= text.size()) continue;
    if (distance < best) {
      best = distance;
      found = std::string(candidate);
      tie = false;
    } else if (distance == best) {
      tie = true;
    }
  }
  return tie ? std::nullopt : found;  // two equally close candidates: no guess
}

template <typename S>
std::string quoted_list_of(std::span<const S> items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += "'";
    out += item;
    out += "'";
  }
  return out;
}

}  // namespace

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && lowercase(a) == lowercase(b);
}

std::string quoted_list(std::span<const std::string_view> items) {
  return quoted_list_of(items);
}
std::string quoted_list(std::span<const std::string> items) {
  return quoted_list_of(items);
}

std::optional<std::string> closest_spelling(std::string_view text,
                                            std::span<const std::string_view> candidates) {
  return closest_of(text, candidates);
}
std::optional<std::string> closest_spelling(std::string_view text,
                                            std::span<const std::string> candidates) {
  return closest_of(text, candidates);
}

std::string did_you_mean(std::string_view text, std::span<const std::string_view> candidates) {
  auto found = closest_spelling(text, candidates);
  return found ? " (did you mean '" + *found + "'?)" : "";
}
std::string did_you_mean(std::string_view text, std::span<const std::string> candidates) {
  auto found = closest_spelling(text, candidates);
  return found ? " (did you mean '" + *found + "'?)" : "";
}

std::string trimmed(std::string_view text) {
  const auto is_blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return std::string(text);
}

std::vector<std::string> split_trimmed(std::string_view text, char separator) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    items.push_back(trimmed(text.substr(start, end == std::string_view::npos ? end : end - start)));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  if (items.size() > 1 && items.back().empty()) items.pop_back();
  return items;
}

std::string format_number(double value) {
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

}  // namespace openbpu::config
