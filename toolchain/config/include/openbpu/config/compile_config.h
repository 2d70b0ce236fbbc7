// The typed, validated model conversion config (the yaml given to hb_mapper makertbin and
// hb_compile), one struct per yaml group.
//
// parse_compile_config() reads the yaml text and checks every rule that needs only the config:
// groups present, required keys, types, closed value sets, ranges, the per-input `;` lists and
// their counts, cross-key rules (input_type_train x input_type_rt, nv12/yuv444 even H/W,
// mean/scale per input and per channel, input_batch), march- and flavour-specific keys, node_info
// in both syntaxes and quant_config. resolve_against_model() then fills what comes from the
// model (input names and shapes) and checks what needs it (layouts, channels, node names).
// Both throw ConfigError listing every problem found; neither touches working_dir.
//
// Every default below is the value a key takes when the yaml leaves it out. docs/config.md is
// the user's description of every key, default, range and rule.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "openbpu/simulator/march.h"
#include "openbpu/config/config_error.h"

namespace openbpu::ir {
struct Model;
}

namespace openbpu::config {

// Which tool reads the config. They share the four groups and most keys; differences:
//   hb_mapper  (classic: X3, Ultra, X5): march bernoulli2 | bayes | bayes-e;
//              optimize_level O0-O3, required.
//   hb_compile (UCP: S100 / S100P):      march nash-e | nash-m; optimize_level O0-O2, default O2;
//              quant_config, separate_batch, compile_mode 'balance' + balance_factor and
//              extra_params exist only here; input_layout_rt is ignored (UCP PTQ keeps the
//              training layout).
enum class ConfigFlavour { kHbMapper, kHbCompile };

// --model-type of hb_mapper / the model file kind of hb_compile.
enum class ModelType { kOnnx, kCaffe };

// model_parameters.march. The per-march hardware table lives elsewhere; this is the name only.
// The march enum and its hardware facts live in the one march table (simulator/march.h).
using March = simulator::March;

// input_type_train / input_type_rt. nv12 is an input_type_rt only.
enum class InputType { kRgb, kBgr, kYuv444, kNv12, kGray, kFeaturemap };

enum class Layout { kNchw, kNhwc };

// input_space_and_range: regular = full range [0,255]; bt601_video = [16,235] (nv12 only).
enum class InputSpaceAndRange { kRegular, kBt601Video };

enum class NormType { kNoPreprocess, kDataMean, kDataScale, kDataMeanAndScale };

// calibration_parameters.cal_data_type: element type of the binary calibration files.
enum class CalDataType { kFloat32, kUint8 };

enum class CalibrationType { kDefault, kMix, kKl, kMax, kLoad, kSkip };

enum class CompileMode { kLatency, kBandwidth, kBalance };

enum class OptimizeLevel { kO0, kO1, kO2, kO3 };

// compiler_parameters.input_source: where an input's data comes from on the board.
enum class InputSource { kDdr, kPyramid, kResizer };

// node_info 'ON': the unit a node is forced onto.
enum class ExecutionUnit { kBpu, kCpu };

// Computation data type of a node or tensor (node_info InputType/OutputType, set_node_data_type,
// optimization, quant_config qtype). Which of them a key accepts is stated at the key.
enum class QuantDataType { kInt8, kInt16, kFloat16, kFloat32 };

// model_parameters.remove_node_type: node types that may be removed at the model's edges.
enum class RemovableNodeType { kQuantize, kTranspose, kDequantize, kCast, kReshape, kSoftmax };

// model_parameters.debug_mode.
enum class DebugMode { kDumpCalibrationData };

// model_parameters.log_level (a hidden key of the original, seen in real configs).
enum class LogLevel { kDebug, kInfo, kWarning, kError };

enum class CustomOpMethod { kRegister };

// ---- enum spellings: the yaml spelling of each value ("bayes-e", "nv12", "NCHW", "O2", ...).
template <typename E>
struct EnumSpelling {
  E value;
  std::string_view name;
};
// All spellings of an enum, in declaration order (specialised for every enum above).
template <typename E>
std::span<const EnumSpelling<E>> enum_spellings();

template <>
std::span<const EnumSpelling<ConfigFlavour>> enum_spellings<ConfigFlavour>();
template <>
std::span<const EnumSpelling<ModelType>> enum_spellings<ModelType>();
template <>
std::span<const EnumSpelling<March>> enum_spellings<March>();
template <>
std::span<const EnumSpelling<InputType>> enum_spellings<InputType>();
template <>
std::span<const EnumSpelling<Layout>> enum_spellings<Layout>();
template <>
std::span<const EnumSpelling<InputSpaceAndRange>> enum_spellings<InputSpaceAndRange>();
template <>
std::span<const EnumSpelling<NormType>> enum_spellings<NormType>();
template <>
std::span<const EnumSpelling<CalDataType>> enum_spellings<CalDataType>();
template <>
std::span<const EnumSpelling<CalibrationType>> enum_spellings<CalibrationType>();
template <>
std::span<const EnumSpelling<CompileMode>> enum_spellings<CompileMode>();
template <>
std::span<const EnumSpelling<OptimizeLevel>> enum_spellings<OptimizeLevel>();
template <>
std::span<const EnumSpelling<InputSource>> enum_spellings<InputSource>();
template <>
std::span<const EnumSpelling<ExecutionUnit>> enum_spellings<ExecutionUnit>();
template <>
std::span<const EnumSpelling<QuantDataType>> enum_spellings<QuantDataType>();
template <>
std::span<const EnumSpelling<RemovableNodeType>> enum_spellings<RemovableNodeType>();
template <>
std::span<const EnumSpelling<DebugMode>> enum_spellings<DebugMode>();
template <>
std::span<const EnumSpelling<LogLevel>> enum_spellings<LogLevel>();
template <>
std::span<const EnumSpelling<CustomOpMethod>> enum_spellings<CustomOpMethod>();

template <typename E>
std::string_view to_string(E value) {
  for (const auto& s : enum_spellings<E>()) {
    if (s.value == value) return s.name;
  }
  return "?";
}
// Case-insensitive ("NV12" reads as nv12, "nchw" as NCHW); nullopt if no spelling matches.
template <typename E>
std::optional<E> parse_enum(std::string_view text);

// ---- model_parameters

// Per-node settings of node_info (and of set_node_data_type, run_on_cpu, run_on_bpu, which
// CompileConfig::node_settings() merges in).
struct NodeSetting {
  std::optional<ExecutionUnit> on;                   // 'ON'; unset: the partitioner decides
  std::optional<QuantDataType> input_type;           // 'InputType': all inputs (int8 | int16)
  std::map<int, QuantDataType> input_type_by_index;  // 'InputType<k>': input k (wins over above)
  std::optional<QuantDataType> output_type;          // 'OutputType': all outputs (int8 | int16)
  bool operator==(const NodeSetting&) const = default;
};

struct ModelParameters {
  std::string onnx_model;   // required when the model type is onnx
  std::string caffe_model;  // required (with prototxt) when the model type is caffe
  std::string prototxt;
  March march = March::kBernoulli2;          // required, no default
  std::string output_model_file_prefix;      // required
  std::string working_dir = "model_output";  // created by the CLI if missing
  bool layer_out_dump = false;
  std::vector<std::string> output_nodes;            // default: the model's own outputs
  std::vector<RemovableNodeType> remove_node_type;  // removed in this order; default none
  std::vector<std::string> remove_node_name;        // removed in this order; default none
  std::vector<DebugMode> debug_mode;                // default none
  // node_info, either syntax (mapping, or 'name:int16;name2:int16'); not on bernoulli2.
  // Also accepted under calibration_parameters. Default empty.
  std::map<std::string, NodeSetting> node_info;
  // Deprecated form: node name -> output data type (int16). Not on bernoulli2. Default empty.
  std::map<std::string, QuantDataType> set_node_data_type;
  std::optional<LogLevel> log_level;  // default: the CLI's level
};

// ---- input_parameters

// One model input, after splitting the `;` lists (values are in input_name order).
struct InputSpec {
  std::string name;  // input_name; "" until resolve_against_model() for a single unnamed input
  InputType type_train = InputType::kRgb;  // required
  InputType type_rt = InputType::kRgb;     // required
  Layout layout_train = Layout::kNchw;     // required
  // input_layout_rt. Default: input_layout_train, except NHWC for image inputs on bernoulli2;
  // hb_compile always uses input_layout_train. Unset (nullopt) only for nv12, which has none.
  std::optional<Layout> layout_rt;
  InputSpaceAndRange space_and_range = InputSpaceAndRange::kRegular;
  std::vector<int64_t> shape;  // input_shape; empty until resolve_against_model() if not given
  NormType norm_type = NormType::kNoPreprocess;  // required
  std::vector<double> mean;   // mean_value: empty ('None'), 1 value, or one per channel
  std::vector<double> scale;  // scale_value: same
};

// A model input bound to a constant (fixed_inputs, an OpenBPU key: 'sr=16000;flags=1,0'): the
// model is converted for that value, the input becomes an initializer and leaves the model's
// interface (a sample-rate or mode switch, so that the If on it folds).
struct FixedInput {
  std::string name;
  std::vector<double> values;  // one per element, in the input's own element type
};

struct InputParameters {
  std::vector<InputSpec> inputs;
  bool names_given = false;     // input_name was in the yaml
  int64_t input_batch = 1;      // [1, 128]; > 1 only for one input whose first dim is 1
  bool separate_batch = false;  // hb_compile: input_batch inputs as separate tensors
  std::vector<FixedInput> fixed_inputs;  // default none
};

// ---- calibration_parameters

// One entry of `optimization` (comma- or ';'-separated list).
struct OptimizationRule {
  enum class Kind {
    kModelOutput,  // set_model_output_int8 | set_model_output_int16
    kAllNodes,     // set_all_nodes_int16
    kOpInput,      // set_<OpType>_input_int8 | _int16
    kOpOutput,     // set_<OpType>_output_int8 | _int16
    kEdgeOperatorsOnBpu,  // keep_edge_operators_on_bpu (OpenBPU): the reference's "unitconv"
  };
  Kind kind = Kind::kModelOutput;
  std::string op_type;  // kOpInput / kOpOutput
  QuantDataType data_type = QuantDataType::kInt8;
  std::string spelling;  // as written, for the log
};

// quant_config (hb_compile): model-, op- and node-level quantization settings. Priority when a
// node is covered more than once: node_config > op_config > model_config.
struct QuantActivationConfig {
  std::optional<CalibrationType> calibration_type;  // default: calibration_parameters'
  std::optional<double> max_percentile;             // [0, 1]
  std::optional<bool> per_channel;
  std::optional<bool> asymmetric;  // default false (symmetric)
};
struct QuantModelConfig {
  QuantDataType all_node_type = QuantDataType::kInt8;         // int8 | int16 | float16
  QuantDataType model_output_type = QuantDataType::kFloat32;  // int8 | int16 | float32
  QuantActivationConfig activation;
  std::optional<bool> weight_per_channel;  // 'weight': {'per_channel': bool}; default true
};
struct QuantConfig {
  std::string source;  // the json file path, or "inline"
  QuantModelConfig model_config;
  std::map<std::string, QuantDataType> op_config;    // op type (any case) -> qtype
  std::map<std::string, QuantDataType> node_config;  // node name -> qtype
  // The data type a node computes in, by the priority above (int8 when nothing covers it).
  QuantDataType qtype_for(const std::string& node_name, const std::string& op_type) const;
};

struct CalibrationParameters {
  std::vector<std::string> cal_data_dir;  // one per input; required unless load/skip
  // One per cal_data_dir: the key's value (one value applies to every input), else inferred
  // from the directory name (suffix "_f32" -> float32, otherwise uint8).
  std::vector<CalDataType> cal_data_type;
  bool cal_data_type_given = false;
  bool preprocess_on = false;
  CalibrationType calibration_type = CalibrationType::kDefault;
  double max_percentile = 1.0;  // [0, 1]; used by calibration_type 'max'
  bool per_channel = false;
  std::vector<std::string> run_on_cpu;  // node names
  std::vector<std::string> run_on_bpu;  // node names
  std::vector<OptimizationRule> optimization;
  std::optional<QuantConfig> quant_config;  // hb_compile only
};

// ---- compiler_parameters

struct CompilerParameters {
  CompileMode compile_mode = CompileMode::kLatency;  // 'balance': hb_compile only
  std::optional<int64_t> balance_factor;  // [0, 100], required with (and only with) balance
  bool debug = false;
  int64_t core_num = 1;  // 1 | 2; 2 only on bernoulli2
  // hb_mapper: required, O0-O3. hb_compile: O0-O2, default O2. Unset: the flavour's default,
  // which CompileConfig::optimize_level() gives.
  std::optional<OptimizeLevel> optimize_level;
  // The explicit entries, by input name. An input not listed reads from pyramid if its
  // input_type_rt is nv12, else from ddr: CompileConfig::input_source_of() gives the effective one.
  std::map<std::string, InputSource> input_source;
  int64_t max_time_per_fc = 0;  // microseconds; 0 (no limit) or [1000, 4294967295]
  std::optional<int64_t> jobs;  // compile processes, [1, 4096]; default: the compiler's
  int64_t advice = 0;           // microseconds; report layers slowed by more than this; 0 = off
  std::map<std::string, std::string> extra_params;  // hb_compile: compiler pass-through
};

// ---- custom_op (optional group)

struct CustomOp {
  CustomOpMethod custom_op_method = CustomOpMethod::kRegister;
  std::vector<std::string> op_register_files;  // ';'-separated .py files
  std::string custom_op_dir;                   // relative path
};

struct CompileConfig {
  ConfigFlavour flavour = ConfigFlavour::kHbMapper;
  ModelType model_type = ModelType::kOnnx;
  std::string origin;  // file name the yaml came from (messages, relative quant_config paths)

