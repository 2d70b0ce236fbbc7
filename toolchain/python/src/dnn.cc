// openbpu.dnn: .bin / .hbm models (and packed files) through the hbDNN C API on the simulator,
// with numpy in and out. The bytes an input takes and the valid data of an output follow
// openbpu::tensor_io, as hrt_model_exec reads and writes them.
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "dnn/hb_dnn.h"
#include "dnn/hb_sys.h"
#include "numpy_tensor.h"
#include "openbpu/tensor_io/tensor_io.h"

namespace openbpu::python {

namespace {

// A failed hbDNN / hbSys call as openbpu.Error, with the runtime's description.
void check(int32_t rc, const std::string& what) {
  if (rc != 0) throw DnnError(what + " failed: " + hbDNNGetErrorDesc(rc) + " (" + std::to_string(rc) + ")");
}

py::tuple shape_tuple(const hbDNNTensorShape& s) {
  py::tuple t(static_cast<size_t>(s.numDimensions));
  for (int32_t i = 0; i < s.numDimensions; ++i) t[static_cast<size_t>(i)] = s.dimensionSize[i];
  return t;
}

const char* source_name(int32_t source) {
  switch (source) {
    case HB_DNN_INPUT_FROM_RESIZER: return "resizer";
    case HB_DNN_INPUT_FROM_PYRAMID: return "pyramid";
    default: return "ddr";
  }
}

// hbDNNTensorProperties with names Python users read.
struct TensorProperties {
  std::string name;
  hbDNNTensorProperties p{};
  std::string input_source;  // inputs only: "ddr", "pyramid", "resizer"

  std::string repr() const {
    return "TensorProperties(name='" + name + "', tensor_type='" + tensor_io::tensor_type_name(p.tensorType) +
           "', valid_shape=" + tensor_io::shape_text(p.validShape) + ", quanti_type='" +
           tensor_io::quanti_type_name(p.quantiType) + "')";
  }
};

// Blocks of BPU memory, freed together.
class Memory {
 public:
  Memory() = default;
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;
  ~Memory() {
    for (hbSysMem& m : blocks_) (void)hbSysFreeMem(&m);
  }
  hbSysMem allocate(size_t bytes) {
    if (bytes == 0 || bytes > UINT32_MAX) throw DnnError("cannot allocate " + std::to_string(bytes) + " bytes of BPU memory");
    hbSysMem m{};
    blocks_.reserve(blocks_.size() + 1);
    check(hbSysAllocCachedMem(&m, static_cast<uint32_t>(bytes)), "hbSysAllocCachedMem");
    blocks_.push_back(m);
    return m;
  }

 private:
  std::vector<hbSysMem> blocks_;
};

// The files' packed handle; models keep it alive.
struct Packed {
  hbPackedDNNHandle_t handle = nullptr;
  ~Packed() {
    if (handle != nullptr) (void)hbDNNRelease(handle);
  }
};

class Model;

// A submitted inference: its memory and task handle, until wait() returns the outputs.
class Task {
 public:
  Task(std::shared_ptr<Packed> packed, std::vector<TensorProperties> outputs, bool dequantize, size_t batches)
      : packed_(std::move(packed)), outputs_(std::move(outputs)), dequantize_(dequantize), batches_(batches) {}
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { finish(0); }

  // Waits (timeout in ms, 0 = no limit); returns the outputs, once.
  py::list wait(int32_t timeout_ms) {
    if (task_ == nullptr) throw py::value_error("Task.wait: the outputs were already returned");
    int32_t rc = 0;
    {
      py::gil_scoped_release release;
      rc = hbDNNWaitTaskDone(task_, timeout_ms);
    }
    if (rc == HB_DNN_TIMEOUT) throw py::value_error("Task.wait: not done within " + std::to_string(timeout_ms) + " ms");
    const int32_t release = hbDNNReleaseTask(task_);
    task_ = nullptr;
    check(rc, "hbDNNWaitTaskDone");
    check(release, "hbDNNReleaseTask");
    return outputs();
  }
  bool done() const { return task_ == nullptr; }

  Memory memory;
  std::vector<hbDNNTensor> inputs, output_tensors;
  hbDNNTaskHandle_t task_ = nullptr;

