#include "openbpu/base/message.h"

#include <cstdio>
#include <system_error>

namespace openbpu::base {

std::string quote(std::string_view text) {
  constexpr size_t kMaxShown = 200;
  std::string out = "'";
  const size_t shown = text.size() < kMaxShown ? text.size() : kMaxShown;
  for (size_t i = 0; i < shown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\'' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += static_cast<char>(c);  // printable ASCII and UTF-8 bytes as they are
    }
  }
  if (shown < text.size()) out += "...";
  out += '\'';
  return out;
}

std::string errno_text(int error_number) {
  return std::error_code(error_number, std::generic_category()).message();
}

}  // namespace openbpu::base
