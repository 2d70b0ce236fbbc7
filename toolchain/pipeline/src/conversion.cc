#include "openbpu/pipeline/conversion.h"

#include <chrono>
#include <filesystem>
#include <map>

#include "conversion_stages.h"
#include "openbpu/common/error.h"
#include "openbpu/config/config_error.h"
#include "openbpu/frontend/caffe_model.h"
#include "openbpu/frontend/onnx_model.h"
#include "openbpu/ir/verifier.h"

namespace openbpu::pipeline {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kVersion = OPENBPU_VERSION_STRING;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

std::vector<int64_t> parse_shape(const std::string& name, const std::string& text) {
  std::vector<int64_t> shape;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, 'x')) {
    size_t used = 0;
    int64_t v = -1;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || v <= 0) {
      raise("--input-shape ", name, " '", text, "': a shape is positive integers joined by 'x', e.g. 1x3x224x224");
    }
    shape.push_back(v);
  }
  if (shape.empty()) raise("--input-shape ", name, " '", text, "' is empty");
  return shape;
}

// --fixed-input NAME VALUES: numbers joined by ','.
config::FixedInput parse_fixed_input(const std::string& name, const std::string& text) {
  std::string problem;
  auto fixed = config::fixed_input_of(name + "=" + text, &problem);
  if (!fixed) raise("--fixed-input ", name, " ", text, ": ", problem);
  return *fixed;
}

void log_config_error(Log& log, const config::ConfigError& e) {
  for (const std::string& line : e.lines()) log.error(line);
  log.error(config::kParseFailedLine);
}

// The conversion after the config is known and checked: the stages in order
// (conversion_stages.h), each timed, the IR verifier on every model a stage returns.
// The outcome's placement table and the model files of working_dir that the run wrote.
void describe_outcome(const stages::Context& cx, const bpu_support::Partition& partition, bool compiled,
                      ConversionOutcome& outcome) {
  for (const bpu_support::NodePlacement& p : partition.nodes) {
    outcome.nodes.push_back({p.node->name(), p.node->op_type(), p.unit == bpu_support::Unit::kBpu, p.subgraph, p.reason});
  }
  outcome.subgraph_count = partition.subgraph_count;
  if (!compiled) return;
  const bool hbm = cx.cfg.flavour == config::ConfigFlavour::kHbCompile;
  for (const char* suffix : {"_original_float_model.onnx", "_optimized_float_model.onnx", "_calibrated_model.onnx",
                             "_quantized_model.onnx", hbm ? ".hbm" : ".bin"}) {
    const fs::path file = cx.dir / (cx.prefix + suffix);
    if (fs::exists(file)) outcome.model_files.push_back(file.string());
  }
}

int convert(const ConversionRequest& request, const config::CompileConfig& cfg, ir::Model model, Log& log,
            ConversionOutcome* outcome) {
  const auto total_start = Clock::now();
  const bool checker = request.checker;
  const simulator::MarchSpec& march = simulator::march_spec(cfg.model.march);
  const stages::Options options = stages::derive_options(cfg, march);
  const stages::Context cx{request,     cfg,     options, march, log, request.fast_perf || checker, !checker,
                           cfg.model.working_dir, cfg.model.output_model_file_prefix};
  std::vector<std::pair<std::string, double>> times;
  auto t = Clock::now();
  auto done = [&](const char* stage, const ir::Model* result) {
    if (result != nullptr) ir::verify_or_throw(*result->graph, str_cat("the ", stage, " stage's model"));
    times.emplace_back(stage, seconds_since(t));
    t = Clock::now();
  };
  auto timing = [&] {
    std::string text;
    for (const auto& [stage, s] : times) text += (text.empty() ? "" : ", ") + stage + " " + fixed(s, 2) + " s";
    return str_cat(text, " (total ", fixed(seconds_since(total_start), 2), " s)");
  };

  stages::Prepared prepared = stages::prepare(cx, std::move(model));
  done("prepare", &prepared.model);
  const ir::Model optimized = stages::optimize(cx, prepared);
  done("optimize", &optimized);
  const stages::Plan plan = stages::plan(cx, optimized);
  t = Clock::now();  // the plan is not a stage of the reference's timing line
  const ir::Model calibrated = stages::calibrate(cx, optimized, plan, prepared);
  done("calibrate", &calibrated);
  quantization::QuantizeResult quantized = stages::quantize(cx, calibrated, plan);
  done("quantize", &quantized.model);
  stages::report(cx, optimized, quantized, *prepared.inputs);
  done("report", nullptr);
  stages::finish_quantized_model(cx, quantized.model);
  ir::verify_or_throw(*quantized.model.graph, "the quantized model");
  log.info("End to Horizon NN Model Convert.");
  if (request.checker) {
    const bpu_support::Partition& partition = plan.plan.partition;
    log.info("Conversion time: ", timing());
    log.info("check model ", request.model_file, " for march ", cx.march.name, ": ", partition.subgraph_count,
             " BPU subgraph", partition.subgraph_count == 1 ? "" : "s", ", ",
             partition.nodes.size() - static_cast<size_t>(partition.bpu_node_count()), " CPU node(s)");
    log.info("End to check the model.");
    if (outcome != nullptr) describe_outcome(cx, partition, false, *outcome);
    return 0;
  }
  t = Clock::now();
  stages::compile(cx, quantized.model);
  done("compile", nullptr);
  log.info("Conversion time: ", timing());
  log.info("End Model Convert");
  if (outcome != nullptr) describe_outcome(cx, plan.plan.partition, true, *outcome);
  return 0;
}

}  // namespace