 private:
  void finish(int32_t timeout_ms) {
    if (task_ == nullptr) return;
    py::gil_scoped_release release;
    (void)hbDNNWaitTaskDone(task_, timeout_ms);
    (void)hbDNNReleaseTask(task_);
    task_ = nullptr;
  }
  // Each output's valid data, batch after batch along the first axis (ROI inference).
  py::list outputs() {
    py::list out;
    for (size_t i = 0; i < outputs_.size(); ++i) {
      const hbDNNTensorProperties& p = outputs_[i].p;
      check(hbSysFlushMem(&output_tensors[i].sysMem[0], HB_SYS_MEM_CACHE_INVALIDATE), "hbSysFlushMem");
      std::vector<py::ssize_t> shape(p.validShape.dimensionSize, p.validShape.dimensionSize + p.validShape.numDimensions);
      if (!shape.empty()) shape[0] *= static_cast<py::ssize_t>(batches_);
      const bool to_float = dequantize_ && p.quantiType != NONE;
      py::array a = to_float ? py::array(py::array_t<float>(shape)) : py::array(py::dtype(tensor_io::numpy_descr(p.tensorType)), shape);
      auto* dst = static_cast<uint8_t*>(a.mutable_data());
      for (size_t b = 0; b < batches_; ++b) {
        const auto* base = static_cast<const uint8_t*>(output_tensors[i].sysMem[0].virAddr) + b * static_cast<size_t>(p.alignedByteSize);
        const std::vector<uint8_t> valid = tensor_io::gather_valid(base, p);
        if (to_float) {
          const std::vector<double> v = tensor_io::dequantize(valid, p);
          auto* f = reinterpret_cast<float*>(dst);
          for (size_t k = 0; k < v.size(); ++k) f[k] = static_cast<float>(v[k]);
          dst += v.size() * sizeof(float);
        } else {
          std::memcpy(dst, valid.data(), valid.size());
          dst += valid.size();
        }
      }
      out.append(a);
    }
    return out;
  }

  std::shared_ptr<Packed> packed_;
  std::vector<TensorProperties> outputs_;
  bool dequantize_;
  size_t batches_;
};

class Model {
 public:
  Model(const std::vector<std::string>& files, const std::optional<std::string>& model_name) {
    if (files.empty()) throw py::value_error("dnn.Model: no model file given");
    packed_ = std::make_shared<Packed>();
    std::vector<const char*> names;
    for (const std::string& f : files) names.push_back(f.c_str());
    {
      py::gil_scoped_release release;
      check(hbDNNInitializeFromFiles(&packed_->handle, names.data(), static_cast<int32_t>(names.size())),
            "hbDNNInitializeFromFiles");
    }
    const char** list = nullptr;
    int32_t count = 0;
    check(hbDNNGetModelNameList(&list, &count, packed_->handle), "hbDNNGetModelNameList");
    for (int32_t i = 0; i < count; ++i) model_names_.emplace_back(list[i]);
    if (model_name) {
      name_ = *model_name;
    } else if (model_names_.size() == 1) {
      name_ = model_names_.front();
    } else {
      throw py::value_error("dnn.Model: the files hold several models (" + joined(model_names_) + "); pass model_name");
    }
    if (std::find(model_names_.begin(), model_names_.end(), name_) == model_names_.end()) {
      throw py::value_error("dnn.Model: no model '" + name_ + "' in the files (they hold " + joined(model_names_) + ")");
    }
    check(hbDNNGetModelHandle(&handle_, packed_->handle, name_.c_str()), "hbDNNGetModelHandle");
    std::vector<std::string> in_names, out_names;
    std::vector<hbDNNTensorProperties> in_props, out_props;
    try {
      in_props = tensor_io::input_properties(handle_, &in_names);
      out_props = tensor_io::output_properties(handle_, &out_names);
    } catch (const std::runtime_error& e) {  // a failing hbDNNGet* call
      throw DnnError(e.what());
    }
    for (size_t i = 0; i < in_props.size(); ++i) {
      int32_t source = HB_DNN_INPUT_FROM_DDR;
      check(hbDNNGetInputSource(&source, handle_, static_cast<int32_t>(i)), "hbDNNGetInputSource");
      inputs_.push_back({in_names[i], in_props[i], source_name(source)});
    }
    for (size_t i = 0; i < out_props.size(); ++i) outputs_.push_back({out_names[i], out_props[i], ""});
  }

  const std::string& name() const { return name_; }
  const std::vector<std::string>& model_names() const { return model_names_; }
  const std::vector<TensorProperties>& inputs() const { return open().inputs_; }
  const std::vector<TensorProperties>& outputs() const { return open().outputs_; }

