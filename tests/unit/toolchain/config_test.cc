// The conversion config: typical configs of both tools parse with their defaults, and each
// common mistake gives the message a user of the original expects.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <tuple>

#include "openbpu/config/compile_config.h"
#include "openbpu/ir/graph.h"

namespace openbpu::config {
namespace {

using kernels::DataType;

// A YOLO-style X5 config (the rdk_model_zoo shape): nv12 at runtime, rgb in training.
constexpr const char* kYoloX5 = R"(
model_parameters:
  onnx_model: 'yolov8n.onnx'
  march: 'bayes-e'
  working_dir: 'model_output'
  output_model_file_prefix: 'yolov8n_640x640_nv12'
input_parameters:
  input_name: 'images'
  input_type_train: 'rgb'
  input_type_rt: 'nv12'
  input_layout_train: 'NCHW'
  input_shape: '1x3x640x640'
  norm_type: 'data_scale'
  scale_value: 0.003921568627451
calibration_parameters:
  cal_data_dir: './calibration_data_rgb_f32'
  cal_data_type: 'float32'
  calibration_type: 'default'
compiler_parameters:
  compile_mode: 'latency'
  debug: False
  optimize_level: 'O3'
)";

// A ResNet Caffe config for X3: bgr training data fed as bgr from DDR, per-channel mean.
constexpr const char* kResNetX3Caffe = R"(
model_parameters:
  prototxt: 'resnet18.prototxt'
  caffe_model: 'resnet18.caffemodel'
  march: 'bernoulli2'
  output_model_file_prefix: 'resnet18_224x224'
  remove_node_type: 'Dequantize'
input_parameters:
  input_type_train: 'bgr'
  input_type_rt: 'bgr'
  input_layout_train: 'NCHW'
  norm_type: 'data_mean_and_scale'
  mean_value: '103.94 116.78 123.68'
  scale_value: '0.017'
calibration_parameters:
  cal_data_dir: './calibration_data_bgr'
  calibration_type: 'max'
  max_percentile: 0.99995
  run_on_cpu: 'fc1000; prob'
  optimization: set_model_output_int8
compiler_parameters:
  compile_mode: 'bandwidth'
  core_num: 2
  optimize_level: 'O3'
  max_time_per_fc: 1000
  jobs: 4
)";

// An S100 config for hb_compile (the rdk_model_zoo nash-e shape, with quant_config).
constexpr const char* kYoloS100 = R"(
model_parameters:
  onnx_model: model.onnx
  march: nash-e
  working_dir: compiler_output
  output_model_file_prefix: yoloe_11s_nashe_640x640_nv12
input_parameters:
  input_name: images
  input_shape: 1x3x640x640
  input_type_rt: nv12
  input_type_train: rgb
  input_layout_train: NCHW
  scale_value: 0.00392156862745098
  norm_type: data_scale
calibration_parameters:
  cal_data_dir: calibration
  cal_data_type: float32
  calibration_type: default
  quant_config:
    op_config:
      softmax:
        qtype: int16
    node_config:
      /model.23/Concat:
        qtype: float16
compiler_parameters:
  jobs: 15
  compile_mode: latency
  core_num: 1
  extra_params:
    input_no_padding: true
    output_no_padding: true
  debug: true
  advice: 1
)";

CompileConfig parse_mapper(const std::string& yaml, ModelType type = ModelType::kOnnx) {
  return parse_compile_config(yaml, "config.yaml", ConfigFlavour::kHbMapper, type);
}
CompileConfig parse_compile(const std::string& yaml) {
  return parse_compile_config(yaml, "config.yaml", ConfigFlavour::kHbCompile, ModelType::kOnnx);
}

// `base` with each `from` replaced by `to` (every `from` must occur, so tests cannot rot).
std::string edited(std::string base,
                   const std::vector<std::pair<std::string, std::string>>& replacements) {
  for (const auto& [from, to] : replacements) {
    const size_t at = base.find(from);
    if (at == std::string::npos) {
      ADD_FAILURE() << "test setup: '" << from << "' is not in the base config";
      continue;
    }
    base.replace(at, from.size(), to);
  }
  return base;
}

