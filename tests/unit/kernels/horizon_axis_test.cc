// HzQuantizedArgMax: hand-computed cases (ties, keepdims, axes, int16), agreement with the
// float ONNX ArgMax on the same values, and validation errors. HzQuantizedSoftmax: rows along an
// axis against the float Softmax of the dequantized values, and validation errors.
#include <cmath>
#include <random>

#include "horizon_test_support.h"
#include "openbpu/simulator/integer_arithmetic.h"

namespace openbpu::kernels::testing {
namespace {

AttributeMap argmax_attributes(int64_t axis, int64_t keepdims) {
  return attributes({{"axis", axis}, {"keepdims", keepdims}});
}

TEST(HzQuantizedArgMax, TiesGoToTheLowestIndexAlongC) {
  // [1, 3, 1, 2]: two pixels; pixel 0 has a tie between c = 0 and c = 2, pixel 1 its maximum at c = 1.
  const Tensor x = make<int8_t>({1, 3, 1, 2}, {7, -5, 3, 9, 7, -128});
  const Tensor y = run_horizon("HzQuantizedArgMax", argmax_attributes(1, 1), {x});
  EXPECT_EQ(y.dtype(), DataType::kInt32);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 1, 2}));
  EXPECT_EQ(int_values(y), (std::vector<int64_t>{0, 1}));
  // All equal: index 0.
  const Tensor flat = make<int8_t>({1, 4}, {-128, -128, -128, -128});
  EXPECT_EQ(int_values(run_horizon("HzQuantizedArgMax", argmax_attributes(1, 0), {flat})),
            (std::vector<int64_t>{0}));
}

TEST(HzQuantizedArgMax, KeepdimsAxesAndInt16) {
  const Tensor x = make<int16_t>({2, 3}, {1, 300, -2, 32767, -32768, 32767});
  const Tensor rows = run_horizon("HzQuantizedArgMax", argmax_attributes(-1, 0), {x});
  EXPECT_EQ(rows.shape(), (Shape{2}));
  EXPECT_EQ(int_values(rows), (std::vector<int64_t>{1, 0}));
  const Tensor cols = run_horizon("HzQuantizedArgMax", argmax_attributes(0, 1), {x});
  EXPECT_EQ(cols.shape(), (Shape{1, 3}));
  EXPECT_EQ(int_values(cols), (std::vector<int64_t>{1, 0, 1}));
}

TEST(HzQuantizedArgMax, EqualsTheFloatArgMaxOfTheDequantizedValues) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t c = 1 + static_cast<int64_t>(rng() % 40), h = 1 + static_cast<int64_t>(rng() % 5);
    const int64_t axis = static_cast<int64_t>(rng() % 3);
    SCOPED_TRACE("trial " + std::to_string(trial) + " shape [2," + std::to_string(c) + "," +
                 std::to_string(h) + "] axis " + std::to_string(axis));
    Tensor x(DataType::kInt8, {2, c, h});
    Tensor xf(DataType::kFloat32, {2, c, h});
    for (int64_t i = 0; i < x.element_count(); ++i) {
      x.data<int8_t>()[i] = static_cast<int8_t>(static_cast<int>(rng() % 16) - 8);  // many ties
      xf.data<float>()[i] = 0.37f * x.data<int8_t>()[i];
    }
    AttributeMap a = argmax_attributes(axis, 1);
    const Tensor want = run_op("ArgMax", a, {xf}, 1, 13)[0];
    const Tensor got = run_horizon("HzQuantizedArgMax", a, {x});
    EXPECT_EQ(got.shape(), want.shape());
    EXPECT_EQ(int_values(got), want.to_int64_vector());
  }
}

TEST(HzQuantizedArgMax, RejectsBadAttributesAndTypes) {
  EXPECT_THROW(prepare_horizon("HzQuantizedArgMax", argmax_attributes(1, 2), 1), KernelError);
  EXPECT_THROW(run_horizon("HzQuantizedArgMax", argmax_attributes(2, 1), {make<int8_t>({2, 2}, {1, 2, 3, 4})}),
               KernelError);
  EXPECT_THROW(run_horizon("HzQuantizedArgMax", argmax_attributes(0, 1), {make<float>({2}, {1, 2})}),
               KernelError);
}

AttributeMap softmax_attributes(int64_t axis, double in_scale, double out_scale, const char* out = nullptr) {
  const simulator::SoftmaxMultipliers m = simulator::softmax_multipliers(in_scale, out_scale);
  if (out == nullptr) out = out_scale < 1.0 / 200 ? "int16" : "int8";
  return attributes({{"axis", axis},
                     {"output_type", std::string(out)},
                     {"exponent_multiplier", int64_t{m.exponent.multiplier}},
                     {"exponent_shift", int64_t{m.exponent.shift}},
                     {"output_multiplier", int64_t{m.output.multiplier}},
                     {"output_shift", int64_t{m.output.shift}}});
}

