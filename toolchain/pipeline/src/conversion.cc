#include "openbpu/pipeline/conversion.h"

#include "openbpu/pipeline/backend.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>

#include "openbpu/bpu_support/partitioner.h"
#include "openbpu/calibration/bias_correction.h"
#include "openbpu/calibration/calibration_dataset.h"
#include "openbpu/calibration/calibration_nodes.h"
#include "openbpu/calibration/calibrator.h"
#include "openbpu/calibration/qdq_thresholds.h"
#include "openbpu/common/error.h"
#include "openbpu/config/config_error.h"
#include "openbpu/frontend/caffe_model.h"
#include "openbpu/frontend/onnx_model.h"
#include "openbpu/frontend/shape_inference.h"
#include "openbpu/passes/pipeline.h"
#include "openbpu/pipeline/input_batch.h"
#include "openbpu/pipeline/model_edges.h"
#include "openbpu/pipeline/preprocess.h"
#include "openbpu/pipeline/report.h"
#include "openbpu/quantization/plan.h"
#include "openbpu/quantization/quantizer.h"
#include "openbpu/simulator/march.h"

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

// A deep copy of a model (the IR shares graphs between Model copies).
ir::Model copy_model(const ir::Model& model, const std::string& origin) {
  return frontend::load_onnx_from_bytes(frontend::serialize_onnx(model), origin, std::filesystem::path(origin).parent_path());
}

// Every intermediate value type recomputed from the graph inputs.
// The model file as errors name it: the ONNX file, or the Caffe weights.
std::string model_origin(const config::CompileConfig& cfg) {
  return cfg.model.onnx_model.empty() ? cfg.model.caffe_model : cfg.model.onnx_model;
}

void refresh_types(ir::Model& model) { frontend::infer_shapes(model, /*recompute=*/true); }

std::string dtype_text(const ir::TensorType& t) {
  std::string s = t.to_string();
  const size_t bracket = s.find('[');
  std::string dt = bracket == std::string::npos ? s : s.substr(0, bracket);
  for (char& c : dt) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return dt;
}

std::string dims_text(const ir::TensorType& t) {
  if (!t.shape) return "[*]";
  std::string out = "[";
  for (size_t i = 0; i < t.shape->size(); ++i) {
    const ir::Dim& d = (*t.shape)[i];
    out += (i ? ", " : "") + (d.is_known() ? std::to_string(d.value) : (d.symbol.empty() ? "?" : d.symbol));
  }
  return out + "]";
}

// The "Input ONNX Model Information" block.
void log_model_information(Log& log, const ir::Model& model) {
  log.info("Input ONNX Model Information:");
  log.info("ONNX IR version:          ", model.ir_version);
  std::string opsets;
  for (const ir::OpsetImport& o : model.opsets) {
    opsets += (opsets.empty() ? "" : ", ") + std::string("'") + (o.domain.empty() ? "ai.onnx" : o.domain) + " v" +
              std::to_string(o.version) + "'";
  }
  log.info("Opset version:            [", opsets, "]");
  log.info("Producer:                 ", model.producer_name, model.producer_version.empty() ? "" : " v",
           model.producer_version);
  log.info("Domain:                   ", model.domain.empty() ? "None" : model.domain);
  log.info("Version:                  ", model.model_version);
  log.info("Graph input:");
  for (const ir::Value* v : model.graph->inputs()) {
    if (v->is_constant()) continue;
    log.info("    ", v->name(), ":", std::string(v->name().size() < 16 ? 16 - v->name().size() : 1, ' '),
             "shape=", dims_text(v->type()), ", dtype=", dtype_text(v->type()));
  }
  log.info("Graph output:");
  for (const ir::Value* v : model.graph->outputs()) {
    log.info("    ", v->name(), ":", std::string(v->name().size() < 16 ? 16 - v->name().size() : 1, ' '),
             "shape=", dims_text(v->type()), ", dtype=", dtype_text(v->type()));
  }
}

