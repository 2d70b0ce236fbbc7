// Resize / Upsample. Expected values come from the ONNX backend test data (test_resize_*,
// test_upsample_nearest) or are worked out by hand from the ONNX reference formulas.
#include <optional>
#include <string>
#include <vector>

#include "kernel_test_support.h"

namespace openbpu::kernels::testing {
namespace {

Tensor iota_float(Shape shape, float first = 1.0f) {
  Tensor t(DataType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.element_count(); ++i) t.data<float>()[i] = first + float(i);
  return t;
}

AttributeMap resize_attrs(const std::string& mode, const std::string& coordinates = "") {
  AttributeMap attrs;
  attrs.set("mode", mode);
  if (!coordinates.empty()) attrs.set("coordinate_transformation_mode", coordinates);
  return attrs;
}

Tensor scales(std::vector<float> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return make<float>({n}, std::move(values));
}

Tensor sizes(std::vector<int64_t> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return make<int64_t>({n}, std::move(values));
}

TEST(Resize, NearestUpsampleByScales) {  // test_resize_upsample_scales_nearest
  auto y = run_op("Resize", resize_attrs("nearest"),
                  {iota_float({1, 1, 2, 2}), std::nullopt, scales({1, 1, 2, 3})});
  expect_near(y[0], {1, 1, 4, 6},
              {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});
}

TEST(Resize, LinearDownsampleHalfPixel) {  // test_resize_downsample_scales_linear
  auto y = run_op("Resize", resize_attrs("linear"),
                  {iota_float({1, 1, 2, 4}), std::nullopt, scales({1, 1, 0.6f, 0.6f})});
  expect_near(y[0], {1, 1, 1, 2}, {2.6666665, 4.3333331});
}

TEST(Resize, AlignCornersDividesByUnroundedLength) {
  // test_resize_downsample_scales_linear_align_corners: 4 * 0.6 = 2.4, not 2.
  auto y = run_op("Resize", resize_attrs("linear", "align_corners"),
                  {iota_float({1, 1, 2, 4}), std::nullopt, scales({1, 1, 0.6f, 0.6f})});
  expect_near(y[0], {1, 1, 1, 2}, {1.0, 3.1428571});
}

TEST(Resize, PytorchHalfPixelWithSizes) {  // test_resize_downsample_sizes_linear_pytorch_half_pixel
  auto y = run_op("Resize", resize_attrs("linear", "pytorch_half_pixel"),
                  {iota_float({1, 1, 4, 4}), std::nullopt, std::nullopt, sizes({1, 1, 3, 1})});
  expect_near(y[0], {1, 1, 3, 1}, {1.6666666, 7.0, 12.333333});
}

TEST(Resize, CubicDownsample) {  // test_resize_downsample_scales_cubic
  auto y = run_op("Resize", resize_attrs("cubic"),
                  {iota_float({1, 1, 4, 4}), std::nullopt, scales({1, 1, 0.8f, 0.8f})});
  expect_near(y[0], {1, 1, 3, 3},
              {1.47119140625, 2.78125, 4.08251953125, 6.71142578125, 8.021484375, 9.32275390625,
               11.91650390625, 13.2265625, 14.52783203125},
              1e-4);
}

TEST(Resize, CubicExcludeOutsideRenormalises) {
  // First row of test_resize_upsample_scales_cubic_A_n0p5_exclude_outside.
  AttributeMap attrs = resize_attrs("cubic");
  attrs.set("cubic_coeff_a", -0.5f);
  attrs.set("exclude_outside", int64_t{1});
  auto y = run_op("Resize", attrs, {iota_float({1, 1, 4, 4}), std::nullopt, scales({1, 1, 2, 2})});
  ASSERT_EQ(y[0].shape(), (Shape{1, 1, 8, 8}));
  const std::vector<double> first_row = {0.5588235, 0.8149421, 1.3569825, 1.8970588,
                                         2.3970587, 2.9371352, 3.4791756, 3.7352941};
  for (size_t i = 0; i < first_row.size(); ++i) {
    EXPECT_NEAR(y[0].float_at(static_cast<int64_t>(i)), first_row[i], 1e-5) << i;
  }
}

TEST(Resize, TfCropAndResizeExtrapolates) {  // test_resize_tf_crop_and_resize
  AttributeMap attrs = resize_attrs("linear", "tf_crop_and_resize");
  attrs.set("extrapolation_value", 10.0f);
  auto roi = make<float>({8}, {0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f});
  auto y =
      run_op("Resize", attrs, {iota_float({1, 1, 4, 4}), roi, std::nullopt, sizes({1, 1, 3, 3})});
  expect_near(y[0], {1, 1, 3, 3}, {7.6, 10, 10, 12.4, 10, 10, 10, 10, 10}, 1e-5);
}

TEST(Resize, Opset11TreatsEmptyRoiAndScalesAsAbsent) {
  // test_resize_downsample_sizes_nearest_tf_half_pixel_for_nn (opset 11).
  auto y = run_op("Resize", resize_attrs("nearest", "tf_half_pixel_for_nn"),
                  {iota_float({1, 1, 4, 4}), Tensor(DataType::kFloat32, {0}),
                   Tensor(DataType::kFloat32, {0}), sizes({1, 1, 3, 2})},
                  1, 11);
  expect_near(y[0], {1, 1, 3, 2}, {6, 8, 10, 12, 14, 16});
}

TEST(Resize, NearestModes) {
  // asymmetric 1-D upsample of [10, 20, 30] by 4: x = o / 4 = 0, .25, .5, ..., 2.75.
  auto run_mode = [](const std::string& nearest_mode) {
    AttributeMap attrs = resize_attrs("nearest", "asymmetric");
    attrs.set("nearest_mode", nearest_mode);
    auto y = run_op("Resize", attrs,
                    {make<float>({3}, {10, 20, 30}), std::nullopt, std::nullopt, sizes({12})});
    std::vector<int64_t> v;
    for (int64_t i = 0; i < y[0].element_count(); ++i) v.push_back(int64_t(y[0].float_at(i)));
    return v;
  };
  using V = std::vector<int64_t>;
  EXPECT_EQ(run_mode("floor"), (V{10, 10, 10, 10, 20, 20, 20, 20, 30, 30, 30, 30}));
  EXPECT_EQ(run_mode("ceil"), (V{10, 20, 20, 20, 20, 30, 30, 30, 30, 30, 30, 30}));
  EXPECT_EQ(run_mode("round_prefer_floor"), (V{10, 10, 10, 20, 20, 20, 20, 30, 30, 30, 30, 30}));
  EXPECT_EQ(run_mode("round_prefer_ceil"), (V{10, 10, 20, 20, 20, 20, 30, 30, 30, 30, 30, 30}));
}

TEST(Resize, AntialiasWidensLinearFilterWhenDownsampling) {
  // scale 0.5: taps at offsets -1..2 with weights (1 - |0.5 (k - 0.5)|) / 2 =
  // 0.125, 0.375, 0.375, 0.125; edges clamp.
  AttributeMap attrs = resize_attrs("linear");
  attrs.set("antialias", int64_t{1});
  auto y = run_op("Resize", attrs, {iota_float({1, 4}), std::nullopt, scales({1, 0.5f})}, 1, 18);
  expect_near(y[0], {1, 2}, {1.625, 3.375});
}

TEST(Resize, AxesAttributeLimitsResizedAxes) {
  AttributeMap attrs = resize_attrs("nearest");
  attrs.set("axes", std::vector<int64_t>{-1});
  auto y = run_op("Resize", attrs, {iota_float({2, 2}), std::nullopt, scales({2})}, 1, 18);
  expect_near(y[0], {2, 4}, {1, 1, 2, 2, 3, 3, 4, 4});
}

TEST(Resize, KeepAspectRatioNotLarger) {
  AttributeMap attrs = resize_attrs("nearest");
  attrs.set("keep_aspect_ratio_policy", std::string("not_larger"));
  attrs.set("axes", std::vector<int64_t>{2, 3});
  // scale = min(3/2, 3/4) = 0.75 → sizes round(1.5) = 2, round(3) = 3.
  auto y = run_op("Resize", attrs,
                  {iota_float({1, 1, 2, 4}), std::nullopt, std::nullopt, sizes({3, 3})}, 1, 18);
  EXPECT_EQ(y[0].shape(), (Shape{1, 1, 2, 3}));
}

TEST(Resize, LinearOnIntegersRounds) {
  auto y = run_op("Resize", resize_attrs("linear", "align_corners"),
                  {make<uint8_t>({1, 2}, {0, 255}), std::nullopt, std::nullopt, sizes({1, 4})});
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{0, 85, 170, 255}));
}