config::CompileConfig fast_perf_config(const ConversionRequest& request) {
  config::CompileConfig cfg;
  cfg.flavour = request.flavour;
  cfg.model_type = request.model_type;
  cfg.origin = "--fast-perf";
  const auto march = simulator::march_from_name(request.march);
  bool allowed = false;
  std::string names;
  for (const config::March m : config::marches_of(request.flavour)) {
    names += (names.empty() ? "'" : ", '") + std::string(simulator::march_spec(m).name) + "'";
    if (march && *march == m) allowed = true;
  }
  if (!allowed) raise("--march '", request.march, "' is not one of ", names);
  cfg.model.march = *march;
  if (request.model_type == config::ModelType::kCaffe) {
    if (request.proto_file.empty()) raise("--model-type caffe needs --proto (the .prototxt beside --model)");
    cfg.model.caffe_model = request.model_file;
    cfg.model.prototxt = request.proto_file;
  } else {
    cfg.model.onnx_model = request.model_file;
  }
  cfg.model.output_model_file_prefix = fs::path(request.model_file).stem().string();
  cfg.calibration.calibration_type = config::CalibrationType::kSkip;
  for (const auto& [name, text] : request.fixed_inputs) cfg.input.fixed_inputs.push_back(parse_fixed_input(name, text));
  if (!request.checker) {
    // The fastest board model: the removable CPU operators at the model's head and tail go, as
    // the original's --fast-perf strips them (the model then takes and gives integer tensors).
    cfg.model.remove_node_type = {config::RemovableNodeType::kQuantize, config::RemovableNodeType::kTranspose,
                                  config::RemovableNodeType::kDequantize, config::RemovableNodeType::kCast,
                                  config::RemovableNodeType::kReshape};
  }
  return cfg;
}

int run_conversion(const ConversionRequest& request, Log& log, ConversionOutcome* outcome) {
  const std::string tool = request.flavour == config::ConfigFlavour::kHbCompile ? "hb_compile" : "hb_mapper";
  log.info("log will be stored in ", fs::absolute(log.path()).string());
  log.info("Start ", tool, "....");
  log.info(tool, " version ", kVersion, " (OpenBPU)");
  log.info(request.checker ? "Start Model Check...." : "Start Model Convert....");
  try {
    const bool caffe = request.model_type == config::ModelType::kCaffe;
    config::CompileConfig cfg;
    if (request.fast_perf || request.checker) {
      cfg = fast_perf_config(request);
    } else {
      log.info("validating config file ", request.config_file, "...");
      cfg = config::load_compile_config(request.config_file, request.flavour, request.model_type);
    }
    const std::string model_file = stages::model_origin(cfg);
    ir::Model model = caffe ? frontend::load_caffe(cfg.model.prototxt, cfg.model.caffe_model)
                            : frontend::load_onnx(model_file);
    if (caffe) {
      log.info("Caffe model ", cfg.model.prototxt, " + ", cfg.model.caffe_model, " read: ",
               model.graph->nodes().size(), " ONNX nodes (opset ", frontend::kCaffeOnnxOpset, ")");
    }
    for (const std::string& line : config::bind_fixed_inputs(cfg, model)) log.info(line);
    if (request.fast_perf || request.checker) {
      std::map<std::string, std::vector<int64_t>> shapes;
      for (const auto& [name, text] : request.input_shapes) shapes[name] = parse_shape(name, text);
      for (const ir::Value* v : model.graph->inputs()) {
        if (v->is_constant()) continue;
        config::InputSpec spec;
        spec.name = v->name();
        spec.type_train = spec.type_rt = config::InputType::kFeaturemap;
        spec.layout_train = config::Layout::kNchw;
        spec.layout_rt = config::Layout::kNchw;
        auto it = shapes.find(v->name());
        if (it != shapes.end()) {
          spec.shape = it->second;
          shapes.erase(it);
        }
        cfg.input.inputs.push_back(spec);
      }
      cfg.input.names_given = true;
      if (!shapes.empty()) {
        raise("--input-shape names '", shapes.begin()->first, "', which is not an input of ", model_file);
      }
    }
    config::resolve_against_model(cfg, model);
    for (const std::string& w : cfg.warnings) log.warning(w);
    for (const std::string& n : cfg.notes) log.info(n);
    for (const config::InputSpec& in : cfg.input.inputs) {
      log.info("input '", in.name, "' : original model shape: ", shape_text(in.shape));
    }
    if (!request.checker) {
      log.info("Dump config:");
      log.write(LogLevel::kInfo, config::dump_config(cfg));
    }
    return convert(request, cfg, std::move(model), log, outcome);
  } catch (const config::ConfigError& e) {
    log_config_error(log, e);
  } catch (const std::exception& e) {
    log.write(LogLevel::kError, e.what());
  }
  log.error("exception in command: ", request.command);
  return 1;
}

}  // namespace openbpu::pipeline
