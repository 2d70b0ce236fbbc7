// GridSample, RoiAlign, NonMaxSuppression. Expected values from the ONNX backend test data
// (test_gridsample_*, test_nonmaxsuppression_*) or worked out by hand.
#include <optional>
#include <string>
#include <vector>

#include "kernel_test_support.h"

namespace openbpu::kernels::testing {
namespace {

// The 1x1x3x2 image and 1x2x4x2 grid of several test_gridsample_* cases.
const Tensor kImage = make<float>({1, 1, 3, 2}, {0, 1, 2, 3, 4, 5});
const Tensor kGrid = make<float>(
    {1, 2, 4, 2}, {-1, -1, -0.5f, -0.5f, -0.2f, -0.2f, 0, 0, 0, 0, -0.2f, -0.2f, 0.5f, 0.5f, 1, 1});
const Tensor kFarGrid = make<float>(
    {1, 2, 4, 2}, {-10, -10, -5, -5, -0.2f, -0.2f, 10, 10, 10, 10, -0.2f, -0.2f, 5, 5, 10, 10});

AttributeMap grid_attrs(const std::string& mode, const std::string& padding = "zeros",
                        int64_t align_corners = 0) {
  AttributeMap attrs;
  attrs.set("mode", mode);
  attrs.set("padding_mode", padding);
  attrs.set("align_corners", align_corners);
  return attrs;
}

TEST(GridSample, Nearest) {  // test_gridsample_nearest (halves round to even)
  auto y = run_op("GridSample", grid_attrs("nearest"), {kImage, kGrid});
  expect_near(y[0], {1, 1, 2, 4}, {0, 0, 2, 2, 2, 2, 5, 0});
}

TEST(GridSample, Bicubic) {  // test_gridsample_bicubic
  auto y = run_op("GridSample", grid_attrs("bicubic"), {kImage, kGrid});
  expect_near(y[0], {1, 1, 2, 4}, {-0.1406, 0.3828, 1.7556, 2.9688, 2.9688, 1.7556, 5.1445, 1.3906},
              1e-4);
}

TEST(GridSample, BorderPadding) {  // test_gridsample_border_padding
  auto y = run_op("GridSample", grid_attrs("bilinear", "border"), {kImage, kFarGrid});
  expect_near(y[0], {1, 1, 2, 4}, {0, 0, 1.7, 5, 5, 1.7, 5, 5}, 1e-5);
}

TEST(GridSample, ReflectionPadding) {  // test_gridsample_reflection_padding
  auto y = run_op("GridSample", grid_attrs("bilinear", "reflection"), {kImage, kFarGrid});
  expect_near(y[0], {1, 1, 2, 4}, {2.5, 0, 1.7, 2.5, 2.5, 1.7, 5, 2.5}, 1e-5);
}

TEST(GridSample, AlignCornersMapsExtremesToCorners) {
  auto grid = make<float>({1, 1, 2, 2}, {-1, -1, 1, 1});
  auto y = run_op("GridSample", grid_attrs("bilinear", "zeros", 1), {kImage, grid});
  expect_near(y[0], {1, 1, 1, 2}, {0, 5});
}

TEST(GridSample, RejectsBadShapes) {
  EXPECT_THROW(run_op("GridSample", grid_attrs("bilinear"),
                      {kImage, make<float>({1, 2, 2, 3}, std::vector<float>(12, 0))}),
               KernelError);
  EXPECT_THROW(run_op("GridSample", grid_attrs("bilinear"),
                      {kImage, make<float>({2, 1, 1, 2}, {0, 0, 0, 0})}),
               KernelError);
  EXPECT_THROW(run_op("GridSample", grid_attrs("area"), {kImage, kGrid}), KernelError);
  EXPECT_THROW(run_op("GridSample", grid_attrs("bilinear", "mirror"), {kImage, kGrid}),
               KernelError);
}

// A 4x4 map with value 10 y + x: bilinear sampling of a linear function is exact, so the
// average over a bin is the value at the centre of its samples.
Tensor linear_map() {
  std::vector<float> v;
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 4; ++x) v.push_back(float(10 * y + x));
  }
  return make<float>({1, 1, 4, 4}, v);
}

AttributeMap roi_attrs(const std::string& ctm, int64_t sampling_ratio) {
  AttributeMap attrs;
  attrs.set("coordinate_transformation_mode", ctm);
  attrs.set("sampling_ratio", sampling_ratio);
  return attrs;
}

TEST(RoiAlign, AverageHalfPixelAndOutputHalfPixel) {
  const auto rois = make<float>({1, 4}, {0, 0, 3, 3});
  const auto batch = make<int64_t>({1}, {0});
  // output_half_pixel: samples at 0.75 and 2.25 → centre 1.5.
  auto y = run_op("RoiAlign", roi_attrs("output_half_pixel", 2), {linear_map(), rois, batch});
  expect_near(y[0], {1, 1, 1, 1}, {16.5});
  // half_pixel shifts the region by -0.5 → centre 1.0.
  y = run_op("RoiAlign", roi_attrs("half_pixel", 2), {linear_map(), rois, batch});
  expect_near(y[0], {1, 1, 1, 1}, {11.0});
  // Opset 10 has no attribute and behaves as output_half_pixel.
  AttributeMap legacy;
  legacy.set("sampling_ratio", int64_t{2});
  y = run_op("RoiAlign", legacy, {linear_map(), rois, batch}, 1, 10);
  expect_near(y[0], {1, 1, 1, 1}, {16.5});
}