TEST(Resize, ThreadedMatchesSingleThreaded) {
  Tensor x(DataType::kFloat32, {1, 3, 37, 53});
  for (int64_t i = 0; i < x.element_count(); ++i) x.data<float>()[i] = float((i * 7919) % 101);
  ThreadPool pool(3);
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    auto one = run_op("Resize", resize_attrs(mode), {x, std::nullopt, scales({1, 1, 2.5f, 0.7f})});
    auto many = run_op("Resize", resize_attrs(mode), {x, std::nullopt, scales({1, 1, 2.5f, 0.7f})},
                       1, 17, &pool);
    ASSERT_EQ(one[0].shape(), (Shape{1, 3, 92, 37}));
    for (int64_t i = 0; i < one[0].element_count(); ++i) {
      ASSERT_EQ(one[0].float_at(i), many[0].float_at(i)) << mode << " element " << i;
    }
  }
}

TEST(Upsample, Opset7ScalesAttribute) {
  AttributeMap attrs;
  attrs.set("mode", std::string("nearest"));
  attrs.set("scales", std::vector<float>{1, 1, 2, 3});
  auto y = run_op("Upsample", attrs, {iota_float({1, 1, 2, 2})}, 1, 7);
  expect_near(y[0], {1, 1, 4, 6},
              {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});
}

