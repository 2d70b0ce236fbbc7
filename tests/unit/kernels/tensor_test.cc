// Tensor storage reuse (tensor.h): reset keeps the shape's storage and zeroes the data,
// release_storage hands the buffer out, KernelContext::allocate_output resets in place.
#include <gtest/gtest.h>

#include <cstring>

#include "openbpu/kernels/error.h"
#include "openbpu/kernels/kernel.h"
#include "openbpu/kernels/tensor.h"

namespace openbpu::kernels {
namespace {

TEST(TensorStorage, ResetKeepsTheShapeStorageAndZeroesTheData) {
  Tensor t(DataType::kFloat32, {2, 3, 4});
  std::memset(t.raw_data(), 0x5A, t.byte_size());
  const int64_t* shape_storage = t.shape().data();
  t.reset(DataType::kInt8, Shape{4, 6}, Allocator::default_allocator());
  EXPECT_EQ(t.shape(), (Shape{4, 6}));
  EXPECT_EQ(t.shape().data(), shape_storage);  // a shorter shape fits the old storage
  EXPECT_EQ(t.dtype(), DataType::kInt8);
  EXPECT_EQ(t.element_count(), 24);
  for (int8_t v : t.values<int8_t>()) EXPECT_EQ(v, 0);
  // Its own shape as the argument (the runtime resets an output to the shape it had).
  t.reset(DataType::kInt16, t.shape(), Allocator::default_allocator());
  EXPECT_EQ(t.shape(), (Shape{4, 6}));
  EXPECT_EQ(t.byte_size(), 48u);
  // A part of its own shape.
  t.reset(DataType::kInt16, std::span<const int64_t>(t.shape()).subspan(1), Allocator::default_allocator());
  EXPECT_EQ(t.shape(), (Shape{6}));
}

TEST(TensorStorage, ResetWithABadShapeChangesNothing) {
  Tensor t(DataType::kInt32, {3});
  t.data<int32_t>()[1] = 7;
  EXPECT_THROW(t.reset(DataType::kInt32, Shape{2, -1}, Allocator::default_allocator()), KernelError);
  EXPECT_EQ(t.shape(), (Shape{3}));
  EXPECT_EQ(t.data<int32_t>()[1], 7);
}

// base::kMaxTensorBytes (2 GiB - 1): a larger shape is refused before anything is allocated,
// with the rule; the limit itself, an empty tensor of huge dimensions and an overflowing shape.
TEST(TensorStorage, ATensorHoldsAtMostTwoGibibytes) {
  const Shape terabytes = {1, 1024, 1024, int64_t{1} << 20};
  try {
    Tensor t(DataType::kFloat32, terabytes);
    FAIL() << "a 4 TiB tensor was allocated";
  } catch (const KernelError& e) {
    EXPECT_STREQ(e.what(), "tensor float32[1,1024,1024,1048576] needs 4398046511104 bytes; a tensor holds at most "
                           "2147483647 (2 GiB)");
  }
  EXPECT_EQ(tensor_size_problem(DataType::kInt8, Shape{(int64_t{1} << 31) - 1}), "");
  EXPECT_NE(tensor_size_problem(DataType::kInt8, Shape{int64_t{1} << 31}), "");
  EXPECT_NE(tensor_size_problem(DataType::kInt16, Shape{int64_t{1} << 30}), "");
  EXPECT_EQ(tensor_size_problem(DataType::kFloat32, Shape{int64_t{1} << 40, int64_t{1} << 40, 0}), "");
  EXPECT_EQ(tensor_size_problem(DataType::kFloat32, Shape{int64_t{1} << 40, int64_t{1} << 40, 4}),
            "float32[1099511627776,1099511627776,4] needs more than 2^64 bytes; a tensor holds at most 2147483647 "
            "(2 GiB)");
}

TEST(TensorStorage, ReleaseStorageHandsTheBufferOut) {
  Tensor t(DataType::kUint8, {8});
  t.data<uint8_t>()[3] = 9;
  const Tensor view = t.reshaped({2, 4});
  std::shared_ptr<Buffer> b = t.release_storage();
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(static_cast<uint8_t*>(b->data())[3], 9);
  EXPECT_TRUE(t.empty_storage());
  EXPECT_EQ(t.element_count(), 0);
  EXPECT_EQ(b.use_count(), 2);  // and the reshaped view's
  EXPECT_EQ(t.release_storage(), nullptr);
}

TEST(TensorStorage, AllocateOutputResetsTheOutputInPlace) {
  const Tensor x(DataType::kFloat32, {1, 2, 3});
  const Tensor* inputs[] = {&x};
  Tensor outputs[1] = {Tensor(DataType::kInt8, {9, 9, 9})};
  const int64_t* shape_storage = outputs[0].shape().data();
  KernelContext ctx(inputs, outputs, Allocator::default_allocator(), nullptr);
  Tensor& y = ctx.allocate_output(0, DataType::kFloat32, x.shape());
  EXPECT_EQ(&y, &outputs[0]);
  EXPECT_EQ(y.shape(), x.shape());
  EXPECT_EQ(y.shape().data(), shape_storage);
  EXPECT_EQ(y.dtype(), DataType::kFloat32);
  // An output the node does not list goes to scratch space.
  Tensor& extra = ctx.allocate_output(3, DataType::kInt8, {2});
  EXPECT_NE(&extra, &outputs[0]);
  EXPECT_EQ(extra.element_count(), 2);
}

}  // namespace
}  // namespace openbpu::kernels
