#include <algorithm>
#include <random>

#include "kernel_test_support.h"

namespace openbpu::kernels::testing {
namespace {

using I64 = std::vector<int64_t>;

std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.element_count(); ++i) v.push_back(t.float_at(i));
  return v;
}

AttributeMap axis_attr(int64_t axis) {
  AttributeMap a;
  a.set("axis", axis);
  return a;
}

TEST(Concat, JoinsAlongAxis) {
  const Tensor a = make<float>({2, 2}, {1, 2, 3, 4});
  const Tensor b = make<float>({2, 1}, {5, 6});
  expect_near(run_op("Concat", axis_attr(-1), {a, b})[0], {2, 3}, {1, 2, 5, 3, 4, 6});
  expect_near(run_op("Concat", axis_attr(0), {a, a})[0], {4, 2}, {1, 2, 3, 4, 1, 2, 3, 4});
  // Concat-1: axis defaults to 1
  expect_near(run_op("Concat", {}, {a, b}, 1, 1)[0], {2, 3}, {1, 2, 5, 3, 4, 6});
  auto y = run_op("Concat", axis_attr(0), {make<int64_t>({1}, {7}), make<int64_t>({0}, {})});
  EXPECT_EQ(y[0].to_int64_vector(), (I64{7}));
}

TEST(Concat, RejectsMismatches) {
  const Tensor a = make<float>({2, 2}, {1, 2, 3, 4});
  EXPECT_THROW(run_op("Concat", axis_attr(0), {a, make<float>({2, 1}, {5, 6})}), KernelError);
  EXPECT_THROW(run_op("Concat", axis_attr(0), {a, make<double>({1, 2}, {5, 6})}), KernelError);
  EXPECT_THROW(run_op("Concat", axis_attr(2), {a, a}), KernelError);
  EXPECT_THROW(run_op("Concat", {}, {a, a}), KernelError);  // axis required from opset 4
}