void save_stage(Log& log, const ir::Model& model, const fs::path& path) {
  log.info("Saving model to: ", path.string(), ".");
  frontend::save_onnx(model, path);
}

// Placement overrides from node_info ON / run_on_cpu / run_on_bpu.
// node_info ON / run_on_cpu / run_on_bpu, then quant_config qtype float32 / float16: such a node
// stays in float on the CPU (the virtual BPU has no float unit; float16 is computed in float32,
// which the log says) unless the config puts it on the BPU explicitly.
bpu_support::PlacementOverrides placement_overrides(const config::CompileConfig& cfg, const ir::Graph& graph, Log& log) {
  bpu_support::PlacementOverrides o;
  for (const auto& [name, setting] : cfg.node_settings()) {
    if (!setting.on) continue;
    (*setting.on == config::ExecutionUnit::kCpu ? o.run_on_cpu : o.run_on_bpu).insert(name);
  }
  if (!cfg.calibration.quant_config) return o;
  for (const ir::Node* n : graph.nodes()) {
    const config::QuantDataType q = cfg.calibration.quant_config->qtype_for(n->name(), n->op_type());
    if (q != config::QuantDataType::kFloat32 && q != config::QuantDataType::kFloat16) continue;
    if (o.run_on_bpu.count(n->name()) || !o.run_on_cpu.insert(n->name()).second) continue;
    log.info("node '", n->name(), "' (", n->op_type(), ") stays in float on the CPU (quant_config qtype ",
             q == config::QuantDataType::kFloat16 ? "float16, computed in float32: the virtual BPU has no float16 unit"
                                                  : "float32",
             ")");
  }
  if (cfg.calibration.quant_config->model_config.activation.asymmetric.value_or(false)) {
    log.warning("quant_config activation asymmetric: true is not supported; activations are quantized symmetrically");
  }
  return o;
}

int model_output_bits(const config::CompileConfig& cfg) {
  int bits = 32;
  for (const config::OptimizationRule& r : cfg.calibration.optimization) {
    if (r.kind == config::OptimizationRule::Kind::kModelOutput) {
      bits = r.data_type == config::QuantDataType::kInt16 ? 16 : 8;
    }
  }
  if (cfg.calibration.quant_config) {
    const auto t = cfg.calibration.quant_config->model_config.model_output_type;
    if (t == config::QuantDataType::kInt8) bits = 8;
    if (t == config::QuantDataType::kInt16) bits = 16;
  }
  return bits;
}

// The calibrator's points: exactly the plan's tensors.
std::vector<calibration::CalibrationPoint> planned_points(const quantization::QuantizationPlan& plan) {
  std::vector<calibration::CalibrationPoint> points;
  for (const quantization::CalibrationTarget& t : plan.calibration) {
    calibration::CalibrationPoint p;
    p.tensor = t.tensor;
    p.kind = t.weight ? calibration::CalibrationKind::kWeight : calibration::CalibrationKind::kActivation;
    p.axis = t.axis;
    p.nodes = t.nodes;
    points.push_back(std::move(p));
  }
  return points;
}

// Nodes the config asks to compute in int16 (node_info InputType/OutputType, set_node_data_type,
// set_all_nodes_int16, quant_config), by node name.
std::vector<std::string> int16_nodes(const config::CompileConfig& cfg, const ir::Graph& graph) {
  std::vector<std::string> out;
  bool all = false;
  for (const config::OptimizationRule& r : cfg.calibration.optimization) {
    if (r.kind == config::OptimizationRule::Kind::kAllNodes) all = true;
  }
  const auto settings = cfg.node_settings();
  for (const ir::Node* n : graph.nodes()) {
    bool wide = all;
    auto it = settings.find(n->name());
    if (it != settings.end()) {
      const config::NodeSetting& s = it->second;
      if (s.input_type == config::QuantDataType::kInt16 || s.output_type == config::QuantDataType::kInt16) wide = true;
      for (const auto& [k, t] : s.input_type_by_index) {
        if (t == config::QuantDataType::kInt16) wide = true;
      }
    }
    for (const config::OptimizationRule& r : cfg.calibration.optimization) {
      if ((r.kind == config::OptimizationRule::Kind::kOpInput || r.kind == config::OptimizationRule::Kind::kOpOutput) &&
          r.data_type == config::QuantDataType::kInt16 && r.op_type == n->op_type()) {
        wide = true;
      }
    }
    if (cfg.calibration.quant_config &&
        cfg.calibration.quant_config->qtype_for(n->name(), n->op_type()) == config::QuantDataType::kInt16) {
      wide = true;
    }
    if (wide) out.push_back(n->name());
  }
  return out;
}

