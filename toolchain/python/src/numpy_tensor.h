// numpy arrays ↔ the kernel library's tensors for the Python package: element types, inputs
// wrapped without a copy, outputs handed to numpy without a copy.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "openbpu/kernels/tensor.h"

namespace openbpu::python {

namespace py = pybind11;

// The numpy dtype of an element type; TypeError for one numpy lacks (bfloat16, string).
py::dtype numpy_dtype(kernels::DataType type);
// The element type of a numpy dtype; kUndefined if the library has none for it.
kernels::DataType data_type_of(const py::dtype& dtype);
// ONNX Runtime's type text of a model value: "tensor(float)", "tensor(int8)", ...
std::string onnx_type_text(kernels::DataType type);

// A tensor over the array's own memory (no copy). The tensor keeps a reference to the array;
// the reference is dropped with the GIL held, from whatever thread the last tensor dies on.
// The array must be C-contiguous with native byte order and a dtype data_type_of knows.
kernels::Tensor wrap_array(const py::array& array);

// True if the tensor's storage is a numpy array's (wrap_array).
bool is_wrapped_array(const kernels::Tensor& tensor);

// The tensor as a numpy array sharing its storage (the array keeps the storage alive); a
// tensor over a caller's array (wrap_array) is copied, so an output never aliases an input.
py::array to_array(const kernels::Tensor& tensor);

}  // namespace openbpu::python
