#include "openbpu/model_tools/model_graph.h"

#include <graphviz/gvc.h>

#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "openbpu/common/error.h"

namespace openbpu::model_tools {
namespace {

using format::TensorRefInfo;
using format::TensorRefKind;

// A dot string literal.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out + "\"";
}

std::string key(const TensorRefInfo& r) {
  return std::to_string(static_cast<int>(r.kind)) + ":" + std::to_string(r.index);
}

const std::string& tensor_name(const format::ModelInfo& m, const TensorRefInfo& r) {
  switch (r.kind) {
    case TensorRefKind::MODEL_INPUT: return m.inputs.at(r.index).name;
    case TensorRefKind::MODEL_OUTPUT: return m.outputs.at(r.index).name;
    default: return m.tensors.at(r.index).name;
  }
}

// Nodes and edges as they are found; edges joined by tensor, written once per (from, to).
struct DotWriter {
  const format::ModelInfo& model;
  std::ostringstream out;
  std::map<std::string, std::string> writer;  // tensor ref key -> dot node
  std::set<std::pair<std::string, std::string>> edges;

  void reads(const std::string& node, const std::vector<TensorRefInfo>& refs) {
    for (const TensorRefInfo& r : refs) {
      if (r.kind == TensorRefKind::OP_CONSTANT || r.kind == TensorRefKind::ABSENT) continue;
      auto w = writer.find(key(r));
      if (w == writer.end() || !edges.insert({w->second, node}).second) continue;
      out << "  " << w->second << " -> " << node << " [label=" << quoted(tensor_name(model, r))
          << "];\n";
    }
  }
  void writes(const std::string& node, const std::vector<TensorRefInfo>& refs) {
    for (const TensorRefInfo& r : refs) writer[key(r)] = node;
  }
};

}  // namespace

std::string model_graph_dot(const format::ModelInfo& model,
                            const std::vector<double>& segment_latency_us) {
  DotWriter w{model, {}, {}, {}};
  w.out << "digraph " << quoted(model.name) << " {\n  rankdir=TB;\n"
        << "  node [fontname=\"DejaVu Sans\", fontsize=11, style=filled];\n"
        << "  edge [fontname=\"DejaVu Sans\", fontsize=8, color=\"#555555\"];\n";
  for (size_t i = 0; i < model.inputs.size(); ++i) {
    const std::string node = "input_" + std::to_string(i);
    w.out << "  " << node << " [shape=note, fillcolor=\"#e0e0e0\", label="
          << quoted("input\n" + model.inputs[i].name) << "];\n";
    w.writes(node, {TensorRefInfo::model_input(static_cast<uint32_t>(i))});
  }
  for (size_t s = 0; s < model.segments.size(); ++s) {
    const format::SegmentInfo& segment = model.segments[s];
    if (const auto* bpu = std::get_if<format::BpuSegmentInfo>(&segment.body)) {
      const std::string node = "segment_" + std::to_string(s);
      char latency[64];
      std::snprintf(latency, sizeof latency, "%.1f us (estimate)",
                    s < segment_latency_us.size() ? segment_latency_us[s] : 0.0);
      w.out << "  " << node << " [shape=box, fillcolor=\"#8ecae6\", penwidth=2, label="
            << quoted("BPU " +
                      (segment.name.rfind("BPU_", 0) == 0 ? segment.name.substr(4) : segment.name) +
                      "\n" + latency)
            << "];\n";
      w.reads(node, bpu->inputs);
      w.writes(node, bpu->outputs);
      continue;
    }
    const auto& ops = std::get<format::CpuSegmentInfo>(segment.body).ops;
    for (size_t i = 0; i < ops.size(); ++i) {
      const std::string node = "cpu_" + std::to_string(s) + "_" + std::to_string(i);
      w.out << "  " << node << " [shape=ellipse, fillcolor=\"#ffb703\", label="
            << quoted("CPU " + ops[i].op_type + "\n" + ops[i].name) << "];\n";
      w.reads(node, ops[i].inputs);
      w.writes(node, ops[i].outputs);
    }
  }
  for (size_t i = 0; i < model.outputs.size(); ++i) {
    const std::string node = "output_" + std::to_string(i);
    w.out << "  " << node << " [shape=note, fillcolor=\"#e0e0e0\", label="
          << quoted("output\n" + model.outputs[i].name) << "];\n";
    w.reads(node, {TensorRefInfo::model_output(static_cast<uint32_t>(i))});
  }
  w.out << "}\n";
  return w.out.str();
}

std::string render_dot(const std::string& dot, const std::string& format) {
  GVC_t* gvc = gvContext();
  if (gvc == nullptr) raise("Graphviz: no context (libgvc)");
  Agraph_t* g = agmemread(dot.c_str());
  if (g == nullptr) {
    gvFreeContext(gvc);
    raise("Graphviz could not read the model graph");
  }
  std::string image;
  const bool laid_out = gvLayout(gvc, g, "dot") == 0;
  char* data = nullptr;
  unsigned int length = 0;
  const bool rendered =
      laid_out && gvRenderData(gvc, g, format.c_str(), &data, &length) == 0 && data != nullptr;
  if (rendered) image.assign(data, length);
  if (data != nullptr) gvFreeRenderData(data);
  if (laid_out) gvFreeLayout(gvc, g);
  agclose(g);
  gvFreeContext(gvc);
  if (!rendered)
    raise("Graphviz could not draw the model graph as ", format, " (is its ", format,
          " plugin installed?)");
  return image;
}

}  // namespace openbpu::model_tools
