// HzSQuantizedConv and HzSQuantizedConvTranspose: hand-computed cases, the float Conv /
// ConvTranspose as a differential reference (within 1 LSB), the optimized integer path against
// the reference loop (bit for bit, random shapes, thread counts), the exact integer GEMM, and the
// errors of attribute and operand validation.
#include <algorithm>
#include <cmath>
#include <random>

#include "horizon_test_support.h"
#include "openbpu/kernels/convolution.h"
#include "openbpu/kernels/integer_gemm.h"
#include "openbpu/kernels/quantized_convolution.h"

namespace openbpu::kernels::testing {
namespace {

constexpr int32_t kHalf = 1 << 30;  // {kHalf, 31} = 0.5, {kHalf, 30} = 1.0, {kHalf, 29} = 2.0

AttributeMap conv_attributes(std::vector<int64_t> multipliers, std::vector<int64_t> shifts,
                             std::string output_type = "int8") {
  return attributes({{"output_type", std::move(output_type)},
                     {"multipliers", std::move(multipliers)},
                     {"shifts", std::move(shifts)}});
}

TEST(HzSQuantizedConv, HandComputedWithRoundingHalfUp) {
  const Tensor x = make<int8_t>({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor w = make<int8_t>({2, 1, 2, 2}, {1, -1, 2, 0, -1, 1, -2, 0});
  const Tensor b = make<int32_t>({2}, {10, -10});
  // acc = ±(10 + 1 - 2 + 6) = ±15; times 0.5 = ±7.5 rounds half up to 8 and -7.
  const Tensor y =
      run_horizon("HzSQuantizedConv", conv_attributes({kHalf, kHalf}, {31, 31}), {x, w, b});
  EXPECT_EQ(y.dtype(), DataType::kInt8);
  EXPECT_EQ(y.shape(), (Shape{1, 2, 1, 1}));
  EXPECT_EQ(int_values(y), (std::vector<int64_t>{8, -7}));

  AttributeMap clamped = conv_attributes({kHalf, kHalf}, {31, 31});
  clamped.set("clip_min", int64_t{-3});
  clamped.set("clip_max", int64_t{5});
  EXPECT_EQ(int_values(run_horizon("HzSQuantizedConv", clamped, {x, w, b})),
            (std::vector<int64_t>{5, -3}));

  const Tensor y32 = run_horizon("HzSQuantizedConv",
                                 attributes({{"output_type", std::string("int32")}}), {x, w, b});
  EXPECT_EQ(y32.dtype(), DataType::kInt32);
  EXPECT_EQ(int_values(y32), (std::vector<int64_t>{15, -15}));

  AttributeMap relu32 = attributes({{"output_type", std::string("int32")}});
  relu32.set("clip_min", int64_t{0});
  EXPECT_EQ(int_values(run_horizon("HzSQuantizedConv", relu32, {x, w, b})),
            (std::vector<int64_t>{15, 0}));
}

// Constant weights are packed once for the GEMM (dense, grouped, 3-D); a run given other
// weights of the same shape uses those. Results equal a kernel that packs on every run.
TEST(HzSQuantizedConv, ConstantWeightsArePackedOnceAndOnlyUsedForThatStorage) {
  std::mt19937 rng(32);
  struct Case {
    Shape x, w;
    int64_t group;
  };
  for (const Case& c : {Case{{1, 6, 9, 11}, {8, 3, 3, 3}, 2}, Case{{1, 5, 7, 7}, {4, 5, 1, 1}, 1},
                        Case{{1, 4, 3, 5, 6}, {3, 4, 2, 2, 2}, 1}}) {
    const Tensor x = random_ints<int16_t>(c.x, rng, -32768, 32767);
    const Tensor w = random_ints<int8_t>(c.w, rng, -128, 127);
    const Tensor other = random_ints<int8_t>(c.w, rng, -128, 127);
    const auto [multipliers, shifts] = multiplier_lists(std::vector<sim::FixedPointMultiplier>(
        size_t(c.w[0]), sim::to_fixed_point(1.0 / 3000)));
    AttributeMap attrs = conv_attributes(multipliers, shifts, "int16");
    attrs.set("group", c.group);
    const Tensor* constants[] = {nullptr, &w};
    NodeInfo with{"conv", "HzSQuantizedConv", "horizon", 1, attrs, 2, 1};
    with.constant_inputs = constants;
    const NodeInfo without{"conv", "HzSQuantizedConv", "horizon", 1, attrs, 2, 1};
    for (const Tensor* weights : {&w, &other}) {
      ThreadPool pool(2);
      EXPECT_EQ(int_values(run_node(with, {x, *weights}, 1, &pool)[0]),
                int_values(run_node(without, {x, *weights}, 1)[0]))
          << shape_to_string(c.w) << (weights == &w ? ": the constant weights" : ": other weights");
    }
  }
}

TEST(HzSQuantizedConv, PaddingAndResidual) {
  const Tensor x = make<int8_t>({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor w = make<int8_t>({1, 1, 2, 2}, {1, 1, 1, 1});
  AttributeMap attrs = conv_attributes({kHalf}, {30});  // times 1.0
  attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  EXPECT_EQ(int_values(run_horizon("HzSQuantizedConv", attrs, {x, w, std::nullopt})),
            (std::vector<int64_t>{1, 3, 2, 4, 10, 6, 3, 7, 4}));

  // r * 1.5 added to the accumulator before the output multiplier 0.5:
  // acc = 10 + round_half_up(r * 1.5); r = -7 → -10.5 → -10 → 0; r = 5 → 7.5 → 8 → 18 → 9.
  const Tensor x1 = make<int8_t>({2, 1, 2, 2}, {1, 2, 3, 4, 1, 2, 3, 4});
  AttributeMap res = conv_attributes({kHalf}, {31});
  res.set("residual_multipliers", std::vector<int64_t>{3 << 29});
  res.set("residual_shifts", std::vector<int64_t>{30});
  const Tensor r = make<int8_t>({2, 1, 1, 1}, {-7, 5});
  EXPECT_EQ(int_values(run_horizon("HzSQuantizedConv", res, {x1, w, std::nullopt, r})),
            (std::vector<int64_t>{0, 9}));
}

TEST(HzSQuantizedConvTranspose, HandComputedStrideAndOverlap) {
  const Tensor x = make<int8_t>({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor w = make<int8_t>({1, 1, 2, 2}, {1, 1, 1, 1});
  const Tensor b = make<int32_t>({1}, {1});
  AttributeMap stride2 = conv_attributes({kHalf}, {29});  // times 2.0
  stride2.set("strides", std::vector<int64_t>{2, 2});
  EXPECT_EQ(int_values(run_horizon("HzSQuantizedConvTranspose", stride2, {x, w, b})),
            (std::vector<int64_t>{4, 4, 6, 6, 4, 4, 6, 6, 8, 8, 10, 10, 8, 8, 10, 10}));
  const Tensor y =
      run_horizon("HzSQuantizedConvTranspose", conv_attributes({kHalf}, {30}, "int16"), {x, w, b});
  EXPECT_EQ(y.dtype(), DataType::kInt16);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(int_values(y), (std::vector<int64_t>{2, 4, 3, 5, 11, 7, 4, 8, 5}));
}

// ---------------------------------------------------------------------------------------------
// Differential: the float convolution of the dequantized operands, quantized

struct DifferentialCase {
  Shape x_shape, w_shape;  // w as Conv (M, C/g, k...) or ConvTranspose (C, M/g, k...)
  int64_t group;
  std::vector<int64_t> strides, pads;
  DataType x_type, y_type;
  bool residual;
};

std::string describe(const DifferentialCase& c) {
  return str_cat("x ", shape_to_string(c.x_shape), " ", dtype_name(c.x_type), " w ",
                 shape_to_string(c.w_shape), " group ", c.group, " strides ",
                 shape_to_string(c.strides), " pads ", shape_to_string(c.pads), " -> ",
                 dtype_name(c.y_type), c.residual ? " with residual" : "");
}

void run_differential(const DifferentialCase& c, bool transpose, uint32_t seed) {
  SCOPED_TRACE(str_cat(transpose ? "ConvTranspose" : "Conv", " seed ", seed, " ", describe(c)));
  std::mt19937 rng(seed);
  const int64_t x_max = c.x_type == DataType::kInt8 ? 127 : 32767;
  const float xs = c.x_type == DataType::kInt8 ? 0.02f : 0.0001f;
  const Tensor xq = c.x_type == DataType::kInt8
                        ? random_ints<int8_t>(c.x_shape, rng, -128, 127)
                        : random_ints<int16_t>(c.x_shape, rng, -32768, 32767);
  const Tensor wq = random_ints<int8_t>(c.w_shape, rng, -127, 127);
  WindowAttributes window;
  window.strides = c.strides;
  window.pads = c.pads;
  const ConvGeometry g =
      transpose ? conv_transpose_geometry(window, c.group, {}, {}, c.x_shape, c.w_shape)
                : conv_geometry("Conv", window, c.group, c.x_shape, c.w_shape);
  const int64_t m_count = g.out_channels;
  std::uniform_real_distribution<float> scale_dist(0.002f, 0.01f);
  std::vector<float> ws(static_cast<size_t>(m_count));
  for (float& s : ws) s = scale_dist(rng);
  const Tensor bq = random_ints<int32_t>({m_count}, rng, -20 * x_max, 20 * x_max);

  // Float operands.
  const Tensor xf = dequantized(xq, xs);
  Tensor wf(DataType::kFloat32, c.w_shape);
  const int64_t kvol = shape_element_count(c.w_shape) / (c.w_shape[0] * c.w_shape[1]);
  for (int64_t i = 0; i < wf.element_count(); ++i) {
    const int64_t a0 = i / (c.w_shape[1] * kvol), a1 = (i / kvol) % c.w_shape[1];
    // Output channel of the weight: Conv axis 0; ConvTranspose group(a0) * M/g + a1.
    const int64_t m = transpose ? (a0 / (c.x_shape[1] / c.group)) * c.w_shape[1] + a1 : a0;
    wf.data<float>()[i] = static_cast<float>(wq.int_at(i)) * ws[size_t(m)];
  }
  std::vector<float> bf(static_cast<size_t>(m_count));
  for (int64_t m = 0; m < m_count; ++m) {
    bf[size_t(m)] = static_cast<float>(static_cast<double>(bq.int_at(m)) * xs * ws[size_t(m)]);
  }
  const Shape y_shape = [&] {
    Shape s{g.batch, g.out_channels};
    s.insert(s.end(), g.window.out.begin(), g.window.out.end());
    return s;
  }();
  Tensor yf(DataType::kFloat32, y_shape);
  if (transpose) {
    conv_transpose_f32_reference(g, xf.data<float>(), wf.data<float>(), bf.data(),
                                 yf.data<float>());
  } else {
    conv_f32_reference(g, xf.data<float>(), wf.data<float>(), bf.data(), yf.data<float>());
  }
  const float rs = 0.05f;
  Tensor rq;
  if (c.residual) {
    rq = random_ints<int8_t>(y_shape, rng, -128, 127);
    for (int64_t i = 0; i < yf.element_count(); ++i) {
      yf.data<float>()[i] += static_cast<float>(rq.int_at(i)) * rs;
    }
  }
  float y_max = 0.0f;
  for (int64_t i = 0; i < yf.element_count(); ++i)
    y_max = std::max(y_max, std::fabs(yf.data<float>()[i]));
  const bool int8_out = c.y_type == DataType::kInt8;
  // Slightly below the largest value so that a few outputs saturate.
  const float ys = y_max / (int8_out ? 110.0f : 30000.0f);

  std::vector<sim::FixedPointMultiplier> f, fr;
  for (int64_t m = 0; m < m_count; ++m) {
    const double acc_scale = static_cast<double>(xs) * ws[size_t(m)];
    f.push_back(sim::requantization_multiplier(acc_scale, ys));
    fr.push_back(sim::to_fixed_point(rs / acc_scale));
  }
  const auto [mult, shift] = multiplier_lists(f);
  AttributeMap attrs = conv_attributes(mult, shift, std::string(dtype_name(c.y_type)));
  attrs.set("strides", c.strides);
  attrs.set("pads", c.pads);
  attrs.set("group", c.group);
  std::vector<std::optional<Tensor>> inputs{xq, wq, bq};
  if (c.residual) {
    const auto [rm, rsh] = multiplier_lists(fr);
    attrs.set("residual_multipliers", rm);
    attrs.set("residual_shifts", rsh);
    inputs.push_back(rq);
  }
  const Tensor y =
      run_horizon(transpose ? "HzSQuantizedConvTranspose" : "HzSQuantizedConv", attrs, inputs);
  ASSERT_EQ(y.shape(), y_shape);
  EXPECT_LE(max_abs_difference(y, quantized_values(yf, ys, c.y_type)), 1);
}

TEST(HzSQuantizedConv, MatchesTheFloatConvWithinOneStep) {
  const DataType i8 = DataType::kInt8, i16 = DataType::kInt16;
  const std::vector<DifferentialCase> cases = {
      {{1, 3, 9, 11}, {8, 3, 3, 3}, 1, {1, 1}, {1, 1, 1, 1}, i8, i8, false},
      {{2, 4, 8, 8}, {6, 2, 3, 3}, 2, {2, 2}, {1, 0, 1, 0}, i8, i16, false},
      {{1, 6, 7, 7}, {6, 1, 5, 5}, 6, {1, 1}, {2, 2, 2, 2}, i8, i8, true},
      {{1, 5, 6, 6}, {7, 5, 1, 1}, 1, {1, 1}, {0, 0, 0, 0}, i16, i8, true},
      {{1, 4, 10}, {3, 4, 3}, 1, {2}, {1, 1}, i16, i16, false},
  };
  uint32_t seed = 500;
  for (const DifferentialCase& c : cases) run_differential(c, false, seed++);
}

TEST(HzSQuantizedConvTranspose, MatchesTheFloatConvTransposeWithinOneStep) {
  const DataType i8 = DataType::kInt8, i16 = DataType::kInt16;
  const std::vector<DifferentialCase> cases = {
      {{1, 4, 5, 5}, {4, 3, 2, 2}, 1, {2, 2}, {0, 0, 0, 0}, i8, i8, false},
      {{1, 4, 4, 6}, {4, 2, 3, 3}, 2, {2, 1}, {1, 1, 0, 1}, i8, i16, false},
      {{2, 2, 6}, {2, 3, 4}, 1, {3}, {1, 2}, i16, i8, false},
  };
  uint32_t seed = 600;
  for (const DifferentialCase& c : cases) run_differential(c, true, seed++);
}

// ---------------------------------------------------------------------------------------------
// Optimized path against the reference loop

struct ShapeCase {
  Shape x_shape, w_shape;
  int64_t group;
  std::vector<int64_t> strides, dilations, pads;
};

std::string describe(const ShapeCase& c) {
  return str_cat("x ", shape_to_string(c.x_shape), " w ", shape_to_string(c.w_shape), " group ",
                 c.group, " strides ", shape_to_string(c.strides), " dilations ",
                 shape_to_string(c.dilations), " pads ", shape_to_string(c.pads));
}

// Random operands for one geometry; `extreme` fills x and w with their most negative values
// (the largest products, to exercise the int32 block limits).
struct RandomOperands {
  Tensor x, w, b, r;
};

RandomOperands random_operands(std::mt19937& rng, const Shape& x_shape, const Shape& w_shape,
                               int64_t channels, const Shape& y_shape, DataType x_type,
                               DataType r_type, bool extreme) {
  RandomOperands o;
  const int64_t x_lo = x_type == DataType::kInt8 ? -128 : -32768;
  const int64_t x_hi = extreme ? x_lo : -x_lo - 1;
  o.x = x_type == DataType::kInt8 ? random_ints<int8_t>(x_shape, rng, x_lo, x_hi)
                                  : random_ints<int16_t>(x_shape, rng, x_lo, x_hi);
  o.w = random_ints<int8_t>(w_shape, rng, -128, extreme ? -128 : 127);
  o.b = random_ints<int32_t>({channels}, rng, INT32_MIN, INT32_MAX);
  o.r = r_type == DataType::kInt8 ? random_ints<int8_t>(y_shape, rng, -128, 127)
                                  : random_ints<int16_t>(y_shape, rng, -32768, 32767);
  return o;
}

QuantizedConvOutputStage random_stage(std::mt19937& rng, DataType y_type, int64_t channels,
                                      double acc_to_output) {
  QuantizedConvOutputStage stage;
  stage.output_type = y_type;
  std::uniform_real_distribution<double> jitter(0.5, 2.0);
  for (int64_t m = 0; m < channels; ++m) {
    if (y_type != DataType::kInt32) {
      stage.multipliers.push_back(sim::to_fixed_point(acc_to_output * jitter(rng)));
    }
    stage.residual_multipliers.push_back(sim::to_fixed_point(50.0 * jitter(rng)));
  }
  const int64_t lo =
      y_type == DataType::kInt8 ? -128 : (y_type == DataType::kInt16 ? -32768 : INT32_MIN);
  const int64_t hi =
      y_type == DataType::kInt8 ? 127 : (y_type == DataType::kInt16 ? 32767 : INT32_MAX);
  const bool relu = std::uniform_int_distribution<int>(0, 2)(rng) == 0;
  stage.clip_min = relu ? 0 : lo;
  stage.clip_max = relu ? hi / 2 : hi;
  return stage;
}

TEST(QuantizedConvolution, OptimizedEqualsReferenceOnRandomShapes) {
  ThreadPool pool(2);
  std::mt19937 shape_rng(4242);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(shape_rng);
  };
  std::vector<ShapeCase> cases = {
      {{1, 8, 17, 19}, {16, 8, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}},  // pointwise
      {{2, 3, 20, 23}, {7, 3, 3, 3}, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}},   // 3x3 stride 2
      {{1, 6, 15, 15}, {6, 1, 3, 3}, 6, {1, 1}, {1, 1}, {1, 1, 1, 1}},   // depthwise
      {{1, 4, 16, 13}, {8, 1, 5, 5}, 4, {2, 2}, {1, 1}, {2, 2, 2, 2}},   // depthwise x2
      {{1, 4, 9, 11}, {4, 1, 3, 3}, 4, {1, 2}, {2, 1}, {0, 1, 2, 0}},    // dilated, asym
      {{1, 8, 10, 10}, {12, 4, 3, 3}, 2, {1, 1}, {1, 1}, {1, 1, 1, 1}},  // grouped
      {{2, 5, 31}, {6, 5, 4}, 1, {3}, {2}, {1, 2}},                      // 1-D
      {{1, 3, 5, 6, 7}, {4, 3, 2, 3, 2}, 1, {1, 2, 1}, {1, 1, 2}, {1, 0, 1, 0, 1, 1}},  // 3-D
      {{1, 64, 6, 5}, {7, 64, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}},                  // depth 576
      {{1, 2, 40, 40}, {3, 2, 3, 3}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}},        // many columns
      {{1, 3, 20, 21}, {3, 1, 7, 7}, 3, {1, 1}, {1, 1}, {3, 3, 3, 3}},        // depthwise 7x7
      {{1, 2, 6, 30}, {2, 1, 5, 5}, 2, {2, 2}, {1, 1}, {2, 1, 0, 2}},         // depthwise asym
      {{1, 1, 40, 40}, {1, 1, 25, 25}, 1, {1, 1}, {1, 1}, {12, 12, 12, 12}},  // 625 taps
      {{1, 7, 3, 3}, {13, 7, 3, 3}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}},         // one column
  };
  for (int i = 0; i < 16; ++i) {
    const int64_t group = pick(1, 3);
    const int64_t cin = group * pick(1, 5), cout = group * pick(1, 9);
    const int64_t kh = pick(1, 4), kw = pick(1, 4);
    cases.push_back({{pick(1, 2), cin, pick(kh, 21), pick(kw, 21)},
                     {cout, cin / group, kh, kw},
                     group,
                     {pick(1, 3), pick(1, 3)},
                     {pick(1, 2), pick(1, 2)},
                     {pick(0, kh - 1), pick(0, kw - 1), pick(0, kh - 1), pick(0, kw - 1)}});
  }
  const DataType types[] = {DataType::kInt8, DataType::kInt16, DataType::kInt32};
  uint32_t seed = 7000;
  for (const ShapeCase& c : cases) {
    WindowAttributes window;
    window.strides = c.strides;
    window.dilations = c.dilations;
    window.pads = c.pads;
    for (bool transpose : {false, true}) {
      for (int variant = 0; variant < 4; ++variant) {
        std::mt19937 rng(seed);
        const DataType x_type = variant % 2 == 0 ? DataType::kInt8 : DataType::kInt16;
        const DataType y_type = types[(variant + seed) % 3];
        const bool extreme = variant == 3;
        Shape w_shape = c.w_shape;
        if (transpose) {  // (C, M/group, k...)
          w_shape[0] = c.x_shape[1];
          w_shape[1] = c.w_shape[0] / c.group;
        }
        const ConvGeometry g =
            transpose ? conv_transpose_geometry(window, c.group, {}, {}, c.x_shape, w_shape)
                      : conv_geometry("Conv", window, c.group, c.x_shape, w_shape);
        Shape y_shape{g.batch, g.out_channels};
        y_shape.insert(y_shape.end(), g.window.out.begin(), g.window.out.end());
        const bool with_residual = !transpose && variant >= 2;
        RandomOperands o =
            random_operands(rng, c.x_shape, w_shape, g.out_channels, y_shape, x_type,
                            variant == 2 ? DataType::kInt16 : DataType::kInt8, extreme);
        const double typical_acc =
            128.0 * (x_type == DataType::kInt8 ? 128 : 32768) *
            std::sqrt(double(std::max<int64_t>(1, w_shape[1] * g.window.kernel_size())));
        const QuantizedConvOutputStage stage =
            random_stage(rng, y_type, g.out_channels, 100.0 / typical_acc);
        Tensor want(y_type, y_shape), serial(y_type, y_shape), threaded(y_type, y_shape);
        QuantizedConvOperands op{&o.x, o.w.data<int8_t>(),
                                 variant == 1 ? nullptr : o.b.data<int32_t>(),
                                 with_residual ? &o.r : nullptr, &want};
        const std::string what =
            str_cat(transpose ? "ConvTranspose" : "Conv", " seed ", seed, " ", describe(c), " x ",
                    dtype_name(x_type), " y ", dtype_name(y_type), with_residual ? " residual" : "",
                    extreme ? " extreme" : "");
        if (transpose) {
          quantized_conv_transpose_reference(g, op, stage);
          op.y = &serial;
          quantized_conv_transpose(g, op, stage, nullptr);
          op.y = &threaded;
          quantized_conv_transpose(g, op, stage, &pool);
        } else {
          quantized_conv_reference(g, op, stage);
          op.y = &serial;
          quantized_conv(g, op, stage, nullptr);
          op.y = &threaded;
          quantized_conv(g, op, stage, &pool);
        }
        ASSERT_EQ(int_values(serial), int_values(want)) << what;
        ASSERT_EQ(int_values(threaded), int_values(want)) << what << " (2 threads)";
        ++seed;
      }
    }
  }
}

TEST(IntegerGemm, EveryMicroKernelGivesTheExactProduct) {
  ThreadPool pool(2);
  const IntGemmMicroKernel kinds[] = {IntGemmMicroKernel::kPortable, IntGemmMicroKernel::kAvx2,
                                      IntGemmMicroKernel::kAvxVnni};
  struct Size {
    int64_t m, n, k, max_b;
  };
  const Size sizes[] = {{1, 1, 1, 128},     {6, 16, 2, 128},       {7, 17, 3, 128},
                        {13, 300, 77, 128}, {25, 40, 1001, 32768}, {5, 33, 520, 32768},
                        {64, 700, 64, 128}};
  uint32_t seed = 90;
  for (const Size& s : sizes) {
    for (bool extreme : {false, true}) {
      std::mt19937 rng(seed);
      std::uniform_int_distribution<int> wa(-128, extreme ? -128 : 127);
      std::uniform_int_distribution<int64_t> wb(-s.max_b, extreme ? -s.max_b : s.max_b - 1);
      std::vector<int8_t> a(size_t(s.m * s.k));
      std::vector<int64_t> b(size_t(s.k * s.n));
      for (auto& v : a) v = static_cast<int8_t>(wa(rng));
      for (auto& v : b) v = wb(rng);
      std::vector<int64_t> want(size_t(s.m * s.n), 0);
      for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t p = 0; p < s.k; ++p) {
          for (int64_t j = 0; j < s.n; ++j)
            want[size_t(i * s.n + j)] += a[size_t(i * s.k + p)] * b[size_t(p * s.n + j)];
        }
      }
      const PackedIntGemmLhs packed(s.m, s.k, a.data(), s.k);
      const IntGemmPanelPacker packer = [&](int64_t n0, int64_t nc, int64_t pairs, int16_t* panel) {
        const int64_t strips = (nc + kIntGemmStripCols - 1) / kIntGemmStripCols;
        for (int64_t j = 0; j < strips; ++j) {
          for (int64_t p = 0; p < pairs; ++p) {
            for (int64_t q = 0; q < kIntGemmStripCols; ++q) {
              for (int64_t h = 0; h < 2; ++h) {
                const int64_t row = 2 * p + h, col = j * kIntGemmStripCols + q;
                panel[((j * pairs + p) * kIntGemmStripCols + q) * 2 + h] =
                    row < s.k && col < nc ? static_cast<int16_t>(b[size_t(row * s.n + n0 + col)])
                                          : 0;
              }
            }
          }
        }
      };
      for (IntGemmMicroKernel kind : kinds) {
        if (!int_gemm_micro_kernel_available(kind)) continue;
        for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
          std::vector<int64_t> got(size_t(s.m * s.n), -1);
          int_gemm_packed(
              packed, s.n, s.max_b, packer,
              [&](const IntGemmTile& tile) {
                ASSERT_TRUE((tile.narrow == nullptr) != (tile.wide == nullptr));
                for (int64_t r = 0; r < tile.rows; ++r) {
                  for (int64_t c = 0; c < tile.cols; ++c) {
                    const int64_t at = r * kIntGemmStripCols + c;
                    got[size_t((tile.row0 + r) * s.n + tile.col0 + c)] =
                        tile.narrow != nullptr ? tile.narrow[at] : tile.wide[at];
                  }
                }
              },
              p, kind);
          ASSERT_EQ(got, want) << "seed " << seed << " m " << s.m << " n " << s.n << " k " << s.k
                               << " max|b| " << s.max_b << " kind " << static_cast<int>(kind)
                               << (extreme ? " extreme" : "") << (p ? " 2 threads" : "");
        }
      }
      ++seed;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST(HzSQuantizedConv, RejectsInvalidParameters) {
  auto prepare = [](AttributeMap attrs, int inputs = 3) {
    prepare_horizon("HzSQuantizedConv", attrs, inputs);
  };
  EXPECT_THROW(prepare(conv_attributes({kHalf}, {94})), KernelError);  // shift range
  EXPECT_THROW(prepare(conv_attributes({kHalf}, {-1})), KernelError);
  EXPECT_THROW(prepare(conv_attributes({(1 << 30) - 1}, {30})), KernelError);   // not normalised
  EXPECT_THROW(prepare(conv_attributes({kHalf, kHalf}, {30})), KernelError);    // lengths
  EXPECT_THROW(prepare(conv_attributes({kHalf}, {30}, "int4")), KernelError);   // output_type
  EXPECT_THROW(prepare(conv_attributes({kHalf}, {30}, "int32")), KernelError);  // int32 + mult
  EXPECT_THROW(prepare(attributes({{"output_type", std::string("int8")}})), KernelError);
  EXPECT_THROW(prepare(attributes({{"multipliers", std::vector<int64_t>{kHalf}},
                                   {"shifts", std::vector<int64_t>{30}}})),
               KernelError);  // output_type missing
  AttributeMap bad_clip = conv_attributes({kHalf}, {30});
  bad_clip.set("clip_min", int64_t{5});
  bad_clip.set("clip_max", int64_t{4});
  EXPECT_THROW(prepare(bad_clip), KernelError);
  AttributeMap clip_range = conv_attributes({kHalf}, {30});
  clip_range.set("clip_max", int64_t{200});
  EXPECT_THROW(prepare(clip_range), KernelError);
  AttributeMap auto_pad = conv_attributes({kHalf}, {30});
  auto_pad.set("auto_pad", std::string("SAME_UPPER"));
  EXPECT_THROW(prepare(auto_pad), KernelError);
  AttributeMap residual_half = conv_attributes({kHalf}, {30});
  residual_half.set("residual_multipliers", std::vector<int64_t>{kHalf});
  EXPECT_THROW(prepare(residual_half), KernelError);
  EXPECT_THROW(prepare(conv_attributes({kHalf}, {30}), 5), KernelError);  // too many inputs
  EXPECT_THROW(prepare_horizon("HzSQuantizedConvTranspose", conv_attributes({kHalf}, {30}), 4),
               KernelError);  // no residual on ConvTranspose
}

TEST(HzSQuantizedConv, RejectsInconsistentOperands) {
  const Tensor x = make<int8_t>({1, 2, 3, 3}, std::vector<int8_t>(18, 1));
  const Tensor w = make<int8_t>({2, 2, 1, 1}, {1, 2, 3, 4});
  const Tensor b = make<int32_t>({2}, {0, 0});
  const AttributeMap two = conv_attributes({kHalf, kHalf}, {30, 30});
  EXPECT_NO_THROW(run_horizon("HzSQuantizedConv", two, {x, w, b}));
  // One multiplier for two output channels.
  EXPECT_THROW(run_horizon("HzSQuantizedConv", conv_attributes({kHalf}, {30}), {x, w, b}),
               KernelError);
  // Types: x float, w int16, b int64 / wrong length.
  EXPECT_THROW(run_horizon("HzSQuantizedConv", two, {make<float>({1, 2, 1, 1}, {1, 2}), w, b}),
               KernelError);
  EXPECT_THROW(
      run_horizon("HzSQuantizedConv", two, {x, make<int16_t>({2, 2, 1, 1}, {1, 2, 3, 4}), b}),
      KernelError);
  EXPECT_THROW(run_horizon("HzSQuantizedConv", two, {x, w, make<int64_t>({2}, {0, 0})}),
               KernelError);
  EXPECT_THROW(run_horizon("HzSQuantizedConv", two, {x, w, make<int32_t>({3}, {0, 0, 0})}),
               KernelError);
  // Residual: shape must be the output's; residual multipliers required.
  AttributeMap res = conv_attributes({kHalf, kHalf}, {30, 30});
  res.set("residual_multipliers", std::vector<int64_t>{kHalf, kHalf});
  res.set("residual_shifts", std::vector<int64_t>{30, 30});
  const Tensor r_ok = make<int8_t>({1, 2, 3, 3}, std::vector<int8_t>(18, 1));
  EXPECT_NO_THROW(run_horizon("HzSQuantizedConv", res, {x, w, b, r_ok}));
  EXPECT_THROW(run_horizon("HzSQuantizedConv", res, {x, w, b, make<int8_t>({1, 2, 1, 1}, {1, 1})}),
               KernelError);
  EXPECT_THROW(run_horizon("HzSQuantizedConv", two, {x, w, b, r_ok}), KernelError);
  EXPECT_THROW(run_horizon("HzSQuantizedConv", res, {x, w, b}), KernelError);
}

}  // namespace
}  // namespace openbpu::kernels::testing
