// The float loops compiled per CPU path (vector_clones.h) give the baseline's bytes: elementwise
// operators over values that reach their branches, overflow, underflow and NaN (any NaN for a
// NaN: its sign and payload may differ).
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "kernel_test_support.h"
#include "openbpu/kernels/vector_clones.h"

namespace openbpu::kernels::testing {
namespace {

Tensor awkward_floats(Shape shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
  const float specials[] = {0.0f, -0.0f, 3.0f, -3.0f, 1e-40f, -1e-40f, 88.0f, -104.0f, 1e30f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()};
  Tensor t(DataType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.element_count(); ++i) {
    t.data<float>()[i] = i % 7 == 0 ? specials[(i / 7) % std::size(specials)] : dist(rng);
  }
  return t;
}

// The first element whose bits differ, or -1. A NaN equals any NaN: the compiler may swap the
// operands of a commutative operation, which changes only which NaN propagates.
int64_t first_difference(const Tensor& a, const Tensor& b) {
  if (a.dtype() != DataType::kFloat32 || a.element_count() != b.element_count()) return 0;
  for (int64_t i = 0; i < a.element_count(); ++i) {
    const float x = a.data<float>()[i], y = b.data<float>()[i];
    if (std::isnan(x) && std::isnan(y)) continue;
    if (std::memcmp(&x, &y, sizeof x) != 0) return i;
  }
  return -1;
}

class VectorPaths : public ::testing::Test {
 protected:
  ~VectorPaths() override { set_vector_path(initial_); }
  const VectorPath initial_ = vector_path();
};

TEST_F(VectorPaths, ElementwiseOperatorsGiveTheBaselineBytes) {
  const std::vector<std::pair<std::string, int>> ops = {
      {"Add", 2}, {"Sub", 2}, {"Mul", 2}, {"Div", 2}, {"Max", 2}, {"Min", 2}, {"PRelu", 2},
      {"Relu", 1}, {"Sigmoid", 1}, {"HardSigmoid", 1}, {"HardSwish", 1}, {"LeakyRelu", 1},
      {"Tanh", 1}, {"Abs", 1}, {"Neg", 1}, {"Sqrt", 1}, {"Exp", 1}, {"Clip", 1},
      {"Softmax", 1}, {"LogSoftmax", 1}};
  const Tensor a = awkward_floats({3, 1001}, 1), b = awkward_floats({3, 1001}, 2);
  const Tensor row = awkward_floats({1001}, 3);
  for (const auto& [op, arity] : ops) {
    std::vector<std::vector<Tensor>> results;
    for (VectorPath path : {VectorPath::kBaseline, VectorPath::kAvx2, VectorPath::kAvx512}) {
      if (!set_vector_path(path)) continue;
      std::vector<std::optional<Tensor>> inputs{a};
      if (arity == 2) inputs.push_back(op == "PRelu" ? b : row);
      results.push_back(run_op(op, {}, inputs));
    }
    for (size_t i = 1; i < results.size(); ++i) {
      EXPECT_EQ(first_difference(results[0][0], results[i][0]), -1)
          << op << ": path " << i << " differs from the baseline";
    }
  }
}

TEST_F(VectorPaths, PoolingAndBatchNormalizationGiveTheBaselineBytes) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> dist(-1e4f, 1e4f);
  for (const Shape& shape : {Shape{1, 3, 1, 1}, Shape{2, 5, 7, 9}, Shape{1, 4, 48, 160}}) {
    Tensor x(DataType::kFloat32, shape);
    for (int64_t i = 0; i < x.element_count(); ++i) x.data<float>()[i] = dist(rng);
    std::vector<Tensor> results;
    for (VectorPath path : {VectorPath::kBaseline, VectorPath::kAvx2, VectorPath::kAvx512}) {
      if (!set_vector_path(path)) continue;
      results.push_back(run_op("GlobalAveragePool", {}, {x})[0]);
      const int64_t c = shape[1];
      const Tensor scale = awkward_floats({c}, 5), bias = awkward_floats({c}, 6),
                   mean = awkward_floats({c}, 7);
      Tensor var = awkward_floats({c}, 8);
      for (int64_t i = 0; i < c; ++i) var.data<float>()[i] = std::abs(var.data<float>()[i]);
      results.push_back(run_op("BatchNormalization", {}, {x, scale, bias, mean, var})[0]);
    }
    for (size_t i = 2; i < results.size(); ++i) {  // [pool, batch norm] per path
      const Tensor& want = results[i % 2];
      EXPECT_EQ(0, std::memcmp(want.raw_data(), results[i].raw_data(), want.byte_size()))
          << shape_to_string(shape) << ": result " << i;
    }
  }
}

}  // namespace
}  // namespace openbpu::kernels::testing
