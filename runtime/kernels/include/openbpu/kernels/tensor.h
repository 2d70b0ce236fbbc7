// Dense row-major tensors with shared, 64-byte aligned storage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "openbpu/base/limits.h"
#include "openbpu/kernels/dtype.h"

namespace openbpu::kernels {

using Shape = std::vector<int64_t>;

// Number of elements of a shape (1 for a scalar). Throws KernelError on a negative dimension
// or an element count that overflows int64.
int64_t shape_element_count(std::span<const int64_t> shape);
// "[1,3,224,224]"
std::string shape_to_string(std::span<const int64_t> shape);

// "" if a tensor of `dtype` and `shape` (dimensions >= 0) fits base::kMaxTensorBytes (2 GiB,
// openbpu/base/limits.h; Tensor refuses to allocate more), else the rule it breaks:
// "float32[1,1024,1024,1048576] needs 4398046511104 bytes; a tensor holds at most 2147483647
// (2 GiB)". Types without a fixed element size (string, undefined) always fit.
std::string tensor_size_problem(DataType dtype, std::span<const int64_t> shape);

// A block of bytes. Tensors share blocks; the executor recycles them through an Allocator.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual void* data() = 0;
  virtual size_t size() const = 0;
};

// Source of buffers. The default allocator uses aligned operator new.
class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns a buffer of at least `bytes` bytes, 64-byte aligned. Throws std::bad_alloc.
  virtual std::shared_ptr<Buffer> allocate(size_t bytes) = 0;
  static Allocator& default_allocator();
};

class Tensor {
 public:
  Tensor() = default;
  // Allocates zero-initialised storage for `shape`.
  Tensor(DataType dtype, Shape shape, Allocator& allocator = Allocator::default_allocator());
  // Wraps existing storage (not copied); `buffer` must hold at least byte_size() bytes.
  Tensor(DataType dtype, Shape shape, std::shared_ptr<Buffer> buffer, size_t byte_offset = 0);

  // Copies `count` elements of T into a new tensor of `shape` (count must equal its size).
  template <typename T>
  static Tensor from_values(Shape shape, std::span<const T> values) {
    Tensor t(DataTypeOf<T>::value, std::move(shape));
    t.check_count(static_cast<int64_t>(values.size()));
    for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = values[i];
    return t;
  }
  template <typename T>
  static Tensor scalar(T value) {
    Tensor t(DataTypeOf<T>::value, {});
    t.data<T>()[0] = value;
    return t;
  }

  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t axis) const { return shape_[static_cast<size_t>(axis)]; }
  int64_t element_count() const { return element_count_; }
  size_t byte_size() const { return static_cast<size_t>(element_count_) * dtype_size(dtype_); }
  bool empty_storage() const { return buffer_ == nullptr; }
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  size_t byte_offset() const { return offset_; }

  void* raw_data() { return buffer_ ? static_cast<char*>(buffer_->data()) + offset_ : nullptr; }
  const void* raw_data() const {
    return buffer_ ? static_cast<const char*>(buffer_->data()) + offset_ : nullptr;
  }
  // Typed access; throws KernelError if T does not match dtype().
  template <typename T>
  T* data() {
    check_type(DataTypeOf<T>::value);
    return static_cast<T*>(raw_data());
  }
  template <typename T>
  const T* data() const {
    check_type(DataTypeOf<T>::value);
    return static_cast<const T*>(raw_data());
  }
  template <typename T>
  std::span<const T> values() const {
    return {data<T>(), static_cast<size_t>(element_count_)};
  }

  // Re-initialises this tensor in place as `dtype` of `shape` with zeroed storage from
  // `allocator`, keeping the shape's own storage when it is large enough (so a tensor that is
  // reset to its previous rank allocates nothing but what `allocator` does). Throws KernelError
  // (bad shape) before anything changes; on std::bad_alloc the tensor is left empty.
  void reset(DataType dtype, std::span<const int64_t> shape, Allocator& allocator);
  // reset() without zeroing the storage: for a caller that writes every element before
  // anything reads one (a recycled buffer holds an earlier tensor's bytes).
  void reset_for_overwrite(DataType dtype, std::span<const int64_t> shape, Allocator& allocator);
  // Hands out the storage and leaves the tensor empty (no elements; shape storage kept).
  std::shared_ptr<Buffer> release_storage();

  // Same storage, another shape with the same element count.
  Tensor reshaped(Shape shape) const;
  // Deep copy into fresh storage.
  Tensor clone(Allocator& allocator = Allocator::default_allocator()) const;
  // Reads element i (row-major) of an integer or float tensor as int64 / double.
  int64_t int_at(int64_t i) const;
  double float_at(int64_t i) const;
  // All elements of an integer tensor as int64 (for shape/axes/index inputs).
  std::vector<int64_t> to_int64_vector() const;
  // "float32[1,3,224,224]"
  std::string describe() const;

 private:
  void check_type(DataType expected) const;
  void reset_storage(DataType dtype, std::span<const int64_t> shape, Allocator& allocator,
                     bool zero);
  void check_count(int64_t count) const;

  DataType dtype_ = DataType::kUndefined;
  Shape shape_;
  int64_t element_count_ = 0;
  std::shared_ptr<Buffer> buffer_;
  size_t offset_ = 0;
};

}  // namespace openbpu::kernels