std::string error_text(const std::string& yaml, ConfigFlavour flavour, ModelType type) {
  try {
    parse_compile_config(yaml, "config.yaml", flavour, type);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

// ---------------------------------------------------------------- positive cases

TEST(CompileConfig, YoloX5ParsesWithDefaults) {
  const CompileConfig c = parse_mapper(kYoloX5);
  EXPECT_EQ(c.model.onnx_model, "yolov8n.onnx");
  EXPECT_EQ(c.model.march, March::kBayesE);
  EXPECT_EQ(c.model.output_model_file_prefix, "yolov8n_640x640_nv12");
  EXPECT_FALSE(c.model.layer_out_dump);
  ASSERT_EQ(c.input.inputs.size(), 1u);
  const InputSpec& in = c.input.inputs[0];
  EXPECT_EQ(in.name, "images");
  EXPECT_EQ(in.type_train, InputType::kRgb);
  EXPECT_EQ(in.type_rt, InputType::kNv12);
  EXPECT_FALSE(in.layout_rt.has_value());  // nv12 has no layout
  EXPECT_EQ(in.space_and_range, InputSpaceAndRange::kRegular);
  EXPECT_EQ(in.shape, (std::vector<int64_t>{1, 3, 640, 640}));
  EXPECT_EQ(in.norm_type, NormType::kDataScale);
  EXPECT_TRUE(in.mean.empty());
  EXPECT_EQ(in.scale, (std::vector<double>{0.003921568627451}));
  EXPECT_EQ(c.input.input_batch, 1);
  EXPECT_EQ(c.calibration.cal_data_type, (std::vector<CalDataType>{CalDataType::kFloat32}));
  EXPECT_EQ(c.calibration.calibration_type, CalibrationType::kDefault);
  EXPECT_EQ(c.calibration.max_percentile, 1.0);
  EXPECT_FALSE(c.calibration.per_channel);
  EXPECT_EQ(c.compiler.compile_mode, CompileMode::kLatency);
  EXPECT_EQ(c.optimize_level(), OptimizeLevel::kO3);
  EXPECT_EQ(c.compiler.core_num, 1);
  EXPECT_EQ(c.compiler.max_time_per_fc, 0);
  EXPECT_FALSE(c.compiler.jobs.has_value());
  EXPECT_EQ(c.input_source_of(0), InputSource::kPyramid);  // nv12 default
  EXPECT_FALSE(c.custom_op.has_value());
  EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
}

TEST(CompileConfig, ResNetCaffeX3ParsesWithDefaults) {
  const CompileConfig c = parse_mapper(kResNetX3Caffe, ModelType::kCaffe);
  EXPECT_EQ(c.model.caffe_model, "resnet18.caffemodel");
  EXPECT_EQ(c.model.prototxt, "resnet18.prototxt");
  EXPECT_EQ(c.model.working_dir, "model_output");
  EXPECT_EQ(c.model.remove_node_type,
            (std::vector<RemovableNodeType>{RemovableNodeType::kDequantize}));
  const InputSpec& in = c.input.inputs.at(0);
  EXPECT_EQ(in.name, "");                  // filled from the model by resolve_against_model
  EXPECT_EQ(in.layout_rt, Layout::kNhwc);  // X3 runs image inputs in NHWC unless told otherwise
  EXPECT_EQ(in.mean, (std::vector<double>{103.94, 116.78, 123.68}));
  EXPECT_EQ(in.scale, (std::vector<double>{0.017}));
  // cal_data_type from the directory name: no _f32 suffix -> uint8.
  EXPECT_EQ(c.calibration.cal_data_type, (std::vector<CalDataType>{CalDataType::kUint8}));
  EXPECT_EQ(c.calibration.max_percentile, 0.99995);
  EXPECT_EQ(c.calibration.run_on_cpu, (std::vector<std::string>{"fc1000", "prob"}));
  ASSERT_EQ(c.calibration.optimization.size(), 1u);
  EXPECT_EQ(c.calibration.optimization[0].kind, OptimizationRule::Kind::kModelOutput);
  EXPECT_EQ(c.compiler.core_num, 2);
  EXPECT_EQ(c.compiler.jobs, 4);
  EXPECT_EQ(c.input_source_of(0), InputSource::kDdr);
  EXPECT_EQ(c.node_settings().at("prob").on, ExecutionUnit::kCpu);
}

TEST(CompileConfig, HbCompileS100ParsesWithDefaults) {
  const CompileConfig c = parse_compile(kYoloS100);
  EXPECT_EQ(c.model.march, March::kNashE);
  EXPECT_EQ(c.optimize_level(), OptimizeLevel::kO2);  // hb_compile's default
  EXPECT_TRUE(c.compiler.debug);
  EXPECT_EQ(c.compiler.advice, 1);
  EXPECT_EQ(c.compiler.extra_params.at("input_no_padding"), "true");
  ASSERT_TRUE(c.calibration.quant_config.has_value());
  const QuantConfig& q = *c.calibration.quant_config;
  EXPECT_EQ(q.source, "inline");
  // node_config > op_config (any case) > model_config.
  EXPECT_EQ(q.qtype_for("/model.23/Concat", "Concat"), QuantDataType::kFloat16);
  EXPECT_EQ(q.qtype_for("/model.10/attn/Softmax", "Softmax"), QuantDataType::kInt16);
  EXPECT_EQ(q.qtype_for("/model.0/conv/Conv", "Conv"), QuantDataType::kInt8);
}

TEST(CompileConfig, EachMarchBelongsToTheToolOfItsGeneration) {
  const std::vector<March> mapper = marches_of(ConfigFlavour::kHbMapper);
  const std::vector<March> compile = marches_of(ConfigFlavour::kHbCompile);
  EXPECT_EQ(mapper, (std::vector<March>{March::kBernoulli2, March::kBayes, March::kBayesE}));
  EXPECT_EQ(compile, (std::vector<March>{March::kNashE, March::kNashM}));
  for (const simulator::MarchSpec& m : simulator::all_marches()) {
    const bool in_compile = std::find(compile.begin(), compile.end(), m.march) != compile.end();
    const bool in_mapper = std::find(mapper.begin(), mapper.end(), m.march) != mapper.end();
    EXPECT_NE(in_compile, in_mapper) << m.name;
    EXPECT_EQ(in_compile, m.hbm_generation) << m.name;
  }
}

// Speech, radar and recurrent-state inputs: featuremaps of rank 1 to 5, in both flavours; one
// that is not 4-D has no channel axis to normalise, so it takes norm_type no_preprocess only.
TEST(CompileConfig, FeaturemapInputsOfRankOneToFive) {
  const std::string base = R"(
model_parameters:
  onnx_model: 'speech.onnx'
  march: 'MARCH'
  output_model_file_prefix: 'speech'
input_parameters:
  input_type_train: 'featuremap'
  input_type_rt: 'featuremap'
  input_layout_train: 'NCHW'
  input_shape: 'SHAPE'
  norm_type: 'no_preprocess'
calibration_parameters:
  calibration_type: 'skip'
compiler_parameters:
  optimize_level: 'O2'
)";
  for (const auto& [flavour, march] : {std::pair{ConfigFlavour::kHbMapper, "bayes-e"}, std::pair{ConfigFlavour::kHbCompile, "nash-e"}}) {
    SCOPED_TRACE(march);
    for (const char* shape : {"64", "1x64", "2x1x16", "1x3x8x8", "1x2x3x4x5"}) {
      EXPECT_EQ(error_text(edited(base, {{"MARCH", march}, {"SHAPE", shape}}), flavour, ModelType::kOnnx), "<no error>")
          << shape;
    }
    EXPECT_NE(error_text(edited(base, {{"MARCH", march}, {"SHAPE", "1x2x3x4x5x6"}}), flavour, ModelType::kOnnx)
                  .find("'1x2x3x4x5x6' has rank 6; featuremap inputs have rank 1 to 5"),
              std::string::npos);
    const std::string scaled = edited(base, {{"MARCH", march}, {"SHAPE", "1x64"}, {"'no_preprocess'", "'data_scale'\n  scale_value: 0.5"}});
    EXPECT_NE(error_text(scaled, flavour, ModelType::kOnnx)
                  .find("'data_scale' needs a 4-D input; featuremap '1x64' has rank 2, so its norm_type must be 'no_preprocess'"),
              std::string::npos);
    EXPECT_EQ(error_text(edited(scaled, {{"1x64", "1x4x8x8"}}), flavour, ModelType::kOnnx), "<no error>");
  }
}

TEST(CompileConfig, QuantConfigFromJsonFileRelativeToTheYaml) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("openbpu_config_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "quant.json") << R"({
    "model_config": {"all_node_type": "int16", "model_output_type": "int8",
                     "activation": {"calibration_type": "max", "max_percentile": 0.9999,
                                    "per_channel": true, "asymmetric": false}},
    "op_config": {"Conv": {"qtype": "int8"}},
    "node_config": {"head": {"qtype": "float32"}}
  })";
  const std::string yaml = edited(kYoloS100, {{"  quant_config:\n    op_config:\n      softmax:\n"
                                               "        qtype: int16\n    node_config:\n"
                                               "      /model.23/Concat:\n        qtype: float16\n",
                                               "  quant_config: quant.json\n"}});
  const CompileConfig c = parse_compile_config(yaml, (dir / "config.yaml").string(),
                                               ConfigFlavour::kHbCompile, ModelType::kOnnx);
  const QuantConfig& q = *c.calibration.quant_config;
  EXPECT_EQ(q.source, "quant.json");
  EXPECT_EQ(q.model_config.model_output_type, QuantDataType::kInt8);
  EXPECT_EQ(q.model_config.activation.calibration_type, CalibrationType::kMax);
  EXPECT_EQ(q.model_config.activation.max_percentile, 0.9999);
  EXPECT_EQ(q.qtype_for("head", "Conv"), QuantDataType::kFloat32);
  EXPECT_EQ(q.qtype_for("conv0", "Conv"), QuantDataType::kInt8);
  EXPECT_EQ(q.qtype_for("gap", "GlobalAveragePool"), QuantDataType::kInt16);
  std::filesystem::remove_all(dir);
}

TEST(CompileConfig, MultiInputListsSplitOnSemicolons) {
  const CompileConfig c = parse_mapper(R"(
model_parameters:
  onnx_model: 'two_inputs.onnx'
  march: 'bayes'
  output_model_file_prefix: 'two'
input_parameters:
  input_name: 'image; radar'
  input_type_train: 'bgr; featuremap'
  input_type_rt: 'nv12; featuremap'
  input_layout_train: 'NCHW;NCHW'
  input_shape: '1x3x224x224;1x8x32x32'
  norm_type: 'data_mean_and_scale;no_preprocess'
  mean_value: '103.94 116.78 123.68;None'
  scale_value: '0.017;None'
calibration_parameters:
  cal_data_dir: './cal_image;./cal_radar_f32'
  calibration_type: 'kl'
  per_channel: True
compiler_parameters:
  optimize_level: 'O2'
  input_source: {'image': 'pyramid'}
)");
  ASSERT_EQ(c.input.inputs.size(), 2u);
  EXPECT_EQ(c.input.inputs[1].name, "radar");
  EXPECT_EQ(c.input.inputs[1].type_rt, InputType::kFeaturemap);
  EXPECT_EQ(c.input.inputs[1].layout_rt, Layout::kNchw);
  EXPECT_TRUE(c.input.inputs[1].mean.empty());
  EXPECT_EQ(c.input.inputs[1].shape, (std::vector<int64_t>{1, 8, 32, 32}));
  EXPECT_EQ(c.calibration.cal_data_type,
            (std::vector<CalDataType>{CalDataType::kUint8, CalDataType::kFloat32}));
  EXPECT_EQ(c.input_source_of(0), InputSource::kPyramid);
  EXPECT_EQ(c.input_source_of(1), InputSource::kDdr);
}

TEST(CompileConfig, NodeInfoBothSyntaxesMergeWithRunOnLists) {
  const std::string dict = edited(kYoloX5, {{"  output_model_file_prefix: 'yolov8n_640x640_nv12'\n",
                                             "  output_model_file_prefix: 'p'\n"
                                             "  node_info: {\"/model.10/attn/Softmax\": {'ON': "
                                             "'BPU', 'InputType': 'int16', 'InputType1': 'int8', "
                                             "'OutputType': 'int16'}}\n"},
                                            {"  calibration_type: 'default'\n",
                                             "  calibration_type: 'default'\n"
                                             "  run_on_cpu: '/model.22/Concat'\n"}});
  const CompileConfig c = parse_mapper(dict);
  const NodeSetting& s = c.model.node_info.at("/model.10/attn/Softmax");
  EXPECT_EQ(s.on, ExecutionUnit::kBpu);
  EXPECT_EQ(s.input_type, QuantDataType::kInt16);
  EXPECT_EQ(s.input_type_by_index.at(1), QuantDataType::kInt8);
  EXPECT_EQ(s.output_type, QuantDataType::kInt16);
  const auto merged = c.node_settings();
  EXPECT_EQ(merged.at("/model.22/Concat").on, ExecutionUnit::kCpu);

  const std::string text =
      edited(kYoloX5,
             {{"  working_dir: 'model_output'\n", "  node_info: 'Softmax_1:int16; Mul_2:int8'\n"}});
  const CompileConfig t = parse_mapper(text);
  EXPECT_EQ(t.model.node_info.at("Softmax_1").output_type, QuantDataType::kInt16);
  EXPECT_EQ(t.model.node_info.at("Mul_2").output_type, QuantDataType::kInt8);
  EXPECT_FALSE(t.model.node_info.at("Softmax_1").on.has_value());

  // node_info may sit in calibration_parameters too (seen in the wild).
  const std::string moved = edited(kYoloX5, {{"  calibration_type: 'default'\n",
                                              "  calibration_type: 'default'\n"
                                              "  node_info: 'Softmax_1:int16'\n"}});
  EXPECT_EQ(parse_mapper(moved).model.node_info.size(), 1u);
}

TEST(CompileConfig, EmptyStringsMeanNotGiven) {
  // PaddleOCR rec config of rdk_model_zoo: input_name "" and input_shape '' for one input.
  const CompileConfig c = parse_mapper(R"(
model_parameters:
  onnx_model: './en_PP-OCRv3_rec_infer.onnx'
  march: "bayes-e"
  layer_out_dump: False
  working_dir: 'model_output'
  output_model_file_prefix: 'en_PP-OCRv3_rec_48x320_rgb'
input_parameters:
  input_name: ""
  input_type_rt: 'featuremap'
  input_layout_rt: 'NCHW'
  input_type_train: 'featuremap'
  input_layout_train: 'NCHW'
  input_shape: ''
  norm_type: 'no_preprocess'
calibration_parameters:
  cal_data_dir: './calibration_data_rgb_f32'
  cal_data_type: 'float32'
  calibration_type: 'default'
  optimization: "set_all_nodes_int16;keep_edge_operators_on_bpu"
compiler_parameters:
  compile_mode: 'latency'
  debug: False
  optimize_level: 'O3'
)");
  EXPECT_FALSE(c.input.names_given);
  EXPECT_TRUE(c.input.inputs.at(0).shape.empty());
  EXPECT_EQ(c.calibration.optimization.at(0).kind, OptimizationRule::Kind::kAllNodes);
  EXPECT_EQ(c.calibration.optimization.at(1).kind, OptimizationRule::Kind::kEdgeOperatorsOnBpu);
}

TEST(CompileConfig, WarningsForIgnoredValues) {
  const std::string yaml = edited(kYoloX5, {{"  input_shape: '1x3x640x640'\n",
                                             "  input_shape: '1x3x640x640'\n"
                                             "  input_layout_rt: 'NHWC'\n"
                                             "  mean_value: 128\n"},
                                            {"  calibration_type: 'default'\n",
                                             "  calibration_type: 'default'\n"
                                             "  max_percentile: 0.999\n"}});
  const CompileConfig c = parse_mapper(yaml);
  ASSERT_EQ(c.warnings.size(), 3u);
  EXPECT_NE(c.warnings[0].find("input_layout_rt is ignored for nv12"), std::string::npos);
  EXPECT_NE(c.warnings[1].find("mean_value is ignored: norm_type is 'data_scale'"),
            std::string::npos);
  EXPECT_NE(c.warnings[2].find("max_percentile is used by calibration_type 'max' only"),
            std::string::npos);
  EXPECT_TRUE(c.input.inputs[0].mean.empty());
}

TEST(CompileConfig, ErrorLinesFollowTheOriginal) {
  try {
    parse_mapper(edited(kResNetX3Caffe, {{"  prototxt: 'resnet18.prototxt'\n", ""},
                                         {"  caffe_model: 'resnet18.caffemodel'\n", ""}}),
                 ModelType::kCaffe);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    const auto lines = e.lines();
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0], "Key 'model_parameters' error:");
    EXPECT_EQ(lines[1], "Missing keys: 'caffe_model', 'prototxt'");
    EXPECT_EQ(e.issues().at(0).group, "model_parameters");
  }
  EXPECT_STREQ(kParseFailedLine, "yaml file parse failed. Please double check your input");
}

