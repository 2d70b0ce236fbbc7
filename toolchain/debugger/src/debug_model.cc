#include "openbpu/debugger/debug_model.h"

#include <algorithm>
#include <cstring>

#include "openbpu/base/file_name.h"
#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"
#include "openbpu/common/npy.h"
#include "openbpu/frontend/onnx_model.h"

namespace openbpu::debugger {

namespace fs = std::filesystem;
using calibration::CalibrationKind;

DebugModel load_debug_model(const fs::path& path) {
  DebugModel m;
  m.model = frontend::load_onnx(path);
  m.calibration = calibration::calibration_nodes(*m.model.graph);
  if (m.calibration.empty()) {
    raise(path.string(),
          ": no HzCalibration node; give the calibrated model "
          "(<prefix>_calibrated_model.onnx in the conversion's working_dir)");
  }
  m.points = calibration::calibration_points_of(*m.model.graph);
  return m;
}

namespace {

std::vector<fs::path> sample_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && !e.path().filename().string().starts_with(".")) {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

Tensor read_sample(const fs::path& file, const ir::Value& input) {
  const std::optional<kernels::Shape> shape = input.type().static_shape();
  if (file.extension() == ".npy") {
    Tensor t = read_npy(file);
    if (t.dtype() != input.type().dtype) {
      raise(file.string(), ": ", t.describe(), ", but input '", input.name(), "' is ",
            input.type().to_string());
    }
    if (shape && t.shape() != *shape) {
      raise(file.string(), ": ", t.describe(), ", but input '", input.name(), "' is ",
            input.type().to_string());
    }
    return t;
  }
  if (!shape) {
    raise(file.string(), ": a raw file needs a static input shape; input '", input.name(), "' is ",
          input.type().to_string(), " (give .npy files)");
  }
  const std::string bytes = read_file(file);
  Tensor t(input.type().dtype, *shape);
  if (bytes.size() != t.byte_size()) {
    raise(file.string(), ": ", bytes.size(), " bytes, but input '", input.name(), "' (",
          input.type().to_string(), ") takes ", t.byte_size());
  }
  std::memcpy(t.raw_data(), bytes.data(), bytes.size());
  return t;
}

}  // namespace

std::vector<Sample> read_debug_data(const ir::Graph& graph, const fs::path& dir, size_t max_count) {
  if (!fs::is_directory(dir)) raise("calibration data ", dir.string(), ": not a directory");
  std::vector<const ir::Value*> inputs;
  for (const ir::Value* v : graph.inputs()) {
    if (!v->is_constant()) inputs.push_back(v);
  }
  std::vector<std::vector<fs::path>> files;
  for (const ir::Value* input : inputs) {
    const fs::path sub = dir / base::safe_file_name(input->name());
    if (fs::is_directory(sub)) {
      files.push_back(sample_files(sub));
    } else if (inputs.size() == 1) {
      files.push_back(sample_files(dir));
    } else {
      raise("calibration data ", dir.string(), ": the model has ", inputs.size(),
            " inputs, so it needs a sub-directory per input; '", sub.filename().string(),
            "' is missing");
    }
    if (files.back().empty()) raise("calibration data for input '", input->name(), "': no files");
    if (files.back().size() != files.front().size()) {
      raise("calibration data: input '", input->name(), "' has ", files.back().size(),
            " files, input '", inputs.front()->name(), "' ", files.front().size());
    }
  }
  const size_t count =
      max_count == 0 ? files.front().size() : std::min(max_count, files.front().size());
  std::vector<Sample> samples(count);
  for (size_t i = 0; i < count; ++i) {
    for (size_t k = 0; k < inputs.size(); ++k) {
      samples[i][inputs[k]->name()] = read_sample(files[k][i], *inputs[k]);
    }
  }
  return samples;
}

ir::Node* find_calibration_node(const DebugModel& m, std::string_view name) {
  for (const auto& [tensor, node] : m.calibration) {
    if (tensor == name || node->name() == name) return node;
  }
  return nullptr;
}

std::vector<std::string> calibrated_tensors_of(const DebugModel& m, std::string_view name) {
  for (const auto& [tensor, node] : m.calibration) {
    if (node->name() == name || tensor == name) return {tensor};
  }
  bool exists = false;
  for (const ir::Node* n : m.model.graph->nodes()) exists = exists || n->name() == name;
  if (!exists) raise("the model has no node '", name, "'");
  std::vector<std::string> tensors;
  for (const calibration::CalibrationPoint& p : m.points) {
    if (std::find(p.nodes.begin(), p.nodes.end(), name) != p.nodes.end()) {
      tensors.push_back(p.tensor);
    }
  }
  return tensors;
}

EnabledFlagsGuard::EnabledFlagsGuard(DebugModel& m) {
  for (const auto& [tensor, node] : m.calibration)
    saved_[node] = node->attrs().get_int("enabled", 1) != 0;
}

EnabledFlagsGuard::~EnabledFlagsGuard() {
  for (const auto& [node, on] : saved_) calibration::set_calibration_enabled(*node, on);
}

void enable_only(DebugModel& m, const std::vector<std::string>& tensors) {
  for (const auto& [tensor, node] : m.calibration) {
    const bool on = std::find(tensors.begin(), tensors.end(), tensor) != tensors.end();
    calibration::set_calibration_enabled(*node, on);
  }
}

std::vector<std::string> all_calibrated(const DebugModel& m) {
  std::vector<std::string> tensors;
  for (const calibration::CalibrationPoint& p : m.points) tensors.push_back(p.tensor);
  return tensors;
}

std::vector<std::string> calibrated_of_kind(const DebugModel& m, CalibrationKind kind) {
  std::vector<std::string> tensors;
  for (const calibration::CalibrationPoint& p : m.points) {
    if (p.kind == kind) tensors.push_back(p.tensor);
  }
  return tensors;
}

std::vector<std::string> compared_tensors(const DebugModel& m, const std::string& output_node) {
  const ir::Graph& graph = *m.model.graph;
  if (output_node.empty()) return calibration::evaluation_tensors(graph);
  for (const ir::Node* n : graph.nodes()) {
    if (n->name() != output_node) continue;
    std::vector<std::string> names;
    for (const ir::Value* v : n->outputs()) {
      if (v != nullptr) names.push_back(v->name());
    }
    return names;
  }
  if (graph.find_value(output_node) != nullptr) return {output_node};
  raise("-o ", output_node, ": the model has no node or tensor of that name");
}

calibration::EvaluationSet evaluation_set(DebugModel& m, const std::vector<Sample>& samples,
                                          const std::vector<std::string>& compared,
                                          const executor::ExecutorOptions& options) {
  const EnabledFlagsGuard restore(m);
  enable_only(m, {});
  calibration::EvaluationSet set;
  set.compared = compared;
  // The model's own outputs: class scores are scored by their decision margins, as the
  // conversion's ranking does (OutputMetrics::score, agreement).
  if (compared == calibration::evaluation_tensors(*m.model.graph)) {
    set.classes = calibration::evaluation_classes(m.model);
  }
  executor::FloatExecutor float_model(m.model, options);
  for (const Sample& s : samples) {
    set.feeds.push_back(s);
    set.reference_outputs.push_back(
        calibration::run_for_evaluation(float_model, *m.model.graph, s, compared));
  }
  return set;
}

}  // namespace openbpu::debugger
