// Text helpers for config messages: case folding, quoted lists, and the "did you mean" search.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace openbpu::config {

std::string lowercase(std::string_view text);
bool equals_ignoring_case(std::string_view a, std::string_view b);

// "'a', 'b', 'c'"
std::string quoted_list(std::span<const std::string_view> items);
std::string quoted_list(std::span<const std::string> items);

// The candidate closest to `text` (case-insensitive optimal-string-alignment distance), if it is
// close enough to be a likely typo: distance <= max(1, length / 3), at least one character of
// `text` survives, and no other candidate is as close.
std::optional<std::string> closest_spelling(std::string_view text,
                                            std::span<const std::string_view> candidates);
std::optional<std::string> closest_spelling(std::string_view text,
                                            std::span<const std::string> candidates);

// " (did you mean 'x'?)" or "".
std::string did_you_mean(std::string_view text, std::span<const std::string_view> candidates);
std::string did_you_mean(std::string_view text, std::span<const std::string> candidates);

// Splits on `separator`, trimming blanks around each item. A trailing empty item (as in
// "a;b;") is dropped; other empty items are kept so that callers can report them.
std::vector<std::string> split_trimmed(std::string_view text, char separator);
std::string trimmed(std::string_view text);

// Shortest decimal text that reads back as the same double ("0.017", "123.675", "1").
std::string format_number(double value);

}  // namespace openbpu::config
