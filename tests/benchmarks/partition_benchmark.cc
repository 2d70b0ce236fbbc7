// BPU/CPU partition time: bpu_support::group_subgraphs on synthetic graphs of 10k and 200k nodes
// (the sizes of unrolled recurrent models), and partition_graph (bayes-e) on ONNX models given
// on the command line (e.g. a conversion's *_optimized_float_model.onnx). Counters: nodes and
// BPU subgraphs.
//
//   partition_benchmark [--model FILE]... [google benchmark flags]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "openbpu/bpu_support/partitioner.h"
#include "openbpu/frontend/onnx_model.h"
#include "openbpu/simulator/march.h"

namespace {

using namespace openbpu;

// A graph of `steps` repetitions of `shape`: each character one node reading the previous node
// (B = BPU, C = CPU, X = BPU reading the graph input too, Y = CPU reading the graph input too,
// S = a CPU node reading the previous node that the next node does not read).
struct Synthetic {
  ir::Model model;
  std::vector<const ir::Node*> nodes;
  std::vector<bool> on_bpu;
};

Synthetic repeated(const std::string& shape, size_t steps) {
  Synthetic s;
  ir::Graph& g = *s.model.graph;
  ir::Value* x = g.add_value("x", ir::TensorType::of(kernels::DataType::kFloat32, {1}));
  g.add_input(x);
  ir::Value* last = x;
  for (size_t step = 0; step < steps; ++step) {
    for (char c : shape) {
      std::vector<ir::Value*> in{last};
      if (c == 'X' || c == 'Y') in.push_back(x);
      const std::string name = "n" + std::to_string(s.nodes.size());
      ir::Node* n = g.add_node({"Add", in, {name}, name, "", {}});
      s.nodes.push_back(n);
      s.on_bpu.push_back(c == 'B' || c == 'X');
      if (c == 'S') {
        g.add_output(n->output(0));
      } else {
        last = n->output(0);
      }
    }
  }
  g.add_output(last);
  return s;
}

// `branches` independent chains of `shape` from the graph input.
Synthetic branches(const std::string& shape, size_t branches) {
  Synthetic s;
  ir::Graph& g = *s.model.graph;
  ir::Value* x = g.add_value("x", ir::TensorType::of(kernels::DataType::kFloat32, {1}));
  g.add_input(x);
  for (size_t b = 0; b < branches; ++b) {
    ir::Value* last = x;
    for (char c : shape) {
      const std::string name = "n" + std::to_string(s.nodes.size());
      ir::Node* n = g.add_node({"Add", {last}, {name}, name, "", {}});
      s.nodes.push_back(n);
      s.on_bpu.push_back(c == 'B');
      last = n->output(0);
    }
    g.add_output(last);
  }
  return s;
}

void run_synthetic(benchmark::State& state, const Synthetic& s) {
  int subgraphs = 0;
  for (auto _ : state) {
    const std::vector<int> group = bpu_support::group_subgraphs(s.nodes, s.on_bpu);
    subgraphs = 0;
    for (int g : group) subgraphs = std::max(subgraphs, g + 1);
    benchmark::DoNotOptimize(group);
  }
  state.counters["nodes"] = static_cast<double>(s.nodes.size());
  state.counters["subgraphs"] = subgraphs;
}

void register_synthetic(const std::string& label, Synthetic (*make)(const std::string&, size_t),
                        const std::string& shape, size_t nodes) {
  auto s = std::make_shared<Synthetic>(make(shape, nodes / shape.size()));
  benchmark::RegisterBenchmark((label + "/" + std::to_string(nodes)).c_str(),
                               [s](benchmark::State& state) { run_synthetic(state, *s); })
      ->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> models;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--model" && i + 1 < argc) {
      models.push_back(argv[++i]);
    } else {
      rest.push_back(argv[i]);
    }
  }
  int rest_count = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_count, rest.data());
  for (size_t nodes : {size_t{10000}, size_t{200000}}) {
    // An unrolled recurrence: each step's BPU work reads the graph input and the CPU's state.
    register_synthetic("unrolled_steps", repeated, "XBBBC", nodes);
    // BPU and CPU nodes alternating: a subgraph per BPU node.
    register_synthetic("alternating", repeated, "BC", nodes);
    // One BPU chain, each node's output also read by a CPU node: one subgraph.
    register_synthetic("side_outputs", repeated, "BS", nodes);
    // Branches from the graph input with a CPU node inside each: siblings that all merge.
    register_synthetic("sibling_branches", branches, "BBCBB", nodes);
  }
  for (const std::string& path : models) {
    auto model = std::make_shared<ir::Model>(frontend::load_onnx(path));
    const std::string label = std::filesystem::path(path).stem().string();
    benchmark::RegisterBenchmark(("model/" + label).c_str(), [model](benchmark::State& state) {
      const auto& march = simulator::march_spec(simulator::March::kBayesE);
      int subgraphs = 0;
      for (auto _ : state) {
        const bpu_support::Partition p = bpu_support::partition_graph(*model->graph, march);
        subgraphs = p.subgraph_count;
        benchmark::DoNotOptimize(p);
      }
      state.counters["nodes"] = static_cast<double>(model->graph->nodes().size());
      state.counters["subgraphs"] = subgraphs;
    })->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