TEST(Split, EqualAndVariableParts) {
  const Tensor x = make<float>({2, 6}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  auto y = run_op("Split", axis_attr(1), {x}, 2);
  expect_near(y[0], {2, 3}, {1, 2, 3, 7, 8, 9});
  expect_near(y[1], {2, 3}, {4, 5, 6, 10, 11, 12});
  y = run_op("Split", axis_attr(1), {x, make<int64_t>({2}, {2, 4})}, 2);
  expect_near(y[0], {2, 2}, {1, 2, 7, 8});
  expect_near(y[1], {2, 4}, {3, 4, 5, 6, 9, 10, 11, 12});
  AttributeMap old = axis_attr(0);
  old.set("split", I64{1, 1});
  y = run_op("Split", old, {x}, 2, 11);
  expect_near(y[1], {1, 6}, {7, 8, 9, 10, 11, 12});
}

TEST(Split, ZeroSizesAndUnevenNumOutputs) {
  auto y = run_op("Split", {}, {Tensor(DataType::kFloat32, {0}), make<int64_t>({3}, {0, 0, 0})}, 3);
  for (const Tensor& t : y) EXPECT_EQ(t.shape(), Shape{0});
  AttributeMap attrs;
  attrs.set("num_outputs", int64_t{3});
  y = run_op("Split", attrs, {make<int32_t>({7}, {1, 2, 3, 4, 5, 6, 7})}, 3, 18);
  EXPECT_EQ(y[0].to_int64_vector(), (I64{1, 2, 3}));
  EXPECT_EQ(y[1].to_int64_vector(), (I64{4, 5, 6}));
  EXPECT_EQ(y[2].to_int64_vector(), (I64{7}));
}

TEST(Split, RejectsBadSizes) {
  const Tensor x = iota_floats({6});
  EXPECT_THROW(run_op("Split", {}, {x, make<int64_t>({2}, {2, 3})}, 2), KernelError);
  EXPECT_THROW(run_op("Split", {}, {x, make<int64_t>({2}, {7, -1})}, 2), KernelError);
  EXPECT_THROW(run_op("Split", {}, {x}, 4), KernelError);  // 6 is not divisible by 4
}

TEST(Slice, StepsAndClamping) {
  const Tensor x = iota_floats({3, 4});
  // rows 0..1, columns reversed from 3 down to 1
  auto y = run_op("Slice", {},
                  {x, make<int64_t>({2}, {0, -1}), make<int64_t>({2}, {2, 0}),
                   make<int64_t>({2}, {0, 1}), make<int64_t>({2}, {1, -1})});
  expect_near(y[0], {2, 3}, {3, 2, 1, 7, 6, 5});
  // out-of-range ends are clamped; INT64 extremes are fine
  y = run_op("Slice", {},
             {x, make<int64_t>({1}, {1}), make<int64_t>({1}, {INT64_MAX}), make<int64_t>({1}, {1}),
              std::nullopt});
  expect_near(y[0], {3, 3}, {1, 2, 3, 5, 6, 7, 9, 10, 11});
  y = run_op("Slice", {},
             {x, make<int64_t>({1}, {-1}), make<int64_t>({1}, {INT64_MIN}), make<int64_t>({1}, {0}),
              make<int64_t>({1}, {-2})});
  expect_near(y[0], {2, 4}, {8, 9, 10, 11, 0, 1, 2, 3});
  // start beyond the end: empty
  y = run_op("Slice", {}, {x, make<int32_t>({1}, {1000}), make<int32_t>({1}, {1000})});
  EXPECT_EQ(y[0].shape(), (Shape{0, 4}));
}

TEST(Slice, Opset1AttributesAndErrors) {
  const Tensor x = iota_floats({3, 4});
  AttributeMap attrs;
  attrs.set("starts", I64{1});
  attrs.set("ends", I64{-1});
  attrs.set("axes", I64{1});
  expect_near(run_op("Slice", attrs, {x}, 1, 9)[0], {3, 2}, {1, 2, 5, 6, 9, 10});
  EXPECT_THROW(run_op("Slice", attrs, {x}, 1, 10), KernelError);
  EXPECT_THROW(run_op("Slice", {},
                      {x, make<int64_t>({1}, {0}), make<int64_t>({1}, {2}), make<int64_t>({1}, {0}),
                       make<int64_t>({1}, {0})}),
               KernelError);  // step 0
  EXPECT_THROW(
      run_op("Slice", {},
             {x, make<int64_t>({1}, {0}), make<int64_t>({1}, {2}), make<int64_t>({1}, {2})}),
      KernelError);  // axis out of range
}

TEST(Transpose, DefaultReversesAndPermIsValidated) {
  const Tensor x = iota_floats({2, 3});
  expect_near(run_op("Transpose", {}, {x})[0], {3, 2}, {0, 3, 1, 4, 2, 5});
  AttributeMap bad;
  bad.set("perm", I64{0, 0});
  EXPECT_THROW(run_op("Transpose", bad, {x}), KernelError);
  bad.set("perm", I64{0});
  EXPECT_THROW(run_op("Transpose", bad, {x}), KernelError);
}

TEST(Transpose, LargeThreadedMatchesIndexArithmetic) {
  const Shape shape{3, 17, 64, 33};
  Tensor x(DataType::kFloat16, shape);
  std::mt19937 rng(1);
  for (int64_t i = 0; i < x.element_count(); ++i) x.data<Float16>()[i].bits = uint16_t(rng());
  AttributeMap attrs;
  const I64 perm{0, 2, 3, 1};
  attrs.set("perm", perm);
  ThreadPool pool(3);
  auto y = run_op("Transpose", attrs, {x}, 1, 17, &pool);
  ASSERT_EQ(y[0].shape(), (Shape{3, 64, 33, 17}));
  const Float16* in = x.data<Float16>();
  const Float16* out = y[0].data<Float16>();
  int64_t k = 0;
  for (int64_t n = 0; n < 3; ++n)
    for (int64_t h = 0; h < 64; ++h)
      for (int64_t w = 0; w < 33; ++w)
        for (int64_t c = 0; c < 17; ++c, ++k) {
          ASSERT_EQ(out[k].bits, in[((n * 17 + c) * 64 + h) * 33 + w].bits) << k;
        }
}

// Transposes of odd sizes (partial tiles) for every permutation of rank 4, against index
// arithmetic, for 1- and 8-byte elements, threaded.
TEST(Transpose, AllPermutationsMatchIndexArithmetic) {
  const Shape shape{2, 5, 37, 41};
  const std::vector<int64_t> in_strides{5 * 37 * 41, 37 * 41, 41, 1};
  ThreadPool pool(2);
  for (DataType dtype : {DataType::kInt8, DataType::kFloat64}) {
    Tensor x(dtype, shape);
    for (int64_t i = 0; i < x.element_count(); ++i) {
      if (dtype == DataType::kInt8) {
        x.data<int8_t>()[i] = int8_t(i * 7);
      } else {
        x.data<double>()[i] = double(i);
      }
    }
    I64 perm{0, 1, 2, 3};
    do {
      AttributeMap attrs;
      attrs.set("perm", perm);
      const Tensor y = run_op("Transpose", attrs, {x}, 1, 17, &pool)[0];
      std::vector<int64_t> index(4, 0);
      for (int64_t k = 0; k < y.element_count(); ++k) {
        int64_t rest = k, src = 0;
        for (int d = 3; d >= 0; --d) {
          const int64_t extent = shape[size_t(perm[size_t(d)])];
          src += (rest % extent) * in_strides[size_t(perm[size_t(d)])];
          rest /= extent;
        }
        ASSERT_EQ(y.float_at(k), x.float_at(src)) << "perm " << shape_to_string(perm) << " " << k;
      }
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST(Tile, RepeatsEachDimension) {
  const Tensor x = make<int32_t>({2, 2}, {1, 2, 3, 4});
  auto y = run_op("Tile", {}, {x, make<int64_t>({2}, {2, 3})});
  EXPECT_EQ(y[0].shape(), (Shape{4, 6}));
  EXPECT_EQ(y[0].to_int64_vector(),
            (I64{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  EXPECT_THROW(run_op("Tile", {}, {x, make<int64_t>({1}, {2})}), KernelError);
  EXPECT_THROW(run_op("Tile", {}, {x, make<int64_t>({2}, {1, -1})}), KernelError);
}

TEST(Pad, ConstantReflectEdgeWrap) {
  const Tensor x = make<float>({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f});
  const Tensor pads = make<int64_t>({4}, {0, 2, 0, 0});
  expect_near(run_op("Pad", {}, {x, pads, Tensor::scalar<float>(9.f)})[0], {3, 4},
              {9, 9, 1.0, 1.2, 9, 9, 2.3, 3.4, 9, 9, 4.5, 5.7});
  AttributeMap mode;
  mode.set("mode", std::string("reflect"));
  expect_near(run_op("Pad", mode, {x, pads})[0], {3, 4},
              {1.0, 1.2, 1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7, 4.5, 5.7});
  mode.set("mode", std::string("edge"));
  expect_near(run_op("Pad", mode, {x, pads})[0], {3, 4},
              {1.0, 1.0, 1.0, 1.2, 2.3, 2.3, 2.3, 3.4, 4.5, 4.5, 4.5, 5.7});
  mode.set("mode", std::string("wrap"));
  expect_near(run_op("Pad", mode, {x, make<int64_t>({4}, {1, 0, 0, 0})})[0], {4, 2},
              {4.5, 5.7, 1.0, 1.2, 2.3, 3.4, 4.5, 5.7});
}

TEST(Pad, ReflectBeyondTheDimensionBouncesBack) {
  AttributeMap mode;
  mode.set("mode", std::string("reflect"));
  auto y = run_op("Pad", mode, {make<int32_t>({3}, {1, 2, 3}), make<int64_t>({2}, {5, 4})});
  EXPECT_EQ(y[0].to_int64_vector(), (I64{2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3}));
}

TEST(Pad, NegativePadsCropAndAxesSelect) {
  const Tensor x = iota_floats({2, 4});
  // crop one column on the left, pad one row of zeros below
  expect_near(run_op("Pad", {}, {x, make<int64_t>({4}, {0, -1, 1, 0})})[0], {3, 3},
              {1, 2, 3, 5, 6, 7, 0, 0, 0});
  // axes input (opset 18): pad only the last axis
  expect_near(
      run_op("Pad", {}, {x, make<int64_t>({2}, {1, 0}), std::nullopt, make<int64_t>({1}, {-1})})[0],
      {2, 5}, {0, 0, 1, 2, 3, 0, 4, 5, 6, 7});
}

TEST(Pad, Opset2AttributesAndErrors) {
  AttributeMap attrs;
  attrs.set("pads", I64{1, 0});
  attrs.set("value", 1.5f);
  expect_near(run_op("Pad", attrs, {make<double>({1}, {4})}, 1, 2)[0], {2}, {1.5, 4});
  const Tensor x = iota_floats({2, 2});
  EXPECT_THROW(run_op("Pad", {}, {x, make<int64_t>({2}, {1, 1})}), KernelError);
  EXPECT_THROW(run_op("Pad", {}, {x, make<int64_t>({4}, {0, -3, 0, 0})}), KernelError);
  AttributeMap mode;
  mode.set("mode", std::string("mirror"));
  EXPECT_THROW(run_op("Pad", mode, {x, make<int64_t>({4}, {0, 0, 0, 0})}), KernelError);
  mode.set("mode", std::string("edge"));
  EXPECT_THROW(run_op("Pad", mode, {Tensor(DataType::kFloat32, {0}), make<int64_t>({2}, {1, 0})}),
               KernelError);
}

TEST(DepthToSpace, DcrAndCrd) {
  const Tensor x = iota_floats({1, 8, 2, 3});
  AttributeMap attrs;
  attrs.set("blocksize", int64_t{2});
  // Values from the ONNX operator documentation.
  auto dcr = run_op("DepthToSpace", attrs, {x});
  expect_near(
      dcr[0], {1, 2, 4, 6},
      {0, 12, 1, 13, 2, 14, 24, 36, 25, 37, 26, 38, 3, 15, 4,  16, 5,  17, 27, 39, 28, 40, 29, 41,
       6, 18, 7, 19, 8, 20, 30, 42, 31, 43, 32, 44, 9, 21, 10, 22, 11, 23, 33, 45, 34, 46, 35, 47});
  attrs.set("mode", std::string("CRD"));
  auto crd = run_op("DepthToSpace", attrs, {x});
  expect_near(crd[0], {1, 2, 4, 6},
              {0,  6,  1,  7,  2,  8,  12, 18, 13, 19, 14, 20, 3,  9,  4,  10,
               5,  11, 15, 21, 16, 22, 17, 23, 24, 30, 25, 31, 26, 32, 36, 42,
               37, 43, 38, 44, 27, 33, 28, 34, 29, 35, 39, 45, 40, 46, 41, 47});
  attrs.set("blocksize", int64_t{3});
  EXPECT_THROW(run_op("DepthToSpace", attrs, {x}), KernelError);
}

TEST(SpaceToDepth, InvertsDepthToSpaceDcr) {
  const Tensor x = iota_floats({2, 3, 4, 6});
  AttributeMap attrs;
  attrs.set("blocksize", int64_t{2});
  auto packed = run_op("SpaceToDepth", attrs, {x});
  EXPECT_EQ(packed[0].shape(), (Shape{2, 12, 2, 3}));
  auto back = run_op("DepthToSpace", attrs, {packed[0]});
  EXPECT_EQ(as_doubles(back[0]), as_doubles(x));
  attrs.set("blocksize", int64_t{4});
  EXPECT_THROW(run_op("SpaceToDepth", attrs, {x}), KernelError);
}

TEST(ReverseSequence, TimeAndBatchMajor) {
  const Tensor x = make<float>({4, 4}, {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15});
  auto y = run_op("ReverseSequence", {}, {x, make<int64_t>({4}, {4, 3, 2, 1})});
  expect_near(y[0], {4, 4}, {3, 6, 9, 12, 2, 5, 8, 13, 1, 4, 10, 14, 0, 7, 11, 15});
  AttributeMap attrs;
  attrs.set("batch_axis", int64_t{0});
  attrs.set("time_axis", int64_t{1});
  const Tensor xb = make<float>({4, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  y = run_op("ReverseSequence", attrs, {xb, make<int64_t>({4}, {1, 2, 3, 4})});
  expect_near(y[0], {4, 4}, {0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12});
  EXPECT_THROW(run_op("ReverseSequence", {}, {x, make<int64_t>({4}, {5, 1, 1, 1})}), KernelError);
}

TEST(Trilu, UpperAndLowerWithK) {
  const Tensor x = make<int64_t>({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  EXPECT_EQ(run_op("Trilu", {}, {x})[0].to_int64_vector(),
            (I64{1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}));
  AttributeMap lower;
  lower.set("upper", int64_t{0});
  EXPECT_EQ(run_op("Trilu", lower, {x, Tensor::scalar<int64_t>(-1)})[0].to_int64_vector(),
            (I64{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}));
  EXPECT_EQ(run_op("Trilu", {}, {x, Tensor::scalar<int64_t>(INT64_MAX)})[0].to_int64_vector(),
            (I64(12, 0)));
  EXPECT_THROW(run_op("Trilu", {}, {make<int64_t>({2}, {1, 2})}), KernelError);
}

TEST(Compress, AlongAxisAndFlattened) {
  const Tensor x = make<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  expect_near(run_op("Compress", axis_attr(0), {x, make<bool>({3}, {false, true, true})})[0], {2, 2},
              {3, 4, 5, 6});
  expect_near(run_op("Compress", axis_attr(-1), {x, make<bool>({1}, {true})})[0], {3, 1}, {1, 3, 5});
  expect_near(run_op("Compress", {}, {x, make<bool>({5}, {false, true, false, false, true})})[0], {2},
              {2, 5});
  EXPECT_THROW(run_op("Compress", axis_attr(1), {x, make<bool>({3}, {false, false, true})}),
               KernelError);
}

}  // namespace
}  // namespace openbpu::kernels::testing