TEST(CompileConfig, IssuesOfOneGroupShareItsHeaderLine) {
  try {
    parse_mapper(edited(kYoloX5, {{"march: 'bayes-e'", "march: 'bayes_e'"},
                                  {"  working_dir: 'model_output'\n", "  layer_out_dump: 2\n"}}));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    const auto lines = e.lines();
    ASSERT_EQ(lines.size(), 3u) << e.what();
    EXPECT_EQ(lines[0], "Key 'model_parameters' error:");
    EXPECT_EQ(lines[1].rfind("Key 'march' error: ", 0), 0u);
    EXPECT_EQ(lines[2], "Key 'layer_out_dump' error: expected True or False, got '2'");
  }
}

TEST(CompileConfig, AGroupThatIsNotAMappingIsNotReadFurther) {
  try {
    parse_mapper(edited(kYoloX5, {{"compiler_parameters:\n  compile_mode: 'latency'\n  debug: "
                                   "False\n  optimize_level: 'O3'\n",
                                   "compiler_parameters: 'O3'\n"}}));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.issues().size(), 1u) << e.what();  // no "Missing keys: 'optimize_level'" too
  }
}

TEST(CompileConfig, NoFollowUpErrorsFromAnUnreadableValue) {
  for (const auto& edit :
       {std::pair<std::string, std::string>{"input_type_rt: 'nv12'", "input_type_rt: {a: b}"},
        {"norm_type: 'data_scale'", "norm_type: 'data_mean'\n  mean_value: 'x'"}}) {
    try {
      parse_mapper(edited(kYoloX5, {edit}));
      FAIL() << "no error";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.issues().size(), 1u) << e.what();
    }
  }
}

