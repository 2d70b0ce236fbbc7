// Stage 5: the backend (backend.h).
#include "openbpu/pipeline/backend.h"

#include <chrono>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"
#include "openbpu/compiler/model_writer.h"
#include "openbpu/executor/float_executor.h"
#include "openbpu/format/model_file.h"
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

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string subgraph_html(const nlohmann::ordered_json& j) {
  std::ostringstream out;
  const std::string name = j["summary"]["model name"].get<std::string>();
  out << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" << html_escape(name)
      << " — BPU estimate</title>\n<style>body{font-family:sans-serif}table{border-collapse:collapse}"
         "td,th{border:1px solid #999;padding:2px 8px;text-align:right}th{background:#eee}"
         "td:first-child{text-align:left}</style></head><body>\n<h1>" << html_escape(name)
      << "</h1>\n<p>Static estimate of the OpenBPU virtual BPU's timing model (docs/compiler.md) — a "
         "model of a BPU, not a measurement.</p>\n<table>\n";
  for (const auto& [key, value] : j["summary"].items()) {
    out << "<tr><th>" << html_escape(key) << "</th><td>"
        << html_escape(value.is_string() ? value.get<std::string>() : value.dump()) << "</td></tr>\n";
  }
  out << "</table>\n";
  if (j.contains("layer details")) {
    out << "<h2>Layer details</h2>\n<table>\n<tr>";
    const auto& rows = j["layer details"];
    if (!rows.empty()) {
      for (const auto& [key, value] : rows.front().items()) out << "<th>" << html_escape(key) << "</th>";
      out << "</tr>\n";
      for (const auto& row : rows) {
        out << "<tr>";
        for (const auto& [key, value] : row.items()) {
          out << "<td>" << html_escape(value.is_string() ? value.get<std::string>() : value.dump()) << "</td>";
        }
        out << "</tr>\n";
      }
    }
    out << "</table>\n";
  }
  out << "</body></html>\n";
  return out.str();
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

std::string subgraph_json(const SubgraphReport& r, const simulator::MarchSpec& march,
                          const compiler::CompileOptions& options, bool layers) {
  const simulator::ProgramEstimate& e = r.estimate;
  const double latency_ms = e.latency_us / 1000.0;
  const uint64_t ddr = e.loaded_bytes + e.stored_bytes;
  nlohmann::ordered_json summary;
  summary["model name"] = r.name;
  summary["BPU march"] = std::string(march.name);
  summary["BPU core number"] = options.core_num;
  summary["BPU OPs per frame (effective)"] = e.ops();
  summary["BPU OPs per run (effective)"] = e.ops();
  summary["frame per run"] = 1;
  summary["latency (ms)"] = std::round(latency_ms * 1000.0) / 1000.0;
  summary["latency (us)"] = std::round(e.latency_us * 10.0) / 10.0;
  summary["FPS"] = std::round(e.fps() * 100.0) / 100.0;
  summary["worst FPS"] = std::round(e.fps() * 100.0) / 100.0;
  summary["DDR bytes per frame"] = ddr;
  summary["DDR megabytes per frame"] = std::round(static_cast<double>(ddr) / 1e6 * 1000.0) / 1000.0;
  summary["DDR bytes per second"] = latency_ms > 0 ? static_cast<uint64_t>(static_cast<double>(ddr) * e.fps()) : 0;
  summary["DDR megabytes per second"] =
      std::round(static_cast<double>(ddr) * e.fps() / 1e6 * 10.0) / 10.0;
  summary["loaded bytes per frame"] = e.loaded_bytes;
  summary["stored bytes per frame"] = e.stored_bytes;
  summary["compiling options"] = options_text(options);
  summary["function calls"] = r.segment.function_calls;
  summary["instructions"] = r.segment.instruction_nodes.size();
  summary["weight bytes"] = r.segment.weights.size();
  summary["activation bytes"] = r.segment.activation_bytes;
  nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.segment.inputs.size(); ++i) {
    inputs.push_back({r.segment.inputs[i], simulator::element_count(r.segment.input_descs[i]) *
                                               simulator::isa::element_bytes(r.segment.input_descs[i].type)});
  }
  summary["input features"] = inputs;
  summary["runtime version"] = std::string("openbpu ") + OPENBPU_VERSION_STRING;
  nlohmann::ordered_json j;
  j["summary"] = summary;
  if (layers) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    const double mhz = march.clock_mhz;
    for (size_t i = 0; i < e.instructions.size(); ++i) {
      const simulator::InstructionCost& c = e.instructions[i];
      if (c.opcode == simulator::isa::Opcode::kFunctionBegin) continue;
      nlohmann::ordered_json row;
      row["layer"] = r.segment.instruction_nodes[i];
      row["instruction"] = simulator::opcode_name(c.opcode);
      row["ops"] = 2 * c.macs + c.element_ops;
      row["computing cost (us)"] = std::round(static_cast<double>(c.compute_cycles) / mhz * 100.0) / 100.0;
      row["load/store cost (us)"] = std::round(static_cast<double>(c.dma_cycles) / mhz * 100.0) / 100.0;
      row["latency (us)"] = std::round(static_cast<double>(c.cycles) / mhz * 100.0) / 100.0;
      row["loaded bytes"] = c.loaded_bytes;
      row["stored bytes"] = c.stored_bytes;
      row["tiles"] = c.tiles;
      rows.push_back(row);
    }
    j["layer details"] = rows;
  }
  return j.dump(2) + "\n";
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
    r.estimate = simulator::estimate_program(decoded.program, march, options.core_num);
    r.segment = std::move(s);
    log.info("FPS=", fixed(r.estimate.fps(), 2), ", latency = ", fixed(r.estimate.latency_us, 1), " us, DDR = ",
             r.estimate.loaded_bytes + r.estimate.stored_bytes, " bytes   (see ", r.name, ".html)");
    const std::string json = subgraph_json(r, march, options, cfg.compiler.debug);
    files.emplace_back(dir / (r.name + ".json"), json);
    files.emplace_back(dir / (r.name + ".html"), subgraph_html(nlohmann::ordered_json::parse(json)));
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
