#include <cmath>
#include <limits>
#include <random>

#include "kernel_test_support.h"
#include "openbpu/kernels/elementwise.h"

namespace openbpu::kernels::testing {
namespace {

std::vector<float> ramp(int64_t n, float scale = 0.5f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = static_cast<float>(i % 17 - 8) * scale;
  return v;
}

TEST(Binary, ArithmeticWithNumpyBroadcasting) {
  const auto a = make<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const auto b = make<float>({3}, {10, 20, 30});
  expect_near(run_op("Add", {}, {a, b})[0], {2, 3}, {11, 22, 33, 14, 25, 36});
  expect_near(run_op("Sub", {}, {a, b})[0], {2, 3}, {-9, -18, -27, -6, -15, -24});
  expect_near(run_op("Mul", {}, {a, make<float>({2, 1}, {2, 3})})[0], {2, 3},
              {2, 4, 6, 12, 15, 18});
  expect_near(run_op("Div", {}, {make<float>({}, {6}), a})[0], {2, 3}, {6, 3, 2, 1.5, 1.2, 1});
  auto outer = run_op("Add", {}, {make<float>({2, 1}, {1, 2}), make<float>({1, 3}, {10, 20, 30})});
  expect_near(outer[0], {2, 3}, {11, 21, 31, 12, 22, 32});
}

TEST(Binary, IntegerArithmeticIsDefinedEverywhere) {
  const auto a = make<int32_t>({4}, {7, -7, std::numeric_limits<int32_t>::min(), 5});
  const auto b = make<int32_t>({4}, {2, 2, -1, 0});
  EXPECT_EQ(run_op("Div", {}, {a, b})[0].to_int64_vector(),
            (std::vector<int64_t>{3, -3, std::numeric_limits<int32_t>::min(), 0}));
  const auto big = make<int64_t>({1}, {std::numeric_limits<int64_t>::max()});
  EXPECT_EQ(run_op("Add", {}, {big, make<int64_t>({1}, {1})})[0].to_int64_vector(),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min()}));
  auto u8 = run_op("Mul", {}, {make<uint8_t>({2}, {16, 3}), make<uint8_t>({2}, {17, 4})});
  EXPECT_EQ(u8[0].to_int64_vector(), (std::vector<int64_t>{16, 12}));  // 272 wraps to 16
}

TEST(Binary, LegacyBroadcastBeforeOpset7) {
  AttributeMap attrs;
  attrs.set("broadcast", int64_t{1});
  const auto a = make<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  // B aligned with A's suffix by default
  expect_near(run_op("Add", attrs, {a, make<float>({3}, {1, 2, 3})}, 1, 6)[0], {2, 3},
              {2, 4, 6, 5, 7, 9});
  // axis 0: B of shape [2] runs along A's first dimension
  attrs.set("axis", int64_t{0});
  expect_near(run_op("Mul", attrs, {a, make<float>({2}, {10, 100})}, 1, 6)[0], {2, 3},
              {10, 20, 30, 400, 500, 600});
  // size-1 dimensions broadcast as well (pytorch-operator add_size1_broadcast)
  expect_near(run_op("Add", attrs, {a, make<float>({2, 1}, {1, 2})}, 1, 6)[0], {2, 3},
              {2, 3, 4, 6, 7, 8});
  // without broadcast=1 shapes must match
  EXPECT_THROW(run_op("Add", {}, {a, make<float>({3}, {1, 2, 3})}, 1, 6), KernelError);
  // the legacy attributes are rejected from opset 7
  EXPECT_THROW(run_op("Add", attrs, {a, make<float>({2}, {1, 2})}, 1, 7), KernelError);
}

