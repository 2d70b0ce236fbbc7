// The conversion's stages (conversion_stages.h).
#include "conversion_stages.h"

#include <algorithm>
#include <set>
#include <chrono>
#include <filesystem>

#include "openbpu/bpu_support/partitioner.h"
#include "openbpu/calibration/weight_rounding.h"
#include "openbpu/calibration/calibration_nodes.h"
#include "openbpu/common/error.h"
#include "openbpu/frontend/onnx_model.h"
#include "openbpu/frontend/shape_inference.h"
#include "openbpu/ir/verifier.h"
#include "openbpu/passes/pipeline.h"
#include "openbpu/pipeline/backend.h"
#include "openbpu/pipeline/input_batch.h"
#include "openbpu/pipeline/int16_promotion.h"
#include "openbpu/pipeline/model_edges.h"
#include "openbpu/pipeline/preprocess.h"
#include "openbpu/pipeline/report.h"
#include "openbpu/quantization/plan.h"

namespace openbpu::pipeline::stages {

namespace fs = std::filesystem;

std::string model_origin(const config::CompileConfig& cfg) {
  return cfg.model.onnx_model.empty() ? cfg.model.caffe_model : cfg.model.onnx_model;
}

void Context::save(const ir::Model& model, const std::string& suffix) const {
  if (!write) return;
  const fs::path path = dir / (prefix + suffix);
  log.info("Saving model to: ", path.string(), ".");
  frontend::save_onnx(model, path);
}

namespace {

// A deep copy of a model (the IR shares graphs between Model copies).
ir::Model copy_model(const ir::Model& model, const std::string& origin) {
  return frontend::load_onnx_from_bytes(frontend::serialize_onnx(model), origin, std::filesystem::path(origin).parent_path());
}

// Every intermediate value type recomputed from the graph inputs.
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
  for (const config::OptimizationRule& r : cfg.calibration.optimization) {
    o.edge_operators_on_bpu = o.edge_operators_on_bpu || r.kind == config::OptimizationRule::Kind::kEdgeOperatorsOnBpu;
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

// The config's node settings by the graph's node names: a setting naming a node stage 2 expanded
// (an unrolled LSTM or Loop) applies to every node made of it (ir::nodes_standing_for).
std::map<std::string, config::NodeSetting> settings_by_node(const config::CompileConfig& cfg, const ir::Graph& graph) {
  std::map<std::string, config::NodeSetting> out;
  for (const auto& [name, setting] : cfg.node_settings()) {
    for (const ir::Node* n : ir::nodes_standing_for(graph, name)) out.emplace(n->name(), setting);
  }
  return out;
}

// Nodes the config asks to compute in int16 (node_info InputType/OutputType, set_node_data_type,
// set_all_nodes_int16, set_model_output_int16 for the nodes producing a graph output,
// quant_config), by node name.
std::vector<std::string> int16_nodes(const config::CompileConfig& cfg, const ir::Graph& graph) {
  std::vector<std::string> out;
  bool all = false;
  for (const config::OptimizationRule& r : cfg.calibration.optimization) {
    if (r.kind == config::OptimizationRule::Kind::kAllNodes) all = true;
  }
  std::set<const ir::Node*> output_producers;
  if (model_output_bits(cfg) == 16) {
    for (const ir::Value* v : graph.outputs()) {
      const ir::Node* n = v->producer();
      while (n != nullptr && n->op_type() == calibration::kCalibrationOp) n = n->input(0)->producer();
      output_producers.insert(n);
    }
  }
  const auto settings = settings_by_node(cfg, graph);
  for (const ir::Node* n : graph.nodes()) {
    bool wide = all || output_producers.count(n) != 0;
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
std::vector<std::string> default_int16_softmax(const config::CompileConfig& cfg, const ir::Graph& graph,
                                               const quantization::QuantizationPlan& plan) {
  for (const config::OptimizationRule& r : cfg.calibration.optimization) {
    if ((r.kind == config::OptimizationRule::Kind::kOpInput || r.kind == config::OptimizationRule::Kind::kOpOutput) &&
        r.data_type == config::QuantDataType::kInt8 && r.op_type == "Softmax") {
      return {};
    }
  }
  const auto settings = settings_by_node(cfg, graph);
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

// Node `name` computes in int16; after a threshold search (calibration default / mix) its tensors
// take abs-max thresholds: int16 has the resolution that clipping buys int8.
void widen_to_int16(const Options& options, const calibration::CalibrationReport& report, ir::Model& calibrated,
                    const std::string& name) {
  const auto type = options.calibration.type;
  const bool searched = type == config::CalibrationType::kDefault || type == config::CalibrationType::kMix;
  for (ir::Node* c : calibration::set_node_calibration_bits(*calibrated.graph, name, 16)) {
    if (!searched) continue;
    const std::string tensor = c->input(0) ? c->input(0)->name() : std::string();
    auto st = report.statistics.find(tensor);
    if (st != report.statistics.end() && st->second.abs_max > 0 && c->attrs().get_floats("thresholds", {}).size() == 1) {
      calibration::set_calibration_thresholds(*c, {st->second.abs_max}, "max");
    }
  }
}

// calibration_type default / mix on a march with int16: the sensitive nodes int16 pays for most
// within a latency budget (int16_promotion.h) compute in int16.
void promote_sensitive_nodes(const Options& options, const simulator::MarchSpec& march,
                             const calibration::CalibrationReport& report, ir::Model& calibrated, Log& log) {
  const auto type = options.calibration.type;
  if (type != config::CalibrationType::kDefault && type != config::CalibrationType::kMix) return;
  if (report.sensitivity.empty()) return;
  if (!march.supports_int16()) {
    log.info("march ", march.name, " has no int16 computation: sensitive nodes stay int8");
    return;
  }
  const Int16Choice choice = choose_int16_nodes(*calibrated.graph, report.sensitivity, march);
  std::map<std::string, const calibration::NodeSensitivity*> ranked;
  for (const calibration::NodeSensitivity& s : report.sensitivity) ranked.emplace(s.node, &s);
  for (const std::string& node : choice.nodes) {
    widen_to_int16(options, report, calibrated, node);
    const calibration::NodeSensitivity& s = *ranked.at(node);
    log.info("node '", s.node, "' (", s.op_type, ", output score ", fixed(s.metrics.score, 6),
             " with only it quantized) computes in int16");
  }
  const size_t n = choice.nodes.size();
  const double share = choice.int8_cycles > 0 ? 100.0 * static_cast<double>(choice.added_cycles) /
                                                    static_cast<double>(choice.int8_cycles)
                                              : 0.0;
  log.info(n, " sensitive node", n == 1 ? "" : "s", " promoted to int16 (cutoff ", fixed(kInt16Cutoff, 4),
           "; estimated BPU cost +", fixed(share, 1), "% of the int8 nodes', budget +",
           fixed(100 * kInt16Budget, 0), "%)");
}

// Reads every sample once: shapes and files are checked before anything is written.
Inputs prepare_inputs(const config::CompileConfig& cfg, const Options& options, const ir::Model& original, Log& log) {
  Inputs in;
  if (options.random_samples) {
    in.samples = calibration::random_samples(original, 1, 0);
    in.first_feeds = in.samples.feeds(0);
    return in;
  }
  std::vector<calibration::CalibrationSource> sources = calibration::calibration_sources(cfg);
  for (calibration::CalibrationSource& s : sources) {
    const ir::Value* v = original.graph->find_value(s.input_name);
    if (v != nullptr && v->type().dtype != kernels::DataType::kUndefined) s.element_type = v->type().dtype;
  }
  in.dataset.emplace(std::move(sources));
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

}  // namespace

Prepared prepare(const Context& cx, ir::Model model) {
  const config::CompileConfig& cfg = cx.cfg;
  Log& log = cx.log;
  Prepared out;
  // calibration_type load: the thresholds come from the model's QuantizeLinear nodes, then the
  // QDQ pairs go and the conversion continues on the float model.
  if (cx.options.calibration.type == config::CalibrationType::kLoad) {
    out.loaded = calibration::load_qdq_thresholds(model);
    if (out.loaded.empty()) {
      raise("calibration_type 'load': model ", model_origin(cfg),
            " has no QuantizeLinear with a constant scale to read thresholds from (load takes a "
            "QAT/QDQ model; use default, mix, kl, max or skip for a float model)");
    }
    const auto reports = passes::run_passes(model, {{"qdq_removal", {}}});
    refresh_types(model);
    log.info("calibration_type load: thresholds for ", out.loaded.size(), " tensor names read from the QDQ model; ",
             reports.front().rewrites, " QuantizeLinear/DequantizeLinear pairs and dequantized constants removed");
  }
  for (const std::string& line : apply_output_nodes(model, cfg.model.output_nodes)) log.info(line);
  out.inputs = std::make_unique<Inputs>();
  Inputs& inputs = *out.inputs;
  if (!cx.fast) {
    // Stage 1 on a copy first: the calibration samples are checked against the model inputs
    // they will feed before anything is written.
    ir::Model probe = copy_model(model, model_origin(cfg));
    insert_preprocess(probe, cfg);
    refresh_types(probe);
    ir::verify_or_throw(*probe.graph, str_cat(model_origin(cfg), " with the config's inputs"));
    inputs = prepare_inputs(cfg, cx.options, probe, log);
  }

  log.info("Start to Horizon NN Model Convert.");
  log.info("The specified model compilation architecture: ", cx.march.name, ".");
  log.info("Start to prepare the onnx model.");
  for (const std::string& line : insert_preprocess(model, cfg)) log.info(line);
  refresh_types(model);
  ir::verify_or_throw(*model.graph, str_cat(model_origin(cfg), " with the config's inputs"));
  if (cx.fast) inputs = prepare_inputs(cfg, cx.options, model, log);
  if (inputs.dataset) inputs.samples = calibration::dataset_samples(*inputs.dataset);
  log_model_information(log, model);

  if (cx.write) {
    if (!fs::exists(cx.dir)) {
      log.info("working_dir does not exist. Creating working_dir: ", fs::absolute(cx.dir).string());
      std::error_code ec;
      fs::create_directories(cx.dir, ec);
      if (ec) raise("cannot create working_dir '", cx.dir.string(), "': ", ec.message());
    }
    if (!fs::is_directory(cx.dir)) raise("working_dir '", cx.dir.string(), "' is not a directory");
  }
  const auto& debug = cfg.model.debug_mode;
  if (cx.write && inputs.dataset &&
      std::find(debug.begin(), debug.end(), config::DebugMode::kDumpCalibrationData) != debug.end()) {
    calibration::dump_calibration_data(*inputs.dataset, cx.dir);
    log.info("debug_mode dump_calibration_data: the model feeds of every sample are in ",
             (cx.dir / "calibration_data").string());
  }
  cx.save(model, "_original_float_model.onnx");
  out.model = std::move(model);
  return out;
}

ir::Model optimize(const Context& cx, Prepared& prepared) {
  Log& log = cx.log;
  log.info("Start to optimize the onnx model.");
  passes::PipelineOptions popts;
  popts.log = [&](const std::string& line) { log.info(line); };
  popts.refresh_types = refresh_types;
  std::optional<ir::Model> before_passes;
  if (!prepared.loaded.empty() && !cx.fast) before_passes.emplace(copy_model(prepared.model, model_origin(cx.cfg)));
  ir::Model model = std::move(prepared.model);
  // run_on_cpu / node_info ON CPU naming an If or Loop keeps it as control flow (not flattened).
  std::vector<passes::PassInvocation> pipeline = passes::default_pipeline();
  std::string keep;
  for (const auto& [name, setting] : cx.cfg.node_settings()) {
    if (setting.on == config::ExecutionUnit::kCpu) keep += (keep.empty() ? "" : ";") + name;
  }
  for (passes::PassInvocation& p : pipeline) {
    if (p.name == "control_flow_flattening" && !keep.empty()) p.options["keep"] = keep;
  }
  passes::run_passes(model, pipeline, popts);
  refresh_types(model);
  if (before_passes) {
    const std::vector<std::string> moved = calibration::drop_moved_thresholds(
        *before_passes, model, prepared.inputs->first_feeds, prepared.loaded, cx.request.threads);
    if (!moved.empty()) {
      log.info("calibration_type load: ", moved.size(), " tensor name", moved.size() == 1 ? "" : "s",
               " of the QDQ model hold other values after optimization (e.g. '", moved.front(),
               "'); their loaded thresholds are not used");
    }
  }
  cx.save(model, "_optimized_float_model.onnx");
  return model;
}

Plan plan(const Context& cx, const ir::Model& optimized) {
  Log& log = cx.log;
  Plan out;
  out.options.plan.overrides = placement_overrides(cx.cfg, *optimized.graph, log);
  out.options.plan.model_output_bits = model_output_bits(cx.cfg);
  out.plan = quantization::plan_quantization(*optimized.graph, cx.march, out.options.plan);
  const bpu_support::Partition& partition = out.plan.partition;
  log.info("The model has ", partition.nodes.size(), " nodes: ", partition.bpu_node_count(), " on the BPU in ",
           partition.subgraph_count, " subgraph", partition.subgraph_count == 1 ? "" : "s", ", ",
           partition.nodes.size() - static_cast<size_t>(partition.bpu_node_count()), " on the CPU.");
  for (const bpu_support::NodePlacement& p : partition.nodes) {
    if (p.unit != bpu_support::Unit::kCpu || p.reason.empty()) continue;
    if (p.bpu_capable) {  // a placement choice, not a limit of the BPU
      log.info("node '", p.node->name(), "' (", p.node->op_type(), ") runs on the CPU: ", p.reason);
    } else {
      log.write(cx.request.checker ? LogLevel::kWarning : LogLevel::kInfo,
                str_cat("node '", p.node->name(), "' (", p.node->op_type(), ") cannot run on the BPU of ",
                        cx.march.name, ": ", p.reason, "; it runs on the CPU"));
    }
  }
  if (out.options.plan.overrides.edge_operators_on_bpu) {  // what the option moved
    bpu_support::PlacementOverrides plain = out.options.plan.overrides;
    plain.edge_operators_on_bpu = false;
    const bpu_support::Partition without = bpu_support::partition_graph(*optimized.graph, cx.march, plain);
    for (size_t i = 0; i < partition.nodes.size(); ++i) {
      if (partition.nodes[i].unit != bpu_support::Unit::kBpu || without.nodes[i].unit == bpu_support::Unit::kBpu) continue;
      log.info("node '", partition.nodes[i].node->name(), "' (", partition.nodes[i].node->op_type(),
               ") stays on the BPU at the model's edge (keep_edge_operators_on_bpu)");
    }
  }
  return out;
}

ir::Model calibrate(const Context& cx, const ir::Model& optimized, const Plan& plan, const Prepared& prepared) {
  const config::CompileConfig& cfg = cx.cfg;
  const simulator::MarchSpec& march = cx.march;
  Log& log = cx.log;
  log.info("Start to calibrate the model.");
  ir::Model calibrated = copy_model(optimized, model_origin(cfg));
  calibration::CalibrationOptions copts = cx.options.calibration;
  copts.points = planned_points(plan.plan);
  copts.loaded = prepared.loaded;
  copts.executor.threads = cx.request.threads;
  copts.log = [&](const std::string& line) { log.info(line); };
  const bool random = cx.options.random_samples;
  const calibration::SampleStream samples = with_progress(prepared.inputs->samples, log);
  // Weight rounding's input moments come from the statistics pass (no float pass of its own).
  calibration::WeightRoundingOptions wopts;
  wopts.executor.threads = cx.request.threads;
  std::optional<calibration::ConvMoments> moments;
  if (!random) copts.observer = &moments.emplace(optimized, samples.count, wopts);
  const calibration::CalibrationReport report = calibration::calibrate(calibrated, random ? nullptr : &samples, copts);
  for (const std::string& line : report.warnings) log.warning(line);
  // hb_compile, as the original: *_calibrated_model.onnx is the calibration's result and
  // *_ptq_model.onnx the model after the quantization settings (int16, bias correction). hb_mapper
  // has one file, the latter, under the calibrated name.
  const bool ptq_file = cfg.flavour == config::ConfigFlavour::kHbCompile;
  if (ptq_file) cx.save(calibrated, "_calibrated_model.onnx");
  promote_sensitive_nodes(cx.options, march, report, calibrated, log);
  if (march.supports_int16()) {
    for (const std::string& name : default_int16_softmax(cfg, *optimized.graph, plan.plan)) {
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
        widen_to_int16(cx.options, report, calibrated, name);
        log.info("node '", name, "' computes in int16 (config)");
      }
    }
  }
  if (!random) {
    // After the search and the int16 promotion: those score nodes with the float weights of the
    // others, which a corrected bias would no longer match.
    const calibration::WeightRoundingSummary wr =
        calibration::round_conv_weights(calibrated, optimized, prepared.inputs->samples, wopts, &*moments);
    log.info("Weight rounding: ", wr.rounded, " Conv weight", wr.rounded == 1 ? "" : "s",
             " rounded for their calibration inputs",
             wr.rounded ? str_cat(" (output error at ", fixed(wr.median_error_ratio, 3),
                                  " of rounding to nearest, median)")
                        : std::string(),
             "; ", wr.corrected, " Conv bias", wr.corrected == 1 ? "" : "es",
             " corrected for the mean shift of their quantized weights.");
  }
  cx.save(calibrated, ptq_file ? "_ptq_model.onnx" : "_calibrated_model.onnx");
  return calibrated;
}

quantization::QuantizeResult quantize(const Context& cx, const ir::Model& calibrated, const Plan& plan) {
  cx.log.info("Start to quantize the model.");
  ir::Model stripped = copy_model(calibrated, model_origin(cx.cfg));
  const auto thresholds = quantization::strip_calibration(stripped);
  refresh_types(stripped);
  return quantization::quantize_model(stripped, thresholds, cx.march, plan.options);
}

void report(const Context& cx, const ir::Model& optimized, const quantization::QuantizeResult& quantized,
            const Inputs& inputs) {
  Log& log = cx.log;
  if (cx.request.checker) {
    // Random calibration data: similarities would mean nothing, so the table has none.
    log.info("The converted model node information:");
    log.write(LogLevel::kInfo, node_table(quantized.nodes, nullptr));
    return;
  }
  const ModelComparison cmp = compare_models(optimized, quantized, inputs.first_feeds, inputs.first_feeds, cx.request.threads);
  log.info("The main quantized node information:");
  log.write(LogLevel::kInfo, node_table(quantized.nodes, &cmp));
  log.info("The quantized model output:");
  log.write(LogLevel::kInfo, output_table(cmp));
}

void finish_quantized_model(const Context& cx, ir::Model& quantized) {
  const config::CompileConfig& cfg = cx.cfg;
  for (const std::string& line : remove_edge_nodes(quantized, cfg.model.remove_node_type, cfg.model.remove_node_name)) {
    cx.log.info(line);
  }
  if (cfg.input.input_batch > 1) {
    // Checked on distinct random items, so that a model mixing the batch shows.
    const calibration::SampleStream items =
        calibration::random_samples(quantized, static_cast<size_t>(cfg.input.input_batch), 7);
    std::vector<std::map<std::string, kernels::Tensor>> feeds;
    for (size_t i = 0; i < items.count; ++i) feeds.push_back(items.feeds(i));
    for (const std::string& line :
         apply_input_batch(quantized, cfg.input.input_batch, cfg.input.separate_batch, feeds, cx.request.threads).log) {
      cx.log.info(line);
    }
  }
  cx.save(quantized, "_quantized_model.onnx");
}

void compile(const Context& cx, const ir::Model& quantized) {
  // Shapes come from one run; the interface may have changed (remove_node_type, input_batch), so
  // the run uses data of the quantized model's own input types.
  const std::map<std::string, kernels::Tensor> feeds = calibration::random_samples(quantized, 1, 7).feeds(0);
  compile_model_file(cx.cfg, cx.options.compile, quantized, feeds, cx.dir, cx.prefix, cx.log, cx.request.threads);
}

Options derive_options(const config::CompileConfig& cfg, const simulator::MarchSpec& march) {
  Options o;
  o.calibration = calibration::calibration_options(cfg);
  o.random_samples = o.calibration.type == config::CalibrationType::kSkip || cfg.calibration.cal_data_dir.empty();
  if (o.random_samples && o.calibration.type != config::CalibrationType::kLoad) {
    o.calibration.type = config::CalibrationType::kSkip;
  }
  o.compile = compile_options(cfg, march);
  return o;
}

}  // namespace openbpu::pipeline::stages
