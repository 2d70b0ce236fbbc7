// Kernels that allocate their outputs without zeroing them (allocate_output_for_overwrite)
// must write every element: each case runs once with zeroed storage and once with storage
// filled with a byte pattern, and the outputs must agree to the byte.
#include <cstring>
#include <memory>
#include <random>
#include <string_view>

#include "kernel_test_support.h"

namespace openbpu::kernels::testing {
namespace {

class PoisonAllocator final : public Allocator {
 public:
  std::shared_ptr<Buffer> allocate(size_t bytes) override {
    std::shared_ptr<Buffer> b = Allocator::default_allocator().allocate(bytes);
    std::memset(b->data(), 0xA5, b->size());
    return b;
  }
};

std::vector<Tensor> run_with(Allocator& allocator, const NodeInfo& node,
                             const std::vector<std::optional<Tensor>>& inputs, ThreadPool* pool) {
  auto kernel = create_kernel(node);
  std::vector<const Tensor*> in;
  for (const auto& t : inputs) in.push_back(t ? &*t : nullptr);
  std::vector<Tensor> out(static_cast<size_t>(node.output_count));
  KernelContext ctx(in, out, allocator, pool);
  kernel->run(ctx);
  return out;
}

void expect_written(const std::string& op, const AttributeMap& attrs,
                    const std::vector<std::optional<Tensor>>& inputs, int opset = 17,
                    std::string_view domain = "") {
  const NodeInfo node{"n", op, domain, opset, attrs, static_cast<int>(inputs.size()), 1};
  ThreadPool pool(2);
  PoisonAllocator poison;
  const std::vector<Tensor> zeroed = run_with(Allocator::default_allocator(), node, inputs, &pool);
  const std::vector<Tensor> poisoned = run_with(poison, node, inputs, &pool);
  ASSERT_EQ(zeroed[0].shape(), poisoned[0].shape()) << op;
  ASSERT_GT(zeroed[0].byte_size(), 0u) << op;
  EXPECT_EQ(0, std::memcmp(zeroed[0].raw_data(), poisoned[0].raw_data(), zeroed[0].byte_size()))
      << op << " leaves elements of its output unwritten";
}

Tensor random_tensor(DataType type, Shape shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  Tensor t(type, std::move(shape));
  for (int64_t i = 0; i < t.element_count(); ++i) {
    if (type == DataType::kFloat32) t.data<float>()[i] = dist(rng);
    if (type == DataType::kFloat16) t.data<Float16>()[i] = Float16(dist(rng));
    if (type == DataType::kInt32) t.data<int32_t>()[i] = static_cast<int32_t>(dist(rng) * 50);
  }
  return t;
}

// Integer activations (int8, int16 in steps of 200, int32 in steps of 100000).
Tensor integers(DataType type, Shape shape, uint32_t seed) {
  std::mt19937 rng(seed);
  Tensor t(type, std::move(shape));
  for (int64_t i = 0; i < t.element_count(); ++i) {
    const int v = std::uniform_int_distribution<int>(-128, 127)(rng);
    if (type == DataType::kInt8) t.data<int8_t>()[i] = static_cast<int8_t>(v);
    if (type == DataType::kInt16) t.data<int16_t>()[i] = static_cast<int16_t>(v * 200);
    if (type == DataType::kInt32) t.data<int32_t>()[i] = v * 100000;
  }
  return t;
}

Tensor f32(Shape shape, uint32_t seed) {
  return random_tensor(DataType::kFloat32, std::move(shape), seed);
}

AttributeMap ints(const std::string& name, std::vector<int64_t> v) {
  AttributeMap a;
  a.set(name, std::move(v));
  return a;
}

TEST(PoisonedOutputs, ElementwiseKernelsWriteEveryElement) {
  for (const char* op : {"Add", "Mul", "Div", "Sub", "Greater", "Equal"}) {
    expect_written(op, {}, {f32({2, 3, 40, 41}, 1), f32({3, 1, 41}, 2)});
    expect_written(op, {}, {f32({1, 5}, 3), f32({7, 1}, 4)});
  }
  expect_written("Add", {}, {random_tensor(DataType::kInt32, {70000}, 5),
                             random_tensor(DataType::kInt32, {1}, 6)});
  expect_written("PRelu", {}, {f32({1, 4, 9, 9}, 7), f32({4, 1, 1}, 8)});
  for (const char* op : {"Relu", "Sigmoid", "HardSigmoid", "Neg", "Abs", "Exp"}) {
    expect_written(op, {}, {f32({3, 33333}, 9)});
  }
  AttributeMap clip;
  clip.set("min", -0.5f);
  clip.set("max", 0.5f);
  expect_written("Clip", clip, {f32({2, 999}, 10)}, 6);
  expect_written("Clip", {}, {f32({2, 999}, 11), make<float>({}, {-0.25f}), std::nullopt});
}

TEST(PoisonedOutputs, ConvolutionsWriteEveryElement) {
  AttributeMap pads = ints("pads", {1, 1, 1, 1});
  expect_written("Conv", pads, {f32({1, 5, 13, 17}, 12), f32({7, 5, 3, 3}, 13), f32({7}, 14)});
  expect_written("Conv", {}, {f32({2, 20, 9, 9}, 15), f32({33, 20, 1, 1}, 16)});
  AttributeMap depthwise = ints("strides", {2, 2});
  depthwise.set("group", int64_t{6});
  expect_written("Conv", depthwise, {f32({1, 6, 15, 14}, 17), f32({6, 1, 3, 3}, 18)});
  AttributeMap grouped;
  grouped.set("group", int64_t{2});
  expect_written("Conv", grouped, {f32({1, 4, 6, 6}, 19), f32({6, 2, 2, 2}, 20), f32({6}, 21)});
  expect_written("Conv", {}, {f32({1, 2, 4, 4, 4, 4}, 22), f32({3, 2, 2, 2, 2, 2}, 23)});
  expect_written("Conv", {}, {random_tensor(DataType::kFloat16, {1, 3, 6, 6}, 24),
                              random_tensor(DataType::kFloat16, {2, 3, 3, 3}, 25)});
}

TEST(PoisonedOutputs, NormalizationConcatAndResizeWriteEveryElement) {
  expect_written("BatchNormalization", {},
                 {f32({2, 3, 7, 7}, 26), f32({3}, 27), f32({3}, 28), f32({3}, 29),
                  make<float>({3}, {0.5f, 1.0f, 2.0f})});
  AttributeMap axis;
  axis.set("axis", int64_t{1});
  expect_written("Concat", axis, {f32({2, 3, 5}, 30), f32({2, 1, 5}, 31), f32({2, 4, 5}, 32)});
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    AttributeMap resize;
    resize.set("mode", std::string(mode));
    expect_written("Resize", resize,
                   {f32({1, 2, 5, 7}, 33), std::nullopt,
                    make<float>({4}, {1.0f, 1.0f, 2.5f, 1.5f})});
  }
  AttributeMap crop;
  crop.set("coordinate_transformation_mode", std::string("tf_crop_and_resize"));
  crop.set("extrapolation_value", 3.0f);
  expect_written("Resize", crop,
                 {f32({1, 1, 6, 6}, 34), make<float>({8}, {0, 0, -0.2f, 0.1f, 1, 1, 1.3f, 0.8f}),
                  make<float>({4}, {1.0f, 1.0f, 2.0f, 2.0f})});
}

TEST(PoisonedOutputs, HorizonIntegerKernelsWriteEveryElement) {
  const DataType i8 = DataType::kInt8, i16 = DataType::kInt16;
  auto horizon = [](const std::string& op, const AttributeMap& attrs,
                    const std::vector<std::optional<Tensor>>& inputs) {
    expect_written(op, attrs, inputs, 1, "horizon");
  };
  AttributeMap rescaled;
  rescaled.set("input_multipliers", std::vector<int64_t>{1 << 30, 3 << 29});
  rescaled.set("input_shifts", std::vector<int64_t>{22, 23});
  rescaled.set("output_type", std::string("int16"));
  AttributeMap mul;
  mul.set("multiplier", int64_t{1} << 30);
  mul.set("shift", int64_t{38});
  mul.set("output_type", std::string("int8"));
  for (const char* op : {"HzSElementwiseAdd", "HzSElementwiseMax", "HzSElementwiseMul"}) {
    const AttributeMap& attrs = std::string(op) == "HzSElementwiseMul" ? mul : rescaled;
    horizon(op, attrs, {integers(i16, {1, 4, 9, 30}, 40), integers(i8, {1, 4, 9, 30}, 41)});  // rows
    horizon(op, attrs, {integers(i8, {1, 4, 9, 30}, 42), integers(i16, {4, 1, 1}, 43)});      // per channel
    horizon(op, attrs, {integers(i16, {1}, 44), integers(i16, {1, 4, 9, 30}, 45)});           // a scalar
    horizon(op, attrs, {integers(i8, {1, 4, 9, 30}, 46), integers(i8, {1}, 47)});             // its table
    horizon(op, attrs, {integers(i8, {2, 1, 5}, 48), integers(i16, {3, 1}, 49)});             // elements
  }
  std::vector<int32_t> knots(257);
  for (int k = 0; k <= 256; ++k) knots[size_t(k)] = 3 * k - 300;
  horizon("HzLut", {}, {integers(i16, {3, 1000}, 50), make<int32_t>({257}, knots)});
  horizon("HzLut", {}, {integers(i16, {2, 140000}, 51), make<int32_t>({257}, knots)});
  AttributeMap requantize;
  requantize.set("multipliers", std::vector<int64_t>{1 << 30, 3 << 29, 1 << 30});
  requantize.set("shifts", std::vector<int64_t>{40, 38, 41});
  requantize.set("output_type", std::string("int8"));
  horizon("HzRequantize", requantize, {integers(DataType::kInt32, {2, 3, 7, 5}, 52)});
  AttributeMap conv;
  conv.set("multipliers", std::vector<int64_t>(6, int64_t{1} << 30));
  conv.set("shifts", std::vector<int64_t>(6, 40));
  conv.set("output_type", std::string("int8"));
  conv.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  horizon("HzSQuantizedConv", conv, {integers(i8, {1, 5, 13, 17}, 53), integers(i8, {6, 5, 3, 3}, 54)});
  AttributeMap depthwise = conv;
  depthwise.set("group", int64_t{6});
  horizon("HzSQuantizedConv", depthwise,
          {integers(i16, {1, 6, 11, 9}, 55), integers(i8, {6, 1, 3, 3}, 56)});
}

}  // namespace
}  // namespace openbpu::kernels::testing