TEST(Binary, BroadcastLoopMatchesReference) {
  std::mt19937 rng(7);
  const std::vector<std::pair<Shape, Shape>> cases = {{{2, 3, 4, 5}, {1, 3, 1, 1}},
                                                      {{2, 3, 4, 5}, {2, 3, 1, 1}},
                                                      {{4, 1, 5}, {1, 3, 1}},
                                                      {{2, 1, 4}, {3, 1}},
                                                      {{1}, {3, 2}},
                                                      {{5, 7}, {}},
                                                      {{3, 1, 1, 2}, {1, 4, 5, 1}},
                                                      {{64, 300}, {300}},
                                                      {{0, 3}, {3}}};
  ThreadPool pool(3);
  for (const auto& [sa, sb] : cases) {
    std::uniform_real_distribution<float> dist(-2.f, 2.f);
    auto fill = [&](const Shape& s) {
      std::vector<float> v(static_cast<size_t>(shape_element_count(s)));
      for (float& f : v) f = dist(rng);
      return make<float>(s, v);
    };
    const Tensor a = fill(sa), b = fill(sb);
    Tensor want(DataType::kFloat32, broadcast_shapes(sa, sb, "test"));
    map_binary<float, float, float>(nullptr, a, b, want, [](float x, float y) { return x - y; });
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      auto got = run_op("Sub", {}, {a, b}, 1, 17, p);
      ASSERT_EQ(got[0].shape(), want.shape());
      for (int64_t i = 0; i < want.element_count(); ++i) {
        ASSERT_EQ(got[0].float_at(i), want.float_at(i))
            << shape_to_string(sa) << " - " << shape_to_string(sb) << " at " << i;
      }
    }
  }
}

TEST(Binary, LargeBroadcastIsThreadCountIndependent) {
  const Shape big{2, 8, 60, 70};
  const auto a = make<float>(big, ramp(shape_element_count(big)));
  const auto b = make<float>({1, 8, 1, 1}, ramp(8, 0.25f));
  ThreadPool pool(4);
  auto serial = run_op("Mul", {}, {a, b});
  auto parallel = run_op("Mul", {}, {a, b}, 1, 17, &pool);
  for (int64_t i = 0; i < serial[0].element_count(); ++i) {
    ASSERT_EQ(serial[0].float_at(i), parallel[0].float_at(i));
  }
}

TEST(Binary, PowMixedTypes) {
  const auto x = make<float>({3}, {1, 2, 3});
  expect_near(run_op("Pow", {}, {x, make<float>({3}, {4, 5, 6})})[0], {3}, {1, 32, 729});
  expect_near(run_op("Pow", {}, {x, make<float>({}, {2})})[0], {3}, {1, 4, 9});
  expect_near(run_op("Pow", {}, {x, make<int64_t>({3}, {4, 5, 6})})[0], {3}, {1, 32, 729});
  expect_near(run_op("Pow", {}, {x, make<uint32_t>({3}, {4, 5, 6})})[0], {3}, {1, 32, 729});
  auto ints = run_op("Pow", {}, {make<int32_t>({3}, {1, 2, 3}), make<int32_t>({3}, {4, 5, 6})});
  EXPECT_EQ(ints[0].to_int64_vector(), (std::vector<int64_t>{1, 32, 729}));
  auto int_float = run_op("Pow", {}, {make<int64_t>({3}, {1, 2, 3}), make<float>({3}, {4, 5, 6})});
  EXPECT_EQ(int_float[0].dtype(), DataType::kInt64);
  EXPECT_EQ(int_float[0].to_int64_vector(), (std::vector<int64_t>{1, 32, 729}));
  auto negative = run_op("Pow", {}, {make<int32_t>({3}, {1, -1, 2}), make<int32_t>({}, {-3})});
  EXPECT_EQ(negative[0].to_int64_vector(), (std::vector<int64_t>{1, -1, 0}));
  EXPECT_THROW(run_op("Pow", {}, {x, make<int64_t>({3}, {4, 5, 6})}, 1, 11), KernelError);
}

