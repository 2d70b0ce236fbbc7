#include <cmath>
#include <numeric>
#include <array>
#include <cstring>
#include <random>

#include "kernel_test_support.h"
#include "openbpu/kernels/convolution.h"

namespace openbpu::kernels::testing {
namespace {

std::vector<float> iota_floats(size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

AttributeMap conv_attrs(std::vector<int64_t> kernel, std::vector<int64_t> pads = {},
                        std::vector<int64_t> strides = {}) {
  AttributeMap a;
  a.set("kernel_shape", std::move(kernel));
  if (!pads.empty()) a.set("pads", std::move(pads));
  if (!strides.empty()) a.set("strides", std::move(strides));
  return a;
}

TEST(Conv, BasicWithAndWithoutPadding) {
  const Tensor x = make<float>({1, 1, 5, 5}, iota_floats(25));
  const Tensor w = make<float>({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  auto padded = run_op("Conv", conv_attrs({3, 3}, {1, 1, 1, 1}), {x, w});
  expect_near(padded[0], {1, 1, 5, 5}, {12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                                        117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84});
  auto valid = run_op("Conv", conv_attrs({3, 3}, {0, 0, 0, 0}), {x, w});
  expect_near(valid[0], {1, 1, 3, 3}, {54, 63, 72, 99, 108, 117, 144, 153, 162});
}

TEST(Conv, StridesAsymmetricPaddingAndAutoPad) {
  const Tensor x = make<float>({1, 1, 7, 5}, iota_floats(35));
  const Tensor w = make<float>({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  auto strided = run_op("Conv", conv_attrs({3, 3}, {1, 1, 1, 1}, {2, 2}), {x, w});
  expect_near(strided[0], {1, 1, 4, 3}, {12, 27, 24, 63, 108, 81, 123, 198, 141, 112, 177, 124});
  auto asym = run_op("Conv", conv_attrs({3, 3}, {1, 0, 1, 0}, {2, 2}), {x, w});
  expect_near(asym[0], {1, 1, 4, 2}, {21, 33, 99, 117, 189, 207, 171, 183});

  AttributeMap same;
  same.set("auto_pad", std::string("SAME_LOWER"));
  same.set("strides", std::vector<int64_t>{2, 2});
  auto y = run_op("Conv", same, {make<float>({1, 1, 5, 5}, iota_floats(25)), w});
  expect_near(y[0], {1, 1, 3, 3}, {12, 27, 24, 63, 108, 81, 72, 117, 84});
}

TEST(Conv, GroupsBiasAndDilation) {
  // Two groups of one channel each; bias per output channel.
  const Tensor x = make<float>({1, 2, 3, 3}, iota_floats(18));
  const Tensor w = make<float>({2, 1, 2, 2}, {1, 0, 0, 1, 0, 1, 1, 0});
  AttributeMap a;
  a.set("group", int64_t{2});
  a.set("dilations", std::vector<int64_t>{2, 2});
  auto y = run_op("Conv", a, {x, w, make<float>({2}, {100, 200})});
  // channel 0: x[0,0] + x[2,2] = 0 + 8; channel 1: x[0,2] + x[2,0] = 11 + 15
  expect_near(y[0], {1, 2, 1, 1}, {108, 226});
}

TEST(Conv, OneDimensionalAndDouble) {
  auto y =
      run_op("Conv", {}, {make<double>({1, 1, 4}, {1, 2, 3, 4}), make<double>({1, 1, 2}, {1, -1})});
  expect_near(y[0], {1, 1, 3}, {-1, -1, -1});
}

TEST(Conv, RejectsInconsistentShapes) {
  const Tensor x = make<float>({1, 2, 3, 3}, std::vector<float>(18));
  EXPECT_THROW(run_op("Conv", {}, {x, make<float>({1, 2, 3}, std::vector<float>(6))}), KernelError);
  EXPECT_THROW(run_op("Conv", {}, {x, make<float>({1, 3, 1, 1}, std::vector<float>(3))}),
               KernelError);
  EXPECT_THROW(
      run_op("Conv", conv_attrs({2, 2}), {x, make<float>({1, 2, 3, 3}, std::vector<float>(18))}),
      KernelError);
  EXPECT_THROW(run_op("Conv", {}, {x, make<float>({1, 2, 4, 4}, std::vector<float>(32))}),
               KernelError);
  AttributeMap bad_pad;
  bad_pad.set("auto_pad", std::string("SAME"));
  EXPECT_THROW(run_op("Conv", bad_pad, {x, make<float>({1, 2, 1, 1}, {1, 1})}), KernelError);
  AttributeMap bad_strides;
  bad_strides.set("strides", std::vector<int64_t>{1});
  EXPECT_THROW(run_op("Conv", bad_strides, {x, make<float>({1, 2, 1, 1}, {1, 1})}), KernelError);
  EXPECT_THROW(run_op("Conv", {}, {x, make<float>({1, 2, 1, 1}, {1, 1}), make<float>({2}, {1, 1})}),
               KernelError);
}

TEST(ConvTranspose, OnnxExampleAndAutoPadSame) {
  const Tensor x = make<float>({1, 1, 3, 3}, iota_floats(9));
  const Tensor w = make<float>({1, 2, 3, 3}, std::vector<float>(18, 1.0f));
  auto y = run_op("ConvTranspose", {}, {x, w});
  const std::vector<double> plane{0,  1,  3, 3,  2,  3,  8,  15, 12, 7,  9,  21, 36,
                                  27, 15, 9, 20, 33, 24, 13, 6,  13, 21, 15, 8};
  std::vector<double> both = plane;
  both.insert(both.end(), plane.begin(), plane.end());
  expect_near(y[0], {1, 2, 5, 5}, both);

  AttributeMap same;
  same.set("auto_pad", std::string("SAME_UPPER"));
  same.set("strides", std::vector<int64_t>{2, 2});
  auto s = run_op("ConvTranspose", same, {x, w});
  ASSERT_EQ(s[0].shape(), (Shape{1, 2, 6, 6}));
  const std::vector<double> first_rows{0, 0, 1, 1, 3, 2, 0, 0, 1, 1, 3, 2, 3, 3, 8, 5, 12, 7};
  for (size_t i = 0; i < first_rows.size(); ++i) {
    EXPECT_NEAR(s[0].float_at(int64_t(i)), first_rows[i], 1e-6) << i;
  }
}

TEST(ConvTranspose, OutputShapeAppendsZerosAndOutputPadding) {
  const Tensor x = make<float>({1, 1, 3, 3}, iota_floats(9));
  const Tensor w = make<float>({1, 2, 3, 3}, std::vector<float>(18, 1.0f));
  AttributeMap by_shape;
  by_shape.set("strides", std::vector<int64_t>{3, 2});
  by_shape.set("output_shape", std::vector<int64_t>{10, 8});
  AttributeMap by_padding;
  by_padding.set("strides", std::vector<int64_t>{3, 2});
  by_padding.set("output_padding", std::vector<int64_t>{1, 1});
  auto a = run_op("ConvTranspose", by_shape, {x, w});
  auto b = run_op("ConvTranspose", by_padding, {x, w});
  ASSERT_EQ(a[0].shape(), (Shape{1, 2, 10, 8}));
  ASSERT_EQ(b[0].shape(), (Shape{1, 2, 10, 8}));
  for (int64_t i = 0; i < 160; ++i) ASSERT_EQ(a[0].float_at(i), b[0].float_at(i)) << i;
  // Row 0: [0, 0, 1, 1, 3, 2, 2, 0]; last row and column zero.
  EXPECT_EQ(a[0].float_at(4), 3.0);
  EXPECT_EQ(a[0].float_at(7), 0.0);
  EXPECT_EQ(a[0].float_at(9 * 8 + 3), 0.0);
}

TEST(ConvTranspose, PadsAndBias) {
  AttributeMap a;
  a.set("pads", std::vector<int64_t>{1, 1});
  auto y = run_op("ConvTranspose", a,
                  {make<float>({1, 1, 3}, {1, 2, 3}), make<float>({1, 1, 3}, {1, 1, 1}),
                   make<float>({1}, {10})});
  // full: [1, 3, 6, 5, 3] -> crop 1 each side -> [3, 6, 5]
  expect_near(y[0], {1, 1, 3}, {13, 16, 15});
  EXPECT_THROW(
      run_op("ConvTranspose", {},
             {make<float>({1, 2, 3}, std::vector<float>(6)), make<float>({1, 1, 3}, {1, 1, 1})}),
      KernelError);
}

TEST(ConvInteger, OnnxExamples) {
  const Tensor x = make<uint8_t>({1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10});
  const Tensor w = make<uint8_t>({1, 1, 2, 2}, {1, 1, 1, 1});
  const Tensor zp = make<uint8_t>({}, {1});
  auto y = run_op("ConvInteger", {}, {x, w, zp});
  EXPECT_EQ(y[0].dtype(), DataType::kInt32);
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{12, 16, 24, 28}));
  AttributeMap pads;
  pads.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  auto p = run_op("ConvInteger", pads, {x, w, zp});
  EXPECT_EQ(p[0].to_int64_vector(),
            (std::vector<int64_t>{1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9}));
  EXPECT_THROW(run_op("ConvInteger", {}, {x, w, make<int8_t>({}, {1})}), KernelError);
}

// ConvInteger through the exact integer GEMM (weights less their zero points fit int8) equals
// the definition's loop, integer for integer; weights that do not fit take the loop itself.
TEST(ConvInteger, GemmPathEqualsTheDefinitionOnRandomShapes) {
  std::mt19937 rng(61);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  ThreadPool pool(2);
  for (int t = 0; t < 24; ++t) {
    const int64_t group = pick(1, 3), cin = group * pick(1, 5), cout = group * pick(1, 4);
    const int64_t kh = pick(1, 3), kw = pick(1, 3), sh = pick(1, 2), sw = pick(1, 2),
                  dh = pick(1, 2), dw = pick(1, 2);
    const int64_t ih = pick(kh * dh, 14), iw = pick(kw * dw, 19), batch = pick(1, 2);
    const std::vector<int64_t> pads{pick(0, kh - 1), pick(0, kw - 1), pick(0, kh - 1),
                                    pick(0, kw - 1)};
    const bool x_signed = t % 2 == 0, w_signed = t % 4 < 2, fits = t % 6 != 5;
    const int64_t xz = x_signed ? pick(-20, 20) : pick(0, 255);
    std::vector<int64_t> wz(static_cast<size_t>(cout));
    for (auto& z : wz) z = w_signed ? pick(-10, 10) : pick(100, 150);
    std::vector<int64_t> xv(static_cast<size_t>(batch * cin * ih * iw)),
        wv(static_cast<size_t>(cout * (cin / group) * kh * kw));
    for (auto& v : xv) v = x_signed ? pick(-128, 127) : pick(0, 255);
    const int64_t per = (cin / group) * kh * kw;
    for (size_t i = 0; i < wv.size(); ++i) {
      const int64_t z = wz[i / size_t(per)];
      wv[i] =
          fits ? std::clamp<int64_t>(z + pick(-128, 127), w_signed ? -128 : 0, w_signed ? 127 : 255)
               : (w_signed ? pick(-128, 127) : (i % 2 ? 0 : 255));
    }
    const Tensor x = byte_tensor(x_signed, {batch, cin, ih, iw}, xv);
    const Tensor w = byte_tensor(w_signed, {cout, cin / group, kh, kw}, wv);
    const Tensor x_zero = byte_tensor(x_signed, {}, {xz});
    const Tensor w_zero = byte_tensor(w_signed, {cout}, wz);
    AttributeMap attrs;
    attrs.set("group", group);
    attrs.set("strides", std::vector<int64_t>{sh, sw});
    attrs.set("dilations", std::vector<int64_t>{dh, dw});
    attrs.set("pads", pads);
    const std::vector<Tensor> y = run_op("ConvInteger", attrs, {x, w, x_zero, w_zero});
    const int64_t oh = (ih + pads[0] + pads[2] - dh * (kh - 1) - 1) / sh + 1;
    const int64_t ow = (iw + pads[1] + pads[3] - dw * (kw - 1) - 1) / sw + 1;
    ASSERT_EQ(y[0].shape(), (Shape{batch, cout, oh, ow}));
    const std::vector<int64_t> got = y[0].to_int64_vector();
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t m = 0; m < cout; ++m) {
        for (int64_t r = 0; r < oh; ++r) {
          for (int64_t c = 0; c < ow; ++c) {
            int64_t sum = 0;
            const int64_t cg = (cin / group) * (m / (cout / group));
            for (int64_t ci = 0; ci < cin / group; ++ci) {
              for (int64_t a = 0; a < kh; ++a) {
                for (int64_t b = 0; b < kw; ++b) {
                  const int64_t yy = r * sh - pads[0] + a * dh, xx = c * sw - pads[1] + b * dw;
                  if (yy < 0 || yy >= ih || xx < 0 || xx >= iw) continue;
                  sum += (xv[size_t(((n * cin + cg + ci) * ih + yy) * iw + xx)] - xz) *
                         (wv[size_t(((m * (cin / group) + ci) * kh + a) * kw + b)] - wz[size_t(m)]);
                }
              }
            }
            ASSERT_EQ(got[size_t(((n * cout + m) * oh + r) * ow + c)], sum)
                << "case " << t << " at " << n << "," << m << "," << r << "," << c;
          }
        }
      }
    }
  }
}

TEST(QLinearConv, OnnxExample) {
  const Tensor x =
      make<uint8_t>({1, 1, 7, 7}, {255, 174, 162, 25,  203, 168, 58,  15,  59,  237, 95,  129, 0,
                                   64,  56,  242, 153, 221, 168, 12,  166, 232, 178, 186, 195, 237,
                                   162, 237, 188, 39,  124, 77,  80,  102, 43,  127, 230, 21,  83,
                                   41,  40,  134, 255, 154, 92,  141, 42,  148, 247});
  auto y = run_op("QLinearConv", {},
                  {x, make<float>({}, {0.003692046971991658f}), make<uint8_t>({}, {132}),
                   make<uint8_t>({1, 1, 1, 1}, {0}), make<float>({1}, {0.0017279457533732057f}),
                   make<uint8_t>({1}, {255}), make<float>({}, {0.001626812620088458f}),
                   make<uint8_t>({}, {123})});
  EXPECT_EQ(y[0].to_int64_vector(),
            (std::vector<int64_t>{0,   81,  93,  230, 52,  87,  197, 240, 196, 18,  160, 126, 255,
                                  191, 199, 13,  102, 34,  87,  243, 89,  23,  77,  69,  60,  18,
                                  93,  18,  67,  216, 131, 178, 175, 153, 212, 128, 25,  234, 172,
                                  214, 215, 121, 0,   101, 163, 114, 213, 107, 8}));
}

TEST(QLinearConv, PerChannelScalesAndInt8WithBias) {
  // Two output channels, 1x1 kernel, int8.
  auto y = run_op("QLinearConv", {},
                  {make<int8_t>({1, 1, 1, 2}, {10, -10}), make<float>({}, {0.5f}),
                   make<int8_t>({}, {0}), make<int8_t>({2, 1, 1, 1}, {2, 3}),
                   make<float>({2}, {1.0f, 0.5f}), make<int8_t>({2}, {0, 1}),
                   make<float>({}, {1.0f}), make<int8_t>({}, {-1}), make<int32_t>({2}, {1, 0})});
  // ch0: (10*2 + 1) * 0.5 = 10.5 -> 10 (half to even) - 1 = 9; (-20 + 1) * 0.5 = -9.5 -> -10 - 1
  // ch1: (10*2) * 0.25 = 5 -> 4; (-10*2) * 0.25 = -5 -> -6
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{9, -11, 4, -6}));
}

// --- optimized float32 convolution against the reference -----------------------------------

struct ConvCase {
  std::vector<int64_t> x_shape, w_shape;
  int64_t group;
  std::vector<int64_t> strides, dilations, pads;
};

std::string describe(const ConvCase& c) {
  return str_cat("x", shape_to_string(c.x_shape), " w", shape_to_string(c.w_shape), " group ",
                 c.group, " strides", shape_to_string(c.strides), " dilations",
                 shape_to_string(c.dilations), " pads", shape_to_string(c.pads));
}

std::vector<float> random_floats(std::mt19937& rng, int64_t count) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(count));
  for (auto& x : v) x = dist(rng);
  return v;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, double tol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tol * (1.0 + std::abs(want[i]))) << what << " at " << i;
  }
}

