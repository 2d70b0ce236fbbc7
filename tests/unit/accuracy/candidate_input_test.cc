#include "openbpu/accuracy/candidate_input.h"

#include <gtest/gtest.h>

#include "openbpu/common/error.h"

namespace openbpu::accuracy {
namespace {

using kernels::DataType;
using kernels::Tensor;

// A uint8 [1,3,2,2] RGB image: red, green, blue, white pixels.
Tensor four_pixels() {
  const std::vector<uint8_t> planes = {255, 0,   0,   255,   // R
                                       0,   255, 0,   255,   // G
                                       0,   0,   255, 255};  // B
  return Tensor::from_values<uint8_t>({1, 3, 2, 2}, planes);
}

std::vector<int64_t> values_of(const Tensor& t) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t.element_count(); ++i) out.push_back(t.int_at(i));
  return out;
}

TEST(CandidateInput, RgbAndBgrPlanes) {
  CandidateInputOptions o;
  o.source = CandidateSource::kRgb;
  const Tensor rgb = candidate_input_from_rgb(four_pixels(), o);
  EXPECT_EQ(rgb.dtype(), DataType::kUint8);
  EXPECT_EQ(values_of(rgb), values_of(four_pixels()));
  o.source = CandidateSource::kBgr;
  EXPECT_EQ(values_of(candidate_input_from_rgb(four_pixels(), o)),
            (std::vector<int64_t>{0, 0, 255, 255, 0, 255, 0, 255, 255, 0, 0, 255}));
}

TEST(CandidateInput, OffsetGivesInt8AndNhwcInterleaves) {
  CandidateInputOptions o;
  o.source = CandidateSource::kRgb;
  o.offset = 128;
  o.nhwc = true;
  const Tensor t = candidate_input_from_rgb(four_pixels(), o);
  EXPECT_EQ(t.dtype(), DataType::kInt8);
  EXPECT_EQ(t.shape(), (kernels::Shape{1, 2, 2, 3}));
  EXPECT_EQ(values_of(t), (std::vector<int64_t>{127, -128, -128, -128, 127, -128, -128, -128, 127,
                                                127, 127, 127}));
  o.dtype = DataType::kFloat32;
  EXPECT_EQ(candidate_input_from_rgb(four_pixels(), o).float_at(0), 127.0);
  o.dtype = DataType::kUint8;  // 0 - 128 does not fit
  EXPECT_THROW(candidate_input_from_rgb(four_pixels(), o), Error);
}

TEST(CandidateInput, Yuv444IsBt601FullRange) {
  CandidateInputOptions o;
  o.source = CandidateSource::kYuv444;
  // Red: Y = 0.299*255 = 76.2, U = 128 - 0.168736*255 = 85.0, V = 128 + 127.5 -> 255.
  EXPECT_EQ(values_of(candidate_input_from_rgb(four_pixels(), o)),
            (std::vector<int64_t>{76, 150, 29, 255,      // Y
                                  85, 44, 255, 128,      // U
                                  255, 21, 107, 128}));  // V
  o.range = CandidateRange::kVideo;
  const Tensor video = candidate_input_from_rgb(four_pixels(), o);
  EXPECT_EQ(video.int_at(3), 235);      // white Y
  EXPECT_EQ(video.int_at(8), 240);      // red V: 128 + 127.5 * 224/255
  EXPECT_EQ(video.int_at(4 + 3), 128);  // white U
}

TEST(CandidateInput, Nv12AveragesChromaOver2x2) {
  CandidateInputOptions o;
  o.source = CandidateSource::kNv12;
  const Tensor t = candidate_input_from_rgb(four_pixels(), o);
  const std::vector<int64_t> v = values_of(t);
  EXPECT_EQ(std::vector<int64_t>(v.begin(), v.begin() + 4),
            (std::vector<int64_t>{76, 150, 29, 255}));
  for (int i = 4; i < 8; ++i) EXPECT_EQ(v[i], (85 + 44 + 255 + 128 + 2) / 4);
  for (int i = 8; i < 12; ++i) EXPECT_EQ(v[i], (255 + 21 + 107 + 128 + 2) / 4);
  const Tensor odd = Tensor::from_values<uint8_t>({1, 3, 1, 2}, std::vector<uint8_t>(6, 1));
  EXPECT_THROW(candidate_input_from_rgb(odd, o), Error);
}

TEST(CandidateInput, RejectsANonImage) {
  CandidateInputOptions o;
  o.source = CandidateSource::kRgb;
  EXPECT_THROW(candidate_input_from_rgb(Tensor(DataType::kFloat32, {1, 3, 2, 2}), o), Error);
  EXPECT_THROW(candidate_input_from_rgb(Tensor(DataType::kUint8, {1, 1, 2, 2}), o), Error);
  EXPECT_THROW(parse_candidate_source("nv21"), Error);
  EXPECT_EQ(parse_candidate_source("nv12"), CandidateSource::kNv12);
}

}  // namespace
}  // namespace openbpu::accuracy
