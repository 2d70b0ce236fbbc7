#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "kernel_test_support.h"
#include "openbpu/kernels/vector_clones.h"

namespace openbpu::kernels::testing {
namespace {

TEST(QuantizeLinear, OnnxExampleRoundsHalfToEvenAndSaturates) {
  auto y = run_op("QuantizeLinear", {},
                  {make<float>({6}, {0, 2, 3, 1000, -254, -1000}), make<float>({}, {2}),
                   make<uint8_t>({}, {128})});
  EXPECT_EQ(y[0].dtype(), DataType::kUint8);
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{128, 129, 130, 255, 1, 0}));
  // Rounding happens before the zero point is added.
  auto h = run_op("QuantizeLinear", {},
                  {make<float>({5}, {0.5f, 1.5f, 2.5f, -0.5f, -300.f}), make<float>({}, {1}),
                   make<int8_t>({}, {1})});
  EXPECT_EQ(h[0].to_int64_vector(), (std::vector<int64_t>{1, 3, 3, 1, -128}));
  // No zero point: uint8.
  auto d = run_op("QuantizeLinear", {}, {make<float>({2}, {-1, 3}), make<float>({}, {1})}, 1, 10);
  EXPECT_EQ(d[0].dtype(), DataType::kUint8);
  EXPECT_EQ(d[0].to_int64_vector(), (std::vector<int64_t>{0, 3}));
}

TEST(QuantizeLinear, PerAxis) {
  AttributeMap axis0;
  axis0.set("axis", int64_t{0});
  auto y = run_op(
      "QuantizeLinear", axis0,
      {make<float>({2, 2}, {2, 4, 2, 4}), make<float>({2}, {2, 4}), make<uint8_t>({2}, {10, 20})});
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{11, 12, 20, 21}));
  // Default axis 1, as in ONNX's test_quantizelinear_axis.
  auto z = run_op("QuantizeLinear", {},
                  {make<float>({1, 3, 1, 2}, {-162, 10, -20, -50, 245, -485}),
                   make<float>({3}, {2, 4, 5}), make<uint8_t>({3}, {84, 24, 196})});
  EXPECT_EQ(z[0].to_int64_vector(), (std::vector<int64_t>{3, 89, 19, 12, 245, 99}));
  EXPECT_THROW(run_op("QuantizeLinear", {},
                      {make<float>({1, 3}, {1, 2, 3}), make<float>({2}, {1, 1}),
                       make<uint8_t>({2}, {0, 0})}),
               KernelError);
}

TEST(DequantizeLinear, OnnxExampleAxisAndInt32) {
  auto y = run_op(
      "DequantizeLinear", {},
      {make<uint8_t>({4}, {0, 3, 128, 255}), make<float>({}, {2}), make<uint8_t>({}, {128})});
  expect_near(y[0], {4}, {-256, -250, 0, 254});
  auto a = run_op("DequantizeLinear", {},
                  {make<int8_t>({1, 2, 2}, {-1, 1, -128, 127}), make<float>({2}, {0.5f, 2}),
                   make<int8_t>({2}, {1, 0})});
  expect_near(a[0], {1, 2, 2}, {-1, 0, -256, 254});
  auto i =
      run_op("DequantizeLinear", {}, {make<int32_t>({2}, {-7, 1000}), make<float>({}, {0.5f})});
  expect_near(i[0], {2}, {-3.5, 500});
  EXPECT_THROW(run_op("DequantizeLinear", {},
                      {make<int32_t>({1}, {1}), make<float>({}, {1}), make<int32_t>({}, {3})}),
               KernelError);
  EXPECT_THROW(run_op("DequantizeLinear", {},
                      {make<uint8_t>({1}, {1}), make<float>({}, {1}), make<int8_t>({}, {3})}),
               KernelError);
}

TEST(DynamicQuantizeLinear, OnnxExampleAndZeros) {
  auto y =
      run_op("DynamicQuantizeLinear", {}, {make<float>({6}, {0, 2, -3, -2.5f, 1.34f, 0.5f})}, 3);
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{153, 255, 0, 26, 221, 179}));
  EXPECT_FLOAT_EQ(y[1].data<float>()[0], 0.019607844f);
  EXPECT_EQ(y[2].int_at(0), 153);
  auto z = run_op("DynamicQuantizeLinear", {}, {make<float>({2}, {0, 0})}, 3);
  EXPECT_EQ(z[0].to_int64_vector(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(z[1].float_at(0), 0.0);
  EXPECT_THROW(run_op("DynamicQuantizeLinear", {}, {make<double>({1}, {1})}, 3), KernelError);
}

// The AVX-512 range and quantization give the baseline's bytes (every vector path the CPU has
// is compared): ties, NaN, infinities and signed zeros among random values, tails.
TEST(DynamicQuantizeLinear, VectorPathEqualsBaseline) {
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> dist(-7.0f, 5.0f);
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t n : {int64_t{5}, int64_t{16}, int64_t{1000}, int64_t{40003}}) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = dist(rng);
    if (n > 100) {
      v[3] = std::nanf("");
      v[17] = -0.0f;
      v[40] = 0.5f * (v[41] = 2.0f);  // a tie once scaled, for some scales
    }
    if (n == 1000) v[50] = inf;  // scale inf: every value quantizes to the zero point
    const Tensor x = make<float>({n}, v);
    const VectorPath initial = vector_path();
    ASSERT_TRUE(set_vector_path(VectorPath::kBaseline));
    const std::vector<Tensor> want = run_op("DynamicQuantizeLinear", {}, {x}, 3);
    for (VectorPath path : {VectorPath::kAvx2, VectorPath::kAvx512}) {
      if (!set_vector_path(path)) continue;  // the paths this CPU has
      const std::vector<Tensor> got = run_op("DynamicQuantizeLinear", {}, {x}, 3);
      for (int k = 0; k < 3; ++k) {
        ASSERT_EQ(0, std::memcmp(want[size_t(k)].raw_data(), got[size_t(k)].raw_data(),
                                 want[size_t(k)].byte_size()))
            << "n " << n << " output " << k << " path " << static_cast<int>(path);
      }
    }
    set_vector_path(initial);
  }
}

}  // namespace
}  // namespace openbpu::kernels::testing
