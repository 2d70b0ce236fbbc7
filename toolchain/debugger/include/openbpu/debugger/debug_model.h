// The accuracy debugger's inputs: a calibrated model (stage 3, HzCalibration nodes named
// `<tensor>_HzCalibration`), its calibration points read back from those nodes, and samples
// of the model's inputs. Float references come from the same model with every calibration node
// disabled; "quantized" means a calibration node fake-quantizes its tensor (its thresholds and
// bits), as the conversion's own sensitivity ranking does.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "openbpu/calibration/calibration_nodes.h"
#include "openbpu/calibration/fake_quant_evaluation.h"
#include "openbpu/ir/graph.h"

namespace openbpu::debugger {

using kernels::Tensor;
using Sample = std::map<std::string, Tensor>;  // model input name -> tensor

struct DebugModel {
  ir::Model model;
  std::vector<calibration::CalibrationPoint> points;  // graph order
  std::map<std::string, ir::Node*> calibration;       // calibration node by calibrated tensor
};

// Loads MODEL. Throws Error naming the file if it cannot be read or has no HzCalibration node.
DebugModel load_debug_model(const std::filesystem::path& path);

// CALIBRATION_DATA: per model input, sample files sorted by name — .npy, or raw files of the
// input's element type and shape —, from the directory's sub-directory named as the input
// (characters outside [A-Za-z0-9._-] as '_': what debug_mode dump_calibration_data writes) or,
// for a model with one input, from the directory itself. At most `max_count` samples (0: all).
// Throws Error naming the file or directory and the rule (count mismatch, shape, type).
std::vector<Sample> read_debug_data(const ir::Graph& graph, const std::filesystem::path& dir,
                                    size_t max_count);

// The calibration node of a name given on the command line: a calibration node's name, or
// a calibrated tensor's name. nullptr if neither.
ir::Node* find_calibration_node(const DebugModel& m, std::string_view name);
// The calibrated tensors of a node name: its own if it is a calibration node, else those of
// the points that list the node (its activation inputs, weights and output). Error naming
// the node if the model has no such node.
std::vector<std::string> calibrated_tensors_of(const DebugModel& m, std::string_view name);

// Keeps the calibration nodes' enabled flags: restores them when it goes out of scope (also
// when an analysis throws), so that every analysis leaves the model as it found it.
class EnabledFlagsGuard {
 public:
  explicit EnabledFlagsGuard(DebugModel& m);
  ~EnabledFlagsGuard();
  EnabledFlagsGuard(const EnabledFlagsGuard&) = delete;
  EnabledFlagsGuard& operator=(const EnabledFlagsGuard&) = delete;

 private:
  std::map<ir::Node*, bool> saved_;
};

// Enables exactly the calibration nodes of `tensors` (the others pass their input through).
void enable_only(DebugModel& m, const std::vector<std::string>& tensors);
// The tensors of every calibration node, or of every weight / activation one.
std::vector<std::string> all_calibrated(const DebugModel& m);
std::vector<std::string> calibrated_of_kind(const DebugModel& m, calibration::CalibrationKind kind);

// The compared tensors: the graph's evaluation tensors (calibration::evaluation_tensors), or
// the outputs of the node named `output_node` (a node or tensor name; Error if neither).
std::vector<std::string> compared_tensors(const DebugModel& m, const std::string& output_node);

// Feeds, compared tensors and float references (every calibration node disabled; the nodes'
// enabled flags are restored).
calibration::EvaluationSet evaluation_set(DebugModel& m, const std::vector<Sample>& samples,
                                          const std::vector<std::string>& compared,
                                          const executor::ExecutorOptions& options);

}  // namespace openbpu::debugger