TEST(Binary, ModFollowsDivisorSignUnlessFmod) {
  // ONNX test_mod_mixed_sign_int32
  const auto a = make<int32_t>({6}, {-4, 7, 5, 4, -7, 8});
  const auto b = make<int32_t>({6}, {2, -3, 8, -2, 3, 5});
  EXPECT_EQ(run_op("Mod", {}, {a, b})[0].to_int64_vector(),
            (std::vector<int64_t>{0, -2, 5, 0, 2, 3}));
  AttributeMap fmod;
  fmod.set("fmod", int64_t{1});
  EXPECT_EQ(run_op("Mod", fmod, {a, b})[0].to_int64_vector(),
            (std::vector<int64_t>{0, 1, 5, 0, -1, 3}));
  expect_near(
      run_op("Mod", fmod,
             {make<float>({3}, {-4.3f, 7.2f, 5.0f}), make<float>({3}, {2.1f, -3.4f, 8.f})})[0],
      {3}, {-0.1, 0.4, 5.0});
  // x mod 0 is 0 for integers
  EXPECT_EQ(run_op("Mod", {}, {make<int32_t>({1}, {5}), make<int32_t>({1}, {0})})[0].int_at(0), 0);
  // floats require fmod=1
  EXPECT_THROW(run_op("Mod", {}, {make<float>({1}, {1}), make<float>({1}, {2})}), KernelError);
}

TEST(Binary, BitShift) {
  AttributeMap left, right;
  left.set("direction", std::string("LEFT"));
  right.set("direction", std::string("RIGHT"));
  const auto x = make<uint8_t>({3}, {16, 4, 1});
  const auto s = make<uint8_t>({3}, {1, 2, 3});
  EXPECT_EQ(run_op("BitShift", left, {x, s})[0].to_int64_vector(),
            (std::vector<int64_t>{32, 16, 8}));
  EXPECT_EQ(run_op("BitShift", right, {x, s})[0].to_int64_vector(),
            (std::vector<int64_t>{8, 1, 0}));
  EXPECT_EQ(
      run_op("BitShift", left, {make<uint32_t>({1}, {1}), make<uint32_t>({1}, {40})})[0].int_at(0),
      0);
  AttributeMap bad;
  bad.set("direction", std::string("UP"));
  EXPECT_THROW(run_op("BitShift", bad, {x, s}), KernelError);
  EXPECT_THROW(run_op("BitShift", {}, {x, s}), KernelError);  // direction is required
}

