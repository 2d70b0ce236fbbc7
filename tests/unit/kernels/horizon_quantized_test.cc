// HzSElementwiseAdd/Sub/Mul, HzLut, HzRequantize, HzSQuantizedMatmul: hand-computed cases,
// differential tests against the float ONNX operator on dequantized inputs (within 1 LSB), and
// the validation errors.
#include <cmath>
#include <limits>
#include <random>

#include "horizon_test_support.h"
#include "openbpu/kernels/vector_clones.h"

namespace openbpu::kernels::testing {
namespace {

constexpr int32_t kOne = 1 << 30;  // {kOne, 30} = 1.0

AttributeMap add_attributes(sim::FixedPointMultiplier fa, sim::FixedPointMultiplier fb,
                            const std::string& output_type = "int8") {
  return attributes({{"input_multipliers", std::vector<int64_t>{fa.multiplier, fb.multiplier}},
                     {"input_shifts", std::vector<int64_t>{fa.shift, fb.shift}},
                     {"intermediate_shift", int64_t{8}},
                     {"output_type", output_type}});
}

// Random int8/int16 data for a binary operator's differential test.
Tensor random_activation(DataType type, Shape shape, std::mt19937& rng) {
  return type == DataType::kInt8 ? random_ints<int8_t>(std::move(shape), rng, -128, 127)
                                 : random_ints<int16_t>(std::move(shape), rng, -32768, 32767);
}

TEST(HzSElementwiseAdd, HandComputedRoundingSaturationAndBroadcast) {
  // a * 1.0 + b * 0.5, intermediate_shift 8: multipliers 256 and 128.
  const auto fa = sim::to_fixed_point(256.0), fb = sim::to_fixed_point(128.0);
  const Tensor a = make<int8_t>({3}, {10, -20, 100});
  const Tensor b = make<int8_t>({3}, {5, 5, 100});
  EXPECT_EQ(int_values(run_horizon("HzSElementwiseAdd", add_attributes(fa, fb), {a, b})),
            (std::vector<int64_t>{13, -17, 127}));  // 12.5 → 13, -17.5 → -17, 150 → 127
  EXPECT_EQ(int_values(run_horizon("HzSElementwiseSub", add_attributes(fa, fb), {a, b})),
            (std::vector<int64_t>{8, -22, 50}));  // 7.5 → 8, -22.5 → -22
  const Tensor y16 = run_horizon("HzSElementwiseAdd", add_attributes(fa, fb, "int16"), {a, b});
  EXPECT_EQ(y16.dtype(), DataType::kInt16);
  EXPECT_EQ(int_values(y16), (std::vector<int64_t>{13, -17, 150}));
  // Broadcast [2, 1] + [3] → [2, 3], int16 a.
  const Tensor col = make<int16_t>({2, 1}, {1000, -1000});
  const Tensor y = run_horizon("HzSElementwiseAdd", add_attributes(fa, fb, "int16"), {col, b});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(int_values(y), (std::vector<int64_t>{1003, 1003, 1050, -997, -997, -950}));
  AttributeMap relu = add_attributes(fa, fb);
  relu.set("clip_min", int64_t{0});
  EXPECT_EQ(int_values(run_horizon("HzSElementwiseAdd", relu, {a, b})),
            (std::vector<int64_t>{13, 0, 127}));
}

// A scalar operand (a clip bound, an offset) takes the one-operand path (a table for int8): the
// same bytes as the same value spread over the other operand's shape, on either side, with a clip.
TEST(HzSElementwiseAdd, ScalarOperandEqualsTheSpreadOperand) {
  std::mt19937 rng(41);
  const auto fa = sim::to_fixed_point(200.0), fb = sim::to_fixed_point(300.0);
  for (const DataType t : {DataType::kInt8, DataType::kInt16}) {
    const Tensor x =
        random_activation(t, {1, 2, 512, 260}, rng);  // int16: the table too (> 4 · 2^16)
    for (const int64_t value : {-128, 77}) {
      const Tensor scalar = make<int8_t>({1}, {static_cast<int8_t>(value)});
      const Tensor spread = make<int8_t>(
          x.shape(), std::vector<int8_t>(size_t(x.element_count()), static_cast<int8_t>(value)));
      for (const std::string op : {"Max", "Min", "Add", "Sub", "Greater"}) {
        SCOPED_TRACE(str_cat(op, " ", dtype_name(t), " scalar ", value));
        AttributeMap attrs = add_attributes(fa, fb, t == DataType::kInt8 ? "int8" : "int16");
        if (op == "Greater") attrs.set("output_type", std::string("int8"));
        if (op == "Add") attrs.set("clip_min", int64_t{-3});
        ThreadPool pool(2);
        const std::string name = "HzSElementwise" + op;
        EXPECT_EQ(int_values(run_horizon(name, attrs, {x, scalar}, &pool)),
                  int_values(run_horizon(name, attrs, {x, spread})));
        EXPECT_EQ(int_values(run_horizon(name, attrs, {scalar, x}, &pool)),
                  int_values(run_horizon(name, attrs, {spread, x})));
      }
    }
  }
}

// A per-channel operand ([C, 1, 1] against [1, C, H, W]) and a scalar against a small int16
// tensor (the rescaled operators and Mul) take blocks of one value: the same bytes as the value spread over the other's shape.
TEST(HzSElementwiseAdd, PerChannelOperandEqualsTheSpreadOperand) {
  std::mt19937 rng(43);
  const auto fa = sim::to_fixed_point(170.0), fb = sim::to_fixed_point(310.0);
  for (const DataType t : {DataType::kInt8, DataType::kInt16}) {
    const Tensor x = random_activation(t, {1, 6, 9, 11}, rng);
    const Tensor channel = random_activation(t, {6, 1, 1}, rng);
    Tensor spread(t, x.shape());
    for (int64_t i = 0; i < x.element_count(); ++i) {
      if (t == DataType::kInt8)
        spread.data<int8_t>()[i] = channel.data<int8_t>()[i / 99];
      else
        spread.data<int16_t>()[i] = channel.data<int16_t>()[i / 99];
    }
    const Tensor scalar = random_activation(t, {1}, rng);
    Tensor scalar_spread(t, x.shape());
    for (int64_t i = 0; i < x.element_count(); ++i) {
      if (t == DataType::kInt8)
        scalar_spread.data<int8_t>()[i] = scalar.data<int8_t>()[0];
      else
        scalar_spread.data<int16_t>()[i] = scalar.data<int16_t>()[0];
    }
    const auto fm = sim::to_fixed_point(1.0 / 700);
    const AttributeMap mul = attributes({{"multiplier", int64_t{fm.multiplier}},
                                         {"shift", int64_t{fm.shift}},
                                         {"output_type", std::string("int16")}});
    for (const std::string op : {"Add", "Sub", "Max", "Less", "Mul"}) {
      SCOPED_TRACE(str_cat(op, " ", dtype_name(t)));
      AttributeMap attrs =
          add_attributes(fa, fb, t == DataType::kInt8 || op == "Less" ? "int8" : "int16");
      if (op == "Mul") attrs = mul;
      const std::string name = "HzSElementwise" + op;
      ThreadPool pool(2);
      EXPECT_EQ(int_values(run_horizon(name, attrs, {x, channel}, &pool)),
                int_values(run_horizon(name, attrs, {x, spread})));
      EXPECT_EQ(int_values(run_horizon(name, attrs, {channel, x}, &pool)),
                int_values(run_horizon(name, attrs, {spread, x})));
      EXPECT_EQ(int_values(run_horizon(name, attrs, {scalar, x})),
                int_values(run_horizon(name, attrs, {scalar_spread, x})));
    }
  }
}

// Equal-shaped operands take the vectorised rows on every CPU path; a broadcast operand of the
// same values takes the element loop, the reference. Extreme values and multipliers whose shifts
// span 0 to 40 (fixed seeds).
TEST(HzSElementwise, VectorRowsEqualTheElementLoopOnEveryPath) {
  const VectorPath initial = vector_path();
  const DataType types[] = {DataType::kInt8, DataType::kInt16};
  uint32_t seed = 900;
  for (const DataType ta : types) {
    for (const DataType tb : types) {
      for (const DataType ty : types) {
        std::mt19937 rng(seed++);
        const int64_t n = 3 * 1024 + 77;  // several rows and a tail
        Tensor a = random_activation(ta, {1, n}, rng), b = random_activation(tb, {1, n}, rng);
        for (Tensor* t : {&a, &b}) {  // the types' limits at the front
          for (int64_t i = 0; i < 4; ++i) {
            const int64_t v =
                (i % 2 ? 1 : -1) * (t->dtype() == DataType::kInt8 ? 128 : 32768) - (i % 2);
            if (t->dtype() == DataType::kInt8)
              t->data<int8_t>()[i] = static_cast<int8_t>(v);
            else
              t->data<int16_t>()[i] = static_cast<int16_t>(v);
          }
        }
        const Tensor b_row = b.reshaped({n});  // broadcast against [1, n]
        std::uniform_real_distribution<double> log2(-12.0, 9.0);
        const std::string out = ty == DataType::kInt8 ? "int8" : "int16";
        AttributeMap rescaled = add_attributes(sim::to_fixed_point(std::exp2(log2(rng))),
                                               sim::to_fixed_point(std::exp2(log2(rng))), out);
        rescaled.set("clip_min", int64_t{-100});
        const auto f = sim::to_fixed_point(std::exp2(log2(rng) - 14.0));
        const AttributeMap mul = attributes({{"multiplier", int64_t{f.multiplier}},
                                             {"shift", int64_t{f.shift}},
                                             {"output_type", out}});
        for (const std::string op :
             {"Add", "Sub", "Max", "Min", "Equal", "Greater", "Less", "Mul"}) {
          const bool compare = op == "Equal" || op == "Greater" || op == "Less";
          if (compare && ty != DataType::kInt8) continue;
          SCOPED_TRACE(
              str_cat(op, " ", dtype_name(ta), " ", dtype_name(tb), " -> ", dtype_name(ty)));
          const AttributeMap& attrs = op == "Mul" ? mul : rescaled;
          ASSERT_TRUE(set_vector_path(VectorPath::kBaseline));
          const std::vector<int64_t> want =
              int_values(run_horizon("HzSElementwise" + op, attrs, {a, b_row}));
          for (VectorPath path : {VectorPath::kBaseline, VectorPath::kAvx2, VectorPath::kAvx512}) {
            if (!set_vector_path(path)) continue;
            ThreadPool pool(2);
            EXPECT_EQ(int_values(run_horizon("HzSElementwise" + op, attrs, {a, b}, &pool)), want)
                << "path " << static_cast<int>(path);
          }
        }
      }
    }
  }
  set_vector_path(initial);
}

// HzRequantize per channel and per tensor on every path equals the definition element by element.
TEST(HzRequantize, VectorRowsEqualTheDefinitionOnEveryPath) {
  const VectorPath initial = vector_path();
  std::mt19937 rng(77);
  const Tensor x = random_ints<int32_t>({2, 5, 7, 9}, rng, -(1 << 24), 1 << 24);
  std::uniform_real_distribution<double> log2(-20.0, 2.0);
  std::vector<sim::FixedPointMultiplier> fs;
  for (int c = 0; c < 5; ++c) fs.push_back(sim::to_fixed_point(std::exp2(log2(rng))));
  const auto [multipliers, shifts] = multiplier_lists(fs);
  for (const std::string out : {"int8", "int16"}) {
    const AttributeMap per_channel = attributes({{"multipliers", multipliers},
                                                 {"shifts", shifts},
                                                 {"axis", int64_t{1}},
                                                 {"output_type", out}});
    const AttributeMap per_tensor =
        attributes({{"multiplier", multipliers[0]}, {"shift", shifts[0]}, {"output_type", out}});
    for (const AttributeMap* attrs : {&per_channel, &per_tensor}) {
      std::vector<int64_t> want;
      for (int64_t i = 0; i < x.element_count(); ++i) {
        const auto& f = fs[size_t(attrs == &per_tensor ? 0 : (i / 63) % 5)];
        const int64_t v = sim::apply_multiplier(x.data<int32_t>()[i], f);
        want.push_back(out == "int8" ? sim::saturate<int8_t>(v) : sim::saturate<int16_t>(v));
      }
      for (VectorPath path : {VectorPath::kBaseline, VectorPath::kAvx2, VectorPath::kAvx512}) {
        if (!set_vector_path(path)) continue;
        EXPECT_EQ(int_values(run_horizon("HzRequantize", *attrs, {x})), want)
            << out << " path " << static_cast<int>(path);
      }
    }
  }
  set_vector_path(initial);
}

TEST(HzSElementwiseMul, HandComputed) {
  const auto f = sim::to_fixed_point(0.25);
  const AttributeMap attrs = attributes({{"multiplier", int64_t{f.multiplier}},
                                         {"shift", int64_t{f.shift}},
                                         {"output_type", std::string("int8")}});
  const Tensor a = make<int8_t>({3}, {3, -5, 100});
  const Tensor b = make<int16_t>({1}, {7});
  // 21/4 = 5.25 → 5, -35/4 = -8.75 → -9, 700/4 = 175 → 127
  EXPECT_EQ(int_values(run_horizon("HzSElementwiseMul", attrs, {a, b})),
            (std::vector<int64_t>{5, -9, 127}));
}

TEST(HzSElementwiseAddSubMul, MatchTheFloatOperatorsWithinOneStep) {
  const DataType i8 = DataType::kInt8, i16 = DataType::kInt16;
  struct Case {
    Shape a, b;
    DataType ta, tb, ty;
  };
  const Case cases[] = {{{2, 3, 4, 5}, {2, 3, 4, 5}, i8, i8, i8},
                        {{2, 3, 4, 5}, {1, 3, 1, 1}, i8, i16, i16},
                        {{4, 1, 6}, {5, 1}, i16, i16, i8},
                        {{7}, {3, 7}, i16, i8, i16}};
  uint32_t seed = 300;
  for (const Case& c : cases) {
    for (const std::string op : {"Add", "Sub", "Mul"}) {
      SCOPED_TRACE(str_cat(op, " seed ", seed, " a ", shape_to_string(c.a), " ", dtype_name(c.ta),
                           " b ", shape_to_string(c.b), " ", dtype_name(c.tb), " -> ",
                           dtype_name(c.ty)));
      std::mt19937 rng(seed++);
      const Tensor a = random_activation(c.ta, c.a, rng);
      const Tensor b = random_activation(c.tb, c.b, rng);
      std::uniform_real_distribution<float> scale(0.5f, 2.0f);
      const float sa = scale(rng) / (c.ta == i8 ? 127 : 32767);
      const float sb = scale(rng) / (c.tb == i8 ? 127 : 32767);
      const Tensor yf = run_op(op, {}, {dequantized(a, sa), dequantized(b, sb)})[0];
      float y_max = 0.0f;
      for (int64_t i = 0; i < yf.element_count(); ++i)
        y_max = std::max(y_max, std::fabs(float(yf.float_at(i))));
      const float so = y_max / (c.ty == i8 ? 115.0f : 32000.0f);
      const std::string out_type(dtype_name(c.ty));
      AttributeMap attrs;
      if (op == "Mul") {
        const auto f = sim::requantization_multiplier(double(sa) * sb, so);
        attrs = attributes({{"multiplier", int64_t{f.multiplier}},
                            {"shift", int64_t{f.shift}},
                            {"output_type", out_type}});
      } else {
        attrs = add_attributes(sim::to_fixed_point(double(sa) / so * 256),
                               sim::to_fixed_point(double(sb) / so * 256), out_type);
      }
      const Tensor y = run_horizon("HzSElementwise" + op, attrs, {a, b});
      ASSERT_EQ(y.shape(), yf.shape());
      EXPECT_LE(max_abs_difference(y, quantized_values(yf, so, c.ty)), 1);
    }
  }
}

TEST(HzLut, LooksUpInt8TablesAndInt16Knots) {
  std::vector<int8_t> table(256);
  for (int i = 0; i < 256; ++i) table[size_t(i)] = static_cast<int8_t>(127 - i);  // -x - 1
  const Tensor x = make<int8_t>({2, 2}, {-128, -1, 0, 127});
  const Tensor y = run_horizon("HzLut", attributes({{"function", std::string("not")}}),
                               {x, make<int8_t>({256}, table)});
  EXPECT_EQ(int_values(y), (std::vector<int64_t>{127, 0, -1, -128}));

  // Knots of y = 2x: knot k at q = -32768 + 256k is 2q; interpolation is exact, then saturates.
  std::vector<int32_t> knots(257);
  for (int k = 0; k <= 256; ++k) knots[size_t(k)] = 2 * (-32768 + 256 * k);
  const Tensor x16 = make<int16_t>({4}, {-32768, -100, 3, 20000});
  EXPECT_EQ(int_values(run_horizon("HzLut", {}, {x16, make<int32_t>({257}, knots)})),
            (std::vector<int64_t>{-32768, -200, 6, 32767}));
}

// int16 HzLut on every CPU path, below and above the size from which a full table pays, with
// knots whose sums fit int32 (gathers) and knots that do not (lookup per value): each value is
// LutInt16::lookup's.
TEST(HzLut, Int16RowsAndTableEqualLookupOnEveryPath) {
  const VectorPath initial = vector_path();
  std::mt19937 rng(5);
  std::uniform_int_distribution<int32_t> small(-40000, 40000);
  for (const bool wide : {false, true}) {
    sim::LutInt16 lut;
    for (auto& k : lut.knots)
      k = wide ? std::numeric_limits<int32_t>::max() - std::abs(small(rng)) * 1000 : small(rng);
    if (wide) lut.knots[100] = std::numeric_limits<int32_t>::min() + 5;
    ASSERT_EQ(sim::lut_int16_fits_int32(lut), !wide);
    const Tensor knots =
        make<int32_t>({257}, std::vector<int32_t>(lut.knots.begin(), lut.knots.end()));
    for (const int64_t n : {int64_t{1000003}, int64_t{70001}}) {
      const Tensor x = random_ints<int16_t>({n}, rng, -32768, 32767);
      for (VectorPath path : {VectorPath::kBaseline, VectorPath::kAvx2, VectorPath::kAvx512}) {
        if (!set_vector_path(path)) continue;
        ThreadPool pool(2);
        const Tensor y = run_horizon("HzLut", {}, {x, knots}, &pool);
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_EQ(y.data<int16_t>()[i], lut.lookup(x.data<int16_t>()[i]))
              << "element " << i << " of " << n << ", path " << static_cast<int>(path)
              << (wide ? ", wide knots" : "");
        }
      }
    }
  }
  set_vector_path(initial);
}

TEST(HzLut, MatchesTheFloatSigmoid) {
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  // int8: the table is the float function quantized, so the result is within 1 step.
  const float in8 = 8.0f / 127, out8 = 1.0f / 127;
  const sim::LutInt8 lut8 = sim::build_lut_int8(sigmoid, in8, out8);
  Tensor x8(DataType::kInt8, {256});
  for (int i = 0; i < 256; ++i) x8.data<int8_t>()[i] = static_cast<int8_t>(i - 128);
  const Tensor y8 = run_horizon(
      "HzLut", {},
      {x8, make<int8_t>({256}, std::vector<int8_t>(lut8.table.begin(), lut8.table.end()))});
  const Tensor f8 = run_op("Sigmoid", {}, {dequantized(x8, in8)})[0];
  EXPECT_LE(max_abs_difference(y8, quantized_values(f8, out8, DataType::kInt8)), 1);
  // int16: every input gives LutInt16::lookup; the piecewise-linear table (256 segments) stays
  // within 8 steps of the float function.
  const float in16 = 8.0f / 32767, out16 = 1.0f / 32767;
  const sim::LutInt16 lut16 = sim::build_lut_int16(sigmoid, in16, out16);
  Tensor x16(DataType::kInt16, {65536});
  for (int i = 0; i < 65536; ++i) x16.data<int16_t>()[i] = static_cast<int16_t>(i - 32768);
  const Tensor y16 = run_horizon(
      "HzLut", {},
      {x16, make<int32_t>({257}, std::vector<int32_t>(lut16.knots.begin(), lut16.knots.end()))});
  for (int i = 0; i < 65536; ++i) {
    ASSERT_EQ(y16.data<int16_t>()[i], lut16.lookup(static_cast<int16_t>(i - 32768))) << i;
  }
  const Tensor f16 = run_op("Sigmoid", {}, {dequantized(x16, in16)})[0];
  EXPECT_LE(max_abs_difference(y16, quantized_values(f16, out16, DataType::kInt16)), 8);
}

TEST(HzRequantize, PerTensorAndPerChannel) {
  const AttributeMap half = attributes({{"multiplier", int64_t{kOne}},
                                        {"shift", int64_t{31}},
                                        {"output_type", std::string("int8")}});
  EXPECT_EQ(int_values(run_horizon("HzRequantize", half, {make<int32_t>({3}, {3, -3, 1000})})),
            (std::vector<int64_t>{2, -1, 127}));
  EXPECT_EQ(int_values(run_horizon("HzRequantize", half, {make<int16_t>({2}, {-32768, 255})})),
            (std::vector<int64_t>{-128, 127}));
  const AttributeMap per_channel = attributes({{"multipliers", std::vector<int64_t>{kOne, kOne}},
                                               {"shifts", std::vector<int64_t>{30, 29}},
                                               {"axis", int64_t{1}},
                                               {"output_type", std::string("int16")}});
  const Tensor y =
      run_horizon("HzRequantize", per_channel, {make<int32_t>({1, 2, 2}, {1, 2, 3, -40000})});
  EXPECT_EQ(y.dtype(), DataType::kInt16);
  EXPECT_EQ(int_values(y), (std::vector<int64_t>{1, 2, 6, -32768}));
}

TEST(HzRequantize, MatchesDequantizeThenQuantize) {
  std::mt19937 rng(77);
  const Tensor x = random_ints<int32_t>({4, 1000}, rng, -2000000, 2000000);
  const float s_in = 3e-6f, s_out = 6.0f / 127;
  const auto f = sim::requantization_multiplier(s_in, s_out);
  const Tensor y = run_horizon("HzRequantize",
                               attributes({{"multiplier", int64_t{f.multiplier}},
                                           {"shift", int64_t{f.shift}},
                                           {"output_type", std::string("int8")}}),
                               {x});
  EXPECT_LE(max_abs_difference(y, quantized_values(dequantized(x, s_in), s_out, DataType::kInt8)),
            1)
      << "seed 77";
}

AttributeMap matmul_attributes(sim::FixedPointMultiplier f, const std::string& type = "int8") {
  return attributes(
      {{"multiplier", int64_t{f.multiplier}}, {"shift", int64_t{f.shift}}, {"output_type", type}});
}

TEST(HzSQuantizedMatmul, HandComputed) {
  const Tensor a = make<int8_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = make<int8_t>({3, 2}, {1, 0, 0, 1, 1, 1});
  // a·b = [[4, 5], [10, 11]]; times 0.5 rounded half up.
  EXPECT_EQ(int_values(run_horizon("HzSQuantizedMatmul", matmul_attributes({kOne, 31}), {a, b})),
            (std::vector<int64_t>{2, 3, 5, 6}));
  const Tensor y32 = run_horizon("HzSQuantizedMatmul",
                                 attributes({{"output_type", std::string("int32")}}), {a, b});
  EXPECT_EQ(y32.dtype(), DataType::kInt32);
  EXPECT_EQ(int_values(y32), (std::vector<int64_t>{4, 5, 10, 11}));
  // 1-D right operand: [2, 3] x [3] → [2].
  const Tensor v =
      run_horizon("HzSQuantizedMatmul", attributes({{"output_type", std::string("int32")}}),
                  {a, make<int16_t>({3}, {1, 1, -1})});
  EXPECT_EQ(v.shape(), (Shape{2}));
  EXPECT_EQ(int_values(v), (std::vector<int64_t>{0, 3}));
}

TEST(HzSQuantizedMatmul, MatchesTheFloatMatMulWithBroadcasting) {
  struct Case {
    Shape a, b;
    DataType ta, tb, ty;
  };
  const DataType i8 = DataType::kInt8, i16 = DataType::kInt16;
  const Case cases[] = {{{2, 1, 5, 7}, {3, 7, 4}, i8, i8, i8},
                        {{8, 40, 16}, {8, 16, 40}, i8, i8, i16},
                        {{3, 9}, {9, 5}, i16, i8, i8},
                        {{6}, {2, 6, 3}, i16, i16, i16}};
  uint32_t seed = 900;
  for (const Case& c : cases) {
    SCOPED_TRACE(str_cat("seed ", seed, " a ", shape_to_string(c.a), " ", dtype_name(c.ta), " b ",
                         shape_to_string(c.b), " ", dtype_name(c.tb), " -> ", dtype_name(c.ty)));
    std::mt19937 rng(seed++);
    const Tensor a = random_activation(c.ta, c.a, rng);
    const Tensor b = random_activation(c.tb, c.b, rng);
    const float sa = 1.0f / (c.ta == i8 ? 127 : 32767), sb = 0.7f / (c.tb == i8 ? 127 : 32767);
    const Tensor yf = run_op("MatMul", {}, {dequantized(a, sa), dequantized(b, sb)})[0];
    float y_max = 0.0f;
    for (int64_t i = 0; i < yf.element_count(); ++i)
      y_max = std::max(y_max, std::fabs(float(yf.float_at(i))));
    const float so = y_max / (c.ty == i8 ? 115.0f : 32000.0f);
    const Tensor y =
        run_horizon("HzSQuantizedMatmul",
                    matmul_attributes(sim::requantization_multiplier(double(sa) * sb, so),
                                      std::string(dtype_name(c.ty))),
                    {a, b});
    ASSERT_EQ(y.shape(), yf.shape());
    EXPECT_LE(max_abs_difference(y, quantized_values(yf, so, c.ty)), 1);
  }
}

TEST(HorizonQuantizedOps, RejectInvalidParametersAndOperands) {
  const auto one = sim::to_fixed_point(1.0);
  // Add/Sub: two multipliers, intermediate_shift range, output_type int8/int16 only.
  EXPECT_THROW(prepare_horizon("HzSElementwiseAdd",
                               attributes({{"input_multipliers", std::vector<int64_t>{kOne}},
                                           {"input_shifts", std::vector<int64_t>{30}},
                                           {"output_type", std::string("int8")}}),
                               2),
               KernelError);
  AttributeMap shift40 = add_attributes(one, one);
  shift40.set("intermediate_shift", int64_t{40});
  EXPECT_THROW(prepare_horizon("HzSElementwiseAdd", shift40, 2), KernelError);
  EXPECT_THROW(prepare_horizon("HzSElementwiseSub", add_attributes(one, one, "int32"), 2),
               KernelError);
  EXPECT_THROW(prepare_horizon("HzSElementwiseAdd", add_attributes(one, {kOne, 100}), 2),
               KernelError);
  EXPECT_THROW(run_horizon("HzSElementwiseAdd", add_attributes(one, one),
                           {make<int8_t>({2}, {1, 2}), make<int8_t>({3}, {1, 2, 3})}),
               KernelError);  // shapes do not broadcast
  EXPECT_THROW(run_horizon("HzSElementwiseAdd", add_attributes(one, one),
                           {make<int32_t>({2}, {1, 2}), make<int8_t>({2}, {1, 2})}),
               KernelError);  // int32 input
  // Mul: multiplier required and valid.
  EXPECT_THROW(prepare_horizon("HzSElementwiseMul",
                               attributes({{"multiplier", int64_t{5}},
                                           {"shift", int64_t{3}},
                                           {"output_type", std::string("int8")}}),
                               2),
               KernelError);
  // Lut: table type and size follow x.
  std::vector<int8_t> table(255, 0);
  EXPECT_THROW(run_horizon("HzLut", {}, {make<int8_t>({1}, {0}), make<int8_t>({255}, table)}),
               KernelError);
  EXPECT_THROW(run_horizon("HzLut", {}, {make<int16_t>({1}, {0}), make<int8_t>({255}, table)}),
               KernelError);
  EXPECT_THROW(prepare_horizon("HzLut", {}, 1), KernelError);  // table missing
  // Requantize: exactly one form; per-channel count must match the axis; int8/int16 output.
  EXPECT_THROW(
      prepare_horizon("HzRequantize", attributes({{"output_type", std::string("int8")}}), 1),
      KernelError);
  EXPECT_THROW(prepare_horizon("HzRequantize",
                               attributes({{"multiplier", int64_t{kOne}},
                                           {"shift", int64_t{30}},
                                           {"multipliers", std::vector<int64_t>{kOne}},
                                           {"shifts", std::vector<int64_t>{30}},
                                           {"output_type", std::string("int8")}}),
                               1),
               KernelError);
  EXPECT_THROW(run_horizon("HzRequantize",
                           attributes({{"multipliers", std::vector<int64_t>{kOne, kOne, kOne}},
                                       {"shifts", std::vector<int64_t>{30, 30, 30}},
                                       {"output_type", std::string("int8")}}),
                           {make<int32_t>({1, 2}, {1, 2})}),
               KernelError);
  EXPECT_THROW(prepare_horizon("HzRequantize",
                               attributes({{"multiplier", int64_t{kOne}},
                                           {"shift", int64_t{30}},
                                           {"output_type", std::string("int32")}}),
                               1),
               KernelError);
  // Matmul: int32 output without multiplier, others with; inner dimensions must match.
  EXPECT_THROW(prepare_horizon("HzSQuantizedMatmul", matmul_attributes(one, "int32"), 2),
               KernelError);
  EXPECT_THROW(
      prepare_horizon("HzSQuantizedMatmul", attributes({{"output_type", std::string("int16")}}), 2),
      KernelError);
  EXPECT_THROW(run_horizon("HzSQuantizedMatmul", matmul_attributes(one),
                           {make<int8_t>({2, 3}, {1, 2, 3, 4, 5, 6}),
                            make<int8_t>({2, 3}, {1, 2, 3, 4, 5, 6})}),
               KernelError);
}

}  // namespace
}  // namespace openbpu::kernels::testing
