// bpu_estimate_table: compile time and the timing model's estimate of a quantized model for
// every march, optimize level and compile mode, as markdown tables (docs/benchmarks.md,
// docs/compiler.md).
//
//   bpu_estimate_table --model Q.onnx --input X.npy [--repeat 5]
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>

#include <CLI/CLI.hpp>

#include "openbpu/common/error.h"
#include "openbpu/common/npy.h"
#include "openbpu/compiler/compiler.h"
#include "openbpu/frontend/onnx_model.h"
#include "openbpu/simulator/program.h"
#include "openbpu/simulator/timing.h"

using namespace openbpu;

namespace {

struct Totals {
  double compile_ms = 0;
  double latency_us = 0;
  uint64_t ddr = 0;
  uint64_t ops = 0;
  size_t instructions = 0;
  uint32_t calls = 0;
};

Totals measure(const ir::Model& model, const compiler::TensorInfos& infos, const compiler::CompileOptions& o,
               int repeat) {
  Totals t;
  std::vector<compiler::CompiledSegment> segments;
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    segments = compiler::compile_bpu_segments(*model.graph, infos, o);
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  t.compile_ms = best;
  for (const auto& s : segments) {
    const simulator::DecodeResult d = simulator::decode_program(s.program, s.weights);
    if (!d.ok) raise(s.name, ": ", d.error);
    const simulator::ProgramEstimate e = simulator::estimate_program(d.program, *o.march, o.core_num);
    t.latency_us += e.latency_us;
    t.ddr += e.loaded_bytes + e.stored_bytes;
    t.ops += e.ops();
    t.instructions += s.instruction_nodes.size();
    t.calls += s.function_calls;
  }
  return t;
}

std::string mode_name(compiler::CompileMode m, int balance) {
  switch (m) {
    case compiler::CompileMode::kLatency: return "latency";
    case compiler::CompileMode::kBandwidth: return "bandwidth";
    case compiler::CompileMode::kBalance: return "balance " + std::to_string(balance);
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Compile time and BPU estimate of a quantized model per march, optimize level and mode"};
  std::string model_path, input_path;
  int repeat = 5;
  app.add_option("--model", model_path, "*_quantized_model.onnx")->required();
  app.add_option("--input", input_path, "one .npy input of the model")->required();
  app.add_option("--repeat", repeat, "compilations per configuration (the fastest counts)");
  CLI11_PARSE(app, argc, argv);
  try {
    const ir::Model model = frontend::load_onnx(model_path);
    const kernels::Tensor x = read_npy(input_path);
    std::string input_name;
    for (const ir::Value* v : model.graph->inputs()) {
      if (!v->is_constant()) input_name = v->name();
    }
    const compiler::TensorInfos infos = compiler::observe_tensor_infos(model, {{input_name, x}});

    std::cout << std::fixed << std::setprecision(1);
    std::cout << "\n" << model_path << "\n\n| march | optimize_level | compile_mode | compile ms | latency us | FPS | DDR MB | GOPs |\n"
              << "|---|---|---|---|---|---|---|---|\n";
    for (const simulator::MarchSpec& march : simulator::all_marches()) {
      for (int level = 0; level <= 3; ++level) {
        std::vector<std::pair<compiler::CompileMode, int>> modes = {{compiler::CompileMode::kLatency, 50}};
        if (march.march == simulator::March::kBayesE) {
          modes.push_back({compiler::CompileMode::kBandwidth, 50});
          modes.push_back({compiler::CompileMode::kBalance, 20});
          modes.push_back({compiler::CompileMode::kBalance, 80});
        }
        for (const auto& [mode, balance] : modes) {
          compiler::CompileOptions o;
          o.march = &march;
          o.optimize_level = level;
          o.compile_mode = mode;
          o.balance_factor = balance;
          Totals t;
          try {
            t = measure(model, infos, o, repeat);
          } catch (const Error& e) {
            std::cout << "| " << march.name << " | O" << level << " | " << mode_name(mode, balance)
                      << " | not compilable: " << e.what() << " | | | | |\n";
            break;
          }
          std::cout << "| " << march.name << " | O" << level << " | " << mode_name(mode, balance) << " | "
                    << std::setprecision(1) << t.compile_ms << " | " << t.latency_us << " | "
                    << (t.latency_us > 0 ? 1e6 / t.latency_us : 0) << " | " << std::setprecision(2)
                    << static_cast<double>(t.ddr) / 1e6 << " | " << static_cast<double>(t.ops) / 1e9 << " |\n";
        }
      }
    }
    // max_time_per_fc on bayes-e O3.
    std::cout << "\n| option (bayes-e, O3) | latency us | function calls |\n|---|---|---|\n";
    for (uint64_t fc : {0, 1000, 200}) {
      compiler::CompileOptions o;
      o.march = &simulator::march_spec(simulator::March::kBayesE);
      o.optimize_level = 3;
      o.max_time_per_fc_us = fc;
      const Totals t = measure(model, infos, o, 1);
      std::cout << "| max_time_per_fc " << fc << " | " << std::setprecision(1) << t.latency_us << " | " << t.calls
                << " |\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "bpu_estimate_table: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
