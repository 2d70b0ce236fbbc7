#include "openbpu/accuracy/text_distance.h"

#include <gtest/gtest.h>

#include "openbpu/common/error.h"

namespace openbpu::accuracy {
namespace {

TEST(TextDistance, DecodesUtf8OfEveryLength) {
  EXPECT_EQ(utf8_to_code_points("a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80"),
            (std::u32string{U'a', U'\u00E9', U'\u4E2D', U'\U0001F600'}));
  EXPECT_TRUE(utf8_to_code_points("").empty());
}

TEST(TextDistance, RejectsMalformedUtf8) {
  EXPECT_THROW(utf8_to_code_points("\xC0\x80"), Error);      // overlong NUL
  EXPECT_THROW(utf8_to_code_points("\xED\xA0\x80"), Error);  // surrogate
  EXPECT_THROW(utf8_to_code_points("\xE4\xB8"), Error);      // truncated
  EXPECT_THROW(utf8_to_code_points("\x80"), Error);          // stray continuation
  EXPECT_THROW(utf8_to_code_points("\xE4\x41\x80"), Error);  // bad continuation
}

TEST(TextDistance, EditDistanceCountsCodePoints) {
  EXPECT_EQ(edit_distance(U"kitten", U"sitting"), 3);
  EXPECT_EQ(edit_distance(U"", U"abc"), 3);
  EXPECT_EQ(edit_distance(U"abc", U""), 3);
  EXPECT_EQ(edit_distance(U"same", U"same"), 0);
  // One Chinese character is one edit, not three bytes.
  EXPECT_EQ(edit_distance(utf8_to_code_points("中国人"), utf8_to_code_points("中图人")), 1);
}

TEST(TextDistance, CharacterErrorRateIsCorpusLevel) {
  CharacterErrorRate cer;
  EXPECT_EQ(cer.rate(), 0);
  cer.add("abcd", "abxd");  // 1 edit over 4
  cer.add("中国", "");      // 2 edits over 2
  EXPECT_EQ(cer.edits(), 3);
  EXPECT_EQ(cer.reference_length(), 6);
  EXPECT_DOUBLE_EQ(cer.rate(), 0.5);
}

TEST(TextDistance, WithoutSpacesDropsAsciiSpacesOnly) {
  EXPECT_EQ(without_spaces(" a b\tc "), "ab\tc");
  EXPECT_EQ(without_spaces("超市 收据"), "超市收据");
}

}  // namespace
}  // namespace openbpu::accuracy
