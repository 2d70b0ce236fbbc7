// hb_model_verifier's pieces: the line comparison and its report, the quantized model's feed
// built from the .bin model's input bytes, board addresses and shell quoting, and the SSH
// session's error for a closed port.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "openbpu/common/error.h"
#include "openbpu/verifier/board.h"
#include "openbpu/verifier/compare.h"
#include "openbpu/verifier/model_runs.h"

namespace openbpu::verifier {
namespace {

using kernels::DataType;

TEST(VerifierCompare, EqualAndWithinTheDigitsPass) {
  EXPECT_TRUE(compare_values({1.0, -2.5, 0.0}, {1.0, -2.5, 0.0}, 5).passed());
  const Comparison c = compare_values({0.1234561}, {0.1234569}, 5);  // differs by 8e-7 < 1e-5
  EXPECT_TRUE(c.passed());
  EXPECT_NEAR(c.max_abs_diff, 8e-7, 1e-12);
}

TEST(VerifierCompare, CountsDiffNanAndMissingLines) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Comparison c = compare_values({0.0, 1.0, nan, 3.0, 4.0}, {0.0, 1.002, 2.0, 3.0}, 3);
  EXPECT_EQ(c.total, 5);
  EXPECT_EQ(c.diff, 1);  // 1.0 vs 1.002: not below 10^-3
  EXPECT_EQ(c.nan, 1);
  EXPECT_EQ(c.miss, 1);
  EXPECT_EQ(c.first_mismatch, 1);
  EXPECT_FALSE(c.passed());
  EXPECT_DOUBLE_EQ(c.rate(), 3.0 / 5.0);
  const std::vector<std::string> report = mismatch_report(c);
  ASSERT_EQ(report.size(), 8u);
  EXPECT_EQ(report[0], "mismatch line num: 3");
  EXPECT_EQ(report[2], "mismatch.line_miss num: 1");
  EXPECT_EQ(report[3], "mismatch.line_diff num: 1");
  EXPECT_EQ(report[4], "mismatch.line_nan num: 1");
  EXPECT_EQ(report[6], "total line num: 5");
  EXPECT_EQ(report[7], "mismatch rate: 0.600000");
}

TEST(VerifierCompare, InfinitiesMatchOnlyThemselves) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(compare_values({inf, -inf}, {inf, -inf}, 5).passed());
  EXPECT_EQ(compare_values({inf}, {-inf}, 5).diff, 1);
  EXPECT_EQ(compare_values({inf}, {1e300}, 5).diff, 1);
}

hbDNNTensorProperties image_properties(int32_t type, int32_t layout, int h, int w) {
  hbDNNTensorProperties p{};
  p.tensorType = type;
  p.tensorLayout = layout;
  p.validShape.numDimensions = 4;
  const int32_t nchw[4] = {1, 3, h, w}, nhwc[4] = {1, h, w, 3};
  for (int d = 0; d < 4; ++d) p.validShape.dimensionSize[d] = layout == HB_DNN_LAYOUT_NHWC ? nhwc[d] : nchw[d];
  p.alignedShape = p.validShape;
  return p;
}

TEST(VerifierFeed, Nv12BecomesYuv444WithChromaRepeatedAndTheInt8Offset) {
  // 2x4 NV12: Y 8 bytes, then U V for the two 2x2 blocks.
  tensor_io::InputData data;
  data.bytes = {10, 20, 30, 40, 50, 60, 70, 80, /*block 0*/ 100, 200, /*block 1*/ 0, 255};
  const auto p = image_properties(HB_DNN_IMG_TYPE_NV12, HB_DNN_LAYOUT_NONE, 2, 4);
  const kernels::Tensor t = quantized_model_feed(data, p, DataType::kInt8, {1, 3, 2, 4});
  const auto v = t.values<int8_t>();
  const std::vector<int> expected = {10, 20, 30, 40, 50, 60, 70, 80,        // Y
                                     100, 100, 0, 0, 100, 100, 0, 0,        // U
                                     200, 200, 255, 255, 200, 200, 255, 255};  // V
  ASSERT_EQ(v.size(), expected.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], expected[i] - 128) << "element " << i;
}

