#include "openbpu/accuracy/ocr_dataset.h"

#include <gtest/gtest.h>

#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"

namespace openbpu::accuracy {
namespace {

namespace fs = std::filesystem;

class OcrDatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("openbpu_ocr_dataset_test_" +
             std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "det");
    fs::create_directories(root_ / "rec");
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

constexpr const char* kDet = R"({"kind": "det", "input_shape": [1, 3, 64, 96], "samples": [
  {"id": "000", "input": "input/000.npy", "image": "image/000.png",
   "bgr_uint8": "bgr_uint8/000.npy", "rgb_uint8": "rgb_uint8/000.npy", "condition": "hard",
   "lines": [{"text": "total 12", "box": [3, 4, 50, 20]}, {"text": "合计", "box": [5, 30, 40, 44]}]}
]})";

TEST_F(OcrDatasetTest, LoadsAKindFolderOrASplitFolder) {
  write_file_atomically(root_ / "det" / "labels.json", kDet);
  for (const fs::path& folder : {root_ / "det", root_}) {
    const OcrDataset d = load_ocr_dataset(folder, OcrTask::kDetection);
    EXPECT_EQ(d.input_shape, (std::vector<int64_t>{1, 3, 64, 96}));
    ASSERT_EQ(d.samples.size(), 1u);
    const OcrSample& s = d.samples[0];
    EXPECT_EQ(s.condition, "hard");
    EXPECT_EQ(s.input, fs::absolute(root_ / "det" / "input" / "000.npy"));
    ASSERT_EQ(s.lines.size(), 2u);
    EXPECT_EQ(s.lines[1].text, "合计");
    EXPECT_EQ(s.lines[1].box.y1, 44);
  }
}

TEST_F(OcrDatasetTest, ErrorsNameTheFileAndTheKey) {
  write_file_atomically(root_ / "rec" / "labels.json",
                        R"({"kind": "rec", "input_shape": [1,3,48,320], "samples": [
      {"id": "007", "input": "a", "image": "b", "bgr_uint8": "c", "rgb_uint8": "d"}]})");
  try {
    load_ocr_dataset(root_, OcrTask::kRecognition);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("labels.json"), std::string::npos) << message;
    EXPECT_NE(message.find("sample 007 has no 'text'"), std::string::npos) << message;
  }
  write_file_atomically(root_ / "det" / "labels.json", kDet);
  EXPECT_THROW(load_ocr_dataset(root_ / "det", OcrTask::kRecognition), Error);  // wrong kind
  EXPECT_THROW(load_ocr_dataset(root_ / "missing", OcrTask::kDetection), Error);
  write_file_atomically(root_ / "det" / "labels.json", "{not json");
  EXPECT_THROW(load_ocr_dataset(root_, OcrTask::kDetection), Error);
}

TEST(OcrTask, Names) {
  EXPECT_EQ(parse_ocr_task("cls"), OcrTask::kClassification);
  EXPECT_STREQ(ocr_task_name(OcrTask::kRecognition), "rec");
  EXPECT_THROW(parse_ocr_task("ocr"), Error);
}

}  // namespace
}  // namespace openbpu::accuracy
