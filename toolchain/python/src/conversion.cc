// openbpu.convert / openbpu.check: the conversion of hb_mapper makertbin / hb_compile and the
// checker, with the same log; calibration data from images with the toolchain's preprocessing.
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "bindings.h"
#include "numpy_tensor.h"
#include "openbpu/calibration/image_preprocess.h"
#include "openbpu/common/error.h"
#include "openbpu/common/npy.h"
#include "openbpu/pipeline/conversion.h"

namespace openbpu::python {

namespace {

namespace fs = std::filesystem;
using pipeline::ConversionOutcome;

struct ConversionResult {
  std::vector<std::string> model_files;
  std::vector<ConversionOutcome::Placement> nodes;
  int subgraph_count = 0;
  std::string log_file;
};

// A Python value of a yaml config (dict, list, str, bool, int, float) as yaml.
YAML::Node to_yaml(const py::handle& value, const std::string& key) {
  if (py::isinstance<py::dict>(value)) {
    YAML::Node node(YAML::NodeType::Map);
    for (const auto& [k, v] : value.cast<py::dict>()) {
      const std::string name = py::str(k);
      node[name] = to_yaml(v, key.empty() ? name : key + "." + name);
    }
    return node;
  }
  if (py::isinstance<py::str>(value)) return YAML::Node(value.cast<std::string>());
  if (py::isinstance<py::bool_>(value)) return YAML::Node(value.cast<bool>() ? "True" : "False");
  if (py::isinstance<py::int_>(value)) return YAML::Node(value.cast<int64_t>());
  if (py::isinstance<py::float_>(value)) return YAML::Node(value.cast<double>());
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    YAML::Node node(YAML::NodeType::Sequence);
    for (const py::handle& item : value.cast<py::sequence>()) node.push_back(to_yaml(item, key));
    return node;
  }
  throw py::type_error("config key '" + key + "': " + py::str(py::type::of(value)).cast<std::string>() +
                       " is not a yaml value (dict, list, str, bool, int, float)");
}

// The log's ERROR lines (the messages after the time stamp and level).
std::string error_lines(const std::string& log_file) {
  std::ifstream in(log_file);
  std::string line, text;
  while (std::getline(in, line)) {
    const size_t at = line.find(" ERROR ");
    if (at != std::string::npos) text += (text.empty() ? "" : "\n") + line.substr(at + 7);
  }
  return text.empty() ? "the conversion failed (see " + log_file + ")" : text;
}

ConversionResult run(pipeline::ConversionRequest request, const std::string& log_file) {
  request.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  ConversionOutcome outcome;
  int rc = 0;
  {
    py::gil_scoped_release release;
    pipeline::Log log(log_file);
    rc = pipeline::run_conversion(request, log, &outcome);
  }
  if (rc != 0) throw Error(error_lines(log_file));
  return {outcome.model_files, outcome.nodes, outcome.subgraph_count, fs::absolute(log_file).string()};
}

config::ModelType model_type_of(const std::string& text) {
  if (text == "onnx") return config::ModelType::kOnnx;
  if (text == "caffe") return config::ModelType::kCaffe;
  throw py::value_error("model_type '" + text + "' is not 'onnx' or 'caffe'");
}

// A dict config as a yaml file in a fresh temporary folder (removed by the destructor).
class TemporaryConfig {
 public:
  explicit TemporaryConfig(const py::dict& config) {
    std::string pattern = (fs::temp_directory_path() / "openbpu-config-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw Error("cannot create a temporary folder for the config");
    dir_ = pattern;
    path_ = dir_ / "config.yaml";
    YAML::Emitter out;
    out << to_yaml(config, "");
    std::ofstream(path_) << out.c_str() << "\n";
  }
  ~TemporaryConfig() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path dir_, path_;
};

ConversionResult convert(const py::object& config, const std::string& tool, const std::string& model_type,
                         const std::optional<std::string>& log_file) {
  pipeline::ConversionRequest request;
  if (tool == "hb_mapper") {
    request.command = "makertbin";
  } else if (tool == "hb_compile") {
    request.flavour = config::ConfigFlavour::kHbCompile;
    request.command = "hb_compile";
  } else {
    throw py::value_error("tool '" + tool + "' is not 'hb_mapper' or 'hb_compile'");
  }
  request.model_type = model_type_of(model_type);
  const std::string log = log_file ? *log_file : tool == "hb_mapper" ? "hb_mapper_makertbin.log" : "hb_compile.log";
  if (py::isinstance<py::dict>(config)) {
    const TemporaryConfig file(config.cast<py::dict>());
    request.config_file = file.path();
    return run(request, log);
  }
  request.config_file = py::str(config);  // a path (str or os.PathLike)
  return run(request, log);
}

ConversionResult check(const std::string& model, const std::string& march,
                       const std::map<std::string, std::vector<int64_t>>& input_shapes, const std::string& model_type,
                       const std::string& proto, const std::string& log_file) {
  pipeline::ConversionRequest request;
  request.checker = true;
  request.command = "checker";
  request.model_type = model_type_of(model_type);
  request.model_file = model;
  request.proto_file = proto;
  request.march = march;
  for (const auto& [name, shape] : input_shapes) {
    std::string text;
    for (int64_t d : shape) text += (text.empty() ? "" : "x") + std::to_string(d);
    request.input_shapes.emplace_back(name, text);
  }
  return run(request, log_file);
}

template <typename E>
E enum_of(const std::string& text, const char* key) {
  std::string names;
  for (const auto& s : config::enum_spellings<E>()) {
    if (s.name == text) return s.value;
    names += (names.empty() ? "'" : ", '") + std::string(s.name) + "'";
  }
  throw py::value_error(std::string(key) + " '" + text + "' is not one of " + names);
}

calibration::ImageRecipe recipe_of(const std::optional<std::string>& recipe, int64_t height, int64_t width,
                                   const std::string& input_type_train, const std::string& input_layout_train) {
  if (recipe) {
    const calibration::NamedRecipe* named = calibration::find_recipe(*recipe);
    if (named == nullptr) {
      std::string names;
      for (const auto& r : calibration::named_recipes()) names += (names.empty() ? "" : ", ") + std::string(r.name);
      throw py::value_error("recipe '" + *recipe + "' is not one of hb_eval_preprocess's models: " + names);
    }
    return named->recipe;
  }
  if (height <= 0 || width <= 0) throw py::value_error("height and width (the model input's) are required without a recipe");
  calibration::ImageRecipe r;
  r.height = height;
  r.width = width;
  r.colour = enum_of<config::InputType>(input_type_train, "input_type_train");
  if (r.colour == config::InputType::kNv12 || r.colour == config::InputType::kFeaturemap) {
    throw py::value_error("input_type_train '" + input_type_train + "': calibration images are rgb, bgr, yuv444 or gray "
                          "(the training format; nv12 is a runtime type)");
  }
  r.layout = enum_of<config::Layout>(input_layout_train, "input_layout_train");
  return r;
}

py::array preprocess_image(const fs::path& image, const std::optional<std::string>& recipe, int64_t height,
                           int64_t width, const std::string& input_type_train, const std::string& input_layout_train) {
  const calibration::ImageRecipe r = recipe_of(recipe, height, width, input_type_train, input_layout_train);
  kernels::Tensor t;
  {
    py::gil_scoped_release release;
    t = calibration::preprocess_image(image, r);
  }
  return to_array(t);
}

std::vector<std::string> write_calibration_data(const std::vector<fs::path>& images, const fs::path& out_dir,
                                                const std::optional<std::string>& recipe, int64_t height, int64_t width,
                                                const std::string& input_type_train,
                                                const std::string& input_layout_train) {
  const calibration::ImageRecipe r = recipe_of(recipe, height, width, input_type_train, input_layout_train);
  std::vector<std::string> written;
  py::gil_scoped_release release;
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw Error("cannot create " + out_dir.string() + ": " + ec.message());
  for (const fs::path& image : images) {
    const fs::path file = out_dir / (image.stem().string() + ".npy");
    if (std::find(written.begin(), written.end(), file.string()) != written.end()) {
      throw Error(image.string() + ": another image already wrote " + file.string() + " (the same file name)");
    }
    write_npy(file, calibration::preprocess_image(image, r));
    written.push_back(file.string());
  }
  return written;
}

}  // namespace

void bind_conversion(py::module_& m) {
  py::class_<ConversionOutcome::Placement>(m, "NodePlacement", "Where the checker placed one node of the optimized model.")
      .def_readonly("node", &ConversionOutcome::Placement::node)
      .def_readonly("op_type", &ConversionOutcome::Placement::op_type)
      .def_property_readonly("unit", [](const ConversionOutcome::Placement& p) { return p.on_bpu ? "BPU" : "CPU"; })
      .def_readonly("subgraph", &ConversionOutcome::Placement::subgraph, "BPU subgraph id; -1 on the CPU.")
      .def_readonly("reason", &ConversionOutcome::Placement::reason, "Why the node is on the CPU ('' on the BPU).")
      .def("__repr__", [](const ConversionOutcome::Placement& p) {
        return "NodePlacement(node='" + p.node + "', op_type='" + p.op_type + "', unit='" + (p.on_bpu ? "BPU" : "CPU") +
               "', subgraph=" + std::to_string(p.subgraph) + ")";
      });
  py::class_<ConversionResult>(m, "ConversionResult", "What convert() / check() produced.")
      .def_readonly("model_files", &ConversionResult::model_files,
                    "The stage models and the .bin / .hbm written, in stage order (none for check).")
      .def_readonly("nodes", &ConversionResult::nodes, "Every node of the optimized model with its placement.")
      .def_readonly("subgraph_count", &ConversionResult::subgraph_count, "BPU subgraphs.")
      .def_readonly("log_file", &ConversionResult::log_file);

  m.def("convert", &convert, py::arg("config"), py::kw_only(), py::arg("tool") = "hb_mapper",
        py::arg("model_type") = "onnx", py::arg("log_file") = py::none(), R"doc(
Converts a model as ``hb_mapper makertbin --config`` (tool='hb_compile': as ``hb_compile --config``)
does: the same stages, files and log (printed to the console and written to ``log_file``, by default
hb_mapper_makertbin.log / hb_compile.log in the current directory). ``config`` is the yaml file's
path or the same content as a dict (keys and values as in the yaml; relative paths are relative to
the current directory). Returns a ConversionResult; raises openbpu.Error with the log's ERROR lines.
)doc");
  m.def("check", &check, py::arg("model"), py::arg("march"), py::kw_only(),
        py::arg("input_shape") = std::map<std::string, std::vector<int64_t>>{}, py::arg("model_type") = "onnx",
        py::arg("proto") = "", py::arg("log_file") = "hb_mapper_checker.log", R"doc(
Checks a model as ``hb_mapper checker`` does and returns the placement of every node as data
(ConversionResult.nodes). input_shape: {input name: shape} overriding the model's.
)doc");
  m.def("preprocess_image", &preprocess_image, py::arg("image"), py::kw_only(), py::arg("recipe") = py::none(),
        py::arg("height") = 0, py::arg("width") = 0, py::arg("input_type_train") = "rgb",
        py::arg("input_layout_train") = "NCHW", R"doc(
An image (jpg, png, bmp) as a calibration sample: uint8 [1, C, H, W] (NCHW) or [1, H, W, C], stretched
to height x width and converted to input_type_train (rgb, bgr, yuv444, gray), exactly as calibration
reads images with preprocess_on. recipe: one of hb_eval_preprocess's model names instead (its crop,
letterbox or padding, colour and layout).
)doc");
  m.def("write_calibration_data", &write_calibration_data, py::arg("images"), py::arg("out_dir"), py::kw_only(),
        py::arg("recipe") = py::none(), py::arg("height") = 0, py::arg("width") = 0,
        py::arg("input_type_train") = "rgb", py::arg("input_layout_train") = "NCHW", R"doc(
preprocess_image for each image, written atomically as out_dir/<image stem>.npy: a folder to give
cal_data_dir. Returns the files written.
)doc");
}

}  // namespace openbpu::python
