#include "openbpu/debugger/candidate_config.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "openbpu/common/error.h"

namespace openbpu::debugger {
namespace {

constexpr const char* kYaml = R"(model_parameters:
  onnx_model: 'm.onnx'
  march: 'bayes-e'
  output_model_file_prefix: 'm'
  working_dir: 'model_output'
calibration_parameters:
  cal_data_dir: 'cal'
)";

// Candidate yaml: working_dir and debug_mode replaced, node_info added as a mapping.
TEST(CandidateConfig, AddsNodeInfoAndWorkingDir) {
  CandidateEdit edit;
  edit.working_dir = "cand/step_1";
  edit.dump_calibration_data = true;
  edit.nodes["conv_1"] = NodeSetting{true, false, false};
  edit.nodes["add_2"] = NodeSetting{false, true, true};
  const YAML::Node y = YAML::Load(edited_config(kYaml, "m.yaml", edit));
  EXPECT_EQ(y["model_parameters"]["working_dir"].as<std::string>(), "cand/step_1");
  EXPECT_EQ(y["model_parameters"]["debug_mode"].as<std::string>(), "dump_calibration_data");
  EXPECT_EQ(y["model_parameters"]["node_info"]["conv_1"]["ON"].as<std::string>(), "CPU");
  EXPECT_FALSE(y["model_parameters"]["node_info"]["conv_1"]["InputType"]);
  EXPECT_EQ(y["model_parameters"]["node_info"]["add_2"]["InputType"].as<std::string>(), "int16");
  EXPECT_EQ(y["model_parameters"]["node_info"]["add_2"]["OutputType"].as<std::string>(), "int16");
  EXPECT_EQ(y["calibration_parameters"]["cal_data_dir"].as<std::string>(), "cal");
}

// Must not fire: an empty edit leaves every key as it was (no node_info, no debug_mode).
TEST(CandidateConfig, EmptyEditChangesNothing) {
  const YAML::Node y = YAML::Load(edited_config(kYaml, "m.yaml", {}));
  EXPECT_EQ(y["model_parameters"]["working_dir"].as<std::string>(), "model_output");
  EXPECT_FALSE(y["model_parameters"]["node_info"]);
  EXPECT_FALSE(y["model_parameters"]["debug_mode"]);
}

// The user's node_info stays: the string form becomes OutputType entries (a bare name is
// int16), an entry in calibration_parameters is merged there, a node's own keys are kept.
TEST(CandidateConfig, MergesTheUsersNodeInfo) {
  CandidateEdit edit;
  edit.nodes["Mul_2"] = NodeSetting{false, true, false};
  const std::string string_form = std::string(kYaml) + "  node_info: 'Softmax_1:int16; Mul_2'\n";
  YAML::Node y = YAML::Load(edited_config(string_form, "m.yaml", edit));
  const YAML::Node info = y["calibration_parameters"]["node_info"];
  EXPECT_EQ(info["Softmax_1"]["OutputType"].as<std::string>(), "int16");
  EXPECT_EQ(info["Mul_2"]["OutputType"].as<std::string>(), "int16");
  EXPECT_EQ(info["Mul_2"]["InputType"].as<std::string>(), "int16");
  EXPECT_FALSE(y["model_parameters"]["node_info"]);

  const std::string mapping =
      std::string(kYaml).replace(std::string(kYaml).find("  working_dir"), 0,
                                 "  node_info: {'c': {'ON': 'BPU', 'InputType1': 'int16'}}\n");
  edit.nodes = {{"c", NodeSetting{false, false, true}}};
  y = YAML::Load(edited_config(mapping, "m.yaml", edit));
  EXPECT_EQ(y["model_parameters"]["node_info"]["c"]["ON"].as<std::string>(), "BPU");
  EXPECT_EQ(y["model_parameters"]["node_info"]["c"]["InputType1"].as<std::string>(), "int16");
  EXPECT_EQ(y["model_parameters"]["node_info"]["c"]["OutputType"].as<std::string>(), "int16");
}

TEST(CandidateConfig, RejectsWhatIsNotAConfig) {
  EXPECT_THROW(edited_config("a: [1, 2", "bad.yaml", {}), Error);
  EXPECT_THROW(edited_config("- 1\n- 2\n", "list.yaml", {}), Error);
  EXPECT_THROW(edited_config("input_parameters: {}\n", "none.yaml", {}), Error);
  CandidateEdit edit;
  edit.nodes["n"] = NodeSetting{true, false, false};
  EXPECT_THROW(edited_config(std::string(kYaml) + "  node_info: [1]\n", "list_info.yaml", edit),
               Error);
}

TEST(CandidateConfig, MergedSettingsKeepTheCpu) {
  const NodeSetting a{false, true, false}, b{false, false, true}, cpu{true, false, false};
  EXPECT_EQ(a.merged(b), (NodeSetting{false, true, true}));
  EXPECT_EQ(a.merged(cpu), cpu);
  EXPECT_EQ(describe(cpu), "{'ON': 'CPU'}");
  EXPECT_EQ(describe(a.merged(b)), "{'InputType': 'int16', 'OutputType': 'int16'}");
}

}  // namespace
}  // namespace openbpu::debugger
