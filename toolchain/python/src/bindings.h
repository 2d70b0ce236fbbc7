// The Python package's native module, openbpu._openbpu: one bind_* function per part.
#pragma once

#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>

namespace openbpu::python {

namespace py = pybind11;

// A runtime call that failed (hbDNN status), raised in Python as openbpu.Error.
class DnnError : public std::runtime_error {
 public:
  explicit DnnError(const std::string& message) : std::runtime_error(message) {}
};

void bind_session(py::module_& m);     // Session, NodeArg (session.cc)
void bind_dnn(py::module_& m);         // dnn.Model, dnn.TensorProperties, dnn.Task (dnn.cc)
void bind_conversion(py::module_& m);  // convert, check, calibration data (conversion.cc)

}  // namespace openbpu::python