TEST(ConvF32, OptimizedMatchesReferenceOnRandomShapes) {
  ThreadPool pool(3);
  std::mt19937 shape_rng(2024);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(shape_rng);
  };
  std::vector<ConvCase> cases = {
      {{1, 8, 17, 19}, {16, 8, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}},  // pointwise
      {{2, 3, 20, 23}, {7, 3, 3, 3}, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}},   // 3x3 stride 2
      {{1, 6, 15, 15}, {6, 1, 3, 3}, 6, {1, 1}, {1, 1}, {1, 1, 1, 1}},   // depthwise
      {{1, 4, 16, 13}, {8, 1, 5, 5}, 4, {2, 2}, {1, 1}, {2, 2, 2, 2}},   // depthwise x2
      {{1, 4, 9, 11}, {4, 1, 3, 3}, 4, {1, 2}, {2, 1}, {0, 1, 2, 0}},    // dilated, asym
      {{1, 8, 10, 10}, {12, 4, 3, 3}, 2, {1, 1}, {1, 1}, {1, 1, 1, 1}},  // grouped
      {{2, 5, 31}, {6, 5, 4}, 1, {3}, {2}, {1, 2}},                      // 1-D
      {{1, 3, 5, 6, 7}, {4, 3, 2, 3, 2}, 1, {1, 2, 1}, {1, 1, 2}, {1, 0, 1, 0, 1, 1}},  // 3-D
      {{1, 300, 6, 5}, {7, 300, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}},   // depth > 256
      {{1, 2, 40, 40}, {3, 2, 3, 3}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}},     // columns > 256
      {{1, 3, 20, 21}, {3, 1, 7, 7}, 3, {1, 1}, {1, 1}, {3, 3, 3, 3}},     // depthwise 7x7
      {{2, 2, 9, 10}, {2, 1, 3, 3}, 2, {2, 2}, {1, 1}, {0, 0, 0, 0}},      // depthwise s2 valid
      {{1, 2, 6, 30}, {2, 1, 5, 5}, 2, {2, 2}, {1, 1}, {2, 1, 0, 2}},      // depthwise asym pads
      {{1, 2, 100, 100}, {64, 2, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}},  // col2im chunks
      {{1, 4, 7, 9}, {5, 4, 2, 2}, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}},       // transposed: tiled rows
      {{1, 3, 6, 7}, {4, 3, 3, 3}, 1, {3, 3}, {1, 1}, {1, 0, 0, 2}},       // tiles cut at the end
  };
  for (int i = 0; i < 12; ++i) {
    const int64_t group = pick(1, 3);
    const int64_t cin = group * pick(1, 4), cout = group * pick(1, 4);
    const int64_t kh = pick(1, 4), kw = pick(1, 4);
    cases.push_back({{pick(1, 2), cin, pick(kh, 20), pick(kw, 20)},
                     {cout, cin / group, kh, kw},
                     group,
                     {pick(1, 3), pick(1, 3)},
                     {1, 1},
                     {pick(0, kh - 1), pick(0, kw - 1), pick(0, kh - 1), pick(0, kw - 1)}});
  }
  uint32_t seed = 100;
  for (const ConvCase& c : cases) {
    WindowAttributes attrs;
    attrs.strides = c.strides;
    attrs.dilations = c.dilations;
    attrs.pads = c.pads;
    const ConvGeometry g = conv_geometry("Conv", attrs, c.group, c.x_shape, c.w_shape);
    std::mt19937 rng(seed);
    const auto x = random_floats(rng, shape_element_count(c.x_shape));
    const auto w = random_floats(rng, shape_element_count(c.w_shape));
    const auto b = random_floats(rng, g.out_channels);
    const size_t out_count = size_t(g.batch * g.out_channels * g.window.out_size());
    std::vector<float> want(out_count), serial(out_count), threaded(out_count);
    conv_f32_reference(g, x.data(), w.data(), b.data(), want.data());
    conv_f32(g, x.data(), w.data(), b.data(), serial.data(), nullptr);
    conv_f32(g, x.data(), w.data(), b.data(), threaded.data(), &pool);
    const std::string what = str_cat("seed ", seed, " ", describe(c));
    expect_close(serial, want, 1e-5, what);
    EXPECT_EQ(serial, threaded) << what;

    // The transposed convolution with the same window, W laid out as (C, M/group, k...).
    WindowAttributes t_attrs = attrs;
    std::vector<int64_t> tw_shape = c.w_shape;
    tw_shape[0] = c.x_shape[1];
    tw_shape[1] = c.w_shape[0] / c.group;
    const ConvGeometry tg = conv_transpose_geometry(t_attrs, c.group, {}, {}, c.x_shape, tw_shape);
    const auto tw = random_floats(rng, shape_element_count(tw_shape));
    const size_t t_count = size_t(tg.batch * tg.out_channels * tg.window.out_size());
    std::vector<float> t_want(t_count), t_serial(t_count), t_threaded(t_count);
    conv_transpose_f32_reference(tg, x.data(), tw.data(), b.data(), t_want.data());
    conv_transpose_f32(tg, x.data(), tw.data(), b.data(), t_serial.data(), nullptr);
    conv_transpose_f32(tg, x.data(), tw.data(), b.data(), t_threaded.data(), &pool);
    expect_close(t_serial, t_want, 1e-5, "ConvTranspose " + what);
    EXPECT_EQ(t_serial, t_threaded) << "ConvTranspose " << what;
    ++seed;
  }
}

