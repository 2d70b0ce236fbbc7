#include "openbpu/accuracy/ctc_decoder.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"

namespace openbpu::accuracy {
namespace {

namespace fs = std::filesystem;

// Scores [steps, classes] with a 1 at the given class of each step.
std::vector<float> one_hot(const std::vector<int>& classes_per_step, int classes) {
  std::vector<float> scores(classes_per_step.size() * static_cast<size_t>(classes), 0.0f);
  for (size_t t = 0; t < classes_per_step.size(); ++t) {
    scores[t * static_cast<size_t>(classes) + static_cast<size_t>(classes_per_step[t])] = 1.0f;
  }
  return scores;
}

TEST(CtcDecoder, GreedyCollapsesRepeatsAndDropsBlanks) {
  const CtcDictionary dictionary({"a", "b", "中"});
  // blank=0, a=1, b=2, 中=3, space=4 (5 classes = 3 + 2).
  const auto scores = one_hot({1, 1, 0, 1, 2, 2, 4, 3, 3, 0}, 5);
  EXPECT_EQ(ctc_greedy_decode(scores, 10, 5, dictionary), "aab 中");
  // Without the space class (4 classes = 3 + 1).
  EXPECT_EQ(ctc_greedy_decode(one_hot({3, 0, 3, 2}, 4), 4, 4, dictionary), "中中b");
  EXPECT_EQ(ctc_greedy_decode(one_hot({0, 0}, 4), 2, 4, dictionary), "");
}

TEST(CtcDecoder, ArgmaxTakesTheLargestScore) {
  const CtcDictionary dictionary({"x", "y"});
  const std::vector<float> scores = {0.1f, 0.2f, 0.7f, 0.0f,   // y
                                     0.5f, 0.3f, 0.2f, 0.0f,   // blank
                                     0.1f, 0.6f, 0.3f, 0.0f};  // x
  EXPECT_EQ(ctc_greedy_decode(scores, 3, 4, dictionary), "yx");
}

TEST(CtcDecoder, RejectsAModelThatDoesNotFitTheDictionary) {
  const CtcDictionary dictionary({"a", "b", "c"});
  EXPECT_THROW(ctc_greedy_decode(one_hot({1}, 7), 1, 7, dictionary), Error);
  EXPECT_THROW(ctc_greedy_decode(one_hot({1}, 3), 1, 3, dictionary), Error);
  EXPECT_THROW(ctc_greedy_decode(std::vector<float>(9), 2, 5, dictionary), Error);
}

TEST(CtcDecoder, LoadsDictionaryWithCrLfAndNoFinalLineEnd) {
  const fs::path file = fs::temp_directory_path() / "openbpu_ctc_dictionary_test.txt";
  write_file_atomically(file, "a\r\n中\n'\n \nz");
  const CtcDictionary dictionary = CtcDictionary::load(file);
  fs::remove(file);
  ASSERT_EQ(dictionary.size(), 5u);
  EXPECT_EQ(dictionary.text_of(1, 7), "a");
  EXPECT_EQ(dictionary.text_of(2, 7), "中");
  EXPECT_EQ(dictionary.text_of(4, 7), " ");
  EXPECT_EQ(dictionary.text_of(5, 7), "z");
  EXPECT_EQ(dictionary.text_of(6, 7), " ");  // the space class
  EXPECT_EQ(dictionary.text_of(0, 7), "");
}

TEST(CtcDecoder, RejectsAnInvalidDictionary) {
  const fs::path file = fs::temp_directory_path() / "openbpu_ctc_dictionary_bad.txt";
  write_file_atomically(file, "a\n\xFF\n");
  try {
    CtcDictionary::load(file);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
  fs::remove(file);
  EXPECT_THROW(CtcDictionary::load(file), Error);  // missing
}

TEST(CtcDecoder, DecodesARecOutputTensor) {
  const CtcDictionary dictionary({"a", "b"});
  const auto values = one_hot({1, 2, 2}, 4);
  const auto t = kernels::Tensor::from_values<float>({1, 3, 4}, values);
  EXPECT_EQ(ctc_greedy_decode(t, dictionary), "ab");
  EXPECT_THROW(ctc_greedy_decode(t.reshaped({3, 4}), dictionary), Error);
}

}  // namespace
}  // namespace openbpu::accuracy
