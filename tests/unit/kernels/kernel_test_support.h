// Running one operator in a unit test: build the attributes, the inputs, call the kernel.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "openbpu/kernels/registry.h"

namespace openbpu::kernels::testing {

// Prepares the kernel of `node` and runs it once (absent optional inputs: nullopt).
inline std::vector<Tensor> run_node(const NodeInfo& node, const std::vector<std::optional<Tensor>>& inputs,
                                    int output_count, ThreadPool* pool = nullptr) {
  auto kernel = create_kernel(node);
  std::vector<const Tensor*> in;
  for (const auto& t : inputs) in.push_back(t ? &*t : nullptr);
  std::vector<Tensor> out(static_cast<size_t>(output_count));
  KernelContext ctx(in, out, Allocator::default_allocator(), pool);
  kernel->run(ctx);
  return out;
}

// Runs `op_type` of the default domain at `opset` with the given inputs (std::nullopt for an
// omitted optional input) and returns `output_count` outputs. Throws KernelError as the kernel
// does.
inline std::vector<Tensor> run_op(const std::string& op_type, const AttributeMap& attrs,
                                  const std::vector<std::optional<Tensor>>& inputs,
                                  int output_count = 1, int opset = 17, ThreadPool* pool = nullptr) {
  const NodeInfo node{"test_node", op_type, "", opset, attrs, static_cast<int>(inputs.size()), output_count};
  return run_node(node, inputs, output_count, pool);
}

template <typename T>
Tensor make(Shape shape, std::vector<T> values) {
  return Tensor::from_values<T>(std::move(shape), values);
}

// std::vector<bool> is packed, so bool tensors are filled element by element.
template <>
inline Tensor make<bool>(Shape shape, std::vector<bool> values) {
  Tensor t(DataType::kBool, std::move(shape));
  EXPECT_EQ(t.element_count(), static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.element_count(); ++i) {
    t.data<bool>()[i] = values[i];
  }
  return t;
}

// A float32 tensor holding 0, 1, 2, ... in element order.
// An int8 (is_signed) or uint8 tensor of the given values.
inline Tensor byte_tensor(bool is_signed, Shape shape, const std::vector<int64_t>& values) {
  Tensor out(is_signed ? DataType::kInt8 : DataType::kUint8, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) {
    if (is_signed) {
      out.data<int8_t>()[i] = static_cast<int8_t>(values[i]);
    } else {
      out.data<uint8_t>()[i] = static_cast<uint8_t>(values[i]);
    }
  }
  return out;
}

inline Tensor iota_floats(Shape shape) {
  Tensor t(DataType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.element_count(); ++i) t.data<float>()[i] = float(i);
  return t;
}

// Element-wise comparison of a float tensor with expected values.
inline void expect_near(const Tensor& actual, const Shape& shape, const std::vector<double>& want,
                        double tol = 1e-5) {
  ASSERT_EQ(actual.shape(), shape) << actual.describe();
  ASSERT_EQ(actual.element_count(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(actual.float_at(static_cast<int64_t>(i)), want[i], tol) << "element " << i;
  }
}

}  // namespace openbpu::kernels::testing