  std::unique_ptr<Task> submit(const py::object& feed, const std::vector<std::vector<int32_t>>& rois, bool dequantize,
                               int32_t priority, int32_t bpu_core_id) {
    open();
    if (priority < 0 || priority > 255) throw py::value_error("priority must be 0..255, not " + std::to_string(priority));
    size_t resizers = 0;
    for (const TensorProperties& in : inputs_) resizers += in.input_source == "resizer" ? 1 : 0;
    if (!rois.empty() && resizers == 0) {
      throw py::value_error("run_roi: model '" + name_ + "' has no resizer input (convert it with input_source: resizer)");
    }
    if (!rois.empty() && rois.size() % resizers != 0) {
      throw py::value_error("run_roi: " + std::to_string(rois.size()) + " ROI(s) for " + std::to_string(resizers) +
                            " resizer input(s): one ROI per resizer input per batch");
    }
    const size_t batches = rois.empty() ? 1 : rois.size() / resizers;
    auto task = std::make_unique<Task>(packed_, outputs_, dequantize, batches);
    const std::vector<py::array> arrays = ordered(feed);
    for (size_t i = 0; i < inputs_.size(); ++i) {
      task->inputs.push_back(input_tensor(i, arrays[i], !rois.empty(), task->memory));
    }
    // Every batch reads the same inputs (its own ROIs).
    for (size_t b = 1; b < batches; ++b) {
      for (size_t i = 0; i < inputs_.size(); ++i) task->inputs.push_back(task->inputs[i]);
    }
    for (const TensorProperties& o : outputs_) {
      hbDNNTensor t{};
      t.properties = o.p;
      t.sysMem[0] = task->memory.allocate(static_cast<size_t>(o.p.alignedByteSize) * batches);
      task->output_tensors.push_back(t);
    }
    hbDNNInferCtrlParam param;
    HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
    param.priority = priority;
    param.bpuCoreId = bpu_core_id;
    std::vector<hbDNNRoi> boxes;
    for (const std::vector<int32_t>& r : rois) {
      if (r.size() != 4) throw py::value_error("a ROI is (left, top, right, bottom), not " + std::to_string(r.size()) + " numbers");
      boxes.push_back({r[0], r[1], r[2], r[3]});
    }
    hbDNNTensor* outs = task->output_tensors.data();
    int32_t rc = 0;
    {
      py::gil_scoped_release release;
      rc = boxes.empty() ? hbDNNInfer(&task->task_, &outs, task->inputs.data(), handle_, &param)
                         : hbDNNRoiInfer(&task->task_, &outs, task->inputs.data(), boxes.data(),
                                         static_cast<int32_t>(boxes.size()), handle_, &param);
    }
    check(rc, boxes.empty() ? "hbDNNInfer" : "hbDNNRoiInfer");
    return task;
  }

  void close() {
    inputs_.clear();
    outputs_.clear();
    handle_ = nullptr;
    packed_.reset();  // running tasks keep the models until they finish
  }
  bool closed() const { return packed_ == nullptr; }

 private:
  const Model& open() const {
    if (packed_ == nullptr) throw py::value_error("dnn.Model '" + name_ + "' is closed");
    return *this;
  }
  static std::string joined(const std::vector<std::string>& names) {
    std::string s;
    for (const std::string& n : names) s += (s.empty() ? "'" : ", '") + n + "'";
    return s;
  }

  // The feed (a dict by input name, or a sequence in input order) as arrays in input order.
  std::vector<py::array> ordered(const py::object& feed) const {
    std::vector<py::object> items(inputs_.size());
    if (py::isinstance<py::dict>(feed)) {
      for (const auto& [key, value] : feed.cast<py::dict>()) {
        const std::string name = py::str(key);
        size_t i = 0;
        while (i < inputs_.size() && inputs_[i].name != name) ++i;
        if (i == inputs_.size()) {
          std::vector<std::string> names;
          for (const TensorProperties& t : inputs_) names.push_back(t.name);
          throw py::value_error("'" + name + "' is not an input of model '" + name_ + "' (its inputs: " + joined(names) + ")");
        }
        items[i] = py::reinterpret_borrow<py::object>(value);
      }
    } else if (py::isinstance<py::sequence>(feed) && !py::isinstance<py::array>(feed)) {
      const auto seq = feed.cast<py::sequence>();
      if (seq.size() != inputs_.size()) {
        throw py::value_error("model '" + name_ + "' has " + std::to_string(inputs_.size()) + " input(s); " +
                              std::to_string(seq.size()) + " given");
      }
      for (size_t i = 0; i < seq.size(); ++i) items[i] = seq[i];
    } else if (inputs_.size() == 1) {
      items[0] = feed;
    } else {
      throw py::type_error("inputs: a dict {name: ndarray} or a list in input order");
    }
    std::vector<py::array> arrays;
    for (size_t i = 0; i < items.size(); ++i) {
      const std::string what = "input '" + inputs_[i].name + "'";
      if (!items[i]) throw py::value_error(what + " is not fed");
      if (!py::isinstance<py::array>(items[i])) {
        throw py::type_error(what + " must be a numpy.ndarray, not " + py::str(py::type::of(items[i])).cast<std::string>());
      }
      auto a = py::reinterpret_borrow<py::array>(items[i]);
      if (!(a.flags() & py::array::c_style)) throw py::value_error(what + " is not C-contiguous: pass numpy.ascontiguousarray(a)");
      if (a.dtype().byteorder() == '>') throw py::value_error(what + " is big-endian");
      arrays.push_back(a);
    }
    return arrays;
  }

