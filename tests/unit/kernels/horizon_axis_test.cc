// HzQuantizedArgMax: hand-computed cases (ties, keepdims, axes, int16), agreement with the
// float ONNX ArgMax on the same values, and validation errors.
#include <random>

#include "horizon_test_support.h"

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

}  // namespace
}  // namespace openbpu::kernels::testing