// Softmax nodes on the BPU compute in int16 where the march has int16 (int8 probabilities have
// steps of 1/127, too coarse to rank close classes), unless the config asks for int8 for them
// (set_Softmax_input_int8 / set_Softmax_output_int8, node_info InputType/OutputType int8).
std::vector<std::string> default_int16_softmax(const config::CompileConfig& cfg,
                                               const quantization::QuantizationPlan& plan) {
  for (const config::OptimizationRule& r : cfg.calibration.optimization) {
    if ((r.kind == config::OptimizationRule::Kind::kOpInput || r.kind == config::OptimizationRule::Kind::kOpOutput) &&
        r.data_type == config::QuantDataType::kInt8 && r.op_type == "Softmax") {
      return {};
    }
  }
  const auto settings = cfg.node_settings();
  std::vector<std::string> out;
  for (const bpu_support::NodePlacement& p : plan.partition.nodes) {
    if (p.unit != bpu_support::Unit::kBpu || p.node->op_type() != "Softmax" || !p.node->domain().empty()) continue;
    auto it = settings.find(p.node->name());
    if (it != settings.end() && (it->second.input_type == config::QuantDataType::kInt8 ||
                                 it->second.output_type == config::QuantDataType::kInt8)) {
      continue;
    }
    out.push_back(p.node->name());
  }
  return out;
}

// calibration_type default / mix on a march with int16: the nodes whose quantization alone
// costs the most output cosine (the sensitivity ranking) compute in int16, their tensors with
// abs-max thresholds (int16 has the resolution that clipping buys int8). At most a quarter of
// the ranked nodes, only those below kInt16Cutoff.
constexpr double kInt16Cutoff = 0.9999;

void promote_sensitive_nodes(const config::CompileConfig& cfg, const simulator::MarchSpec& march,
                             const calibration::CalibrationReport& report, ir::Model& calibrated, Log& log) {
  const auto type = cfg.calibration.calibration_type;
  if (type != config::CalibrationType::kDefault && type != config::CalibrationType::kMix) return;
  if (report.sensitivity.empty()) return;
  if (!march.supports_int16()) {
    log.info("march ", march.name, " has no int16 computation: sensitive nodes stay int8");
    return;
  }
  const size_t limit = std::max<size_t>(1, report.sensitivity.size() / 4);
  auto nodes = calibration::calibration_nodes(*calibrated.graph);
  size_t promoted = 0;
  for (const calibration::NodeSensitivity& s : report.sensitivity) {
    if (s.cosine >= kInt16Cutoff || promoted == limit) break;
    for (ir::Node* c : calibration::set_node_calibration_bits(*calibrated.graph, s.node, 16)) {
      const std::string tensor = c->input(0) ? c->input(0)->name() : std::string();
      auto st = report.statistics.find(tensor);
      if (st != report.statistics.end() && st->second.abs_max > 0 &&
          c->attrs().get_floats("thresholds", {}).size() == 1) {
        calibration::set_calibration_thresholds(*c, {st->second.abs_max}, "max");
      }
    }
    ++promoted;
    log.info("node '", s.node, "' (", s.op_type, ", output cosine ", fixed(s.cosine, 6),
             " with only it quantized) computes in int16");
  }
  log.info(promoted, " sensitive node", promoted == 1 ? "" : "s", " promoted to int16 (cutoff ",
           fixed(kInt16Cutoff, 4), ", at most ", limit, ")");
}