  // Input i's tensor in fresh memory; with ROIs, a resizer input is a source image of its own size.
  hbDNNTensor input_tensor(size_t i, const py::array& a, bool roi, Memory& memory) const {
    const TensorProperties& in = inputs_[i];
    std::string descr = py::str(a.dtype().attr("str"));
    if (!descr.empty() && (descr[0] == '<' || descr[0] == '|' || descr[0] == '=')) descr.erase(0, 1);
    if (descr == "?") descr = "b1";
    std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
    const bool source = roi && in.input_source == "resizer";  // a source image of its own size
    tensor_io::InputData d;
    try {
      const std::string what = "input '" + in.name + "'";
      const auto bytes = static_cast<size_t>(a.nbytes());
      d = source ? tensor_io::source_image_array(descr, shape, a.data(), bytes, in.p, what)
                 : tensor_io::array_input(descr, shape, a.data(), bytes, in.p, what);
    } catch (const std::runtime_error& e) {
      throw py::value_error(e.what());
    }
    hbDNNTensor t{};
    t.properties = in.p;
    if (source) {
      const int h_axis = in.p.tensorLayout == HB_DNN_LAYOUT_NHWC ? 1 : 2;
      t.properties.validShape.dimensionSize[h_axis] = d.image_height;
      t.properties.validShape.dimensionSize[h_axis + 1] = d.image_width;
    }
    t.properties.alignedShape = t.properties.validShape;  // dense data: the runtime pads it
    t.sysMem[0] = memory.allocate(d.bytes.size());
    std::memcpy(t.sysMem[0].virAddr, d.bytes.data(), d.bytes.size());
    check(hbSysFlushMem(&t.sysMem[0], HB_SYS_MEM_CACHE_CLEAN), "hbSysFlushMem");
    return t;
  }

