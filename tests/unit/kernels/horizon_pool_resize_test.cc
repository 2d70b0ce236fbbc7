// HzSQuantizedGlobalAveragePool, HzSQuantizedReduceMean, HzSQuantizedAveragePool and
// HzQuantizedResizeUpsample: hand-computed cases, differential tests against the float ONNX
// operators on dequantized inputs (within 1 LSB), and validation errors.
#include <cmath>
#include <random>

#include "horizon_test_support.h"

namespace openbpu::kernels::testing {
namespace {

AttributeMap multiplier_attributes(sim::FixedPointMultiplier f) {
  return attributes({{"multiplier", int64_t{f.multiplier}}, {"shift", int64_t{f.shift}}});
}

// Multipliers for window counts 1..taps: input_scale / (count * output_scale).
AttributeMap average_pool_attributes(std::vector<int64_t> kernel, double in_over_out) {
  int64_t taps = 1;
  for (int64_t k : kernel) taps *= k;
  std::vector<sim::FixedPointMultiplier> fs;
  for (int64_t count = 1; count <= taps; ++count) {
    fs.push_back(sim::to_fixed_point(in_over_out / static_cast<double>(count)));
  }
  const auto [m, s] = multiplier_lists(fs);
  return attributes({{"kernel_shape", std::move(kernel)}, {"multipliers", m}, {"shifts", s}});
}

TEST(HzSQuantizedGlobalAveragePool, HandComputed) {
  const Tensor x = make<int8_t>({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -5});
  // sums 10 and -11, times 1/4: 2.5 → 3, -2.75 → -3
  const Tensor y = run_horizon("HzSQuantizedGlobalAveragePool",
                               multiplier_attributes(sim::to_fixed_point(0.25)), {x});
  EXPECT_EQ(y.shape(), (Shape{1, 2, 1, 1}));
  EXPECT_EQ(int_values(y), (std::vector<int64_t>{3, -3}));
}

TEST(HzSQuantizedReduceMean, HandComputedAxesAndKeepdims) {
  const Tensor x = make<int16_t>({2, 3}, {1, 2, 4, -1, -2, -4});
  AttributeMap attrs = multiplier_attributes(sim::to_fixed_point(1.0 / 3));
  attrs.set("axes", std::vector<int64_t>{-1});
  attrs.set("keepdims", int64_t{0});
  const Tensor y = run_horizon("HzSQuantizedReduceMean", attrs, {x});
  EXPECT_EQ(y.shape(), (Shape{2}));
  EXPECT_EQ(int_values(y), (std::vector<int64_t>{2, -2}));  // 7/3 = 2.33, -2.33
  AttributeMap rows = multiplier_attributes(sim::to_fixed_point(0.5));
  rows.set("axes", std::vector<int64_t>{0});
  const Tensor yr = run_horizon("HzSQuantizedReduceMean", rows, {x});
  EXPECT_EQ(yr.shape(), (Shape{1, 3}));
  EXPECT_EQ(int_values(yr), (std::vector<int64_t>{0, 0, 0}));
  const Tensor all =
      run_horizon("HzSQuantizedReduceMean", multiplier_attributes(sim::to_fixed_point(1.0)), {x});
  EXPECT_EQ(all.shape(), (Shape{1, 1}));
  EXPECT_EQ(int_values(all), (std::vector<int64_t>{0}));
}

TEST(HzSQuantizedAveragePool, HandComputedDivisorsWithAndWithoutPadding) {
  const Tensor x = make<int8_t>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  AttributeMap attrs = average_pool_attributes({2, 2}, 1.0);
  attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  attrs.set("strides", std::vector<int64_t>{2, 2});
  // windows: {1} / 1, {2, 3} / 2 = 2.5 → 3, {4, 7} / 2 = 5.5 → 6, {5, 6, 8, 9} / 4 = 7
  EXPECT_EQ(int_values(run_horizon("HzSQuantizedAveragePool", attrs, {x})),
            (std::vector<int64_t>{1, 3, 6, 7}));
  attrs.set("count_include_pad", int64_t{1});
  // every window divides by 4: 0.25 → 0, 1.25 → 1, 2.75 → 3, 7
  EXPECT_EQ(int_values(run_horizon("HzSQuantizedAveragePool", attrs, {x})),
            (std::vector<int64_t>{0, 1, 3, 7}));
}

TEST(HzSQuantizedAveragePools, MatchTheFloatOperatorsWithinOneStep) {
  struct Case {
    Shape x;
    std::vector<int64_t> kernel, strides, pads;
    int64_t ceil_mode, count_include_pad;
    DataType type;
  };
  const DataType i8 = DataType::kInt8, i16 = DataType::kInt16;
  const Case cases[] = {{{2, 3, 9, 10}, {3, 3}, {2, 2}, {1, 1, 1, 1}, 0, 0, i8},
                        {{1, 2, 8, 7}, {2, 3}, {2, 2}, {0, 1, 1, 0}, 1, 1, i16},
                        {{1, 4, 11}, {4}, {3}, {2, 1}, 1, 0, i8},
                        {{1, 2, 5, 5}, {5, 5}, {1, 1}, {0, 0, 0, 0}, 0, 0, i16}};
  uint32_t seed = 1100;
  for (const Case& c : cases) {
    SCOPED_TRACE(str_cat("seed ", seed, " x ", shape_to_string(c.x), " ", dtype_name(c.type),
                         " kernel ", shape_to_string(c.kernel), " strides ",
                         shape_to_string(c.strides), " pads ", shape_to_string(c.pads),
                         " ceil_mode ", c.ceil_mode, " count_include_pad ", c.count_include_pad));
    std::mt19937 rng(seed++);
    const bool int8 = c.type == i8;
    const Tensor x = int8 ? random_ints<int8_t>(c.x, rng, -128, 127)
                          : random_ints<int16_t>(c.x, rng, -32768, 32767);
    const float s_in = int8 ? 0.05f : 0.0002f, s_out = s_in * 0.7f;
    AttributeMap attrs = average_pool_attributes(c.kernel, double(s_in) / s_out);
    attrs.set("strides", c.strides);
    attrs.set("pads", c.pads);
    attrs.set("ceil_mode", c.ceil_mode);
    attrs.set("count_include_pad", c.count_include_pad);
    AttributeMap float_attrs = attrs;
    float_attrs = attributes({{"kernel_shape", c.kernel},
                              {"strides", c.strides},
                              {"pads", c.pads},
                              {"ceil_mode", c.ceil_mode},
                              {"count_include_pad", c.count_include_pad}});
    const Tensor yf = run_op("AveragePool", float_attrs, {dequantized(x, s_in)})[0];
    const Tensor y = run_horizon("HzSQuantizedAveragePool", attrs, {x});
    ASSERT_EQ(y.shape(), yf.shape());
    EXPECT_LE(max_abs_difference(y, quantized_values(yf, s_out, c.type)), 1);

    // Global average and mean over the spatial axes.
    const int64_t count = shape_element_count(c.x) / (c.x[0] * c.x[1]);
    const AttributeMap global =
        multiplier_attributes(sim::to_fixed_point(double(s_in) / (count * double(s_out))));
    const Tensor gf = run_op("GlobalAveragePool", {}, {dequantized(x, s_in)})[0];
    const Tensor g = run_horizon("HzSQuantizedGlobalAveragePool", global, {x});
    ASSERT_EQ(g.shape(), gf.shape());
    EXPECT_LE(max_abs_difference(g, quantized_values(gf, s_out, c.type)), 1);
    AttributeMap mean = global;
    std::vector<int64_t> axes;
    for (size_t a = 2; a < c.x.size(); ++a) axes.push_back(int64_t(a));
    mean.set("axes", axes);
    const Tensor mf =
        run_op("ReduceMean", attributes({{"axes", axes}}), {dequantized(x, s_in)}, 1, 13)[0];
    const Tensor m = run_horizon("HzSQuantizedReduceMean", mean, {x});
    ASSERT_EQ(m.shape(), mf.shape());
    EXPECT_LE(max_abs_difference(m, quantized_values(mf, s_out, c.type)), 1);
  }
}

TEST(HorizonQuantizedPools, RejectInvalidParameters) {
  const AttributeMap one = multiplier_attributes(sim::to_fixed_point(1.0));
  EXPECT_THROW(prepare_horizon("HzSQuantizedGlobalAveragePool", {}, 1), KernelError);
  EXPECT_THROW(
      prepare_horizon("HzSQuantizedGlobalAveragePool",
                      attributes({{"multiplier", int64_t{1 << 30}}, {"shift", int64_t{99}}}), 1),
      KernelError);
  EXPECT_THROW(
      run_horizon("HzSQuantizedGlobalAveragePool", one, {make<int8_t>({2, 2}, {1, 2, 3, 4})}),
      KernelError);  // rank < 3
  EXPECT_THROW(run_horizon("HzSQuantizedGlobalAveragePool", one, {make<float>({1, 1, 1}, {1.0f})}),
               KernelError);  // float input
  AttributeMap bad_axes = one;
  bad_axes.set("axes", std::vector<int64_t>{3});
  EXPECT_THROW(
      run_horizon("HzSQuantizedReduceMean", bad_axes, {make<int8_t>({2, 2}, {1, 2, 3, 4})}),
      KernelError);
  AttributeMap keep = one;
  keep.set("keepdims", int64_t{2});
  EXPECT_THROW(prepare_horizon("HzSQuantizedReduceMean", keep, 1), KernelError);
  AttributeMap short_list = average_pool_attributes({2, 2}, 1.0);
  short_list.set("multipliers", std::vector<int64_t>{1 << 30, 1 << 30, 1 << 30});
  short_list.set("shifts", std::vector<int64_t>{30, 30, 30});
  EXPECT_THROW(prepare_horizon("HzSQuantizedAveragePool", short_list, 1), KernelError);
  AttributeMap ceil = average_pool_attributes({2, 2}, 1.0);
  ceil.set("ceil_mode", int64_t{3});
  EXPECT_THROW(prepare_horizon("HzSQuantizedAveragePool", ceil, 1), KernelError);
  EXPECT_THROW(run_horizon("HzSQuantizedAveragePool", average_pool_attributes({2, 2}, 1.0),
                           {make<int8_t>({1, 1, 4}, {1, 2, 3, 4})}),
               KernelError);  // rank does not match kernel_shape
}

// ---------------------------------------------------------------------------------------------
// HzQuantizedResizeUpsample

AttributeMap resize_attributes(const std::string& mode, const std::string& coordinates,
                               std::vector<int64_t> size, const std::string& nearest = "") {
  AttributeMap attrs = attributes({{"mode", mode},
                                   {"coordinate_transformation_mode", coordinates},
                                   {"output_size", std::move(size)}});
  if (!nearest.empty()) attrs.set("nearest_mode", nearest);
  return attrs;
}

TEST(HzQuantizedResizeUpsample, NearestSelectsWithExactTies) {
  const Tensor x = make<int8_t>({1, 1, 2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(int_values(run_horizon("HzQuantizedResizeUpsample",
                                   resize_attributes("nearest", "half_pixel", {4, 4}), {x})),
            (std::vector<int64_t>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  // asymmetric 2 → 4 along W: coordinates 0, 0.5, 1, 1.5 (exact ties at .5).
  const Tensor row = make<int16_t>({1, 1, 1, 2}, {-5, 7});
  EXPECT_EQ(int_values(run_horizon("HzQuantizedResizeUpsample",
                                   resize_attributes("nearest", "asymmetric", {1, 4}), {row})),
            (std::vector<int64_t>{-5, -5, 7, 7}));
  EXPECT_EQ(int_values(run_horizon(
                "HzQuantizedResizeUpsample",
                resize_attributes("nearest", "asymmetric", {1, 4}, "round_prefer_ceil"), {row})),
            (std::vector<int64_t>{-5, 7, 7, 7}));
}

TEST(HzQuantizedResizeUpsample, LinearUsesTenFractionalBitsAndRoundsHalfUp) {
  // half_pixel 2 → 4: coordinates -0.25 (→ 0), 0.25, 0.75, 1.25 (→ 1); weights 256/1024, 768/1024.
  const Tensor x = make<int8_t>({1, 1, 1, 2}, {0, 10});
  EXPECT_EQ(int_values(run_horizon("HzQuantizedResizeUpsample",
                                   resize_attributes("linear", "half_pixel", {1, 4}), {x})),
            (std::vector<int64_t>{0, 3, 8, 10}));  // 2.5 → 3, 7.5 → 8
  // align_corners 2 → 3 on both axes: the centre is the mean of the four corners.
  const Tensor sq = make<int8_t>({1, 1, 2, 2}, {0, 10, 20, 31});
  EXPECT_EQ(int_values(run_horizon("HzQuantizedResizeUpsample",
                                   resize_attributes("linear", "align_corners", {3, 3}), {sq})),
            (std::vector<int64_t>{0, 5, 10, 10, 15, 21, 20, 26, 31}));  // 15.25, 20.5, 25.5
}

TEST(HzQuantizedResizeUpsample, MatchesTheFloatResizeWithinOneStep) {
  struct Case {
    Shape x;
    std::vector<int64_t> size;
    std::string mode, coordinates;
  };
  const Case cases[] = {{{1, 3, 5, 7}, {10, 14}, "linear", "half_pixel"},
                        {{2, 2, 6, 6}, {12, 18}, "linear", "align_corners"},
                        {{1, 2, 8, 6}, {4, 3}, "linear", "pytorch_half_pixel"},
                        {{1, 2, 5, 4}, {15, 8}, "linear", "asymmetric"},
                        {{1, 3, 5, 7}, {10, 21}, "nearest", "half_pixel"},
                        {{1, 2, 6, 9}, {4, 6}, "nearest", "asymmetric"},
                        {{1, 1, 4, 4}, {8, 12}, "nearest", "tf_half_pixel_for_nn"}};
  uint32_t seed = 1300;
  for (const Case& c : cases) {
    SCOPED_TRACE(str_cat("seed ", seed, " x ", shape_to_string(c.x), " -> ",
                         shape_to_string(c.size), " ", c.mode, " ", c.coordinates));
    std::mt19937 rng(seed++);
    const Tensor x = random_ints<int8_t>(c.x, rng, -128, 127);
    const float s = 0.03f;
    AttributeMap float_attrs =
        attributes({{"mode", c.mode}, {"coordinate_transformation_mode", c.coordinates}});
    const Tensor sizes = make<int64_t>({4}, {c.x[0], c.x[1], c.size[0], c.size[1]});
    const Tensor yf = run_op("Resize", float_attrs,
                             {dequantized(x, s), std::nullopt, std::nullopt, sizes}, 1, 13)[0];
    const Tensor y = run_horizon("HzQuantizedResizeUpsample",
                                 resize_attributes(c.mode, c.coordinates, c.size), {x});
    ASSERT_EQ(y.shape(), yf.shape());
    // Nearest is a pure selection: identical values.
    EXPECT_LE(max_abs_difference(y, quantized_values(yf, s, DataType::kInt8)),
              c.mode == "nearest" ? 0 : 1);
  }
}

TEST(HzQuantizedResizeUpsample, RejectsInvalidAttributesAndInputs) {
  EXPECT_THROW(prepare_horizon("HzQuantizedResizeUpsample",
                               resize_attributes("cubic", "half_pixel", {2, 2}), 1),
               KernelError);
  EXPECT_THROW(prepare_horizon("HzQuantizedResizeUpsample",
                               resize_attributes("linear", "tf_crop_and_resize", {2, 2}), 1),
               KernelError);
  EXPECT_THROW(prepare_horizon("HzQuantizedResizeUpsample",
                               resize_attributes("nearest", "half_pixel", {2, 2}, "up"), 1),
               KernelError);
  EXPECT_THROW(prepare_horizon("HzQuantizedResizeUpsample",
                               resize_attributes("linear", "half_pixel", {2}), 1),
               KernelError);
  EXPECT_THROW(prepare_horizon("HzQuantizedResizeUpsample",
                               resize_attributes("linear", "half_pixel", {0, 2}), 1),
               KernelError);
  EXPECT_THROW(prepare_horizon("HzQuantizedResizeUpsample",
                               attributes({{"mode", std::string("linear")}}), 1),
               KernelError);
  EXPECT_THROW(
      run_horizon("HzQuantizedResizeUpsample", resize_attributes("linear", "half_pixel", {2, 2}),
                  {make<int8_t>({1, 4}, {1, 2, 3, 4})}),
      KernelError);
}

}  // namespace
}  // namespace openbpu::kernels::testing
