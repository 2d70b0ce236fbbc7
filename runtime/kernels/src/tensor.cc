#include "openbpu/kernels/tensor.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <sstream>

#include "openbpu/kernels/error.h"

namespace openbpu::kernels {

namespace {

class AlignedBuffer final : public Buffer {
 public:
  explicit AlignedBuffer(size_t bytes) : size_(bytes) {
    data_ = ::operator new(bytes == 0 ? 64 : (bytes + 63) / 64 * 64, std::align_val_t{64});
  }
  ~AlignedBuffer() override { ::operator delete(data_, std::align_val_t{64}); }
  void* data() override { return data_; }
  size_t size() const override { return size_; }

 private:
  void* data_;
  size_t size_;
};

class NewDeleteAllocator final : public Allocator {
 public:
  std::shared_ptr<Buffer> allocate(size_t bytes) override {
    return std::make_shared<AlignedBuffer>(bytes);
  }
};

}  // namespace

Allocator& Allocator::default_allocator() {
  static NewDeleteAllocator allocator;
  return allocator;
}

int64_t shape_element_count(std::span<const int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    OPENBPU_CHECK(d >= 0, "shape ", shape_to_string(shape), " has a negative dimension");
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d) {
      fail("shape ", shape_to_string(shape), " has more elements than int64 can count");
    }
    count *= d;
  }
  return count;
}

std::string tensor_size_problem(DataType dtype, std::span<const int64_t> shape) {
  const uint64_t element = dtype_size(dtype);
  if (element == 0) return "";
  uint64_t bytes = element;  // saturates at UINT64_MAX
  for (int64_t d : shape) {
    const uint64_t n = d < 0 ? 0 : static_cast<uint64_t>(d);
    const bool saturates = n != 0 && bytes > std::numeric_limits<uint64_t>::max() / n;
    bytes = saturates ? std::numeric_limits<uint64_t>::max() : bytes * n;
  }
  if (bytes <= base::kMaxTensorBytes) return "";
  std::ostringstream out;
  out << dtype_name(dtype) << shape_to_string(shape) << " needs "
      << (bytes == std::numeric_limits<uint64_t>::max() ? "more than 2^64 " : std::to_string(bytes) + " ")
      << "bytes; a tensor holds at most " << base::kMaxTensorBytes << " (2 GiB)";
  return out.str();
}

std::string shape_to_string(std::span<const int64_t> shape) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? "," : "") << shape[i];
  out << ']';
  return out.str();
}

Tensor::Tensor(DataType dtype, Shape shape, Allocator& allocator) : shape_(std::move(shape)) {
  reset(dtype, shape_, allocator);  // its own shape: kept as it is
}

Tensor::Tensor(DataType dtype, Shape shape, std::shared_ptr<Buffer> buffer, size_t byte_offset)
    : dtype_(dtype), shape_(std::move(shape)), buffer_(std::move(buffer)), offset_(byte_offset) {
  element_count_ = shape_element_count(shape_);
  OPENBPU_CHECK(buffer_ == nullptr || offset_ + byte_size() <= buffer_->size(), "tensor ",
        shape_to_string(shape_), " of ", dtype_name(dtype_), " does not fit its buffer");
}

void Tensor::reset(DataType dtype, std::span<const int64_t> shape, Allocator& allocator) {
  reset_storage(dtype, shape, allocator, true);
}

void Tensor::reset_for_overwrite(DataType dtype, std::span<const int64_t> shape,
                                 Allocator& allocator) {
  reset_storage(dtype, shape, allocator, false);
}

