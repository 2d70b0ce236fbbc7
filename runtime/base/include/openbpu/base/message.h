// Building error and log messages: str_cat, quoted names, errno text.
#pragma once

#include <sstream>
#include <string>
#include <string_view>
#include <utility>

namespace openbpu::base {

// Concatenates the streamed form of every argument: str_cat("axis ", 3, " out of range").
template <typename... Args>
std::string str_cat(Args&&... args) {
  std::ostringstream out;
  (out << ... << std::forward<Args>(args));
  return out.str();
}

// `text` single-quoted for a message: non-printable bytes as \xNN, quotes and backslashes
// escaped, cut after 200 bytes (names read from files may hold anything).
std::string quote(std::string_view text);

// The text of an errno value ("No such file or directory"); thread-safe, unlike strerror.
std::string errno_text(int error_number);

}  // namespace openbpu::base
