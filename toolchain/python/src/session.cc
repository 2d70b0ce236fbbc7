// openbpu.Session: any ONNX model of the conversion flow (original, optimized, calibrated,
// quantized) on the float executor, with HB_ONNXRuntime's and ONNX Runtime's calls.
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "numpy_tensor.h"
#include "openbpu/common/error.h"
#include "openbpu/common/input_offset.h"
#include "openbpu/executor/float_executor.h"
#include "openbpu/frontend/onnx_model.h"

namespace openbpu::python {

namespace {

using kernels::DataType;
using kernels::Tensor;

// One model input or output as ONNX Runtime's NodeArg describes it.
struct NodeArg {
  std::string name;
  py::list shape;  // int per known dimension, the symbol's name, or None
  std::string type;
  std::string repr() const {
    return "NodeArg(name='" + name + "', type='" + type + "', shape=" + std::string(py::repr(shape)) + ")";
  }
};

NodeArg node_arg(const ir::Value& v) {
  NodeArg a{v.name(), py::list(), onnx_type_text(v.type().dtype)};
  if (v.type().shape) {
    for (const ir::Dim& d : *v.type().shape) {
      if (d.is_known()) {
        a.shape.append(d.value);
      } else if (!d.symbol.empty()) {
        a.shape.append(d.symbol);
      } else {
        a.shape.append(py::none());
      }
    }
  }
  return a;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "'" : ", '") + n + "'";
  return s;
}

class Session {
 public:
  Session(const std::string& path, int threads) : path_(path) {
    if (threads < 1) throw py::value_error("Session: threads must be at least 1, not " + std::to_string(threads));
    py::gil_scoped_release release;
    model_ = std::make_unique<ir::Model>(frontend::load_onnx(path));
    executor_ = std::make_unique<executor::FloatExecutor>(*model_, executor::ExecutorOptions{threads});
    for (const ir::Value* v : executor_->required_inputs()) inputs_.push_back(v);
    for (const ir::Value* v : model_->graph->outputs()) outputs_.push_back(v);
  }

  std::vector<std::string> input_names() const { return names(inputs()); }
  std::vector<std::string> output_names() const { return names(outputs()); }
  std::vector<NodeArg> get_inputs() const { return args(inputs()); }
  std::vector<NodeArg> get_outputs() const { return args(outputs()); }
  std::vector<py::list> input_shapes() const {
    std::vector<py::list> shapes;
    for (const ir::Value* v : inputs()) shapes.push_back(node_arg(*v).shape);
    return shapes;
  }
  std::vector<py::dtype> input_types() const {
    std::vector<py::dtype> types;
    for (const ir::Value* v : inputs()) types.push_back(numpy_dtype(v->type().dtype));
    return types;
  }
  const std::string& model_path() const { return path_; }

  // HB_ONNXRuntime.run / run_feature: uint8 data for an int8 input is shifted by -input_offset.
  py::list run(const std::optional<std::vector<std::string>>& output_names, const py::dict& input_feed,
               int input_offset) {
    check_open();
    std::map<std::string, Tensor> feeds = make_feeds(input_feed, input_offset);
    executor::RunOptions options;
    std::vector<std::string> wanted = output_names && !output_names->empty() ? *output_names : this->output_names();
    const std::vector<std::string> graph_outputs = this->output_names();
    for (const std::string& name : wanted) {
      if (std::find(graph_outputs.begin(), graph_outputs.end(), name) != graph_outputs.end()) continue;
      if (model_->graph->find_value(name) == nullptr) {
        throw py::value_error("Session.run: '" + name + "' is not a value of " + path_ + " (its outputs: " +
                              joined(graph_outputs) + ")");
      }
      options.extra_outputs.push_back(name);
    }
    executor::RunResult result;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      if (executor_ == nullptr) throw py::value_error("Session of " + path_ + " was closed while the run waited");
      result = executor_->run(feeds, options);
    }
    py::list out;
    for (const std::string& name : wanted) out.append(to_array(result.at(name)));
    return out;
  }

