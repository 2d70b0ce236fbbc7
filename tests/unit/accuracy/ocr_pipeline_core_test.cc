// samples/ocr_pipeline's processing (library ocr_pipeline_core): image reading, crops, model
// inputs, DB post-processing and CTC decoding, against hand-computed expectations. The pipeline
// as a whole is checked end to end by tests/sdk/ocr_pipeline.sh.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "image.h"
#include "model_input.h"
#include "text_detection.h"
#include "text_recognition.h"

namespace ocr_pipeline_test {
namespace {

namespace fs = std::filesystem;

fs::path write_temp(const std::string& name, const std::string& bytes) {
  const fs::path path = fs::temp_directory_path() /
                        ("ocr_pipeline_core_test_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// A probability map with filled rectangles (inclusive pixel ranges).
struct ProbabilityMap {
  int width, height;
  std::vector<float> p;
  ProbabilityMap(int w, int h) : width(w), height(h), p(static_cast<size_t>(w) * h, 0.05f) {}
  void fill(int x0, int y0, int x1, int y1, float v) {
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x) p[static_cast<size_t>(y) * width + x] = v;
  }
};

ocr::Image gradient_image(int w, int h) {
  ocr::Image image{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h * 3)};
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        image.rgb[(static_cast<size_t>(y) * w + x) * 3 + c] =
            static_cast<uint8_t>(x * 7 + y * 3 + c);
  return image;
}

TEST(OcrPipelineImage, ReadsPpmAndPgmWithComments) {
  const auto ppm =
      write_temp("a.ppm", std::string("P6\n# comment\n2 1\n255\n") + "\x01\x02\x03\x04\x05\x06");
  const ocr::Image rgb = ocr::read_image(ppm);
  EXPECT_EQ(rgb.width, 2);
  EXPECT_EQ(rgb.height, 1);
  EXPECT_EQ(rgb.rgb, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
  const auto pgm = write_temp("a.pgm", std::string("P5 2 1 255\n") + "\x07\x09");
  EXPECT_EQ(ocr::read_image(pgm).rgb, (std::vector<uint8_t>{7, 7, 7, 9, 9, 9}));
}

TEST(OcrPipelineImage, RejectsBadFilesNamingThem) {
  const auto expect_error = [](const fs::path& path, const std::string& text) {
    try {
      ocr::read_image(path);
      ADD_FAILURE() << path << " was read";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    }
  };
  expect_error(write_temp("t.ppm", "P3\n1 1\n255\n0 0 0\n"), "is not a binary 8-bit PPM");
  expect_error(write_temp("m.ppm", "P6\n1 1\n65535\n\x01\x02"), "is not a binary 8-bit PPM");
  expect_error(write_temp("s.ppm", "P6\n4 4\n255\n\x01\x02"), "truncated image");
  expect_error(fs::temp_directory_path() / "ocr_pipeline_core_test_missing.ppm", "cannot open");
}

TEST(OcrPipelineImage, AxisAlignedCropIsTheRegionAndTallCropsTurn) {
  const ocr::Image image = gradient_image(20, 12);
  // Corners on whole pixels: the bicubic taps fall on pixel centres, the crop is the region.
  const ocr::Image crop = ocr::crop_text_box(image, {{{3, 2}, {11, 2}, {11, 6}, {3, 6}}});
  ASSERT_EQ(crop.width, 8);
  ASSERT_EQ(crop.height, 4);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 8; ++x)
      for (int c = 0; c < 3; ++c) ASSERT_EQ(crop.at(x, y, c), image.at(3 + x, 2 + y, c));
  // 3 wide, 9 tall: at least 1.5 times taller than wide, so turned counter-clockwise.
  const ocr::Image tall = ocr::crop_text_box(image, {{{2, 1}, {5, 1}, {5, 10}, {2, 10}}});
  ASSERT_EQ(tall.width, 9);
  ASSERT_EQ(tall.height, 3);
  EXPECT_EQ(tall.at(0, 0, 0), image.at(4, 1, 0));  // the top-right pixel comes first
  EXPECT_EQ(tall.at(8, 2, 0), image.at(2, 9, 0));
  EXPECT_EQ(ocr::crop_text_box(image, {{{3, 2}, {3, 2}, {3, 2}, {3, 2}}}).width, 0);
}

TEST(OcrPipelineImage, Rotate180AndResize) {
  const ocr::Image image = gradient_image(5, 3);
  const ocr::Image turned = ocr::rotate_180(image);
  EXPECT_EQ(turned.at(0, 0, 1), image.at(4, 2, 1));
  EXPECT_EQ(ocr::rotate_180(turned).rgb, image.rgb);
  EXPECT_EQ(ocr::resize_bilinear(image, 5, 3).rgb, image.rgb);
  const ocr::Image doubled = ocr::resize_bilinear(image, 10, 6);
  EXPECT_EQ(doubled.at(0, 0, 0), image.at(0, 0, 0));  // clamped at the edge
  EXPECT_EQ(doubled.at(3, 0, 0), 9);                  // x 1.25: 0.75 * 7 + 0.25 * 14 = 8.75
}

TEST(OcrPipelineModelInput, DetectionNormalisesBgrLikePaddleOcr) {
  ocr::Image image{2, 2, std::vector<uint8_t>(12, 0)};
  image.rgb[0] = 255, image.rgb[1] = 128, image.rgb[2] = 0;  // pixel (0, 0): R G B
  const std::vector<float> chw = ocr::detection_input(image, 2, 2).to_float_chw();
  ASSERT_EQ(chw.size(), 12u);
  EXPECT_EQ(chw[0], (0.0f / 255.0f - 0.485f) / 0.229f);    // channel 0 is B
  EXPECT_EQ(chw[4], (128.0f / 255.0f - 0.456f) / 0.224f);  // G
  EXPECT_EQ(chw[8], (255.0f / 255.0f - 0.406f) / 0.225f);  // R
}

TEST(OcrPipelineModelInput, LineKeepsItsAspectAndPadsWithZero) {
  const ocr::Image line = gradient_image(40, 10);  // 48 high → ceil(48 * 4) = 192 wide
  const ocr::ModelInput in = ocr::line_input(line, 48, 320);
  EXPECT_EQ(in.valid_width, 192);
  const std::vector<float> chw = in.to_float_chw();
  EXPECT_EQ(chw[191], (static_cast<float>(in.image.at(191, 0, 2)) / 255.0f - 0.5f) / 0.5f);
  EXPECT_EQ(chw[192], 0.0f);
  EXPECT_EQ(in.image.at(200, 5, 0), 128);  // the padding's bytes, for image inputs
  EXPECT_EQ(ocr::line_input(gradient_image(400, 10), 48, 320).valid_width, 320);  // squeezed
}

TEST(OcrPipelineDetection, BoxesGrowByTheUnclipDistanceInReadingOrder) {
  ProbabilityMap m(200, 100);
  m.fill(120, 22, 179, 33, 0.9f);  // right, on the line of the next (3 rows higher)
  m.fill(10, 25, 89, 36, 0.8f);    // left
  m.fill(20, 70, 99, 79, 0.7f);    // next line
  m.fill(150, 80, 150, 81, 0.9f);  // too small: dropped
  m.fill(30, 50, 89, 59, 0.4f);    // above the threshold, under box_threshold: dropped
  const auto boxes = ocr::detect_text_boxes(m.p, 200, 100, 400, 200, {});
  ASSERT_EQ(boxes.size(), 3u);
  // left, right, lower: within 10 pixels of height the left box comes first.
  EXPECT_LT(boxes[0].corners[0].x, boxes[1].corners[0].x);
  EXPECT_LT(boxes[1].corners[0].y, boxes[2].corners[0].y);
  // The left box: 79 x 11 between pixel centres, grown by d, scaled by 2, rounded.
  const double d = 79.0 * 11 * 1.5 / (2 * (79 + 11));
  EXPECT_EQ(boxes[0].corners[0].x, std::nearbyint((10 - d) * 2));
  EXPECT_EQ(boxes[0].corners[0].y, std::nearbyint((25 - d) * 2));
  EXPECT_EQ(boxes[0].corners[2].x, std::nearbyint((89 + d) * 2));
  EXPECT_EQ(boxes[0].corners[2].y, std::nearbyint((36 + d) * 2));
  // Clockwise from the top-left corner.
  EXPECT_EQ(boxes[0].corners[1].y, boxes[0].corners[0].y);
  EXPECT_GT(boxes[0].corners[1].x, boxes[0].corners[0].x);
  EXPECT_EQ(boxes[0].corners[3].x, boxes[0].corners[0].x);
  EXPECT_NEAR(boxes[0].score, 0.8, 1e-6);
  EXPECT_NEAR(boxes[2].score, 0.7, 1e-6);
}

TEST(OcrPipelineDetection, TiltedRegionGivesATiltedBox) {
  ProbabilityMap m(120, 80);
  for (int x = 10; x < 110; ++x)  // a band rising one row every 10 columns
    for (int y = 40 - x / 10; y < 48 - x / 10; ++y) m.p[static_cast<size_t>(y) * 120 + x] = 0.9f;
  const auto boxes = ocr::detect_text_boxes(m.p, 120, 80, 120, 80, {});
  ASSERT_EQ(boxes.size(), 1u);
  const ocr::Quad& q = boxes[0].corners;
  EXPECT_GT(q[0].y, q[1].y);  // the top edge rises to the right
  EXPECT_GT(q[3].y, q[2].y);
  EXPECT_LT(q[0].x, q[1].x);
}

TEST(OcrPipelineRecognition, GreedyCtcCollapsesRepeatsAndDropsBlanks) {
  const auto keys = write_temp("keys.txt", "a\r\nb\nc");
  const ocr::CharacterDictionary dictionary = ocr::CharacterDictionary::load(keys);
  ASSERT_EQ(dictionary.size(), 5u);  // blank, a, b, c, space
  // classes: blank a b c space; steps: a a blank a space b b
  const std::vector<int> best = {1, 1, 0, 1, 4, 2, 2};
  std::vector<float> scores(best.size() * 5, 0.0f);
  for (size_t t = 0; t < best.size(); ++t)
    scores[t * 5 + static_cast<size_t>(best[t])] = 0.5f + 0.05f * t;
  const ocr::Recognition r = ocr::ctc_greedy_decode(scores, 7, 5, dictionary);
  EXPECT_EQ(r.text, "aa b");
  EXPECT_NEAR(r.score, (0.5 + 0.65 + 0.7 + 0.75) / 4, 1e-6);
  EXPECT_EQ(ocr::ctc_greedy_decode(std::vector<float>(4 * 3, 0.0f), 3, 4, dictionary).text, "");
  EXPECT_THROW(ocr::ctc_greedy_decode(scores, 5, 7, dictionary), std::runtime_error);
  EXPECT_THROW(ocr::CharacterDictionary::load(write_temp("empty.txt", "")), std::runtime_error);
}

}  // namespace
}  // namespace ocr_pipeline_test
