// Stage 5: the backend (backend.h).
#include "openbpu/pipeline/backend.h"

#include <chrono>
#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"
#include "openbpu/compiler/model_writer.h"
#include "openbpu/executor/float_executor.h"
#include "openbpu/format/model_file.h"
#include "openbpu/model_tools/perf_report.h"
#include "openbpu/simulator/program.h"

namespace openbpu::pipeline {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string join(const std::vector<double>& values) {
  std::string s;
  for (double v : values) s += (s.empty() ? "" : " ") + fixed(v, 6);
  return s;
}

std::string join_ints(const std::vector<int64_t>& values, const char* sep) {
  std::string s;
  for (int64_t v : values) s += (s.empty() ? "" : sep) + std::to_string(v);
  return s;
}

// "--O3 --core-num 1 --latency": the options as a command line, as the original logs them.
std::string options_text(const compiler::CompileOptions& o) {
  std::string s = "--march " + std::string(o.march->name) + " --O" + std::to_string(o.optimize_level) +
                  " --core-num " + std::to_string(o.core_num);
  switch (o.compile_mode) {
    case compiler::CompileMode::kLatency: s += " --latency"; break;
    case compiler::CompileMode::kBandwidth: s += " --bandwidth"; break;
    case compiler::CompileMode::kBalance: s += " --balance " + std::to_string(o.balance_factor); break;
  }
  if (o.max_time_per_fc_us > 0) s += " --max-time-per-fc " + std::to_string(o.max_time_per_fc_us);
  return s;
}

// The parameters hb_model_info prints, as "<section>.<key>" entries in the model file.
format::KeyValueList compile_parameters(const config::CompileConfig& cfg, const compiler::CompileOptions& o) {
  format::KeyValueList kv;
  const config::ModelParameters& m = cfg.model;
  if (cfg.model_type == config::ModelType::kCaffe) {
    kv.emplace_back("model_parameters.prototxt", m.prototxt);
    kv.emplace_back("model_parameters.caffe_model", m.caffe_model);
  } else {
    kv.emplace_back("model_parameters.onnx_model", m.onnx_model);
  }
  kv.emplace_back("model_parameters.BPU march", std::string(o.march->name));
  kv.emplace_back("model_parameters.layer_out_dump", m.layer_out_dump ? "True" : "False");
  kv.emplace_back("model_parameters.working dir", m.working_dir);
  kv.emplace_back("model_parameters.output_model_file_prefix", m.output_model_file_prefix);
  for (size_t i = 0; i < cfg.input.inputs.size(); ++i) {
    const config::InputSpec& in = cfg.input.inputs[i];
    const std::string p = "input_parameters." + in.name + ".";
    kv.emplace_back(p + "input_name", in.name);
    kv.emplace_back(p + "input_type_rt", std::string(config::to_string(in.type_rt)));
    kv.emplace_back(p + "input_space&range", std::string(config::to_string(in.space_and_range)));
    kv.emplace_back(p + "input_layout_rt", in.layout_rt ? std::string(config::to_string(*in.layout_rt)) : "None");
    kv.emplace_back(p + "input_type_train", std::string(config::to_string(in.type_train)));
    kv.emplace_back(p + "input_layout_train", std::string(config::to_string(in.layout_train)));
    kv.emplace_back(p + "norm_type", std::string(config::to_string(in.norm_type)));
    kv.emplace_back(p + "input_shape", join_ints(in.shape, "x"));
    if (!in.mean.empty()) kv.emplace_back(p + "mean_value", join(in.mean));
    if (!in.scale.empty()) kv.emplace_back(p + "scale_value", join(in.scale));
    if (i < cfg.calibration.cal_data_dir.size()) kv.emplace_back(p + "cal_data_dir", cfg.calibration.cal_data_dir[i]);
  }
  kv.emplace_back("calibration_parameters.preprocess_on", cfg.calibration.preprocess_on ? "True" : "False");
  kv.emplace_back("calibration_parameters.calibration_type",
                  std::string(config::to_string(cfg.calibration.calibration_type)));
  kv.emplace_back("calibration_parameters.per_channel", cfg.calibration.per_channel ? "True" : "False");
  kv.emplace_back("compiler_parameters.hbdk_pass_through_params", options_text(o));
  std::string sources = "{";
  for (size_t i = 0; i < cfg.input.inputs.size(); ++i) {
    sources += (i ? ", '" : "'") + cfg.input.inputs[i].name + "': '" +
               std::string(config::to_string(cfg.input_source_of(i))) + "'";
  }
  kv.emplace_back("compiler_parameters.input-source", sources + ", '_default_value': 'ddr'}");
  kv.emplace_back("compiler_parameters.optimize_level", "O" + std::to_string(o.optimize_level));
  kv.emplace_back("compiler_parameters.compile_mode", std::string(config::to_string(cfg.compiler.compile_mode)));
  kv.emplace_back("compiler_parameters.core_num", std::to_string(o.core_num));
  kv.emplace_back("compiler_parameters.max_time_per_fc", std::to_string(o.max_time_per_fc_us));
  kv.emplace_back("compiler_parameters.debug", cfg.compiler.debug ? "True" : "False");
  return kv;
}

format::KeyValueList deps_info(const config::CompileConfig& cfg) {
  const std::string version = OPENBPU_VERSION_STRING;
  format::KeyValueList kv;
  kv.emplace_back(cfg.flavour == config::ConfigFlavour::kHbCompile ? "hb_compile version" : "hb_mapper version",
                  "openbpu " + version);
  kv.emplace_back("hbdk version", "openbpu compiler " + version + " (virtual BPU ISA " +
                                      std::to_string(simulator::isa::kIsaVersion) + ")");
  kv.emplace_back("hbdk runtime version", "openbpu model file " + format::format_version_string(format::kFormatVersion));
  kv.emplace_back("horizon_nn version", "openbpu quantizer " + version);
  return kv;
}

}  // namespace