TEST(CompileConfig, EveryProblemIsReportedAtOnce) {
  const std::string yaml =
      edited(kYoloX5, {{"march: 'bayes-e'", "march: 'bayes_e'"},
                       {"debug: False", "debug: 'perhaps'"},
                       {"calibration_type: 'default'", "calibration_typ: 'default'"}});
  try {
    parse_mapper(yaml);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.issues().size(), 3u) << e.what();
  }
}

// ---------------------------------------------------------------- the mistakes table

struct Mistake {
  const char* what;
  const char* base;
  std::vector<std::pair<std::string, std::string>> edits;
  const char* expected;  // a fragment of the error text
  ConfigFlavour flavour = ConfigFlavour::kHbMapper;
  ModelType model_type = ModelType::kOnnx;
};

class ConfigMistake : public testing::TestWithParam<Mistake> {};

TEST_P(ConfigMistake, IsReportedWithKeyAndRule) {
  const Mistake& m = GetParam();
  const std::string text = error_text(edited(m.base, m.edits), m.flavour, m.model_type);
  EXPECT_NE(text.find(m.expected), std::string::npos)
      << m.what << "\nexpected fragment: " << m.expected << "\ngot:\n"
      << text;
}

constexpr ConfigFlavour kCompile = ConfigFlavour::kHbCompile;
constexpr ConfigFlavour kMapper = ConfigFlavour::kHbMapper;

