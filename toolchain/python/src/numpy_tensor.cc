#include "numpy_tensor.h"

#include <cstring>
#include <memory>
#include <utility>

namespace openbpu::python {

using kernels::DataType;

namespace {

struct TypePair {
  DataType type;
  char kind;  // numpy's dtype.kind
  int size;   // dtype.itemsize
  const char* onnx;
};
constexpr TypePair kTypes[] = {
    {DataType::kFloat32, 'f', 4, "float"},   {DataType::kFloat64, 'f', 8, "double"},
    {DataType::kFloat16, 'f', 2, "float16"}, {DataType::kUint8, 'u', 1, "uint8"},
    {DataType::kInt8, 'i', 1, "int8"},       {DataType::kUint16, 'u', 2, "uint16"},
    {DataType::kInt16, 'i', 2, "int16"},     {DataType::kInt32, 'i', 4, "int32"},
    {DataType::kInt64, 'i', 8, "int64"},     {DataType::kUint32, 'u', 4, "uint32"},
    {DataType::kUint64, 'u', 8, "uint64"},   {DataType::kBool, 'b', 1, "bool"},
};

// Storage of a numpy array: its data pointer and a reference to the array.
class ArrayBuffer final : public kernels::Buffer {
 public:
  explicit ArrayBuffer(const py::array& array)
      : owner_(array), data_(const_cast<void*>(array.data())), size_(static_cast<size_t>(array.nbytes())) {}
  ~ArrayBuffer() override {
    py::gil_scoped_acquire gil;
    owner_ = py::object();
  }
  void* data() override { return data_; }
  size_t size() const override { return size_; }

 private:
  py::object owner_;
  void* data_;
  size_t size_;
};

}  // namespace

py::dtype numpy_dtype(DataType type) {
  for (const TypePair& t : kTypes) {
    if (t.type == type) {
      const char code[3] = {t.kind == 'b' ? '?' : t.kind, t.kind == 'b' ? '\0' : static_cast<char>('0' + t.size), '\0'};
      return py::dtype(std::string(code));
    }
  }
  throw py::type_error("element type " + std::string(kernels::dtype_name(type)) + " has no numpy dtype");
}

DataType data_type_of(const py::dtype& dtype) {
  for (const TypePair& t : kTypes) {
    if (t.kind == dtype.kind() && t.size == dtype.itemsize()) return t.type;
  }
  return DataType::kUndefined;
}

std::string onnx_type_text(DataType type) {
  for (const TypePair& t : kTypes) {
    if (t.type == type) return std::string("tensor(") + t.onnx + ")";
  }
  return "tensor(" + std::string(kernels::dtype_name(type)) + ")";
}

kernels::Tensor wrap_array(const py::array& array) {
  kernels::Shape shape(array.shape(), array.shape() + array.ndim());
  return kernels::Tensor(data_type_of(array.dtype()), std::move(shape), std::make_shared<ArrayBuffer>(array));
}

bool is_wrapped_array(const kernels::Tensor& tensor) {
  return dynamic_cast<const ArrayBuffer*>(tensor.buffer().get()) != nullptr;
}

py::array to_array(const kernels::Tensor& tensor) {
  const py::dtype dtype = numpy_dtype(tensor.dtype());
  std::vector<py::ssize_t> shape(tensor.shape().begin(), tensor.shape().end());
  if (tensor.element_count() == 0 || tensor.empty_storage() || is_wrapped_array(tensor)) {
    py::array copy(dtype, shape);
    if (tensor.byte_size() > 0) std::memcpy(copy.mutable_data(), tensor.raw_data(), tensor.byte_size());
    return copy;
  }
  // The capsule owns a reference to the storage; numpy frees it with the array.
  auto* keep = new std::shared_ptr<kernels::Buffer>(tensor.buffer());
  py::capsule owner(keep, [](void* p) { delete static_cast<std::shared_ptr<kernels::Buffer>*>(p); });
  return py::array(dtype, shape, {}, tensor.raw_data(), owner);
}

}  // namespace openbpu::python