compiler::CompileOptions compile_options(const config::CompileConfig& cfg, const simulator::MarchSpec& march) {
  compiler::CompileOptions o;
  o.march = &march;
  o.optimize_level = static_cast<int>(cfg.optimize_level());
  switch (cfg.compiler.compile_mode) {
    case config::CompileMode::kLatency: o.compile_mode = compiler::CompileMode::kLatency; break;
    case config::CompileMode::kBandwidth: o.compile_mode = compiler::CompileMode::kBandwidth; break;
    case config::CompileMode::kBalance: o.compile_mode = compiler::CompileMode::kBalance; break;
  }
  o.balance_factor = static_cast<int>(cfg.compiler.balance_factor.value_or(50));
  o.core_num = static_cast<int>(cfg.compiler.core_num);
  o.max_time_per_fc_us = static_cast<uint64_t>(cfg.compiler.max_time_per_fc);
  // Segments compile in parallel; the result does not depend on the thread count.
  o.jobs = static_cast<int>(cfg.compiler.jobs.value_or(std::max(1u, std::thread::hardware_concurrency())));
  // Image inputs reach the BPU as images (nv12 from the pyramid / camera, packed bytes
  // otherwise, in input_layout_rt); the BPU converts them.
  for (const config::InputSpec& in : cfg.input.inputs) {
    if (in.type_rt == config::InputType::kNv12) {
      o.image_inputs[in.name] = {simulator::isa::ImageFormat::kNv12, {}};
    } else if (in.type_rt != config::InputType::kFeaturemap) {
      const config::Layout rt = in.layout_rt.value_or(in.layout_train);
      std::vector<int> order;
      if (rt == config::Layout::kNhwc && in.layout_train == config::Layout::kNchw) order = {0, 2, 3, 1};
      if (rt == config::Layout::kNchw && in.layout_train == config::Layout::kNhwc) order = {0, 3, 1, 2};
      o.image_inputs[in.name] = {simulator::isa::ImageFormat::kPacked, order};
    }
  }
  return o;
}