// Stride-1 convolutions read a padded copy of the input in place (no im2col): the result is
// the GEMM over the explicit im2col matrix, bit for bit, with dilations, asymmetric pads, end
// pads that crop the window, groups, batches, 1-D, and depth and columns past one block.
TEST(ConvF32, StrideOneEqualsGemmOverIm2colBitForBit) {
  ThreadPool pool(2);
  const std::vector<ConvCase> cases = {
      {{1, 5, 9, 11}, {4, 5, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      {{2, 4, 12, 10}, {6, 2, 3, 3}, 2, {1, 1}, {2, 1}, {0, 2, 1, 0}},
      {{1, 3, 8, 20}, {5, 3, 5, 5}, 1, {1, 1}, {1, 1}, {2, 0, 0, 1}},
      {{1, 2, 7, 30}, {3, 2, 1, 3}, 1, {1, 1}, {1, 3}, {0, 3, 0, 3}},
      {{2, 6, 40}, {4, 6, 3}, 1, {1}, {1}, {1, 1}},
      {{1, 40, 20, 30}, {13, 40, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}},
  };
  uint32_t seed = 900;
  for (const ConvCase& c : cases) {
    WindowAttributes attrs;
    attrs.strides = c.strides;
    attrs.dilations = c.dilations;
    attrs.pads = c.pads;
    const ConvGeometry g = conv_geometry("Conv", attrs, c.group, c.x_shape, c.w_shape);
    std::mt19937 rng(seed++);
    const auto x = random_floats(rng, shape_element_count(c.x_shape));
    const auto w = random_floats(rng, shape_element_count(c.w_shape));
    const auto b = random_floats(rng, g.out_channels);
    const Window3D w3(g.window);
    const int64_t cin_g = g.in_channels_per_group(), cout_g = g.out_channels_per_group();
    const int64_t depth = cin_g * w3.kernel_size(), n = w3.out_size();
    std::vector<float> want(size_t(g.batch * g.out_channels * n)), got(want.size()), im2col;
    for (int64_t img = 0; img < g.batch; ++img) {
      for (int64_t grp = 0; grp < g.group; ++grp) {
        im2col.assign(size_t(depth * n), 0.0f);
        for (int64_t k = 0; k < depth; ++k) {
          const int64_t kw = k % w3.kernel[2], kh = (k / w3.kernel[2]) % w3.kernel[1];
          const int64_t ch = grp * cin_g + k / w3.kernel_size();
          for (int64_t oh = 0; oh < w3.out[1]; ++oh) {
            for (int64_t ow = 0; ow < w3.out[2]; ++ow) {
              const int64_t ih = oh - w3.pads[1] + kh * w3.dilations[1];
              const int64_t iw = ow - w3.pads[2] + kw * w3.dilations[2];
              if (ih < 0 || ih >= w3.in[1] || iw < 0 || iw >= w3.in[2]) continue;
              im2col[size_t(k * n + oh * w3.out[2] + ow)] =
                  x[size_t(((img * g.in_channels + ch) * w3.in[1] + ih) * w3.in[2] + iw)];
            }
          }
        }
        const PackedGemmLhs weights(
            cout_g, depth, MatrixViewF32::row_major(w.data() + grp * cout_g * depth, depth));
        const MatrixViewF32 vb = MatrixViewF32::row_major(im2col.data(), n);
        gemm_f32_packed(
            weights, n,
            [vb](int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* panel) {
              return pack_gemm_panel(vb, k0, kc, n0, nc, panel);
            },
            1.0f, 0.0f, b.data() + grp * cout_g,
            want.data() + (img * g.out_channels + grp * cout_g) * n, n, nullptr);
      }
    }
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      std::fill(got.begin(), got.end(), std::nanf(""));
      conv_f32(g, x.data(), w.data(), b.data(), got.data(), p);
      EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)))
          << describe(c) << (p ? " with threads" : "");
    }
  }
}

