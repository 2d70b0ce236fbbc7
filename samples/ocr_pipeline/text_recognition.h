// The character dictionary of a PP-OCR recogniser and greedy CTC decoding, as PaddleOCR's
// CTCLabelDecode: class 0 is the CTC blank, class i (1..N) line i of the dictionary file, and
// with N + 2 classes the last one is a space (use_space_char).
#pragma once

#include <string>
#include <vector>

namespace ocr {

class CharacterDictionary {
 public:
  // One UTF-8 character per line ("\n" or "\r\n"; the last line end optional). Throws
  // std::runtime_error naming the file if it is missing, unreadable or empty.
  static CharacterDictionary load(const std::string& path);

  size_t size() const { return characters_.size(); }
  // Throws std::runtime_error unless a model with `classes` classes fits the dictionary
  // (size() + 1, or size() + 2 with the space).
  void check_classes(long classes) const;
  // The text of class `index` (1 <= index < classes).
  const std::string& text_of(long index) const;

 private:
  std::vector<std::string> characters_;
};

struct Recognition {
  std::string text;
  double score = 0;  // mean probability of the kept characters (0 without any)
};

// `scores` holds steps x classes probabilities (row-major): argmax per step (the first on a
// tie), repeats collapsed, blanks removed.
Recognition ctc_greedy_decode(const std::vector<float>& scores, long steps, long classes,
                              const CharacterDictionary& dictionary);

}  // namespace ocr