void Tensor::reset_storage(DataType dtype, std::span<const int64_t> shape, Allocator& allocator,
                           bool zero) {
  const int64_t count = shape_element_count(shape);
  OPENBPU_CHECK(dtype_size(dtype) > 0, "cannot allocate a tensor of type ", dtype_name(dtype));
  if (const std::string problem = tensor_size_problem(dtype, shape); !problem.empty()) fail("tensor ", problem);
  buffer_.reset();
  offset_ = 0;
  element_count_ = 0;
  if (shape.data() != shape_.data() || shape.size() != shape_.size()) {
    // assign() keeps the vector unchanged if it throws; an aliasing sub-span is copied first.
    if (shape.data() >= shape_.data() && shape.data() < shape_.data() + shape_.size()) {
      shape_ = Shape(shape.begin(), shape.end());
    } else {
      shape_.assign(shape.begin(), shape.end());
    }
  }
  dtype_ = dtype;
  std::shared_ptr<Buffer> buffer = allocator.allocate(static_cast<size_t>(count) * dtype_size(dtype));
  if (zero) std::memset(buffer->data(), 0, static_cast<size_t>(count) * dtype_size(dtype));
  buffer_ = std::move(buffer);
  element_count_ = count;
}

std::shared_ptr<Buffer> Tensor::release_storage() {
  element_count_ = 0;
  offset_ = 0;
  shape_.clear();
  return std::move(buffer_);
}

Tensor Tensor::reshaped(Shape shape) const {
  const int64_t count = shape_element_count(shape);
  OPENBPU_CHECK(count == element_count_, "cannot reshape ", shape_to_string(shape_), " (", element_count_,
        " elements) to ", shape_to_string(shape), " (", count, " elements)");
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::clone(Allocator& allocator) const {
  Tensor t(dtype_, shape_, allocator);
  if (byte_size() > 0) std::memcpy(t.raw_data(), raw_data(), byte_size());
  return t;
}

int64_t Tensor::int_at(int64_t i) const {
  OPENBPU_CHECK(i >= 0 && i < element_count_, "element ", i, " is outside ", describe());
  switch (dtype_) {
    case DataType::kInt8: return static_cast<const int8_t*>(raw_data())[i];
    case DataType::kUint8: return static_cast<const uint8_t*>(raw_data())[i];
    case DataType::kInt16: return static_cast<const int16_t*>(raw_data())[i];
    case DataType::kUint16: return static_cast<const uint16_t*>(raw_data())[i];
    case DataType::kInt32: return static_cast<const int32_t*>(raw_data())[i];
    case DataType::kUint32: return static_cast<const uint32_t*>(raw_data())[i];
    case DataType::kInt64: return static_cast<const int64_t*>(raw_data())[i];
    case DataType::kUint64: return static_cast<int64_t>(static_cast<const uint64_t*>(raw_data())[i]);
    case DataType::kBool: return static_cast<const uint8_t*>(raw_data())[i] != 0;
    default: return static_cast<int64_t>(float_at(i));
  }
}

double Tensor::float_at(int64_t i) const {
  OPENBPU_CHECK(i >= 0 && i < element_count_, "element ", i, " is outside ", describe());
  switch (dtype_) {
    case DataType::kFloat32: return static_cast<const float*>(raw_data())[i];
    case DataType::kFloat64: return static_cast<const double*>(raw_data())[i];
    case DataType::kFloat16: return Float16::to_float(static_cast<const uint16_t*>(raw_data())[i]);
    case DataType::kBFloat16:
      return BFloat16::to_float(static_cast<const uint16_t*>(raw_data())[i]);
    case DataType::kString:
    case DataType::kUndefined: fail("cannot read a number from ", describe());
    default: return static_cast<double>(int_at(i));
  }
}

std::vector<int64_t> Tensor::to_int64_vector() const {
  OPENBPU_CHECK(!dtype_is_float(dtype_) && dtype_size(dtype_) > 0, "expected an integer tensor, got ",
        describe());
  std::vector<int64_t> out(static_cast<size_t>(element_count_));
  for (int64_t i = 0; i < element_count_; ++i) out[size_t(i)] = int_at(i);
  return out;
}

std::string Tensor::describe() const {
  return str_cat(dtype_name(dtype_), shape_to_string(shape_));
}

void Tensor::check_type(DataType expected) const {
  OPENBPU_CHECK(dtype_ == expected, "tensor is ", describe(), ", accessed as ", dtype_name(expected));
}

void Tensor::check_count(int64_t count) const {
  OPENBPU_CHECK(count == element_count_, "got ", count, " values for shape ", shape_to_string(shape_));
}

}  // namespace openbpu::kernels