const Mistake kMistakes[] = {
    // Groups.
    {"missing group",
     kYoloX5,
     {{"calibration_parameters:\n  cal_data_dir: './calibration_data_rgb_f32'\n  cal_data_type: "
       "'float32'\n  calibration_type: 'default'\n",
       ""}},
     "Missing groups: 'calibration_parameters'"},
    {"misspelt group",
     kYoloX5,
     {{"model_parameters:", "model_parameter:"}},
     "Unknown group 'model_parameter' (did you mean 'model_parameters'?)"},
    {"key at top level",
     kYoloX5,
     {{"model_parameters:\n", "march: 'bayes-e'\nmodel_parameters:\n"}},
     "Unknown group 'march' ('march' is a key of group 'model_parameters'; indent it under that "
     "group)"},
    {"group is not a mapping",
     kYoloX5,
     {{"compiler_parameters:\n  compile_mode: 'latency'\n  debug: False\n  optimize_level: 'O3'\n",
       "compiler_parameters: 'O3'\n"}},
     "Key 'compiler_parameters' error:\nexpected a mapping of keys, got 'O3'"},
    {"yaml syntax", kYoloX5, {{"  march: 'bayes-e'", "  march: 'bayes-e"}}, "yaml syntax error"},
    // fixed_inputs.
    {"fixed input without a value",
     kYoloX5,
     {{"input_parameters:\n", "input_parameters:\n  fixed_inputs: 'sr'\n"}},
     "Key 'fixed_inputs' error: 'sr' must be NAME=VALUE[,VALUE...], e.g. 'sr=16000'"},
    {"fixed input value not a number",
     kYoloX5,
     {{"input_parameters:\n", "input_parameters:\n  fixed_inputs: 'sr=16k'\n"}},
     "Key 'fixed_inputs' error: 'sr=16k': '16k' is not a number"},
    {"fixed input twice",
     kYoloX5,
     {{"input_parameters:\n", "input_parameters:\n  fixed_inputs: 'sr=16000;sr=8000'\n"}},
     "Key 'fixed_inputs' error: input 'sr' is fixed more than once"},
    // Required keys.
    {"caffe without prototxt and caffemodel",
     kYoloX5,
     {},
     "Key 'model_parameters' error:\nMissing keys: 'caffe_model', 'prototxt'",
     kMapper,
     ModelType::kCaffe},
    {"caffe without prototxt",
     kResNetX3Caffe,
     {{"  prototxt: 'resnet18.prototxt'\n", ""}},
     "Missing keys: 'prototxt'",
     kMapper,
     ModelType::kCaffe},
    {"onnx without onnx_model",
     kYoloX5,
     {{"  onnx_model: 'yolov8n.onnx'\n", ""}},
     "Missing keys: 'onnx_model'"},
    {"missing march", kYoloX5, {{"  march: 'bayes-e'\n", ""}}, "Missing keys: 'march'"},
    {"missing required input keys",
     kYoloX5,
     {{"  input_type_rt: 'nv12'\n", ""}, {"  norm_type: 'data_scale'\n", ""}},
     "Key 'input_parameters' error:\nMissing keys: 'input_type_rt', 'norm_type'"},
    {"missing optimize_level (hb_mapper)",
     kYoloX5,
     {{"  optimize_level: 'O3'\n", ""}},
     "Missing keys: 'optimize_level'"},
    {"missing cal_data_dir",
     kYoloX5,
     {{"  cal_data_dir: './calibration_data_rgb_f32'\n", ""}},
     "Missing keys: 'cal_data_dir' (calibration_type 'default' reads calibration data"},
    // Types, closed sets, ranges.
    {"bad bool",
     kYoloX5,
     {{"debug: False", "debug: 'maybe'"}},
     "Key 'debug' error: expected True or False, got 'maybe'"},
    {"bad march",
     kYoloX5,
     {{"march: 'bayes-e'", "march: 'bayes_e'"}},
     "Key 'march' error: 'bayes_e' is not one of 'bernoulli2', 'bayes', 'bayes-e' (did you mean "
     "'bayes-e'?)"},
    {"hb_compile march in hb_mapper",
     kYoloX5,
     {{"march: 'bayes-e'", "march: 'nash-e'"}},
     "'nash-e' is a march of hb_compile; hb_mapper accepts 'bernoulli2', 'bayes', 'bayes-e'"},
    {"hb_mapper march in hb_compile",
     kYoloS100,
     {{"march: nash-e", "march: bernoulli2"}},
     "'bernoulli2' is a march of hb_mapper; hb_compile accepts 'nash-e', 'nash-m'",
     kCompile},
    {"bad input_type_rt",
     kYoloX5,
     {{"input_type_rt: 'nv12'", "input_type_rt: 'nv21'"}},
     "Key 'input_type_rt' error: input 'images': 'nv21' is not one of 'rgb', 'bgr', 'yuv444', "
     "'nv12', 'gray', 'featuremap' (did you mean 'nv12'?)"},
    {"nv12 as training type",
     kYoloX5,
     {{"input_type_train: 'rgb'", "input_type_train: 'nv12'"}},
     "nv12 is an input_type_rt only"},
    {"remove_node_type typo",
     kYoloX5,
     {{"  working_dir: 'model_output'\n", "  remove_node_type: 'Quantize;Dequantise'\n"}},
     "'Dequantise' is not one of 'Quantize', 'Transpose', 'Dequantize', 'Cast', 'Reshape', "
     "'Softmax' (did you mean 'Dequantize'?)"},
    {"input_batch out of range",
     kYoloX5,
     {{"  norm_type:", "  input_batch: 200\n  norm_type:"}},
     "Key 'input_batch' error: expected an integer in [1, 128], got '200'"},
    {"max_percentile out of range",
     kYoloX5,
     {{"  calibration_type: 'default'", "  calibration_type: 'max'\n  max_percentile: 1.5"}},
     "Key 'max_percentile' error: expected a number in [0, 1], got '1.5'"},
    {"core_num out of range",
     kYoloX5,
     {{"debug: False", "core_num: 3"}},
     "Key 'core_num' error: expected an integer in [1, 2], got '3'"},
    {"max_time_per_fc below 1000",
     kYoloX5,
     {{"debug: False", "max_time_per_fc: 500"}},
     "expected 0 (no limit) or microseconds in [1000, 4294967295], got '500'"},
    {"optimize_level typo",
     kYoloX5,
     {{"optimize_level: 'O3'", "optimize_level: 'O4'"}},
     "'O4' is not one of 'O0', 'O1', 'O2', 'O3'"},
    {"O3 in hb_compile",
     kYoloS100,
     {{"  debug: true\n", "  debug: true\n  optimize_level: O3\n"}},
     "hb_compile's highest level is O2",
     kCompile},
    {"shape text",
     kYoloX5,
     {{"1x3x640x640", "1x3x640xW"}},
     "'1x3x640xW' is not a shape such as 1x3x224x224"},
    {"output prefix with a path",
     kYoloX5,
     {{"output_model_file_prefix: 'yolov8n_640x640_nv12'", "output_model_file_prefix: 'out/yolo'"}},
     "must be a file name prefix inside working_dir"},
    {"duplicate key",
     kYoloX5,
     {{"  working_dir: 'model_output'\n", "  march: 'bayes'\n"}},
     "Key 'march' error: given more than once in group 'model_parameters'"},
    // Unknown and misplaced keys.
    {"unknown key with did-you-mean",
     kYoloX5,
     {{"calibration_type: 'default'", "calibration_typ: 'default'"}},
     "Unknown key 'calibration_typ' in group 'calibration_parameters' (did you mean "
     "'calibration_type'?)"},
    {"key in the wrong group",
     kYoloX5,
     {{"  norm_type:", "  march: 'bayes-e'\n  norm_type:"}},
     "Unknown key 'march' in group 'input_parameters' (it belongs in group 'model_parameters')"},
    {"hb_compile key in hb_mapper",
     kYoloX5,
     {{"  calibration_type: 'default'\n",
       "  calibration_type: 'default'\n  quant_config: 'q.json'\n"}},
     "Key 'quant_config' error: only hb_compile reads this key"},
    {"separate_batch in hb_mapper",
     kYoloX5,
     {{"  norm_type:", "  separate_batch: True\n  norm_type:"}},
     "Key 'separate_batch' error: only hb_compile reads this key"},
    // input_type_train x input_type_rt, shapes, counts.
    {"gray fed by nv12",
     kYoloX5,
     {{"input_type_train: 'rgb'", "input_type_train: 'gray'"}, {"1x3x640x640", "1x1x640x640"}},
     "Key 'input_type_rt' error: input 'images': input_type_rt 'nv12' cannot feed "
     "input_type_train 'gray'; 'gray' accepts input_type_rt 'gray'"},
    {"featuremap fed by rgb",
     kYoloX5,
     {{"input_type_train: 'rgb'", "input_type_train: 'featuremap'"},
      {"input_type_rt: 'nv12'", "input_type_rt: 'rgb'"}},
     "input_type_rt 'rgb' cannot feed input_type_train 'featuremap'"},
    {"nv12 with odd height",
     kYoloX5,
     {{"1x3x640x640", "1x3x641x640"}},
     "Key 'input_shape' error: input 'images': nv12 input needs even H and W; '1x3x641x640' has "
     "H=641, W=640"},
    {"yuv444 with odd width",
     kYoloX5,
     {{"input_type_rt: 'nv12'", "input_type_rt: 'yuv444'"}, {"1x3x640x640", "1x3x640x639"}},
     "yuv444 input needs even H and W"},
    {"image input not 4-D",
     kYoloX5,
     {{"1x3x640x640", "3x640x640"}},
     "'3x640x640' has rank 3; image inputs of hb_mapper are 4-D (NCHW or NHWC)"},
    {"layout does not match the shape",
     kYoloX5,
     {{"1x3x640x640", "1x640x640x3"}},
     "Key 'input_layout_train' error: input 'images': input_layout_train 'NCHW' reads the "
     "channels of 1x640x640x3 at dim 1, which is 640, but input_type_train 'rgb' has 3 channels"},
    {"count of ; values",
     kYoloX5,
     {{"input_name: 'images'", "input_name: 'images;depth'"}},
     "Key 'input_type_train' error: has 1 value but input_name has 2 ('images', 'depth'); give "
     "one value per input, separated by ';'"},
    {"empty ; item",
     kYoloX5,
     {{"input_name: 'images'", "input_name: 'images;;depth'"}},
     "Key 'input_name' error: item 2 of 3 is empty"},
    {"mean count vs channels",
     kYoloX5,
     {{"norm_type: 'data_scale'", "norm_type: 'data_mean_and_scale'\n  mean_value: '0 0'"}},
     "Key 'mean_value' error: input 'images': 2 values; give 1 (all channels) or 3 (one per "
     "channel)"},
    {"norm_type needs a mean",
     kYoloX5,
     {{"norm_type: 'data_scale'", "norm_type: 'data_mean_and_scale'"}},
     "Key 'mean_value' error: input 'images': norm_type 'data_mean_and_scale' needs a mean_value"},
    {"None where a scale is needed",
     kYoloX5,
     {{"input_name: 'images'", "input_name: 'images;depth'"},
      {"input_type_train: 'rgb'", "input_type_train: 'rgb;featuremap'"},
      {"input_type_rt: 'nv12'", "input_type_rt: 'nv12;featuremap'"},
      {"input_layout_train: 'NCHW'", "input_layout_train: 'NCHW;NCHW'"},
      {"input_shape: '1x3x640x640'", "input_shape: '1x3x640x640;1x1x640x640'"},
      {"norm_type: 'data_scale'", "norm_type: 'data_scale;data_scale'"},
      {"scale_value: 0.003921568627451", "scale_value: '0.0039;None'"},
      {"cal_data_dir: './calibration_data_rgb_f32'", "cal_data_dir: './cal_rgb_f32;./cal_d_f32'"}},
     "input 'depth': norm_type 'data_scale' needs a scale_value (one value, or one per channel); "
     "this input's entry is 'None'"},
    {"mean value not a number",
     kYoloX5,
     {{"norm_type: 'data_scale'", "norm_type: 'data_mean_and_scale'\n  mean_value: '128 abc 128'"}},
     "Key 'mean_value' error: 'abc' is not a number"},
    {"scale of zero",
     kYoloX5,
     {{"scale_value: 0.003921568627451", "scale_value: 0"}},
     "a scale of 0 would zero the input"},
    {"input_batch with first dim 2",
     kYoloX5,
     {{"1x3x640x640", "2x3x640x640"}, {"  norm_type:", "  input_batch: 8\n  norm_type:"}},
     "Key 'input_batch' error: input_batch 8 needs the first dim of input_shape to be 1; got "
     "'2x3x640x640'"},
    {"input_batch with two inputs",
     kYoloX5,
     {{"input_name: 'images'", "input_name: 'a;b'"},
      {"input_type_train: 'rgb'", "input_type_train: 'rgb;rgb'"},
      {"input_type_rt: 'nv12'", "input_type_rt: 'nv12;nv12'"},
      {"input_layout_train: 'NCHW'", "input_layout_train: 'NCHW;NCHW'"},
      {"input_shape: '1x3x640x640'", "input_shape: '1x3x640x640;1x3x640x640'"},
      {"norm_type: 'data_scale'", "input_batch: 4\n  norm_type: 'data_scale;data_scale'"},
      {"scale_value: 0.003921568627451", "scale_value: '1;1'"},
      {"cal_data_dir: './calibration_data_rgb_f32'", "cal_data_dir: 'a;b'"}},
     "input_batch 4 is for single-input models; this config has 2 inputs"},
    {"bt601_video with rgb",
     kYoloX5,
     {{"input_type_rt: 'nv12'", "input_type_rt: 'rgb'\n  input_space_and_range: 'bt601_video'"}},
     "Key 'input_space_and_range' error: input 'images': bt601_video applies to nv12 input only"},
    {"cal_data_dir count",
     kYoloX5,
     {{"cal_data_dir: './calibration_data_rgb_f32'", "cal_data_dir: './a_f32;./b_f32'"}},
     "Key 'cal_data_dir' error: has 2 directories for 1 inputs"},
    {"preprocess_on with featuremap",
     kYoloX5,
     {{"input_type_train: 'rgb'", "input_type_train: 'featuremap'"},
      {"input_type_rt: 'nv12'", "input_type_rt: 'featuremap'"},
      {"calibration_type: 'default'", "calibration_type: 'default'\n  preprocess_on: True"}},
     "preprocess_on reads images; it cannot prepare a featuremap input"},
    // March-specific keys.
    {"node_info on bernoulli2",
     kYoloX5,
     {{"march: 'bayes-e'", "march: 'bernoulli2'"},
      {"  working_dir: 'model_output'\n", "  node_info: 'Softmax_1:int16'\n"}},
     "Key 'model_parameters' error:\nKey 'node_info' error: node_info is not available on "
     "bernoulli2"},
    {"int16 output on bernoulli2",
     kYoloX5,
     {{"march: 'bayes-e'", "march: 'bernoulli2'"},
      {"calibration_type: 'default'",
       "calibration_type: 'default'\n  optimization: "
       "set_model_output_int16"}},
     "'set_model_output_int16' is not available on bernoulli2"},
    {"core_num 2 off bernoulli2",
     kYoloX5,
     {{"debug: False", "core_num: 2"}},
     "core_num 2 is more than march 'bayes-e' has BPU cores (1); core_num 2 is available on bernoulli2 only"},
    {"yuv444 NCHW on bernoulli2",
     kYoloX5,
     {{"march: 'bayes-e'", "march: 'bernoulli2'"},
      {"input_type_rt: 'nv12'", "input_type_rt: 'yuv444'\n  input_layout_rt: 'NCHW'"}},
     "bernoulli2 does not take yuv444 input in NCHW; use NHWC"},
    {"balance in hb_mapper",
     kYoloX5,
     {{"compile_mode: 'latency'", "compile_mode: 'balance'"}},
     "'balance' is a compile_mode of hb_compile; hb_mapper accepts 'latency', 'bandwidth'"},
    {"balance without balance_factor",
     kYoloS100,
     {{"compile_mode: latency", "compile_mode: balance"}},
     "Missing keys: 'balance_factor'",
     kCompile},
    {"balance_factor without balance",
     kYoloS100,
     {{"compile_mode: latency", "compile_mode: latency\n  balance_factor: 30"}},
     "Key 'balance_factor' error: is used only with compile_mode 'balance' (compile_mode is "
     "'latency')",
     kCompile},
    // node_info.
    {"node_info bad unit",
     kYoloX5,
     {{"  working_dir: 'model_output'\n", "  node_info: {'Softmax_1': {'ON': 'GPU'}}\n"}},
     "Key 'node_info' error: node 'Softmax_1': 'ON': 'GPU' is not one of 'BPU', 'CPU'"},
    {"node_info string syntax bad type",
     kYoloX5,
     {{"  working_dir: 'model_output'\n", "  node_info: 'n1:int16;n2:int32'\n"}},
     "Key 'node_info' error: node 'n2': 'int32' is not one of 'int8', 'int16'"},
    {"node_info unknown setting",
     kYoloX5,
     {{"  working_dir: 'model_output'\n", "  node_info: {'n1': {'InputTyp': 'int16'}}\n"}},
     "node 'n1': unknown setting 'InputTyp' (did you mean 'InputType'?)"},
    {"node_info per-output type",
     kYoloX5,
     {{"  working_dir: 'model_output'\n", "  node_info: {'n1': {'OutputType1': 'int16'}}\n"}},
     "per-output OutputType<k> is not supported"},
    {"node_info in both groups",
     kYoloX5,
     {{"  working_dir: 'model_output'\n", "  node_info: 'a:int16'\n"},
      {"calibration_type: 'default'", "calibration_type: 'default'\n  node_info: 'b:int16'"}},
     "given in both model_parameters and calibration_parameters"},
    {"node on both units",
     kYoloX5,
     {{"calibration_type: 'default'",
       "calibration_type: 'default'\n  run_on_cpu: 'conv1'\n  run_on_bpu: 'conv1;conv2'"}},
     "node 'conv1' is in both run_on_cpu and run_on_bpu"},
    {"node_info against run_on_cpu",
     kYoloX5,
     {{"  working_dir: 'model_output'\n", "  node_info: {'conv1': {'ON': 'BPU'}}\n"},
      {"calibration_type: 'default'", "calibration_type: 'default'\n  run_on_cpu: 'conv1'"}},
     "node 'conv1' has 'ON': 'BPU' but is listed in run_on_cpu"},
    {"bad optimization",
     kYoloX5,
     {{"calibration_type: 'default'",
       "calibration_type: 'default'\n  optimization: "
       "'set_model_output_fp16'"}},
     "'set_model_output_fp16' is not an optimization"},
    // quant_config.
    {"quant_config invalid json",
     kYoloS100,
     {{"  quant_config:\n    op_config:\n      softmax:\n        qtype: int16\n    node_config:\n"
       "      /model.23/Concat:\n        qtype: float16\n",
       "  quant_config: '{\"model_config\": {\"all_node_type\": }'\n"}},
     "Key 'quant_config' error: the inline json is not valid json: parse error",
     kCompile},
    // Found by fuzzing (tests/fuzz, quant_config): json's out_of_range escaped for a number
    // too large for a double.
    {"quant_config number overflow",
     kYoloS100,
     {{"  quant_config:\n    op_config:\n      softmax:\n        qtype: int16\n    node_config:\n"
       "      /model.23/Concat:\n        qtype: float16\n",
       "  quant_config: '{\"model_config\": {\"activation\": {\"max_percentile\": 1E400}}}'\n"}},
     "Key 'quant_config' error: the inline json is not valid json: number overflow parsing '1E400'",
     kCompile},
    {"quant_config missing file",
     kYoloS100,
     {{"  quant_config:\n    op_config:\n      softmax:\n        qtype: int16\n    node_config:\n"
       "      /model.23/Concat:\n        qtype: float16\n",
       "  quant_config: missing_quant.json\n"}},
     "Key 'quant_config' error: cannot read the json file 'missing_quant.json'",
     kCompile},
    // An endless file: read up to the limit only.
    {"quant_config endless file",
     kYoloS100,
     {{"  quant_config:\n    op_config:\n      softmax:\n        qtype: int16\n    node_config:\n"
       "      /model.23/Concat:\n        qtype: float16\n",
       "  quant_config: /dev/zero\n"}},
     "Key 'quant_config' error: cannot read the json file '/dev/zero' (looked for '/dev/zero'): /dev/zero: more "
     "than 67108864 bytes; the file may hold at most that",
     kCompile},
    {"quant_config bad qtype",
     kYoloS100,
     {{"qtype: float16", "qtype: int4"}},
     "node_config[\"/model.23/Concat\"].qtype: 'int4' is not one of 'int8', 'int16', 'float16', "
     "'float32'",
     kCompile},
    {"quant_config unknown level",
     kYoloS100,
     {{"    op_config:", "    op_confg:"}},
     "unknown key 'op_confg' (did you mean 'op_config'?); the levels are 'model_config', "
     "'op_config', 'node_config'",
     kCompile},
    {"quant_config subgraph level",
     kYoloS100,
     {{"    op_config:", "    subgraph_config:"}},
     "subgraph_config: is not supported by OpenBPU; list the subgraph's nodes in node_config",
     kCompile},
    // compiler_parameters.input_source.
    {"pyramid for an rgb input",
     kYoloX5,
     {{"input_type_rt: 'nv12'", "input_type_rt: 'rgb'"},
      {"debug: False", "input_source: {'images': 'pyramid'}"}},
     "input 'images': 'pyramid' delivers nv12 or gray images; input_type_rt is 'rgb' (use ddr)"},
    {"resizer too large on bernoulli2",
     kYoloX5,
     {{"march: 'bayes-e'", "march: 'bernoulli2'"},
      {"debug: False", "input_source: {'images': 'resizer'}"}},
     "resizer input on bernoulli2 needs H*W < 18432; 640x640 is 409600"},
    {"input_source for an unknown input",
     kYoloX5,
     {{"debug: False", "input_source: {'image': 'pyramid'}"}},
     "'image' is not an input; input_name lists 'images' (did you mean 'images'?)"},
    {"input_source not a mapping",
     kYoloX5,
     {{"debug: False", "input_source: 'pyramid'"}},
     "expected a mapping {input name: ddr | pyramid | resizer}, got 'pyramid'"},
    // custom_op.
    {"custom_op_dir absolute",
     kYoloX5,
     {{"compiler_parameters:",
       "custom_op:\n  custom_op_method: register\n  op_register_files: "
       "sample_custom.py\n  custom_op_dir: /abs/custom_op\n"
       "compiler_parameters:"}},
     "Key 'custom_op_dir' error: '/abs/custom_op' must be a relative path"},
};

