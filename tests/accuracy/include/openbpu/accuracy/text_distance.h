// Text comparison over Unicode code points: UTF-8 decoding, edit distance, character error
// rate.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace openbpu::accuracy {

// Decodes UTF-8. Throws Error (with the byte offset) on malformed or overlong sequences and
// surrogates.
std::u32string utf8_to_code_points(std::string_view text);

// Levenshtein distance (insertions, deletions, substitutions of one code point each).
int64_t edit_distance(std::u32string_view a, std::u32string_view b);

// The text without ASCII spaces (PaddleOCR's RecMetric compares with ignore_space).
std::string without_spaces(std::string_view text);

// Corpus-level character error rate: total edits / total reference code points.
class CharacterErrorRate {
 public:
  void add(std::string_view reference, std::string_view hypothesis);
  double rate() const;  // 0 when no reference character was added
  int64_t edits() const { return edits_; }
  int64_t reference_length() const { return reference_length_; }

 private:
  int64_t edits_ = 0;
  int64_t reference_length_ = 0;
};

}  // namespace openbpu::accuracy