TEST(VerifierFeed, RgbNhwcIntoAnNchwUint8Input) {
  tensor_io::InputData data;
  data.bytes = {1, 2, 3, 4, 5, 6};  // 1x2 pixels, RGB interleaved
  const auto p = image_properties(HB_DNN_IMG_TYPE_RGB, HB_DNN_LAYOUT_NHWC, 1, 2);
  const kernels::Tensor nchw = quantized_model_feed(data, p, DataType::kUint8, {1, 3, 1, 2});
  const std::vector<uint8_t> planar(nchw.values<uint8_t>().begin(), nchw.values<uint8_t>().end());
  EXPECT_EQ(planar, (std::vector<uint8_t>{1, 4, 2, 5, 3, 6}));
  const kernels::Tensor nhwc = quantized_model_feed(data, p, DataType::kFloat32, {1, 1, 2, 3});
  EXPECT_EQ(nhwc.values<float>()[1], 2.0f);
  EXPECT_THROW(quantized_model_feed(data, p, DataType::kUint8, {1, 3, 2, 2}), Error);
}

// A featuremap of `type` and shape `dims`, dense.
hbDNNTensorProperties featuremap_properties(int32_t type, std::vector<int32_t> dims) {
  hbDNNTensorProperties p{};
  p.tensorType = type;
  p.tensorLayout = HB_DNN_LAYOUT_NCHW;
  p.validShape.numDimensions = static_cast<int32_t>(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) p.validShape.dimensionSize[d] = dims[d];
  p.alignedShape = p.validShape;
  return p;
}

TEST(VerifierFeed, FeaturemapBytesAreCopiedAndSizesChecked) {
  const hbDNNTensorProperties p = featuremap_properties(HB_DNN_TENSOR_TYPE_F32, {1, 2});
  tensor_io::InputData data;
  const float values[2] = {1.5f, -2.0f};
  data.bytes.assign(reinterpret_cast<const uint8_t*>(values), reinterpret_cast<const uint8_t*>(values) + 8);
  const kernels::Tensor t = quantized_model_feed(data, p, DataType::kFloat32, {1, 2});
  EXPECT_EQ(t.values<float>()[0], 1.5f);
  EXPECT_EQ(t.values<float>()[1], -2.0f);
  EXPECT_THROW(quantized_model_feed(data, p, DataType::kFloat32, {1, 3}), Error);
}

TEST(VerifierOutputs, IntegerOutputsOfTheQuantizedModelTakeTheBinScale) {
  hbDNNTensorProperties p = featuremap_properties(HB_DNN_TENSOR_TYPE_S8, {2});
  p.quantiType = SCALE;
  float scale = 0.5f;
  p.scale.scaleLen = 1;
  p.scale.scaleData = &scale;
  const kernels::Tensor t = kernels::Tensor::from_values<int8_t>({2}, std::vector<int8_t>{-4, 6});
  EXPECT_EQ(tensor_values(t, p), (std::vector<double>{-2.0, 3.0}));
  const kernels::Tensor f = kernels::Tensor::from_values<float>({2}, std::vector<float>{-4, 6});
  EXPECT_EQ(tensor_values(f, p), (std::vector<double>{-4.0, 6.0}));
}

TEST(VerifierBoard, AddressesAndQuoting) {
  std::string host;
  int port = 0;
  split_host_port("board0", 22, &host, &port);
  EXPECT_EQ(host, "board0");
  EXPECT_EQ(port, 22);
  split_host_port("127.77.0.2:2222", 22, &host, &port);
  EXPECT_EQ(host, "127.77.0.2");
  EXPECT_EQ(port, 2222);
  split_host_port("[::1]:2200", 22, &host, &port);
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 2200);
  split_host_port("fe80::1", 22, &host, &port);  // a bare IPv6 address keeps the default port
  EXPECT_EQ(host, "fe80::1");
  EXPECT_THROW(split_host_port("h:0", 22, &host, &port), Error);
  EXPECT_THROW(split_host_port("h:22x", 22, &host, &port), Error);
  EXPECT_THROW(split_host_port(":22", 22, &host, &port), Error);
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
}

TEST(VerifierBoard, AClosedPortIsReportedAsUnreachable) {
  BoardOptions o;
  o.host = "127.0.0.1";
  o.port = 1;  // nothing listens on port 1
  o.key_file = "/nonexistent";
  o.connect_timeout_s = 5;
  try {
    BoardSession session(o);
    FAIL() << "connected to port 1";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unreachable"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("root@127.0.0.1:1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace openbpu::verifier
