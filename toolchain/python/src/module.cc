#include <pybind11/pybind11.h>

#include "bindings.h"
#include "openbpu/common/error.h"
#include "openbpu/kernels/error.h"

PYBIND11_MODULE(_openbpu, m) {
  namespace py = pybind11;
  using namespace openbpu::python;  // NOLINT(google-build-using-namespace): the module's own parts
  m.doc() = "OpenBPU's native module; import openbpu instead.";
  // Errors of the toolchain and the runtime: a model, node, file or call that fails, with its
  // message. Input mistakes of the caller are ValueError / TypeError instead.
  static py::exception<openbpu::Error> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const openbpu::Error& e) {
      PyErr_SetString(error.ptr(), e.what());
    } catch (const openbpu::kernels::KernelError& e) {
      PyErr_SetString(error.ptr(), e.what());
    } catch (const DnnError& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });
  bind_session(m);
  py::module_ dnn = m.def_submodule("dnn");
  bind_dnn(dnn);
  bind_conversion(m);
}