TEST(HzQuantizedSoftmax, RowsAlongTheAxisFollowTheFloatSoftmax) {
  // [2, 3] int16, scale 0.01: row 0 ≈ {0, ln 2, ln 4} → ≈ {1, 2, 4} / 7; row 1 all equal → 1/3.
  const double s = 0.01;
  const std::vector<int16_t> q = {0, 69, 139, -300, -300, -300};
  const Tensor x = make<int16_t>({2, 3}, q);
  const Tensor y = run_horizon("HzQuantizedSoftmax", softmax_attributes(1, s, 1.0 / 32767), {x});
  EXPECT_EQ(y.dtype(), DataType::kInt16);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  const std::vector<int64_t> got = int_values(y);
  for (size_t r = 0; r < 2; ++r) {
    double sum = 0;
    for (size_t k = 0; k < 3; ++k) sum += std::exp(q[3 * r + k] * s);
    for (size_t k = 0; k < 3; ++k) {
      EXPECT_NEAR(double(got[3 * r + k]), std::exp(q[3 * r + k] * s) / sum * 32767, 1.0) << r << "," << k;
    }
  }
  EXPECT_EQ(got[3], 10922);  // round(32767 / 3)
  // Along axis 0: columns of two, each summing to 1 within a step.
  const std::vector<int64_t> c = int_values(run_horizon("HzQuantizedSoftmax", softmax_attributes(0, s, 1.0 / 32767), {x}));
  for (size_t j = 0; j < 3; ++j) EXPECT_NEAR(double(c[j] + c[3 + j]), 32767.0, 1.0) << j;
}

TEST(HzQuantizedSoftmax, Int8MatchesTheFloatSoftmaxWithinOneStep) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t c = 1 + static_cast<int64_t>(rng() % 30), h = 1 + static_cast<int64_t>(rng() % 4);
    const int64_t axis = static_cast<int64_t>(rng() % 3);
    SCOPED_TRACE("trial " + std::to_string(trial) + " axis " + std::to_string(axis));
    Tensor x(DataType::kInt8, {2, c, h});
    Tensor xf(DataType::kFloat32, {2, c, h});
    for (int64_t i = 0; i < x.element_count(); ++i) {
      x.data<int8_t>()[i] = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
      xf.data<float>()[i] = 0.05f * x.data<int8_t>()[i];
    }
    AttributeMap fa = attributes({{"axis", axis}});
    const Tensor want = run_op("Softmax", fa, {xf}, 1, 13)[0];
    const Tensor got = run_horizon("HzQuantizedSoftmax", softmax_attributes(axis, 0.05, 1.0 / 127), {x});
    ASSERT_EQ(got.shape(), want.shape());
    const std::vector<int64_t> g = int_values(got);
    for (int64_t i = 0; i < want.element_count(); ++i) {
      EXPECT_NEAR(double(g[size_t(i)]), want.data<float>()[i] * 127.0, 1.0) << i;
    }
  }
}

TEST(HzQuantizedSoftmax, Int8LogitsGiveInt16Probabilities) {
  const Tensor x = make<int8_t>({1, 4}, {10, 20, 30, 40});
  const Tensor y = run_horizon("HzQuantizedSoftmax", softmax_attributes(1, 0.05, 1.0 / 32767, "int16"), {x});
  EXPECT_EQ(y.dtype(), DataType::kInt16);
  const std::vector<int64_t> got = int_values(y);
  double sum = 0;
  for (int v : {10, 20, 30, 40}) sum += std::exp(0.05 * v);
  for (size_t k = 0; k < 4; ++k) EXPECT_NEAR(double(got[k]), std::exp(0.05 * (10 + 10 * double(k))) / sum * 32767, 1.0) << k;
}

TEST(HzQuantizedSoftmax, RejectsBadAttributesAndTypes) {
  AttributeMap bad = softmax_attributes(1, 0.1, 1.0 / 127);
  bad.set("output_multiplier", int64_t{7});  // not a fixed-point multiplier
  EXPECT_THROW(prepare_horizon("HzQuantizedSoftmax", bad, 1), KernelError);
  AttributeMap missing = attributes({{"axis", int64_t{1}}});
  AttributeMap int32_out = softmax_attributes(1, 0.1, 1.0 / 127, "int32");
  EXPECT_THROW(prepare_horizon("HzQuantizedSoftmax", int32_out, 1), KernelError);
  EXPECT_THROW(prepare_horizon("HzQuantizedSoftmax", missing, 1), KernelError);
  EXPECT_THROW(run_horizon("HzQuantizedSoftmax", softmax_attributes(2, 0.1, 1.0 / 127), {make<int8_t>({2, 2}, {1, 2, 3, 4})}),
               KernelError);
  EXPECT_THROW(run_horizon("HzQuantizedSoftmax", softmax_attributes(1, 0.1, 1.0 / 127), {make<int32_t>({2, 2}, {1, 2, 3, 4})}),
               KernelError);
}

}  // namespace
}  // namespace openbpu::kernels::testing