  // Holds the GIL throughout, so no other thread reads the model while it goes; waits for a run
  // in progress (which takes the GIL back only after it has finished with the executor).
  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    executor_.reset();
    model_.reset();
  }
  bool closed() const { return executor_ == nullptr; }

 private:
  const std::vector<const ir::Value*>& inputs() const {
    check_open();
    return inputs_;
  }
  const std::vector<const ir::Value*>& outputs() const {
    check_open();
    return outputs_;
  }
  void check_open() const {
    if (executor_ == nullptr) throw py::value_error("Session of " + path_ + " is closed");
  }
  static std::vector<std::string> names(const std::vector<const ir::Value*>& values) {
    std::vector<std::string> n;
    for (const ir::Value* v : values) n.push_back(v->name());
    return n;
  }
  static std::vector<NodeArg> args(const std::vector<const ir::Value*>& values) {
    std::vector<NodeArg> a;
    for (const ir::Value* v : values) a.push_back(node_arg(*v));
    return a;
  }

  std::map<std::string, Tensor> make_feeds(const py::dict& input_feed, int input_offset) const {
    std::map<std::string, Tensor> feeds;
    for (const auto& [key, value] : input_feed) {
      const std::string name = py::str(key);
      const ir::Value* input = nullptr;
      for (const ir::Value* v : inputs()) input = v->name() == name ? v : input;
      if (input == nullptr) {
        throw py::value_error("Session.run: '" + name + "' is not an input of " + path_ + " (its inputs: " +
                              joined(input_names()) + ")");
      }
      feeds[name] = feed(*input, value, input_offset);
    }
    for (const ir::Value* v : inputs()) {
      if (!feeds.count(v->name())) {
        throw py::value_error("Session.run: input '" + v->name() + "' (" + v->type().to_string() + ") is not fed");
      }
    }
    return feeds;
  }

  static Tensor feed(const ir::Value& input, const py::handle& value, int input_offset) {
    const std::string what = "input '" + input.name() + "'";
    if (!py::isinstance<py::array>(value)) {
      throw py::type_error(what + " must be a numpy.ndarray, not " + py::str(py::type::of(value)).cast<std::string>());
    }
    const auto array = py::reinterpret_borrow<py::array>(value);
    if (!(array.flags() & py::array::c_style)) {
      throw py::value_error(what + " is not C-contiguous: pass numpy.ascontiguousarray(a)");
    }
    if (array.dtype().byteorder() == '>') throw py::value_error(what + " is big-endian: pass a.astype(a.dtype.newbyteorder('='))");
    const DataType want = input.type().dtype;
    const DataType got = data_type_of(array.dtype());
    const bool offset = want == DataType::kInt8 && got == DataType::kUint8;
    if (got != want && !offset) {
      throw py::type_error(what + " takes " + std::string(kernels::dtype_name(want)) + " data (numpy " +
                           py::str(numpy_dtype(want)).cast<std::string>() + "), not numpy " +
                           py::str(array.dtype()).cast<std::string>());
    }
    check_shape(input, array);
    if (!offset) return wrap_array(array);
    try {
      return shift_to_int8(wrap_array(array), input_offset, what, "input_offset");
    } catch (const Error& e) {  // the caller's data: a ValueError
      throw py::value_error(e.what());
    }
  }

  static void check_shape(const ir::Value& input, const py::array& array) {
    if (!input.type().shape) return;
    const std::vector<ir::Dim>& dims = *input.type().shape;
    bool ok = static_cast<size_t>(array.ndim()) == dims.size();
    for (size_t i = 0; ok && i < dims.size(); ++i) ok = !dims[i].is_known() || dims[i].value == array.shape(i);
    if (!ok) {
      std::string got = "(";
      for (py::ssize_t i = 0; i < array.ndim(); ++i) got += (i ? ", " : "") + std::to_string(array.shape(i));
      throw py::value_error("input '" + input.name() + "' has shape " + got + (array.ndim() == 1 ? ",)" : ")") +
                            "; the model takes " + input.type().to_string());
    }
  }

  std::string path_;
  std::unique_ptr<ir::Model> model_;
  std::unique_ptr<executor::FloatExecutor> executor_;
  std::vector<const ir::Value*> inputs_, outputs_;
  std::mutex mutex_;
};

}  // namespace