TEST(Upsample, Opset9ScalesInputLinearIsAsymmetric) {
  AttributeMap attrs;
  attrs.set("mode", std::string("linear"));
  auto y = run_op("Upsample", attrs, {make<float>({1, 2}, {0, 4}), scales({1, 2})}, 1, 9);
  expect_near(y[0], {1, 4}, {0, 2, 4, 4});
}

TEST(Resize, RejectsBadInputs) {
  const Tensor x = iota_float({1, 1, 2, 2});
  // Both scales and sizes.
  EXPECT_THROW(run_op("Resize", resize_attrs("nearest"),
                      {x, std::nullopt, scales({1, 1, 2, 2}), sizes({1, 1, 4, 4})}),
               KernelError);
  // Neither.
  EXPECT_THROW(run_op("Resize", resize_attrs("nearest"), {x, std::nullopt, std::nullopt}),
               KernelError);
  // Wrong number of scales, non-positive scale.
  EXPECT_THROW(run_op("Resize", resize_attrs("nearest"), {x, std::nullopt, scales({2, 2})}),
               KernelError);
  EXPECT_THROW(run_op("Resize", resize_attrs("nearest"), {x, std::nullopt, scales({1, 1, 0, 2})}),
               KernelError);
  // Unknown mode / coordinate mode, cubic before opset 11.
  EXPECT_THROW(run_op("Resize", resize_attrs("area"), {x, std::nullopt, scales({1, 1, 2, 2})}),
               KernelError);
  EXPECT_THROW(
      run_op("Resize", resize_attrs("linear", "corners"), {x, std::nullopt, scales({1, 1, 2, 2})}),
      KernelError);
  EXPECT_THROW(run_op("Resize", resize_attrs("cubic"), {x, scales({1, 1, 2, 2})}, 1, 10),
               KernelError);
  // tf_crop_and_resize with a roi of the wrong length.
  EXPECT_THROW(run_op("Resize", resize_attrs("linear", "tf_crop_and_resize"),
                      {x, make<float>({2}, {0, 1}), std::nullopt, sizes({1, 1, 3, 3})}),
               KernelError);
  // Linear on bool (make<bool> cannot take a std::vector<bool>, so fill by hand).
  Tensor flags(DataType::kBool, {2});
  flags.data<bool>()[0] = true;
  EXPECT_THROW(run_op("Resize", resize_attrs("linear"), {flags, std::nullopt, scales({2})}),
               KernelError);
}

}  // namespace
}  // namespace openbpu::kernels::testing
