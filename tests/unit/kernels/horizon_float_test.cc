// HzPreprocess, HzCalibration, Quantize and Dequantize (domain horizon): hand-computed cases and
// validation errors.
#include "horizon_test_support.h"

namespace openbpu::kernels::testing {
namespace {

AttributeMap preprocess_attributes(const std::string& rt, const std::string& train,
                                   const std::string& layout = "NCHW") {
  return attributes({{"input_type_rt", rt}, {"input_type_train", train}, {"input_layout", layout}});
}

TEST(HzPreprocess, RgbToBgrWithMeanAndScaleInBothLayouts) {
  // Pixels (R, G, B) = (0, 128, 138) and (255, 128, 118), stored as value - 128.
  AttributeMap attrs = preprocess_attributes("rgb", "bgr");
  attrs.set("mean", std::vector<float>{1, 2, 3});  // per bgr channel
  attrs.set("scale", std::vector<float>{0.5f, 1, 2});
  const std::vector<double> want = {68.5, 58.5, 126, 126, -6, 504};  // B, G, R planes
  const Tensor nchw = make<int8_t>({1, 3, 1, 2}, {-128, 127, 0, 0, 10, -10});
  expect_near(run_horizon("HzPreprocess", attrs, {nchw}), {1, 3, 1, 2}, want);
  attrs.set("input_layout", std::string("NHWC"));
  const Tensor nhwc = make<int8_t>({1, 1, 2, 3}, {-128, 0, 10, 127, 0, -10});
  expect_near(run_horizon("HzPreprocess", attrs, {nhwc}), {1, 1, 2, 3},
              {68.5, 126, -6, 58.5, 126, 504});
}

TEST(HzPreprocess, Bt601FullAndVideoRangeYuvToRgb) {
  // (Y, U, V) = (100, 128, 128) is grey 100; (76, 85, 255) by the BT.601 full-range formulas.
  const Tensor x = make<int8_t>({1, 3, 1, 2}, {-28, -52, 0, -43, 0, 127});
  const double r = 76 + 1.402 * 127, g = 76 - 0.344136 * -43 - 0.714136 * 127, b = 76 + 1.772 * -43;
  expect_near(run_horizon("HzPreprocess", preprocess_attributes("nv12", "rgb"), {x}), {1, 3, 1, 2},
              {100, r, 100, g, 100, b}, 1e-4);
  expect_near(run_horizon("HzPreprocess", preprocess_attributes("yuv444", "bgr"), {x}),
              {1, 3, 1, 2}, {100, b, 100, g, 100, r}, 1e-4);
  expect_near(run_horizon("HzPreprocess", preprocess_attributes("yuv444", "yuv444"), {x}),
              {1, 3, 1, 2}, {100, 76, 128, 85, 128, 255}, 1e-4);
  // Video range: Y 16 → 0 and 235 → 255; U = V = 128 stay neutral.
  AttributeMap video = preprocess_attributes("nv12", "rgb");
  video.set("color_range", std::string("video"));
  const Tensor v = make<int8_t>({1, 3, 1, 2}, {-112, 107, 0, 0, 0, 0});
  expect_near(run_horizon("HzPreprocess", video, {v}), {1, 3, 1, 2}, {0, 255, 0, 255, 0, 255},
              1e-4);
}

TEST(HzPreprocess, GrayAndFeaturemap) {
  AttributeMap gray = preprocess_attributes("gray", "gray");
  gray.set("mean", std::vector<float>{128});
  gray.set("scale", std::vector<float>{1.0f / 128});
  expect_near(run_horizon("HzPreprocess", gray, {make<int8_t>({1, 1, 1, 3}, {-128, 0, 127})}),
              {1, 1, 1, 3}, {-1, 0, 127.0 / 128});
  // featuremap: no +128; per-channel along axis 1 (NCHW) or the last axis (NHWC).
  AttributeMap fm = preprocess_attributes("featuremap", "featuremap");
  fm.set("mean", std::vector<float>{1, 2});
  fm.set("scale", std::vector<float>{10, 100});
  expect_near(run_horizon("HzPreprocess", fm, {make<float>({1, 2, 2}, {1, 2, 3, 4})}), {1, 2, 2},
              {0, 10, 100, 200});
  fm.set("input_layout", std::string("NHWC"));
  expect_near(run_horizon("HzPreprocess", fm, {make<float>({1, 2, 2}, {1, 2, 3, 4})}), {1, 2, 2},
              {0, 0, 20, 200});
  expect_near(run_horizon("HzPreprocess", preprocess_attributes("featuremap", "featuremap"),
                          {make<float>({3}, {1.5f, -2, 0})}),
              {3}, {1.5, -2, 0});
}

TEST(HzPreprocess, RejectsInvalidConversionsAndInputs) {
  EXPECT_THROW(prepare_horizon("HzPreprocess", preprocess_attributes("rgb", "yuv444"), 1),
               KernelError);
  EXPECT_THROW(prepare_horizon("HzPreprocess", preprocess_attributes("gray", "rgb"), 1),
               KernelError);
  EXPECT_THROW(prepare_horizon("HzPreprocess", preprocess_attributes("rgb", "featuremap"), 1),
               KernelError);
  EXPECT_THROW(prepare_horizon("HzPreprocess", preprocess_attributes("nv21", "rgb"), 1),
               KernelError);
  EXPECT_THROW(prepare_horizon("HzPreprocess", preprocess_attributes("rgb", "bgr", "NCWH"), 1),
               KernelError);
  AttributeMap video = preprocess_attributes("rgb", "rgb");
  video.set("color_range", std::string("video"));
  EXPECT_THROW(prepare_horizon("HzPreprocess", video, 1), KernelError);
  AttributeMap two_means = preprocess_attributes("rgb", "rgb");
  two_means.set("mean", std::vector<float>{1, 2});
  EXPECT_THROW(prepare_horizon("HzPreprocess", two_means, 1), KernelError);
  const AttributeMap rgb = preprocess_attributes("rgb", "rgb");
  EXPECT_THROW(run_horizon("HzPreprocess", rgb, {make<float>({1, 3, 1, 1}, {0, 0, 0})}),
               KernelError);  // an image input is int8
  EXPECT_THROW(run_horizon("HzPreprocess", rgb, {make<int8_t>({1, 2, 1, 1}, {0, 0})}),
               KernelError);  // 2 channels
  EXPECT_THROW(run_horizon("HzPreprocess", preprocess_attributes("featuremap", "featuremap"),
                           {make<int8_t>({1}, {0})}),
               KernelError);  // featuremap is float32
}

TEST(HzCalibration, FakeQuantizesPerTensorPerChannelAnd16Bit) {
  // threshold 63.5 → scale 0.5; x / s = 0.5 → 0, 1.5 → 2, -2.5 → -2 (half to even), saturation.
  const Tensor x = make<float>({5}, {0.25f, 0.75f, -1.25f, 100, -100});
  const AttributeMap attrs = attributes({{"thresholds", std::vector<float>{63.5f}}});
  expect_near(run_horizon("HzCalibration", attrs, {x}), {5}, {0, 1, -1, 63.5, -64}, 0);
  // Per channel along axis 1: scales 0.5 and 1.
  AttributeMap per_channel = attributes(
      {{"thresholds", std::vector<float>{63.5f, 127}}, {"kind", std::string("activation")}});
  expect_near(run_horizon("HzCalibration", per_channel,
                          {make<float>({1, 2, 2}, {0.75f, 0.3f, 0.75f, 1.5f})}),
              {1, 2, 2}, {1, 0.5, 1, 2}, 0);
  // Weights default to axis 0.
  AttributeMap weights =
      attributes({{"thresholds", std::vector<float>{63.5f, 127}}, {"kind", std::string("weight")}});
  expect_near(
      run_horizon("HzCalibration", weights, {make<float>({2, 2}, {0.75f, 0.3f, 0.75f, 1.5f})}),
      {2, 2}, {1, 0.5, 1, 2}, 0);
  // 16 bits: threshold 32767 → scale 1.
  AttributeMap bits16 =
      attributes({{"thresholds", std::vector<float>{32767}}, {"bits", int64_t{16}}});
  expect_near(run_horizon("HzCalibration", bits16, {make<float>({3}, {1.5f, 2.5f, 40000})}), {3},
              {2, 2, 32767}, 0);
  // Disabled: x passes through unchanged.
  AttributeMap off = attrs;
  off.set("enabled", int64_t{0});
  expect_near(run_horizon("HzCalibration", off, {x}), {5}, {0.25, 0.75, -1.25, 100, -100}, 0);
}

TEST(HzCalibration, RejectsInvalidParameters) {
  EXPECT_THROW(prepare_horizon("HzCalibration", {}, 1), KernelError);  // thresholds required
  EXPECT_THROW(
      prepare_horizon("HzCalibration", attributes({{"thresholds", std::vector<float>{-1}}}), 1),
      KernelError);
  EXPECT_THROW(
      prepare_horizon("HzCalibration",
                      attributes({{"thresholds", std::vector<float>{1}}, {"bits", int64_t{4}}}), 1),
      KernelError);
  EXPECT_THROW(
      prepare_horizon(
          "HzCalibration",
          attributes({{"thresholds", std::vector<float>{1}}, {"kind", std::string("bias")}}), 1),
      KernelError);
  EXPECT_THROW(
      run_horizon("HzCalibration", attributes({{"thresholds", std::vector<float>{1, 2, 3}}}),
                  {make<float>({1, 2}, {1, 2})}),
      KernelError);  // 3 thresholds, axis 1 has 2 entries
}

TEST(HzQuantizeDequantize, BorderConversions) {
  const Tensor x = make<float>({4}, {0.25f, 0.75f, 1000, -1.25f});
  const Tensor q8 = run_horizon("Quantize", attributes({{"scale", 0.5f}}), {x});
  EXPECT_EQ(q8.dtype(), DataType::kInt8);
  EXPECT_EQ(int_values(q8), (std::vector<int64_t>{0, 2, 127, -2}));
  const Tensor q16 =
      run_horizon("Quantize", attributes({{"scale", 0.5f}, {"bits", int64_t{16}}}), {x});
  EXPECT_EQ(q16.dtype(), DataType::kInt16);
  EXPECT_EQ(int_values(q16), (std::vector<int64_t>{0, 2, 2000, -2}));

  expect_near(run_horizon("Dequantize", attributes({{"scales", std::vector<float>{0.5f}}}), {q8}),
              {4}, {0, 1, 63.5, -1}, 0);
  // Per channel along axis 1 of an int32 tensor.
  expect_near(run_horizon("Dequantize", attributes({{"scales", std::vector<float>{0.5f, 0.25f}}}),
                          {make<int32_t>({1, 2, 2}, {2, -4, 8, 100000})}),
              {1, 2, 2}, {1, -2, 2, 25000}, 0);
  expect_near(run_horizon("Dequantize",
                          attributes({{"scales", std::vector<float>{1, 2}}, {"axis", int64_t{-1}}}),
                          {make<int16_t>({2, 2}, {1, 1, 1, 1})}),
              {2, 2}, {1, 2, 1, 2}, 0);
  // Runs of one channel (inner 2) repeating over an outer axis.
  expect_near(run_horizon("Dequantize", attributes({{"scales", std::vector<float>{0.5f, 0.25f}}}),
                          {make<int8_t>({2, 2, 2}, {2, 4, 8, 16, -2, -4, -8, -16})}),
              {2, 2, 2}, {1, 2, 2, 4, -1, -2, -2, -4}, 0);
}

TEST(HzQuantizeDequantize, RejectInvalidParameters) {
  EXPECT_THROW(prepare_horizon("Quantize", {}, 1), KernelError);
  EXPECT_THROW(prepare_horizon("Quantize", attributes({{"scale", 0.0f}}), 1), KernelError);
  EXPECT_THROW(prepare_horizon("Quantize", attributes({{"scale", 1.0f}, {"bits", int64_t{32}}}), 1),
               KernelError);
  EXPECT_THROW(run_horizon("Quantize", attributes({{"scale", 1.0f}}), {make<int8_t>({1}, {1})}),
               KernelError);
  EXPECT_THROW(prepare_horizon("Dequantize", attributes({{"scales", std::vector<float>{}}}), 1),
               KernelError);
  EXPECT_THROW(prepare_horizon("Dequantize", attributes({{"scales", std::vector<float>{-1}}}), 1),
               KernelError);
  EXPECT_THROW(run_horizon("Dequantize", attributes({{"scales", std::vector<float>{1, 2, 3}}}),
                           {make<int8_t>({1, 2}, {1, 2})}),
               KernelError);
  EXPECT_THROW(run_horizon("Dequantize", attributes({{"scales", std::vector<float>{1}}}),
                           {make<float>({1}, {1})}),
               KernelError);
}

}  // namespace
}  // namespace openbpu::kernels::testing