// A Conv whose weights are a graph constant packs them once; a run given other weights (same
// shape) uses those, and the results equal a Conv that packs per run.
TEST(ConvF32, ConstantWeightsArePackedOnceAndOnlyUsedForThatStorage) {
  std::mt19937 rng(31);
  const Tensor x = make<float>({1, 6, 9, 11}, random_floats(rng, 6 * 9 * 11));
  const Tensor w = make<float>({8, 3, 3, 3}, random_floats(rng, 8 * 3 * 27 / 3));
  const Tensor other = make<float>({8, 3, 3, 3}, random_floats(rng, 8 * 3 * 27 / 3));
  const Tensor b = make<float>({8}, random_floats(rng, 8));
  AttributeMap attrs;
  attrs.set("group", int64_t{2});
  attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  const Tensor* constants[] = {nullptr, &w, nullptr};
  NodeInfo with{"conv", "Conv", "", 17, attrs, 3, 1};
  with.constant_inputs = constants;
  const NodeInfo without{"conv", "Conv", "", 17, attrs, 3, 1};
  for (const Tensor* weights : {&w, &other}) {
    const std::vector<Tensor> got = run_node(with, {x, *weights, b}, 1);
    const std::vector<Tensor> want = run_node(without, {x, *weights, b}, 1);
    ASSERT_EQ(got[0].byte_size(), want[0].byte_size());
    EXPECT_EQ(0, std::memcmp(got[0].raw_data(), want[0].raw_data(), got[0].byte_size()))
        << (weights == &w ? "the constant weights" : "other weights");
  }
}