  ModelParameters model;
  InputParameters input;
  CalibrationParameters calibration;
  CompilerParameters compiler;
  std::optional<CustomOp> custom_op;

  // Lines for the log: warnings (ignored or inconsistent-but-harmless keys) and notes (values
  // taken from the model, inferred types), in the order found.
  std::vector<std::string> warnings;
  std::vector<std::string> notes;

  // node_info merged with set_node_data_type (output type), run_on_cpu and run_on_bpu ('ON').
  std::map<std::string, NodeSetting> node_settings() const;
  // The input_source of input `index` (the explicit one, else the default by input_type_rt).
  InputSource input_source_of(size_t index) const;
  // compiler_parameters.optimize_level, else the flavour's default (hb_mapper O3, hb_compile O2).
  OptimizeLevel optimize_level() const;
};

// Parses and validates `yaml_text`. `origin` names the file in messages, and relative
// quant_config json paths are read from its directory. Throws ConfigError with every problem.
CompileConfig parse_compile_config(const std::string& yaml_text, const std::string& origin,
                                   ConfigFlavour flavour, ModelType model_type);

// Reads `path` and parses it (ConfigError if the file cannot be read).
CompileConfig load_compile_config(const std::string& path, ConfigFlavour flavour,
                                  ModelType model_type);

// One fixed_inputs entry, 'name=value[,value...]' (the yaml key, the checker's --fixed-input);
// nullopt with `problem` set when it does not read.
std::optional<FixedInput> fixed_input_of(std::string_view entry, std::string* problem);

// Binds the fixed_inputs to the model: each becomes an initializer of the input's element type
// and shape (a model dim that is not fixed takes the value count) and leaves the graph inputs.
// Checks: the name is a model input and not in input_name, a numeric type, integral values for
// an integer type, as many values as elements. Returns a log line per input; throws
// ConfigError like parse_compile_config. Call before resolve_against_model.
std::vector<std::string> bind_fixed_inputs(const CompileConfig& config, ir::Model& model);

// Fills input names/shapes from the model where the yaml left them out, and checks what needs
// the model: input count and names, shapes (static, rank, channels vs input_layout_train,
// nv12/yuv444 even H/W), mean/scale count vs channels, input_batch, node names used by
// node_info, run_on_cpu/bpu, set_node_data_type, output_nodes, remove_node_name, quant_config
// node_config, input_source names. Throws ConfigError like parse_compile_config.
void resolve_against_model(CompileConfig& config, const ir::Model& model);

// The "Dump config:" yaml: the effective config (given values and defaults), groups and keys
// sorted, per-input values joined with ';' as the yaml writes them.
std::string dump_config(const CompileConfig& config);

// Which marches a flavour accepts (the march table's hbm_generation), in the table's order.
std::vector<March> marches_of(ConfigFlavour flavour);

}  // namespace openbpu::config