struct Inputs {
  std::optional<calibration::CalibrationDataset> dataset;
  calibration::SampleStream samples;
  std::map<std::string, kernels::Tensor> first_feeds;  // for the comparison tables
};

// Reads every sample once: shapes and files are checked before anything is written.
Inputs prepare_inputs(const config::CompileConfig& cfg, const ir::Model& original, Log& log) {
  Inputs in;
  const auto type = cfg.calibration.calibration_type;
  if (type == config::CalibrationType::kSkip || cfg.calibration.cal_data_dir.empty()) {
    in.samples = calibration::random_samples(original, 1, 0);
    in.first_feeds = in.samples.feeds(0);
    return in;
  }
  in.dataset.emplace(calibration::calibration_sources(cfg));
  const calibration::CalibrationDataset& ds = *in.dataset;
  for (size_t i = 0; i < ds.sources().size(); ++i) {
    log.info("input '", ds.sources()[i].input_name, "': ", ds.size(), " calibration samples in ",
             ds.sources()[i].dir.string(), ", first ", ds.file(i, 0).filename().string());
  }
  for (size_t k = 0; k < ds.size(); ++k) {
    auto feeds = ds.model_feeds(k);
    if (k == 0) in.first_feeds = std::move(feeds);
  }
  log.info("num of calibration data: ", ds.size());
  return in;  // the caller makes `samples` once `in` has its final address
}

// The samples with a console progress line (count, rate, ETA) per pass over them.
calibration::SampleStream with_progress(const calibration::SampleStream& samples, Log& log) {
  auto progress = std::make_shared<std::optional<Progress>>();
  calibration::SampleStream out;
  out.count = samples.count;
  out.feeds = [samples, progress, &log](size_t index) {
    if (index == 0) progress->emplace(log, "calibration samples", samples.count);
    auto feeds = samples.feeds(index);
    if (*progress) {
      (*progress)->step();
      if (index + 1 == samples.count) {
        (*progress)->finish();
        progress->reset();
      }
    }
    return feeds;
  };
  return out;
}

void log_config_error(Log& log, const config::ConfigError& e) {
  for (const std::string& line : e.lines()) log.error(line);
  log.error(config::kParseFailedLine);
}

