// Running horizon-domain operators (docs/quantized_ops.md) in unit tests, and the random data
// and float references their differential tests share.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernel_test_support.h"
#include "openbpu/kernels/registry.h"
#include "openbpu/simulator/integer_arithmetic.h"

namespace openbpu::kernels::testing {

namespace sim = openbpu::simulator;

// Runs `op_type` of the domain "horizon" (opset 1) and returns its output.
inline Tensor run_horizon(const std::string& op_type, const AttributeMap& attrs,
                          const std::vector<std::optional<Tensor>>& inputs,
                          ThreadPool* pool = nullptr) {
  NodeInfo node{"test_node", op_type, "horizon", 1, attrs, static_cast<int>(inputs.size()), 1};
  auto kernel = create_kernel(node);
  std::vector<const Tensor*> in;
  for (const auto& t : inputs) in.push_back(t ? &*t : nullptr);
  std::vector<Tensor> out(1);
  KernelContext ctx(in, out, Allocator::default_allocator(), pool);
  kernel->run(ctx);
  return out[0];
}

// Prepares (only) a horizon-domain node; for the error cases of attribute validation.
inline void prepare_horizon(const std::string& op_type, const AttributeMap& attrs,
                            int input_count) {
  NodeInfo node{"test_node", op_type, "horizon", 1, attrs, input_count, 1};
  (void)create_kernel(node);
}

// AttributeMap from a list of (name, value).
inline AttributeMap attributes(std::vector<std::pair<std::string, AttributeValue>> items) {
  AttributeMap attrs;
  for (auto& [name, value] : items) attrs.set(name, std::move(value));
  return attrs;
}

// Multipliers and shifts as the ints attributes the quantizer writes.
inline std::pair<std::vector<int64_t>, std::vector<int64_t>> multiplier_lists(
    const std::vector<sim::FixedPointMultiplier>& fs) {
  std::pair<std::vector<int64_t>, std::vector<int64_t>> lists;
  for (const auto& f : fs) {
    lists.first.push_back(f.multiplier);
    lists.second.push_back(f.shift);
  }
  return lists;
}

// A tensor of uniformly random integers in [lo, hi].
template <typename T>
Tensor random_ints(Shape shape, std::mt19937& rng, int64_t lo, int64_t hi) {
  Tensor t(DataTypeOf<T>::value, std::move(shape));
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  T* p = t.data<T>();
  for (int64_t i = 0; i < t.element_count(); ++i) p[i] = static_cast<T>(dist(rng));
  return t;
}

// q * scale (per tensor) as float32.
inline Tensor dequantized(const Tensor& q, float scale) {
  Tensor t(DataType::kFloat32, q.shape());
  for (int64_t i = 0; i < q.element_count(); ++i) {
    t.data<float>()[i] = sim::dequantize(q.int_at(i), scale);
  }
  return t;
}

// The float result quantized to the integer type of `like` with `scale`.
inline std::vector<int64_t> quantized_values(const Tensor& y, float scale, DataType type) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < y.element_count(); ++i) {
    const float v = static_cast<float>(y.float_at(i));
    out.push_back(type == DataType::kInt8 ? int64_t{sim::quantize_int8(v, scale)}
                                          : int64_t{sim::quantize_int16(v, scale)});
  }
  return out;
}

// Largest |a - b| over two integer tensors of the same shape (and the index where it occurs).
inline int64_t max_abs_difference(const Tensor& a, const std::vector<int64_t>& b) {
  EXPECT_EQ(a.element_count(), static_cast<int64_t>(b.size()));
  int64_t worst = 0;
  for (int64_t i = 0; i < a.element_count() && i < static_cast<int64_t>(b.size()); ++i) {
    worst = std::max<int64_t>(worst, std::llabs(a.int_at(i) - b[size_t(i)]));
  }
  return worst;
}

// Integer values of a tensor.
inline std::vector<int64_t> int_values(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.element_count(); ++i) v.push_back(t.int_at(i));
  return v;
}

}  // namespace openbpu::kernels::testing