BackendResult compile_model_file(const config::CompileConfig& cfg, const compiler::CompileOptions& options,
                                 const ir::Model& quantized, const std::map<std::string, kernels::Tensor>& feeds,
                                 const fs::path& dir, const std::string& prefix, Log& log, int threads) {
  const simulator::MarchSpec& march = *options.march;
  log.info("Start to compile the model with march ", march.name, ".");
  // Every tensor's type and shape, from one run.
  const compiler::TensorInfos infos = compiler::observe_tensor_infos(quantized, feeds, threads);
  const auto t0 = Clock::now();
  std::vector<compiler::CompiledSegment> segments = compiler::compile_bpu_segments(*quantized.graph, infos, options);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();

  BackendResult result;
  std::vector<std::pair<fs::path, std::string>> files;
  for (compiler::CompiledSegment& s : segments) {
    SubgraphReport r;
    r.name = prefix + "_" + s.name;
    log.info("Compile submodel: ", r.name);
    log.info("compiler options: ", options_text(options));
    const simulator::DecodeResult decoded = simulator::decode_program(s.program, s.weights);
    if (!decoded.ok) raise("the compiled program of ", r.name, " does not verify: ", decoded.error);
    const model_tools::SubgraphPerf perf = model_tools::subgraph_perf(
        r.name, decoded.program, s.weights.size(), s.inputs,
        cfg.compiler.debug ? s.instruction_nodes : std::vector<std::string>{}, march,
        options.core_num);
    r.estimate = perf.estimate;
    r.segment = std::move(s);
    log.info("FPS=", fixed(r.estimate.fps(), 2), ", latency = ", fixed(r.estimate.latency_us, 1), " us, DDR = ",
             r.estimate.loaded_bytes + r.estimate.stored_bytes, " bytes   (see ", r.name, ".html)");
    const nlohmann::ordered_json json =
        model_tools::subgraph_json(perf, march, options.core_num, options_text(options));
    files.emplace_back(dir / (r.name + ".json"), json.dump(2) + "\n");
    files.emplace_back(dir / (r.name + ".html"), model_tools::subgraph_html(json));
    result.subgraphs.push_back(std::move(r));
  }
  log.info("consumed time ", fixed(seconds, 3), " s for ", result.subgraphs.size(), " BPU subgraph",
           result.subgraphs.size() == 1 ? "" : "s");
  if (result.subgraphs.empty()) log.warning("the model has no BPU subgraph; the model file holds CPU operators only");

  log.info("start convert to *.", cfg.flavour == config::ConfigFlavour::kHbCompile ? "hbm" : "bin", " file....");
  log.info("ONNX model output num : ", quantized.graph->outputs().size());
  std::vector<compiler::CompiledSegment> compiled;
  for (const SubgraphReport& r : result.subgraphs) compiled.push_back(r.segment);
  compiler::ModelWriterOptions wopts;
  wopts.model_name = prefix;
  wopts.march = std::string(march.name);
  wopts.compile_parameters = compile_parameters(cfg, options);
  wopts.deps_info = deps_info(cfg);
  wopts.debug_map = cfg.compiler.debug;
  for (const ir::OpsetImport& o : quantized.opsets) wopts.opsets[o.domain == "ai.onnx" ? "" : o.domain] = o.version;
  for (size_t i = 0; i < cfg.input.inputs.size(); ++i) {
    const config::InputSpec& in = cfg.input.inputs[i];
    switch (cfg.input_source_of(i)) {
      case config::InputSource::kPyramid: wopts.input_sources[in.name] = format::InputSource::PYRAMID; break;
      case config::InputSource::kResizer: wopts.input_sources[in.name] = format::InputSource::RESIZER; break;
      case config::InputSource::kDdr: break;
    }
    const format::TensorLayout layout =
        in.layout_rt.value_or(in.layout_train) == config::Layout::kNhwc ? format::TensorLayout::NHWC : format::TensorLayout::NCHW;
    switch (in.type_rt) {
      case config::InputType::kRgb: wopts.image_types[in.name] = {format::TensorType::IMG_TYPE_RGB, layout}; break;
      case config::InputType::kBgr: wopts.image_types[in.name] = {format::TensorType::IMG_TYPE_BGR, layout}; break;
      case config::InputType::kYuv444: wopts.image_types[in.name] = {format::TensorType::IMG_TYPE_YUV444, layout}; break;
      case config::InputType::kGray: wopts.image_types[in.name] = {format::TensorType::IMG_TYPE_Y, layout}; break;
      default: break;
    }
  }
  format::PackageInfo package;
  package.toolchain_name = "openbpu";
  package.toolchain_version = OPENBPU_VERSION_STRING;
  package.models.push_back(compiler::build_model_info(*quantized.graph, infos, compiled, wopts));
  std::vector<uint8_t> bytes;
  if (const format::Status st = format::serialize_package(package, &bytes); !st.ok()) {
    raise("the model file could not be built: ", st.message);
  }
  for (const auto& [path, text] : files) write_file_atomically(path, text);
  result.model_file = dir / (prefix + (cfg.flavour == config::ConfigFlavour::kHbCompile ? ".hbm" : ".bin"));
  if (const format::Status st = format::save_model_file(result.model_file.string(), bytes); !st.ok()) {
    raise(result.model_file.string(), ": ", st.message);
  }
  log.write(LogLevel::kInfo, compiler::describe_model(package.models.front()));
  log.info("Convert to runtime bin file successfully!");
  return result;
}

}  // namespace openbpu::pipeline