// The conversion after the config is known and checked.
int convert(const ConversionRequest& request, config::CompileConfig& cfg, ir::Model model, Log& log) {
  const auto total_start = Clock::now();
  const simulator::MarchSpec& march = simulator::march_spec(cfg.model.march);
  const bool fast = request.fast_perf || request.checker;

  // calibration_type load: the thresholds come from the model's QuantizeLinear nodes, then the
  // QDQ pairs go and the conversion continues on the float model.
  std::map<std::string, calibration::LoadedThreshold> loaded;
  if (cfg.calibration.calibration_type == config::CalibrationType::kLoad) {
    loaded = calibration::load_qdq_thresholds(model);
    if (loaded.empty()) {
      raise("calibration_type 'load': model ", model_origin(cfg),
            " has no QuantizeLinear with a constant scale to read thresholds from (load takes a "
            "QAT/QDQ model; use default, mix, kl, max or skip for a float model)");
    }
    const auto reports = passes::run_passes(model, {{"qdq_removal", {}}});
    refresh_types(model);
    log.info("calibration_type load: thresholds for ", loaded.size(), " tensor names read from the QDQ model; ",
             reports.front().rewrites, " QuantizeLinear/DequantizeLinear pairs and dequantized constants removed");
  }
  for (const std::string& line : apply_output_nodes(model, cfg.model.output_nodes)) log.info(line);
  Inputs inputs;
  if (!fast) {
    // Stage 1 on a copy first: the calibration samples are checked against the model inputs
    // they will feed before anything is written.
    ir::Model probe = copy_model(model, model_origin(cfg));
    insert_preprocess(probe, cfg);
    refresh_types(probe);
    inputs = prepare_inputs(cfg, probe, log);
  }

  log.info("Start to Horizon NN Model Convert.");
  log.info("The specified model compilation architecture: ", march.name, ".");
  log.info("Start to prepare the onnx model.");
  for (const std::string& line : insert_preprocess(model, cfg)) log.info(line);
  refresh_types(model);
  if (fast) inputs = prepare_inputs(cfg, model, log);
  if (inputs.dataset) inputs.samples = calibration::dataset_samples(*inputs.dataset);
  log_model_information(log, model);

  const fs::path dir = cfg.model.working_dir;
  const std::string prefix = cfg.model.output_model_file_prefix;
  const bool write = !request.checker;
  if (write) {
    if (!fs::exists(dir)) {
      log.info("working_dir does not exist. Creating working_dir: ", fs::absolute(dir).string());
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) raise("cannot create working_dir '", dir.string(), "': ", ec.message());
    }
    if (!fs::is_directory(dir)) raise("working_dir '", dir.string(), "' is not a directory");
  }
  const auto& debug = cfg.model.debug_mode;
  if (write && inputs.dataset &&
      std::find(debug.begin(), debug.end(), config::DebugMode::kDumpCalibrationData) != debug.end()) {
    calibration::dump_calibration_data(*inputs.dataset, dir);
    log.info("debug_mode dump_calibration_data: the model feeds of every sample are in ",
             (dir / "calibration_data").string());
  }
  std::vector<std::pair<std::string, double>> times;
  if (write) save_stage(log, model, dir / (prefix + "_original_float_model.onnx"));
  times.emplace_back("prepare", seconds_since(total_start));

  // Stage 2.
  auto t = Clock::now();
  log.info("Start to optimize the onnx model.");
  passes::PipelineOptions popts;
  popts.log = [&](const std::string& line) { log.info(line); };
  popts.refresh_types = refresh_types;
  std::optional<ir::Model> before_passes;
  if (!loaded.empty() && !fast) before_passes.emplace(copy_model(model, model_origin(cfg)));
  passes::run_passes(model, passes::default_pipeline(), popts);
  refresh_types(model);
  if (before_passes) {
    const std::vector<std::string> moved = calibration::drop_moved_thresholds(
        *before_passes, model, inputs.first_feeds, loaded, request.threads);
    if (!moved.empty()) {
      log.info("calibration_type load: ", moved.size(), " tensor name", moved.size() == 1 ? "" : "s",
               " of the QDQ model hold other values after optimization (e.g. '", moved.front(),
               "'); their loaded thresholds are not used");
    }
  }
  if (write) save_stage(log, model, dir / (prefix + "_optimized_float_model.onnx"));
  times.emplace_back("optimize", seconds_since(t));

  // The plan: placement and the tensors the quantized model stores as integers.
  quantization::QuantizeOptions qopts;
  qopts.plan.overrides = placement_overrides(cfg, *model.graph, log);
  qopts.plan.model_output_bits = model_output_bits(cfg);
  const quantization::QuantizationPlan plan = quantization::plan_quantization(*model.graph, march, qopts.plan);
  log.info("The model has ", plan.partition.nodes.size(), " nodes: ", plan.partition.bpu_node_count(), " on the BPU in ",
           plan.partition.subgraph_count, " subgraph", plan.partition.subgraph_count == 1 ? "" : "s", ", ",
           plan.partition.nodes.size() - static_cast<size_t>(plan.partition.bpu_node_count()), " on the CPU.");
  for (const bpu_support::NodePlacement& p : plan.partition.nodes) {
    if (p.unit != bpu_support::Unit::kCpu || p.reason.empty()) continue;
    if (p.bpu_capable) {  // a placement choice, not a limit of the BPU
      log.info("node '", p.node->name(), "' (", p.node->op_type(), ") runs on the CPU: ", p.reason);
    } else {
      log.write(request.checker ? LogLevel::kWarning : LogLevel::kInfo,
                str_cat("node '", p.node->name(), "' (", p.node->op_type(), ") cannot run on the BPU of ", march.name,
                        ": ", p.reason, "; it runs on the CPU"));
    }
  }

  // Stage 3.
  t = Clock::now();
  log.info("Start to calibrate the model.");
  ir::Model calibrated = copy_model(model, model_origin(cfg));
  calibration::CalibrationOptions copts = calibration::calibration_options(cfg);
  copts.points = planned_points(plan);
  copts.loaded = loaded;
  copts.executor.threads = request.threads;
  copts.log = [&](const std::string& line) { log.info(line); };
  const bool random = copts.type == config::CalibrationType::kSkip || !inputs.dataset;
  if (random && copts.type != config::CalibrationType::kLoad) copts.type = config::CalibrationType::kSkip;
  const calibration::SampleStream samples = with_progress(inputs.samples, log);
  const calibration::CalibrationReport report =
      calibration::calibrate(calibrated, random ? nullptr : &samples, copts);
  // hb_compile, as the original: *_calibrated_model.onnx is the calibration's result and
  // *_ptq_model.onnx the model after the quantization settings (int16, bias correction). hb_mapper
  // has one file, the latter, under the calibrated name.
  const bool ptq_file = cfg.flavour == config::ConfigFlavour::kHbCompile;
  if (write && ptq_file) save_stage(log, calibrated, dir / (prefix + "_calibrated_model.onnx"));
  promote_sensitive_nodes(cfg, march, report, calibrated, log);
  if (march.supports_int16()) {
    for (const std::string& name : default_int16_softmax(cfg, plan)) {
      calibration::set_node_calibration_bits(*calibrated.graph, name, 16);
      log.info("node '", name, "' (Softmax on the BPU) computes in int16 (default)");
    }
  }
  const std::vector<std::string> wide = int16_nodes(cfg, *calibrated.graph);
  if (!wide.empty()) {
    if (!march.supports_int16()) {
      log.warning("march ", march.name, " has no int16 computation; ", wide.size(),
                  " node(s) configured for int16 stay int8");
    } else {
      for (const std::string& name : wide) {
        calibration::set_node_calibration_bits(*calibrated.graph, name, 16);
        log.info("node '", name, "' computes in int16 (config)");
      }
    }
  }
  if (!random) {
    // After the search and the int16 promotion: those score nodes with the float weights of the
    // others, which a corrected bias would no longer match.
    const calibration::BiasCorrectionSummary bc = calibration::correct_conv_biases(calibrated, report.statistics);
    log.info("Bias correction: ", bc.corrected, " Conv bias", bc.corrected == 1 ? "" : "es",
             " corrected for the mean shift of their quantized weights",
             bc.corrected ? str_cat(" (largest shift ", fixed(bc.largest, 4), " of |bias|+1 at ", bc.largest_node, ")") : std::string(), ".");
  }
  if (write) save_stage(log, calibrated, dir / (prefix + (ptq_file ? "_ptq_model.onnx" : "_calibrated_model.onnx")));
  times.emplace_back("calibrate", seconds_since(t));

  // Stage 4.
  t = Clock::now();
  log.info("Start to quantize the model.");
  ir::Model stripped = copy_model(calibrated, model_origin(cfg));
  const auto thresholds = quantization::strip_calibration(stripped);
  refresh_types(stripped);
  quantization::QuantizeResult quantized = quantization::quantize_model(stripped, thresholds, march, qopts);
  times.emplace_back("quantize", seconds_since(t));

  // Report.
  t = Clock::now();
  if (request.checker) {
    // Random calibration data: similarities would mean nothing, so the table has none.
    log.info("The converted model node information:");
    log.write(LogLevel::kInfo, node_table(quantized.nodes, nullptr));
  } else {
    const ModelComparison cmp =
        compare_models(model, quantized, inputs.first_feeds, inputs.first_feeds, request.threads);
    log.info("The main quantized node information:");
    log.write(LogLevel::kInfo, node_table(quantized.nodes, &cmp));
    log.info("The quantized model output:");
    log.write(LogLevel::kInfo, output_table(cmp));
  }
  times.emplace_back("report", seconds_since(t));
  // remove_node_type / remove_node_name change the model's interface: after the comparison.
  for (const std::string& line : remove_edge_nodes(quantized.model, cfg.model.remove_node_type, cfg.model.remove_node_name)) {
    log.info(line);
  }
  if (cfg.input.input_batch > 1) {
    // Checked on distinct random items, so that a model mixing the batch shows.
    const calibration::SampleStream items = calibration::random_samples(quantized.model, static_cast<size_t>(cfg.input.input_batch), 7);
    std::vector<std::map<std::string, kernels::Tensor>> feeds;
    for (size_t i = 0; i < items.count; ++i) feeds.push_back(items.feeds(i));
    for (const std::string& line :
         apply_input_batch(quantized.model, cfg.input.input_batch, cfg.input.separate_batch, feeds, request.threads).log) {
      log.info(line);
    }
  }
  if (write) save_stage(log, quantized.model, dir / (prefix + "_quantized_model.onnx"));
  log.info("End to Horizon NN Model Convert.");
  if (request.checker) {
    std::string timing;
    for (const auto& [stage, s] : times) timing += (timing.empty() ? "" : ", ") + stage + " " + fixed(s, 2) + " s";
    log.info("Conversion time: ", timing, " (total ", fixed(seconds_since(total_start), 2), " s)");
    log.info("check model ", request.model_file, " for march ", march.name, ": ", plan.partition.subgraph_count,
             " BPU subgraph", plan.partition.subgraph_count == 1 ? "" : "s", ", ",
             plan.partition.nodes.size() - static_cast<size_t>(plan.partition.bpu_node_count()), " CPU node(s)");
    log.info("End to check the model.");
    return 0;
  }

  // Stage 5: the backend.
  t = Clock::now();
  // Shapes come from one run; the interface may have changed (remove_node_type, input_batch), so
  // the run uses data of the quantized model's own input types.
  const std::map<std::string, kernels::Tensor> quantized_feeds = calibration::random_samples(quantized.model, 1, 7).feeds(0);
  compile_model_file(cfg, march, quantized.model, quantized_feeds, dir, prefix, log, request.threads);
  times.emplace_back("compile", seconds_since(t));
  std::string timing;
  for (const auto& [stage, s] : times) timing += (timing.empty() ? "" : ", ") + stage + " " + fixed(s, 2) + " s";
  log.info("Conversion time: ", timing, " (total ", fixed(seconds_since(total_start), 2), " s)");
  log.info("End Model Convert");
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
  cfg.compiler.optimize_level =
      request.flavour == config::ConfigFlavour::kHbMapper ? config::OptimizeLevel::kO3 : config::OptimizeLevel::kO2;
  cfg.calibration.calibration_type = config::CalibrationType::kSkip;
  if (!request.checker) {
    // The fastest board model: the removable CPU operators at the model's head and tail go, as
    // the original's --fast-perf strips them (the model then takes and gives integer tensors).
    cfg.model.remove_node_type = {config::RemovableNodeType::kQuantize, config::RemovableNodeType::kTranspose,
                                  config::RemovableNodeType::kDequantize, config::RemovableNodeType::kCast,
                                  config::RemovableNodeType::kReshape};
  }
  return cfg;
}

int run_conversion(const ConversionRequest& request, Log& log) {
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
    const std::string model_file = model_origin(cfg);
    ir::Model model = caffe ? frontend::load_caffe(cfg.model.prototxt, cfg.model.caffe_model)
                            : frontend::load_onnx(model_file);
    if (caffe) {
      log.info("Caffe model ", cfg.model.prototxt, " + ", cfg.model.caffe_model, " read: ",
               model.graph->nodes().size(), " ONNX nodes (opset ", frontend::kCaffeOnnxOpset, ")");
    }
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
    return convert(request, cfg, std::move(model), log);
  } catch (const config::ConfigError& e) {
    log_config_error(log, e);
  } catch (const std::exception& e) {
    log.write(LogLevel::kError, e.what());
  }
  log.error("exception in command: ", request.command);
  return 1;
}

}  // namespace openbpu::pipeline
