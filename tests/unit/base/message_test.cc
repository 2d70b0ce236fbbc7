#include "openbpu/base/message.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "openbpu/base/file_name.h"

namespace openbpu::base {
namespace {

TEST(Message, StrCatStreamsEveryArgument) {
  EXPECT_EQ(str_cat("axis ", 3, " out of range [", -1, ", ", 2.5, ")"),
            "axis 3 out of range [-1, 2.5)");
}

TEST(Message, QuoteEscapesAndCuts) {
  EXPECT_EQ(quote("conv1"), "'conv1'");
  EXPECT_EQ(quote(std::string("a'b\\c\n\x7f", 7)), "'a\\'b\\\\c\\x0A\\x7F'");
  EXPECT_EQ(quote(std::string(250, 'x')), "'" + std::string(200, 'x') + "...'");
}

TEST(Message, ErrnoText) {
  EXPECT_EQ(errno_text(ENOENT), "No such file or directory");
}

TEST(FileName, PartReplacesWhatIsNotPortable) {
  EXPECT_EQ(file_name_part("conv1/out:0"), "conv1_out_0");
  EXPECT_EQ(file_name_part("softmax_0.tmp_0"), "softmax_0.tmp_0");
  EXPECT_EQ(file_name_part("a b\\c*\xc3\xa9"), "a_b_c___");
  EXPECT_EQ(file_name_part(".."), "..");
  EXPECT_EQ(file_name_part(""), "");
}

TEST(FileName, SafeNameIsNeverEmptyOrADirectoryLink) {
  EXPECT_EQ(safe_file_name(""), "_");
  EXPECT_EQ(safe_file_name("."), "_.");
  EXPECT_EQ(safe_file_name(".."), "_..");
  EXPECT_EQ(safe_file_name("../x"), ".._x");
  EXPECT_EQ(safe_file_name("input/0"), "input_0");
}

}  // namespace
}  // namespace openbpu::base