// Depthwise paths: the AVX-512 rows (16 pixels per vector, a masked tail, stride 2 by
// permutation) give the scalar path's bits, on planes narrower and wider than a vector, with
// asymmetric and zero pads, channel multipliers and windows that skip the input's last columns.
TEST(ConvF32, DepthwisePathsAgreeBitForBit) {
  if (!depthwise_path_available(DepthwisePath::kAvx512)) {
    GTEST_SKIP() << "needs a CPU with AVX-512F";
  }
  std::mt19937 shape_rng(77);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(shape_rng);
  };
  for (int i = 0; i < 40; ++i) {
    const int64_t k = std::array<int64_t, 3>{3, 5, 7}[size_t(i % 3)];
    const int64_t stride = 1 + (i / 3) % 2;
    const int64_t channels = pick(1, 3), multiplier = pick(1, 2);
    const int64_t pad = k / 2;
    ConvCase c{{1, channels, pick(1, 40), pick(1, 70)},
               {channels * multiplier, 1, k, k},
               channels,
               {stride, stride},
               {1, 1},
               {pick(0, pad), pick(0, pad), pick(0, pad), pick(0, pad)}};
    c.x_shape[2] = std::max(c.x_shape[2], k - c.pads[0] - c.pads[2]);
    c.x_shape[3] = std::max(c.x_shape[3], k - c.pads[1] - c.pads[3]);
    WindowAttributes attrs;
    attrs.strides = c.strides;
    attrs.pads = c.pads;
    const ConvGeometry g = conv_geometry("Conv", attrs, c.group, c.x_shape, c.w_shape);
    std::mt19937 rng(uint32_t(500 + i));
    const auto x = random_floats(rng, shape_element_count(c.x_shape));
    const auto w = random_floats(rng, shape_element_count(c.w_shape));
    const auto b = random_floats(rng, g.out_channels);
    const size_t count = size_t(g.out_channels * g.window.out_size());
    std::vector<float> want(count), scalar(count), avx512(count);
    conv_f32_reference(g, x.data(), w.data(), b.data(), want.data());
    depthwise_conv_f32(g, x.data(), w.data(), b.data(), scalar.data(), nullptr,
                       DepthwisePath::kScalar);
    depthwise_conv_f32(g, x.data(), w.data(), b.data(), avx512.data(), nullptr,
                       DepthwisePath::kAvx512);
    expect_close(scalar, want, 1e-5, describe(c));
    EXPECT_EQ(0, std::memcmp(scalar.data(), avx512.data(), count * sizeof(float))) << describe(c);
  }
}

}  // namespace
}  // namespace openbpu::kernels::testing

namespace openbpu::kernels::testing {
namespace {

Tensor half_tensor(Shape shape, const std::vector<float>& values) {
  Tensor t(DataType::kFloat16, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) t.data<Float16>()[i] = Float16(values[i]);
  return t;
}

TEST(Conv, HalfPrecisionUsesTheReferenceLoop) {
  auto y = run_op("Conv", {},
                  {half_tensor({1, 1, 3}, {1, 2, 3}), half_tensor({2, 1, 2}, {1, 1, 0.5f, -1}),
                   half_tensor({2}, {0, 10})});
  EXPECT_EQ(y[0].dtype(), DataType::kFloat16);
  expect_near(y[0], {1, 2, 2}, {3, 5, 8.5, 8});
  auto t =
      run_op("ConvTranspose", {}, {half_tensor({1, 1, 2}, {1, 2}), half_tensor({1, 1, 2}, {1, 1})});
  expect_near(t[0], {1, 1, 3}, {1, 3, 2});
}

}  // namespace
}  // namespace openbpu::kernels::testing