INSTANTIATE_TEST_SUITE_P(Table, ConfigMistake, testing::ValuesIn(kMistakes),
                         [](const testing::TestParamInfo<Mistake>& param) {
                           std::string name = param.param.what;
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name + "_" + std::to_string(param.index);
                         });

TEST(CompileConfig, MistakesTableIsLargeEnough) {
  EXPECT_GE(std::size(kMistakes), 30u);
}

TEST(CompileConfig, SampleConfigsParse) {
  const auto dir = std::filesystem::path(OPENBPU_SOURCE_DIR) / "samples/configs";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  int parsed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    const bool compile = entry.path().filename().string().find("hb_compile") != std::string::npos;
    SCOPED_TRACE(entry.path().filename().string());
    const CompileConfig c = load_compile_config(
        entry.path().string(), compile ? ConfigFlavour::kHbCompile : ConfigFlavour::kHbMapper,
        ModelType::kOnnx);
    EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
    EXPECT_EQ(c.input.inputs.at(0).name, "x");
    ++parsed;
  }
  EXPECT_GE(parsed, 6);
}

// ---------------------------------------------------------------- dump_config

TEST(CompileConfig, DumpIsSortedAndReadsBack) {
  for (const auto& [yaml, flavour, type] : {std::tuple{kYoloX5, kMapper, ModelType::kOnnx},
                                            std::tuple{kResNetX3Caffe, kMapper, ModelType::kCaffe},
                                            std::tuple{kYoloS100, kCompile, ModelType::kOnnx}}) {
    const CompileConfig c = parse_compile_config(yaml, "c.yaml", flavour, type);
    const std::string dump = dump_config(c);
    // Groups in sorted order.
    const size_t cal = dump.find("calibration_parameters:");
    const size_t comp = dump.find("compiler_parameters:");
    const size_t in = dump.find("input_parameters:");
    const size_t model = dump.find("model_parameters:");
    EXPECT_TRUE(cal < comp && comp < in && in < model) << dump;
    // The dump is itself a valid config that dumps the same.
    const CompileConfig again = parse_compile_config(dump, "dump.yaml", flavour, type);
    EXPECT_EQ(dump_config(again), dump);
  }
  const std::string dump = dump_config(parse_mapper(kYoloX5));
  EXPECT_NE(dump.find("  input_source:\n    images: pyramid\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("  march: bayes-e\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("  scale_value: 0.003921568627451\n"), std::string::npos) << dump;
}

// ---------------------------------------------------------------- resolve_against_model

ir::Model model_with_inputs(const std::vector<std::pair<std::string, ir::TensorType>>& inputs) {
  ir::Model model;
  ir::Graph& g = *model.graph;
  std::vector<ir::Value*> values;
  for (const auto& [name, type] : inputs) {
    ir::Value* v = g.add_value(name, type);
    g.add_input(v);
    values.push_back(v);
  }
  ir::Node* conv = g.add_node({"Conv", {values[0]}, {"conv_out"}, "/model.0/conv/Conv", "", {}});
  ir::Node* softmax =
      g.add_node({"Softmax", {conv->output(0)}, {"probs"}, "/model.10/attn/Softmax", "", {}});
  g.add_output(softmax->output(0));
  return model;
}

ir::TensorType f32(std::vector<int64_t> dims) {
  return ir::TensorType::of(DataType::kFloat32, dims);
}

std::string resolve_error(CompileConfig config, const ir::Model& model) {
  try {
    resolve_against_model(config, model);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

// A Silero-style model: audio, state and an int64 sample rate, plus a bool pair of flags.
ir::Model streaming_model() {
  return model_with_inputs({{"input", f32({1, 576})},
                            {"state", f32({2, 1, 128})},
                            {"sr", ir::TensorType{DataType::kInt64, std::vector<ir::Dim>{}}},
                            {"flags", ir::TensorType{DataType::kBool, std::vector<ir::Dim>{ir::Dim::symbolic("n")}}}});
}

TEST(FixedInputs, BindModelInputsToConstants) {
  CompileConfig c;
  c.input.fixed_inputs = {{"sr", {16000}}, {"flags", {1, 0}}};
  ir::Model model = streaming_model();
  const auto lines = bind_fixed_inputs(c, model);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "input 'sr' fixed to 16000 (int64[], fixed_inputs): a constant of the converted model, not one of its inputs");
  const ir::Value* sr = model.graph->find_value("sr");
  ASSERT_TRUE(sr->is_constant());
  EXPECT_EQ(sr->constant()->data<int64_t>()[0], 16000);
  const ir::Value* flags = model.graph->find_value("flags");
  ASSERT_TRUE(flags->is_constant());
  EXPECT_EQ(flags->constant()->shape(), (kernels::Shape{2}));  // the open dim takes the count
  ASSERT_EQ(model.graph->inputs().size(), 2u);
  EXPECT_EQ(model.graph->inputs()[1]->name(), "state");
  // The dump reads back.
  EXPECT_NE(dump_config(c).find("fixed_inputs: sr=16000;flags=1,0"), std::string::npos) << dump_config(c);
}

TEST(FixedInputs, AreCheckedAgainstTheModel) {
  auto error = [](std::vector<FixedInput> fixed, std::vector<std::string> names = {}) {
    CompileConfig c;
    c.input.fixed_inputs = std::move(fixed);
    c.input.names_given = !names.empty();
    for (const std::string& n : names) {
      InputSpec spec;
      spec.name = n;
      c.input.inputs.push_back(spec);
    }
    ir::Model model = streaming_model();
    try {
      bind_fixed_inputs(c, model);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  EXPECT_NE(error({{"rate", {16000}}}).find("Key 'fixed_inputs' error: input 'rate': is not an input of the model"),
            std::string::npos);
  EXPECT_NE(error({{"sr", {16000.5}}}).find("input 'sr': the input is int64; its values must be integers"),
            std::string::npos);
  EXPECT_NE(error({{"state", {0, 1}}}).find("input 'state': 2 value(s) do not fill its shape float32[2,1,128]"),
            std::string::npos);
  EXPECT_NE(error({{"sr", {16000}}}, {"input", "state", "sr"}).find("input 'sr': is in input_name too"),
            std::string::npos);
}

// A scalar model input (Silero's sample rate) cannot be a featuremap; the error says how to bind it.
TEST(FixedInputs, AScalarInputLeftOpenPointsToThem) {
  CompileConfig c = parse_mapper(edited(kResNetX3Caffe, {{"  run_on_cpu: 'fc1000; prob'\n", ""}}), ModelType::kCaffe);
  c.input = {};
  c.input.names_given = true;
  for (const char* name : {"input", "sr"}) {
    InputSpec spec;
    spec.name = name;
    spec.type_train = spec.type_rt = InputType::kFeaturemap;
    spec.norm_type = NormType::kNoPreprocess;
    c.input.inputs.push_back(spec);
  }
  const ir::Model model = model_with_inputs(
      {{"input", f32({1, 576})}, {"sr", ir::TensorType{DataType::kInt64, std::vector<ir::Dim>{}}}});
  EXPECT_NE(resolve_error(c, model).find("input 'sr': '' has rank 0; featuremap inputs have rank 1 to 5 (a scalar "
                                         "setting such as a sample rate can be bound with fixed_inputs, e.g. "
                                         "'sr=16000', or the checker's --fixed-input)"),
            std::string::npos)
      << resolve_error(c, model);
}

TEST(ResolveAgainstModel, FillsNameAndShapeOfASingleInput) {
  CompileConfig c = parse_mapper(edited(kResNetX3Caffe, {{"  run_on_cpu: 'fc1000; prob'\n", ""}}),
                                 ModelType::kCaffe);
  const ir::Model model = model_with_inputs({{"data", f32({1, 3, 224, 224})}});
  resolve_against_model(c, model);
  EXPECT_EQ(c.input.inputs[0].name, "data");
  EXPECT_EQ(c.input.inputs[0].shape, (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_NE(std::find(c.notes.begin(), c.notes.end(),
                      "Model name not given in yaml_file, using model name from model file: "
                      "['data']"),
            c.notes.end());
}

TEST(ResolveAgainstModel, ReportsWhatOnlyTheModelShows) {
  const ir::Model yolo = model_with_inputs({{"images", f32({1, 3, 640, 640})}});
  const CompileConfig x5 = parse_mapper(kYoloX5);
  {
    CompileConfig ok = x5;
    resolve_against_model(ok, yolo);
  }
  // Input names.
  const ir::Model other_name = model_with_inputs({{"image", f32({1, 3, 640, 640})}});
  EXPECT_NE(resolve_error(x5, other_name)
                .find("Key 'input_name' error: 'images' is not an input of the model, which has 1 "
                      "input ('image') (did you mean 'image'?)"),
            std::string::npos);
  const ir::Model two = model_with_inputs({{"a", f32({1, 3, 8, 8})}, {"b", f32({1, 3, 8, 8})}});
  EXPECT_NE(resolve_error(parse_mapper(kResNetX3Caffe, ModelType::kCaffe), two)
                .find("the model has 2 inputs ('a', 'b'); input_name must name them"),
            std::string::npos);
  // Shapes from the model: dynamic dims, odd nv12 dims, channels vs layout, input_batch.
  const CompileConfig no_shape =
      parse_mapper(edited(kYoloX5, {{"  input_shape: '1x3x640x640'\n", ""}}));
  const ir::Model dynamic = model_with_inputs(
      {{"images", ir::TensorType{DataType::kFloat32,
                                 std::vector<ir::Dim>{ir::Dim::symbolic("batch"), ir::Dim::known(3),
                                                      ir::Dim::known(640), ir::Dim::known(640)}}}});
  EXPECT_NE(resolve_error(no_shape, dynamic)
                .find("input 'images': the model gives dims [batch, 3, 640, 640], which are not "
                      "all fixed; give input_shape"),
            std::string::npos);
  const ir::Model odd = model_with_inputs({{"images", f32({1, 3, 641, 640})}});
  EXPECT_NE(resolve_error(no_shape, odd).find("nv12 input needs even H and W"), std::string::npos);
  const ir::Model nhwc = model_with_inputs({{"images", f32({1, 640, 640, 3})}});
  EXPECT_NE(resolve_error(no_shape, nhwc).find("reads the channels of 1x640x640x3 at dim 1"),
            std::string::npos);
  const CompileConfig batched =
      parse_mapper(edited(kYoloX5, {{"  input_shape: '1x3x640x640'\n", "  input_batch: 4\n"}}));
  const ir::Model batch2 = model_with_inputs({{"images", f32({2, 3, 640, 640})}});
  EXPECT_NE(resolve_error(batched, batch2)
                .find("input_batch 4 needs the first dim of input_shape to be 1; got "
                      "'2x3x640x640'"),
            std::string::npos);
  // Node names.
  const CompileConfig nodes = parse_mapper(
      edited(kYoloX5, {{"  working_dir: 'model_output'\n",
                        "  node_info: {'/model.10/attn/Softmx': {'ON': 'BPU'}}\n"},
                       {"calibration_type: 'default'",
                        "calibration_type: 'default'\n  run_on_cpu: '/model.0/conv/Conv'"}}));
  EXPECT_NE(resolve_error(nodes, yolo)
                .find("Key 'node_info' error: node '/model.10/attn/Softmx' is not in the model "
                      "(did you mean '/model.10/attn/Softmax'?)"),
            std::string::npos);
}

TEST(ResolveAgainstModel, FeaturemapMeanCountFollowsTheModelChannels) {
  const CompileConfig c = parse_mapper(R"(
model_parameters:
  onnx_model: 'radar.onnx'
  march: 'bayes'
  output_model_file_prefix: 'radar'
input_parameters:
  input_type_train: 'featuremap'
  input_type_rt: 'featuremap'
  input_layout_train: 'NCHW'
  norm_type: 'data_mean'
  mean_value: '1 2 3 4'
calibration_parameters:
  calibration_type: 'skip'
compiler_parameters:
  optimize_level: 'O0'
)");
  CompileConfig four = c;
  resolve_against_model(four, model_with_inputs({{"radar", f32({1, 4, 16, 16})}}));
  EXPECT_NE(resolve_error(c, model_with_inputs({{"radar", f32({1, 8, 16, 16})}}))
                .find("Key 'mean_value' error: input 'radar': 4 values; give 1 (all channels) "
                      "or 8 (one per channel of 1x8x16x16)"),
            std::string::npos);
}

TEST(ResolveAgainstModel, InputSourceOfAnUnnamedInput) {
  const CompileConfig c = parse_mapper(
      edited(kResNetX3Caffe, {{"  jobs: 4\n", "  jobs: 4\n  input_source: {'dta': 'ddr'}\n"}}),
      ModelType::kCaffe);
  EXPECT_NE(resolve_error(c, model_with_inputs({{"data", f32({1, 3, 224, 224})}}))
                .find("Key 'input_source' error: 'dta' is not an input of the model, which has 1 "
                      "input ('data') (did you mean 'data'?)"),
            std::string::npos);
}

}  // namespace
}  // namespace openbpu::config
