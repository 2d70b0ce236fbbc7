#include "openbpu/model_tools/perf_report.h"

#include <cmath>
#include <sstream>

namespace openbpu::model_tools {
namespace {

double rounded(double v, double unit) {
  return std::round(v / unit) * unit;
}

std::string cell(const nlohmann::ordered_json& v) {
  return html_escape(v.is_string() ? v.get<std::string>() : v.dump());
}

}  // namespace

SubgraphPerf subgraph_perf(const std::string& name, const simulator::Program& program,
                           uint64_t weight_bytes, const std::vector<std::string>& input_names,
                           std::vector<std::string> instruction_nodes,
                           const simulator::MarchSpec& march, int cores) {
  SubgraphPerf s;
  s.name = name;
  s.estimate = simulator::estimate_program(program, march, cores);
  s.weight_bytes = weight_bytes;
  s.activation_bytes = program.memory_bytes > program.constant_bytes
                           ? program.memory_bytes - program.constant_bytes
                           : 0;
  for (const simulator::Instruction& in : program.instructions) {
    s.function_calls += in.opcode == simulator::isa::Opcode::kFunctionBegin ? 1 : 0;
  }
  s.instructions = program.instructions.size();
  for (size_t i = 0; i < program.inputs.size(); ++i) {
    const simulator::isa::TensorDesc& d = program.inputs[i];
    s.input_features.emplace_back(
        i < input_names.size() ? input_names[i] : "input_" + std::to_string(i),
        simulator::element_count(d) * simulator::isa::element_bytes(d.type));
  }
  s.instruction_nodes = std::move(instruction_nodes);
  return s;
}

nlohmann::ordered_json subgraph_json(const SubgraphPerf& s, const simulator::MarchSpec& march,
                                     int cores, const std::string& options) {
  const simulator::ProgramEstimate& e = s.estimate;
  const uint64_t ddr = e.loaded_bytes + e.stored_bytes;
  nlohmann::ordered_json summary;
  summary["model name"] = s.name;
  summary["BPU march"] = std::string(march.name);
  summary["BPU core number"] = cores;
  summary["BPU OPs per frame (effective)"] = e.ops();
  summary["BPU OPs per frame (working)"] = e.working_ops();
  summary["BPU OPs per run (effective)"] = e.ops();
  summary["frame per run"] = 1;
  summary["latency (ms)"] = rounded(e.latency_us / 1000.0, 0.001);
  summary["latency (us)"] = rounded(e.latency_us, 0.1);
  summary["FPS"] = rounded(e.fps(), 0.01);
  summary["worst FPS"] = rounded(e.fps(), 0.01);
  summary["DDR bytes per frame"] = ddr;
  summary["DDR megabytes per frame"] = rounded(static_cast<double>(ddr) / 1e6, 0.001);
  summary["DDR bytes per second"] = static_cast<uint64_t>(static_cast<double>(ddr) * e.fps());
  summary["DDR megabytes per second"] = rounded(static_cast<double>(ddr) * e.fps() / 1e6, 0.1);
  summary["loaded bytes per frame"] = e.loaded_bytes;
  summary["stored bytes per frame"] = e.stored_bytes;
  summary["compiling options"] = options;
  summary["function calls"] = s.function_calls;
  summary["instructions"] = s.instructions;
  summary["weight bytes"] = s.weight_bytes;
  summary["activation bytes"] = s.activation_bytes;
  nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
  for (const auto& [name, bytes] : s.input_features) inputs.push_back({name, bytes});
  summary["input features"] = inputs;
  summary["runtime version"] = std::string("openbpu ") + OPENBPU_VERSION_STRING;
  nlohmann::ordered_json j;
  j["summary"] = summary;
  if (s.instruction_nodes.empty()) return j;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  const double mhz = march.clock_mhz;
  for (size_t i = 0; i < e.instructions.size(); ++i) {
    const simulator::InstructionCost& c = e.instructions[i];
    if (c.opcode == simulator::isa::Opcode::kFunctionBegin) continue;
    nlohmann::ordered_json row;
    row["layer"] = i < s.instruction_nodes.size() ? s.instruction_nodes[i] : "";
    row["instruction"] = simulator::opcode_name(c.opcode);
    row["ops"] = 2 * c.macs + c.element_ops;
    row["computing cost (us)"] = rounded(static_cast<double>(c.compute_cycles) / mhz, 0.01);
    row["load/store cost (us)"] = rounded(static_cast<double>(c.dma_cycles) / mhz, 0.01);
    row["latency (us)"] = rounded(static_cast<double>(c.cycles) / mhz, 0.01);
    row["loaded bytes"] = c.loaded_bytes;
    row["stored bytes"] = c.stored_bytes;
    row["tiles"] = c.tiles;
    rows.push_back(row);
  }
  j["layer details"] = rows;
  return j;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string subgraph_html(const nlohmann::ordered_json& j) {
  std::ostringstream out;
  const std::string name = j["summary"]["model name"].get<std::string>();
  out << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" << html_escape(name)
      << " — BPU "
         "estimate</title>\n<style>body{font-family:sans-serif}table{border-collapse:collapse}"
         "td,th{border:1px solid #999;padding:2px 8px;text-align:right}th{background:#eee}"
         "td:first-child{text-align:left}</style></head><body>\n<h1>"
      << html_escape(name)
      << "</h1>\n<p>Static estimate of the OpenBPU virtual BPU's timing model (docs/compiler.md) — "
         "a "
         "model of a BPU, not a measurement.</p>\n<table>\n";
  for (const auto& [key, value] : j["summary"].items()) {
    out << "<tr><th>" << html_escape(key) << "</th><td>" << cell(value) << "</td></tr>\n";
  }
  out << "</table>\n";
  if (j.contains("layer details") && !j["layer details"].empty()) {
    const auto& rows = j["layer details"];
    out << "<h2>Layer details</h2>\n<table>\n<tr>";
    for (const auto& [key, value] : rows.front().items())
      out << "<th>" << html_escape(key) << "</th>";
    out << "</tr>\n";
    for (const auto& row : rows) {
      out << "<tr>";
      for (const auto& [key, value] : row.items()) out << "<td>" << cell(value) << "</td>";
      out << "</tr>\n";
    }
    out << "</table>\n";
  }
  out << "</body></html>\n";
  return out.str();
}

}  // namespace openbpu::model_tools
