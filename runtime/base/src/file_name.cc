#include "openbpu/base/file_name.h"

namespace openbpu::base {

std::string file_name_part(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    const bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
    if (!keep) c = '_';
  }
  return out;
}

std::string safe_file_name(std::string_view name) {
  std::string out = file_name_part(name);
  if (out.empty() || out == "." || out == "..") out.insert(0, "_");
  return out;
}

}  // namespace openbpu::base
