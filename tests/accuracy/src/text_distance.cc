#include "openbpu/accuracy/text_distance.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "openbpu/common/error.h"

namespace openbpu::accuracy {

namespace {

std::string hex(uint32_t value, int digits) {
  char text[16];
  std::snprintf(text, sizeof text, "%0*X", digits, value);
  return text;
}

}  // namespace

std::u32string utf8_to_code_points(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    size_t length = 0;
    char32_t cp = 0;
    if (lead < 0x80) {
      length = 1;
      cp = lead;
    } else if ((lead & 0xE0) == 0xC0) {
      length = 2;
      cp = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3;
      cp = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4;
      cp = lead & 0x07;
    } else {
      raise("invalid UTF-8: byte 0x", hex(lead, 2), " at offset ", i, " cannot start a character");
    }
    if (i + length > text.size()) raise("invalid UTF-8: truncated character at offset ", i);
    for (size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) raise("invalid UTF-8: bad continuation byte at offset ", i + k);
      cp = (cp << 6) | (next & 0x3F);
    }
    static constexpr char32_t kMinimum[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMinimum[length]) raise("invalid UTF-8: overlong encoding at offset ", i);
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      raise("invalid UTF-8: U+", hex(static_cast<uint32_t>(cp), 4), " at offset ", i,
            " is not a character");
    }
    out.push_back(cp);
    i += length;
  }
  return out;
}

int64_t edit_distance(std::u32string_view a, std::u32string_view b) {
  std::vector<int64_t> previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = static_cast<int64_t>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = static_cast<int64_t>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int64_t substitute = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitute});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::string without_spaces(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c != ' ') out.push_back(c);
  }
  return out;
}

void CharacterErrorRate::add(std::string_view reference, std::string_view hypothesis) {
  const std::u32string ref = utf8_to_code_points(reference);
  edits_ += edit_distance(ref, utf8_to_code_points(hypothesis));
  reference_length_ += static_cast<int64_t>(ref.size());
}

double CharacterErrorRate::rate() const {
  return reference_length_ == 0
             ? 0.0
             : static_cast<double>(edits_) / static_cast<double>(reference_length_);
}

}  // namespace openbpu::accuracy
