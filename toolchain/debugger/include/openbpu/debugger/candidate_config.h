// find-fix's candidate configurations: the user's yaml with a working_dir of its own and
// per-node choices added to node_info (docs/config.md), as yaml text for hb_mapper / hb_compile.
#pragma once

#include <map>
#include <string>

namespace openbpu::debugger {

// What find-fix sets for one node in node_info.
struct NodeSetting {
  bool cpu = false;           // ON: CPU (float on the CPU; the types below are then not set)
  bool input_int16 = false;   // InputType: int16
  bool output_int16 = false;  // OutputType: int16
  // Both settings' choices (a CPU node stays on the CPU, int16 stays int16).
  NodeSetting merged(const NodeSetting& other) const;
  bool operator==(const NodeSetting&) const = default;
};
std::string describe(const NodeSetting& setting);  // as the yaml writes it

struct CandidateEdit {
  std::string working_dir;             // replaces model_parameters.working_dir
  bool dump_calibration_data = false;  // sets model_parameters.debug_mode
  std::map<std::string, NodeSetting> nodes;
};

// `yaml_text` (from `origin`, for errors) with `edit` applied: node_info entries are merged
// into the group that has node_info (model_parameters if none; the string form becomes the
// mapping form, `name:type` as an OutputType), a node's existing settings kept unless the
// choice sets them. Throws Error naming the origin for a yaml that does not parse or a
// node_info that is neither form.
std::string edited_config(const std::string& yaml_text, const std::string& origin,
                          const CandidateEdit& edit);

}  // namespace openbpu::debugger
