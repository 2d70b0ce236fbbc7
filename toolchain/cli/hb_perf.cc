// hb_perf: the static performance report of a model file (.bin / .hbm, packed too), as the
// reference's hb_perf writes it: hb_perf_result/<model>/ with <model>.html (the "Model Perf
// Report": latency, DDR traffic and OPs per frame, a row per BPU subgraph linking its page, and
// the model's picture), <model>.png (drawn by Graphviz), and <subgraph>.html / .json per BPU
// subgraph with the figures makertbin logs. The figures are the virtual BPU's timing model
// (docs/compiler.md), the same function makertbin and hrt_model_exec perf use.
//
//   hb_perf [-m MODEL_NAME] MODEL_FILE
#include <CLI/CLI.hpp>
#include <charconv>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"
#include "openbpu/common/text.h"
#include "openbpu/model_tools/model_graph.h"
#include "openbpu/model_tools/package_files.h"
#include "openbpu/model_tools/perf_report.h"

namespace {

using namespace openbpu;
namespace fs = std::filesystem;

std::string parameter(const format::ModelInfo& m, const std::string& key,
                      const std::string& fallback) {
  for (const auto& [k, v] : m.compile_parameters) {
    if (k == "compiler_parameters." + key) return v;
  }
  return fallback;
}

// One subgraph per BPU segment, with the segment's index in the model.
struct Subgraphs {
  std::vector<model_tools::SubgraphPerf> perf;
  std::vector<size_t> segment;
};

Subgraphs estimate(const format::ModelInfo& m, const simulator::MarchSpec& march, int cores) {
  std::map<uint32_t, std::map<uint32_t, std::string>> nodes;  // segment -> instruction -> ONNX node
  for (const format::DebugEntryInfo& e : m.debug_map)
    nodes[e.segment_index][e.instruction_index] = e.onnx_node;
  Subgraphs out;
  for (size_t s = 0; s < m.segments.size(); ++s) {
    const auto* bpu = std::get_if<format::BpuSegmentInfo>(&m.segments[s].body);
    if (bpu == nullptr) continue;
    const simulator::DecodeResult decoded = simulator::decode_program(bpu->program, bpu->weights);
    if (!decoded.ok)
      raise("model '", m.name, "' segment '", m.segments[s].name, "': ", decoded.error);
    std::vector<std::string> inputs;
    for (const format::TensorRefInfo& r : bpu->inputs) {
      inputs.push_back(r.kind == format::TensorRefKind::MODEL_INPUT ? m.inputs.at(r.index).name
                                                                    : m.tensors.at(r.index).name);
    }
    std::vector<std::string> instruction_nodes;
    if (auto it = nodes.find(static_cast<uint32_t>(s)); it != nodes.end()) {
      instruction_nodes.assign(decoded.program.instructions.size(), "");
      for (const auto& [i, node] : it->second) instruction_nodes.at(i) = node;
    }
    std::string name = m.segments[s].name;
    if (name.rfind("BPU_", 0) == 0) name = name.substr(4);  // "BPU_<model>_subgraph_0"
    out.perf.push_back(model_tools::subgraph_perf(name, decoded.program, bpu->weights.size(),
                                                  inputs, std::move(instruction_nodes), march,
                                                  cores));
    out.segment.push_back(s);
  }
  return out;
}

// The "Model Perf Report" page.
std::string model_html(const format::ModelInfo& m, const Subgraphs& subgraphs,
                       const simulator::MarchSpec& march) {
  using model_tools::html_escape;
  double latency_us = 0;
  uint64_t loaded = 0, stored = 0, ops = 0, working = 0;
  for (const model_tools::SubgraphPerf& s : subgraphs.perf) {
    latency_us += s.estimate.latency_us;
    loaded += s.estimate.loaded_bytes;
    stored += s.estimate.stored_bytes;
    ops += s.estimate.ops();
    working += s.estimate.working_ops();
  }
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" << html_escape(m.name)
      << " — Model Perf "
         "Report</title>\n<style>body{font-family:sans-serif}table{border-collapse:collapse;"
         "margin-bottom:1em}td,th{border:1px solid #999;padding:2px "
         "8px}th{background:#eee;text-align:left}"
         "td{text-align:right}img{max-width:100%}</style></head><body>\n<h1>Model Perf "
         "Report</h1>\n"
      << "<p>Static estimate of the OpenBPU virtual BPU's timing model (march "
      << html_escape(std::string(march.name))
      << ", docs/compiler.md): a model of a BPU, not a measurement.</p>\n<table>\n";
  auto row = [&](const std::string& key, const std::string& value) {
    out << "<tr><th>" << html_escape(key) << "</th><td>" << html_escape(value) << "</td></tr>\n";
  };
  row("Model Name", m.name);
  row("BPU Model Latency(ms)", fixed(latency_us / 1000.0, 3));
  row("Total DDR (loaded + stored) bytes per frame(MB per frame)",
      fixed(static_cast<double>(loaded + stored) / 1e6, 3));
  row("Loaded Bytes per Frame", std::to_string(loaded));
  row("Stored Bytes per Frame", std::to_string(stored));
  row("BPU conv original(BPU OPs per frame)", std::to_string(ops));
  row("BPU conv working(BPU OPs per frame)", std::to_string(working));
  out << "</table>\n<h2>Subgraphs</h2>\n<table>\n<tr><th>Name</th><th>Calculation Load (OPpf)</th>"
         "<th>DDR Occupation (Mbpf)</th><th>Latency(ms)</th><th>Detail</th></tr>\n";
  for (const model_tools::SubgraphPerf& s : subgraphs.perf) {
    const double ddr = static_cast<double>(s.estimate.loaded_bytes + s.estimate.stored_bytes) / 1e6;
    out << "<tr><th>" << html_escape(s.name) << "</th><td>" << s.estimate.ops() << "</td><td>"
        << fixed(ddr, 3) << "</td><td>" << fixed(s.estimate.latency_us / 1000.0, 3)
        << "</td><td><a href=\"" << html_escape(s.name) << ".html\">" << html_escape(s.name)
        << ".html</a></td></tr>\n";
  }
  out << "</table>\n<h2>Model structure</h2>\n<p>BPU subgraphs (blue, with their estimated "
         "latency), CPU operators "
         "(orange), inputs and outputs (grey).</p>\n<img src=\""
      << html_escape(m.name) << ".png\" alt=\"the graph of model " << html_escape(m.name)
      << "\">\n</body></html>\n";
  return out.str();
}

void report(const format::ModelInfo& m) {
  const std::optional<simulator::March> march_id = simulator::march_from_name(m.march);
  if (!march_id) raise("model '", m.name, "': unknown march '", m.march, "'");
  const simulator::MarchSpec& march = simulator::march_spec(*march_id);
  const std::string cores_text = parameter(m, "core_num", "1");
  int cores = 0;
  const auto [end, parsed] =
      std::from_chars(cores_text.data(), cores_text.data() + cores_text.size(), cores);
  if (parsed != std::errc() || end != cores_text.data() + cores_text.size() || cores < 1 ||
      cores > march.bpu_cores) {
    raise("model '", m.name, "': compile parameter core_num '", cores_text,
          "' is not a core count of ", march.name);
  }
  const Subgraphs subgraphs = estimate(m, march, cores);
  if (m.debug_map.empty()) {
    std::cout << "WARNING bpu model don't have per-layer perf info.\n"
              << "WARNING if you need per-layer perf info please "
                 "enable[compiler_parameters.debug:True] when use "
                 "makertbin.\n";
  }
  const fs::path dir = fs::path("hb_perf_result") / m.name;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) raise(dir.string(), ": cannot create the folder: ", ec.message());
  const std::string options = parameter(m, "hbdk_pass_through_params", "");
  std::vector<double> latency(m.segments.size(), 0.0);
  for (size_t i = 0; i < subgraphs.perf.size(); ++i) {
    const model_tools::SubgraphPerf& s = subgraphs.perf[i];
    latency[subgraphs.segment[i]] = s.estimate.latency_us;
    const nlohmann::ordered_json j = model_tools::subgraph_json(s, march, cores, options);
    write_file_atomically(dir / (s.name + ".json"), j.dump(2) + "\n");
    write_file_atomically(dir / (s.name + ".html"), model_tools::subgraph_html(j));
    std::cout << "INFO " << s.name << ": FPS=" << fixed(s.estimate.fps(), 2)
              << ", latency = " << fixed(s.estimate.latency_us, 1)
              << " us, DDR = " << s.estimate.loaded_bytes + s.estimate.stored_bytes << " bytes\n";
  }
  const std::string dot = model_tools::model_graph_dot(m, latency);
  write_file_atomically(dir / (m.name + ".png"), model_tools::render_dot(dot, "png"));
  write_file_atomically(dir / (m.name + ".html"), model_html(m, subgraphs, march));
  std::cout << "INFO the report of model '" << m.name << "' is in "
            << (dir / (m.name + ".html")).string() << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The static performance report of a model file (.bin / .hbm)"};
  std::string path, model_name;
  app.add_option("bin_file", path, "the model file")->required();
  app.add_option("-m", model_name, "the model of a packed file to report (default: every model)");
  app.set_version_flag("--version", std::string("hb_perf version ") + OPENBPU_VERSION_STRING);
  CLI11_PARSE(app, argc, argv);
  try {
    format::PackageInfo package = model_tools::read_package(path);
    if (!model_name.empty()) {
      report(model_tools::select_model(package, model_name, path));
    } else {
      for (const format::ModelInfo& m : package.models) report(m);
    }
  } catch (const Error& e) {
    std::cerr << "ERROR " << e.what() << "\n";
    return 1;
  }
  return 0;
}