TEST(RoiAlign, MaxModeTakesMaxOfWeightedCorners) {
  // One sample at (1.5, 1.5): corner weights 0.25 → max(0.25 * {11, 12, 21, 22}) = 5.5, as in
  // the ONNX reference and onnxruntime.
  AttributeMap attrs = roi_attrs("output_half_pixel", 1);
  attrs.set("mode", std::string("max"));
  auto y = run_op("RoiAlign", attrs,
                  {linear_map(), make<float>({1, 4}, {1, 1, 2, 2}), make<int64_t>({1}, {0})});
  expect_near(y[0], {1, 1, 1, 1}, {5.5});
}

TEST(RoiAlign, RejectsBadBatchIndexAndShapes) {
  EXPECT_THROW(run_op("RoiAlign", roi_attrs("half_pixel", 2),
                      {linear_map(), make<float>({1, 4}, {0, 0, 3, 3}), make<int64_t>({1}, {1})}),
               KernelError);
  EXPECT_THROW(run_op("RoiAlign", roi_attrs("half_pixel", 2),
                      {linear_map(), make<float>({1, 3}, {0, 0, 3}), make<int64_t>({1}, {0})}),
               KernelError);
  EXPECT_THROW(run_op("RoiAlign", roi_attrs("pixel", 2),
                      {linear_map(), make<float>({1, 4}, {0, 0, 3, 3}), make<int64_t>({1}, {0})}),
               KernelError);
}

// Boxes and scores of test_nonmaxsuppression_suppress_by_IOU.
const Tensor kBoxes = make<float>({1, 6, 4}, {0, 0,  1, 1,  0, 0.1f,  1, 1.1f,  0, -0.1f, 1, 0.9f,
                                              0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100,   1, 101});
const Tensor kScores = make<float>({1, 1, 6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f});

std::vector<std::optional<Tensor>> nms_inputs(const Tensor& boxes, int64_t max_boxes, float iou,
                                              std::optional<float> score) {
  std::vector<std::optional<Tensor>> in = {boxes, kScores, make<int64_t>({1}, {max_boxes}),
                                           make<float>({1}, {iou})};
  if (score) in.push_back(make<float>({1}, {*score}));
  return in;
}

TEST(NonMaxSuppression, SuppressByIou) {
  auto y = run_op("NonMaxSuppression", {}, nms_inputs(kBoxes, 3, 0.5f, 0.0f));
  EXPECT_EQ(y[0].shape(), (Shape{3, 3}));
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
}

TEST(NonMaxSuppression, LimitsOutputAndAppliesScoreThreshold) {
  auto y = run_op("NonMaxSuppression", {}, nms_inputs(kBoxes, 2, 0.5f, std::nullopt));
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{0, 0, 3, 0, 0, 0}));
  y = run_op("NonMaxSuppression", {}, nms_inputs(kBoxes, 3, 0.5f, 0.4f));
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{0, 0, 3, 0, 0, 0}));
  // Without max_output_boxes_per_class nothing is selected.
  y = run_op("NonMaxSuppression", {}, {kBoxes, kScores});
  EXPECT_EQ(y[0].shape(), (Shape{0, 3}));
}

TEST(NonMaxSuppression, CenterPointBoxFormat) {  // test_nonmaxsuppression_center_point_box_format
  const auto centers =
      make<float>({1, 6, 4}, {0.5f, 0.5f,  1, 1, 0.5f, 0.6f,  1, 1, 0.5f, 0.4f,   1, 1,
                              0.5f, 10.5f, 1, 1, 0.5f, 10.6f, 1, 1, 0.5f, 100.5f, 1, 1});
  AttributeMap attrs;
  attrs.set("center_point_box", int64_t{1});
  auto y = run_op("NonMaxSuppression", attrs, nms_inputs(centers, 3, 0.5f, 0.0f));
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
}

TEST(NonMaxSuppression, RejectsBadInputs) {
  EXPECT_THROW(run_op("NonMaxSuppression", {}, nms_inputs(kBoxes, 3, 1.5f, 0.0f)), KernelError);
  EXPECT_THROW(
      run_op("NonMaxSuppression", {},
             {make<float>({1, 6, 3}, std::vector<float>(18, 0)), kScores, make<int64_t>({1}, {3})}),
      KernelError);
  AttributeMap attrs;
  attrs.set("center_point_box", int64_t{2});
  EXPECT_THROW(run_op("NonMaxSuppression", attrs, {kBoxes, kScores}), KernelError);
}

}  // namespace
}  // namespace openbpu::kernels::testing