  std::shared_ptr<Packed> packed_;
  std::vector<std::string> model_names_;
  std::string name_;
  hbDNNHandle_t handle_ = nullptr;
  std::vector<TensorProperties> inputs_, outputs_;
};

py::array scale_array(const hbDNNTensorProperties& p) {
  py::array_t<float> a(p.scale.scaleLen);
  for (int32_t i = 0; i < p.scale.scaleLen; ++i) a.mutable_data()[i] = p.scale.scaleData[i];
  return a;
}

}  // namespace

void bind_dnn(py::module_& m) {
  m.doc() = "hbDNN models (.bin / .hbm, packed files) on the simulator, as the board runs them.";
  py::class_<TensorProperties>(m, "TensorProperties", "hbDNNTensorProperties of one input or output.")
      .def_readonly("name", &TensorProperties::name)
      .def_property_readonly("tensor_type", [](const TensorProperties& t) { return tensor_io::tensor_type_name(t.p.tensorType); })
      .def_property_readonly("layout", [](const TensorProperties& t) { return tensor_io::tensor_layout_name(t.p.tensorLayout); })
      .def_property_readonly("valid_shape", [](const TensorProperties& t) { return shape_tuple(t.p.validShape); })
      .def_property_readonly("aligned_shape", [](const TensorProperties& t) { return shape_tuple(t.p.alignedShape); })
      .def_property_readonly("stride", [](const TensorProperties& t) {
        return std::vector<int32_t>(t.p.stride, t.p.stride + t.p.validShape.numDimensions);
      })
      .def_property_readonly("aligned_byte_size", [](const TensorProperties& t) { return t.p.alignedByteSize; })
      .def_property_readonly("quanti_type", [](const TensorProperties& t) { return tensor_io::quanti_type_name(t.p.quantiType); })
      .def_property_readonly("quantize_axis", [](const TensorProperties& t) { return t.p.quantizeAxis; })
      .def_property_readonly("scale", [](const TensorProperties& t) { return scale_array(t.p); })
      .def_property_readonly("zero_point", [](const TensorProperties& t) {
        return std::vector<int>(t.p.scale.zeroPointData, t.p.scale.zeroPointData + t.p.scale.zeroPointLen);
      })
      .def_property_readonly("shift", [](const TensorProperties& t) {
        return std::vector<int>(t.p.shift.shiftData, t.p.shift.shiftData + t.p.shift.shiftLen);
      })
      .def_property_readonly("dtype", [](const TensorProperties& t) { return py::dtype(tensor_io::numpy_descr(t.p.tensorType)); },
                             "The numpy dtype of the data (uint8 for image types).")
      .def_readonly("input_source", &TensorProperties::input_source, "Inputs: 'ddr', 'pyramid' or 'resizer'.")
      .def("__repr__", &TensorProperties::repr);

  py::class_<Task>(m, "Task", "An inference submitted with Model.run_async.")
      .def("wait", &Task::wait, py::arg("timeout_ms") = 0,
           "Waits for the task (0 = no limit; ValueError on timeout, the task stays) and returns its outputs.")
      .def_property_readonly("done", &Task::done);

  py::class_<Model>(m, "Model", R"doc(
One model of .bin / .hbm files (hbDNNInitializeFromFiles + hbDNNGetModelHandle) on the simulator.
Inputs are numpy arrays of the input's valid shape and dtype (TensorProperties.dtype; NV12: the
H*3/2 x W bytes in any shape); the runtime pads them to the aligned shape. Outputs are the valid
data, dequantized to float32 where the output has a quanti_type (dequantize=False: as stored).
)doc")
      .def(py::init([](const py::object& files, const std::optional<std::string>& name) {
             std::vector<std::string> list;
             if (py::isinstance<py::str>(files)) {
               list.push_back(files.cast<std::string>());
             } else {
               list = files.cast<std::vector<std::string>>();
             }
             return std::make_unique<Model>(list, name);
           }),
           py::arg("model_files"), py::arg("model_name") = py::none(),
           "model_files: a path or a list of paths; model_name: needed when the files hold several models.")
      .def_property_readonly("name", &Model::name)
      .def_property_readonly("model_names", &Model::model_names, "Every model of the loaded files.")
      .def_property_readonly("inputs", &Model::inputs)
      .def_property_readonly("outputs", &Model::outputs)
      .def_property_readonly("input_names", [](const Model& mdl) {
        std::vector<std::string> n;
        for (const TensorProperties& t : mdl.inputs()) n.push_back(t.name);
        return n;
      })
      .def_property_readonly("output_names", [](const Model& mdl) {
        std::vector<std::string> n;
        for (const TensorProperties& t : mdl.outputs()) n.push_back(t.name);
        return n;
      })
      .def_property_readonly("closed", &Model::closed)
      .def("run", [](Model& mdl, const py::object& inputs, bool dequantize, int32_t priority, int32_t bpu_core_id) {
             return mdl.submit(inputs, {}, dequantize, priority, bpu_core_id)->wait(0);
           },
           py::arg("inputs"), py::arg("dequantize") = true, py::arg("priority") = 0, py::arg("bpu_core_id") = 0,
           "hbDNNInfer and wait: returns the outputs (list of ndarray, model order).")
      .def("run_async", [](Model& mdl, const py::object& inputs, bool dequantize, int32_t priority, int32_t bpu_core_id) {
             return mdl.submit(inputs, {}, dequantize, priority, bpu_core_id);
           },
           py::arg("inputs"), py::arg("dequantize") = true, py::arg("priority") = 0, py::arg("bpu_core_id") = 0,
           "hbDNNInfer without waiting: returns a Task.")
      .def("run_roi", [](Model& mdl, const py::object& inputs, const std::vector<std::vector<int32_t>>& rois,
                         bool dequantize, int32_t priority, int32_t bpu_core_id) {
             if (rois.empty()) throw py::value_error("run_roi: no ROI given");
             return mdl.submit(inputs, rois, dequantize, priority, bpu_core_id)->wait(0);
           },
           py::arg("inputs"), py::arg("rois"), py::arg("dequantize") = true, py::arg("priority") = 0, py::arg("bpu_core_id") = 0,
           "hbDNNRoiInfer for a resizer model: each resizer input is a source image of any size (uint8: its own "
           "planes, (H*3/2, W) NV12 or (H, W) Y, or RGB as (H, W, 3) or (1, 3, H, W), converted as hrt_model_exec "
           "does), rois a list of (left, top, right, bottom) boxes, one per resizer input per batch; each output holds "
           "every batch along its first axis.")
      .def("close", &Model::close)
      .def("__enter__", [](Model& mdl) -> Model& { return mdl; })
      .def("__exit__", [](Model& mdl, const py::args&) { mdl.close(); });
}

}  // namespace openbpu::python