void bind_session(py::module_& m) {
  py::class_<NodeArg>(m, "NodeArg", "A model input or output: name, shape (int, symbol name or None per axis), type.")
      .def_readonly("name", &NodeArg::name)
      .def_readonly("shape", &NodeArg::shape)
      .def_readonly("type", &NodeArg::type)
      .def("__repr__", &NodeArg::repr);

  py::class_<Session>(m, "Session", R"doc(
An ONNX model of the conversion flow (``*_original_float_model.onnx``, ``*_optimized_float_model.onnx``,
``*_calibrated_model.onnx``, ``*_quantized_model.onnx``, or any float model) on OpenBPU's float
executor, the engine behind ``hb_mapper infer``: the same outputs, bit for bit. The calls are those of
the reference toolchain's ``HB_ONNXRuntime`` and of ``onnxruntime.InferenceSession``.

Inputs are numpy arrays of the input's dtype, C-contiguous, in native byte order; they are read in
place (no copy). Outputs are numpy arrays that own the executor's buffers (no copy). The GIL is
released while the model runs; one session may be used from several threads (runs are serialised;
each run uses ``threads`` threads inside the kernels).
)doc")
      .def(py::init<const std::string&, int>(), py::arg("model_file"), py::arg("threads") = 1,
           "Loads and prepares the model. openbpu.Error names the file, node or rule on a bad model.")
      .def_property_readonly("input_names", &Session::input_names, "Inputs to feed, in graph order.")
      .def_property_readonly("output_names", &Session::output_names, "Graph outputs, in graph order.")
      .def_property_readonly("input_shapes", &Session::input_shapes, "Each input's shape (int, symbol or None per axis).")
      .def_property_readonly("input_types", &Session::input_types, "Each input's numpy dtype.")
      .def_property_readonly("model_file", &Session::model_path)
      .def_property_readonly("closed", &Session::closed)
      .def("get_inputs", &Session::get_inputs, "The inputs as NodeArg (name, shape, type).")
      .def("get_outputs", &Session::get_outputs, "The outputs as NodeArg (name, shape, type).")
      .def("run", &Session::run, py::arg("output_names"), py::arg("input_feed"), py::arg("input_offset") = 128,
           R"doc(
Runs the model; returns one numpy array per name of ``output_names`` (None or [] = every graph output,
in graph order). A name that is not a graph output may name any value of the model (an intermediate
tensor). ``input_feed`` maps every input name to an array. For an int8 input (an image input of a
quantized or calibrated model: RGB_128, yuv444_128, ...) uint8 pixel data may be given; it is
shifted by ``-input_offset`` (default 128), as HB_ONNXRuntime.run does.
Raises ValueError (unknown or missing name, wrong shape, not C-contiguous), TypeError (not an
ndarray, wrong dtype), openbpu.Error (a node fails).
)doc")
      .def("run_feature", &Session::run, py::arg("output_names"), py::arg("input_feed"), py::arg("input_offset") = 0,
           "run() for featuremap inputs: the data is fed as it is (input_offset applies only to uint8 data for an "
           "int8 input and defaults to 0).")
      .def("close", &Session::close, "Frees the model and its buffers; later calls raise ValueError.")
      .def("__enter__", [](Session& s) -> Session& { return s; })
      .def("__exit__", [](Session& s, const py::args&) { s.close(); });
}

}  // namespace openbpu::python
