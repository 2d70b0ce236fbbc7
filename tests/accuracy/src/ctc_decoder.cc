#include "openbpu/accuracy/ctc_decoder.h"

#include <utility>

#include "openbpu/accuracy/text_distance.h"
#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"

namespace openbpu::accuracy {

CtcDictionary CtcDictionary::load(const std::filesystem::path& path) {
  const std::string bytes = read_file(path);
  std::vector<std::string> characters;
  size_t start = 0;
  while (start < bytes.size()) {
    size_t end = bytes.find('\n', start);
    if (end == std::string::npos) end = bytes.size();
    std::string line = bytes.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    try {
      utf8_to_code_points(line);
    } catch (const Error& e) {
      raise(path.string(), " line ", characters.size() + 1, ": ", e.what());
    }
    characters.push_back(std::move(line));
    start = end + 1;
  }
  if (characters.empty()) raise(path.string(), ": the character dictionary is empty");
  return CtcDictionary(std::move(characters));
}

CtcDictionary::CtcDictionary(std::vector<std::string> characters)
    : characters_(std::move(characters)) {}

std::string_view CtcDictionary::text_of(int64_t index, int64_t classes) const {
  const auto n = static_cast<int64_t>(characters_.size());
  if (classes != n + 1 && classes != n + 2) {
    raise("CTC decoding: the model has ", classes, " classes but the dictionary has ", n,
          " characters (expected ", n + 1, " classes with the blank, or ", n + 2,
          " with the space as the last class)");
  }
  if (index < 0 || index >= classes) raise("CTC decoding: class ", index, " is out of range");
  if (index == 0) return {};
  if (index == n + 1) return " ";
  return characters_[static_cast<size_t>(index - 1)];
}

std::string ctc_greedy_decode(std::span<const float> scores, int64_t steps, int64_t classes,
                              const CtcDictionary& dictionary) {
  if (steps < 0 || classes <= 0 || static_cast<int64_t>(scores.size()) != steps * classes) {
    raise("CTC decoding: ", steps, " steps x ", classes, " classes need ", steps * classes,
          " scores, got ", scores.size());
  }
  dictionary.text_of(0, classes);  // checks the class count even for an empty output
  std::string text;
  int64_t previous = 0;
  for (int64_t t = 0; t < steps; ++t) {
    const float* row = scores.data() + t * classes;
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c) {
      if (row[c] > row[best]) best = c;
    }
    if (best != 0 && best != previous) text += dictionary.text_of(best, classes);
    previous = best;
  }
  return text;
}

std::string ctc_greedy_decode(const kernels::Tensor& scores, const CtcDictionary& dictionary) {
  const auto& shape = scores.shape();
  if (shape.size() != 3 || shape[0] != 1 || scores.dtype() != kernels::DataType::kFloat32) {
    raise("CTC decoding: expected a float32 rec output [1, T, C], got ", scores.describe());
  }
  return ctc_greedy_decode(scores.values<float>(), shape[1], shape[2], dictionary);
}

}  // namespace openbpu::accuracy