TEST(Binary, LogicalAndComparison) {
  const auto p = make<bool>({4}, {true, true, false, false});
  const auto q = make<bool>({4}, {true, false, true, false});
  EXPECT_EQ(run_op("And", {}, {p, q})[0].to_int64_vector(), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(run_op("Or", {}, {p, q})[0].to_int64_vector(), (std::vector<int64_t>{1, 1, 1, 0}));
  EXPECT_EQ(run_op("Xor", {}, {p, q})[0].to_int64_vector(), (std::vector<int64_t>{0, 1, 1, 0}));
  const auto a = make<float>({4}, {1, 2, NAN, 4});
  const auto b = make<float>({}, {2});
  EXPECT_EQ(run_op("Equal", {}, {a, b})[0].to_int64_vector(), (std::vector<int64_t>{0, 1, 0, 0}));
  EXPECT_EQ(run_op("Greater", {}, {a, b})[0].to_int64_vector(), (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(run_op("Less", {}, {a, b})[0].to_int64_vector(), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(run_op("GreaterOrEqual", {}, {a, b})[0].to_int64_vector(),
            (std::vector<int64_t>{0, 1, 0, 1}));
  EXPECT_EQ(run_op("LessOrEqual", {}, {a, b})[0].to_int64_vector(),
            (std::vector<int64_t>{1, 1, 0, 0}));
  auto y = run_op("Equal", {}, {make<int64_t>({2}, {3, 4}), make<int64_t>({2}, {3, 5})});
  EXPECT_EQ(y[0].dtype(), DataType::kBool);
  EXPECT_THROW(run_op("And", {}, {a, a}), KernelError);  // bool only
}

TEST(Binary, PRelu) {
  // ONNX test_prelu_broadcast: slope [5] broadcast to [3,4,5]
  const auto x = make<float>({2, 3}, {-1, 2, -3, 4, -5, 6});
  expect_near(run_op("PRelu", {}, {x, make<float>({3}, {0.1f, 0.2f, 0.3f})})[0], {2, 3},
              {-0.1, 2, -0.9, 4, -1.0, 6});
  // opset 6: a slope of X's channel count applies along dimension 1
  const auto x3 = make<float>({1, 2, 2}, {-1, -1, -1, 1});
  expect_near(run_op("PRelu", {}, {x3, make<float>({2}, {0.5f, 2.f})}, 1, 6)[0], {1, 2, 2},
              {-0.5, -0.5, -2, 1});
  // slope must broadcast unidirectionally to X
  EXPECT_THROW(
      run_op("PRelu", {}, {make<float>({3}, {1, 2, 3}), make<float>({2, 3}, {1, 2, 3, 4, 5, 6})}),
      KernelError);
}

TEST(Binary, Where) {
  const auto c = make<bool>({2, 2}, {true, false, true, true});
  const auto x = make<float>({2, 2}, {1, 2, 3, 4});
  const auto y = make<float>({2, 2}, {9, 8, 7, 6});
  expect_near(run_op("Where", {}, {c, x, y})[0], {2, 2}, {1, 8, 3, 4});
  // broadcast condition and Y (ONNX test_where_long_example style)
  auto r = run_op(
      "Where", {},
      {make<bool>({2, 1}, {true, false}), make<int64_t>({1, 3}, {1, 2, 3}), make<int64_t>({}, {0})});
  EXPECT_EQ(r[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(r[0].to_int64_vector(), (std::vector<int64_t>{1, 2, 3, 0, 0, 0}));
  EXPECT_THROW(run_op("Where", {}, {x, x, y}), KernelError);  // condition must be bool
}

TEST(Binary, VariadicMaxMinSumMean) {
  // ONNX test_max_example / test_sum_example / test_mean_example
  const auto a = make<float>({3}, {3, 2, 1});
  const auto b = make<float>({3}, {1, 4, 4});
  const auto c = make<float>({3}, {2, 5, 0});
  expect_near(run_op("Max", {}, {a, b, c})[0], {3}, {3, 5, 4});
  expect_near(run_op("Min", {}, {a, b, c})[0], {3}, {1, 2, 0});
  expect_near(run_op("Sum", {}, {a, b, c})[0], {3}, {6, 11, 5});
  expect_near(run_op("Mean", {}, {a, b, c})[0], {3}, {2, 11.0 / 3.0, 5.0 / 3.0});
  expect_near(run_op("Sum", {}, {a})[0], {3}, {3, 2, 1});
  // broadcasting across inputs
  expect_near(run_op("Max", {}, {make<float>({2, 1}, {1, 5}), make<float>({3}, {0, 2, 6})})[0],
              {2, 3}, {1, 2, 6, 5, 5, 6});
  EXPECT_EQ(run_op("Min", {}, {make<uint64_t>({2}, {7, 1}), make<uint64_t>({2}, {3, 9})})[0]
                .to_int64_vector(),
            (std::vector<int64_t>{3, 1}));
  EXPECT_TRUE(std::isnan(
      run_op("Max", {}, {make<float>({1}, {NAN}), make<float>({1}, {1})})[0].float_at(0)));
  EXPECT_THROW(run_op("Sum", {}, {a, make<double>({3}, {1, 2, 3})}), KernelError);
  EXPECT_THROW(run_op("Mean", {}, {a, make<float>({2}, {1, 2})}), KernelError);
}

TEST(Binary, Errors) {
  const auto a = make<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THROW(run_op("Add", {}, {a, make<float>({2}, {1, 2})}), KernelError);      // no broadcast
  EXPECT_THROW(run_op("Add", {}, {a, make<double>({3}, {1, 2, 3})}), KernelError);  // types
  EXPECT_THROW(run_op("Mul", {}, {a}), KernelError);                                // missing input
  EXPECT_THROW(run_op("Add", {}, {make<bool>({1}, {true}), make<bool>({1}, {true})}), KernelError);
}

}  // namespace
}  // namespace openbpu::kernels::testing
