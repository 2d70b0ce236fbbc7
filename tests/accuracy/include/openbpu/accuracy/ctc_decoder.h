// Greedy CTC decoding of a recognition model's output with PaddleOCR's character dictionary:
// class 0 is the CTC blank, class i (1..N) is line i of the dictionary file, and when the model
// has N + 2 classes the last one is a space (PaddleOCR's use_space_char).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "openbpu/kernels/tensor.h"

namespace openbpu::accuracy {

class CtcDictionary {
 public:
  // One UTF-8 character (or string) per line, "\n" or "\r\n" line ends; a final line end is
  // optional. Throws Error naming the file if it is missing, empty or not valid UTF-8.
  static CtcDictionary load(const std::filesystem::path& path);
  explicit CtcDictionary(std::vector<std::string> characters);

  size_t size() const { return characters_.size(); }
  // The text of class `index` for a model with `classes` classes (blank = ""). Throws Error
  // if `classes` is neither size() + 1 nor size() + 2 or `index` is out of range.
  std::string_view text_of(int64_t index, int64_t classes) const;

 private:
  std::vector<std::string> characters_;
};

// Decodes `steps` x `classes` scores (row-major): argmax per step, repeats collapsed, blanks
// removed.
std::string ctc_greedy_decode(std::span<const float> scores, int64_t steps, int64_t classes,
                              const CtcDictionary& dictionary);
// A rec model output [1, T, C]. Throws Error naming the shape for anything else.
std::string ctc_greedy_decode(const kernels::Tensor& scores, const CtcDictionary& dictionary);

}  // namespace openbpu::accuracy
