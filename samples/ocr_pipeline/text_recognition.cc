#include "text_recognition.h"

#include <fstream>
#include <iterator>
#include <stdexcept>

namespace ocr {

CharacterDictionary CharacterDictionary::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open the dictionary '" + path + "'");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error("cannot read the dictionary '" + path + "'");
  CharacterDictionary dictionary;
  dictionary.characters_.push_back("");  // the blank, class 0
  for (size_t start = 0; start < bytes.size();) {
    size_t end = bytes.find('\n', start);
    if (end == std::string::npos) end = bytes.size();
    std::string line = bytes.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    dictionary.characters_.push_back(std::move(line));
    start = end + 1;
  }
  if (dictionary.characters_.size() == 1) {
    throw std::runtime_error("the dictionary '" + path + "' is empty");
  }
  dictionary.characters_.push_back(" ");  // the space of use_space_char, class N + 1
  return dictionary;
}

void CharacterDictionary::check_classes(long classes) const {
  const long n = static_cast<long>(characters_.size()) - 2;
  if (classes != n + 1 && classes != n + 2) {
    throw std::runtime_error("the recogniser has " + std::to_string(classes) +
                             " classes but the dictionary has " + std::to_string(n) +
                             " characters (expected " + std::to_string(n + 1) + " or " +
                             std::to_string(n + 2) + " classes: blank, characters[, space])");
  }
}

const std::string& CharacterDictionary::text_of(long index) const {
  return characters_.at(static_cast<size_t>(index));
}

Recognition ctc_greedy_decode(const std::vector<float>& scores, long steps, long classes,
                              const CharacterDictionary& dictionary) {
  dictionary.check_classes(classes);
  if (steps < 0 || scores.size() != static_cast<size_t>(steps) * static_cast<size_t>(classes)) {
    throw std::runtime_error("CTC decoding: " + std::to_string(steps) + " steps x " +
                             std::to_string(classes) + " classes, but " +
                             std::to_string(scores.size()) + " scores");
  }
  Recognition out;
  long previous = -1, kept = 0;
  double sum = 0;
  for (long t = 0; t < steps; ++t) {
    const float* row = scores.data() + static_cast<size_t>(t) * static_cast<size_t>(classes);
    long best = 0;
    for (long c = 1; c < classes; ++c) {
      if (row[c] > row[best]) best = c;
    }
    if (best != 0 && best != previous) {
      out.text += dictionary.text_of(best);
      sum += row[best];
      ++kept;
    }
    previous = best;
  }
  out.score = kept ? sum / static_cast<double>(kept) : 0.0;
  return out;
}

}  // namespace ocr
