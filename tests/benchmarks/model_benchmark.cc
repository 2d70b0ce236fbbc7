// End-to-end model timing: the float executor on the PP-OCR models, beside onnxruntime-node on
// the same input and thread count measured in the same run (ort_run.js is started per model
// and thread count before our runs). Reports our time per run and, as counters, ORT's median
// time and the ratio ours / ORT.
//
//   model_benchmark --data-dir DIR [google benchmark flags]
// DIR is prepared by tests/models/prepare_reference.sh (models, rendered inputs).
#include <benchmark/benchmark.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "openbpu/common/npy.h"
#include "openbpu/executor/float_executor.h"
#include "openbpu/frontend/onnx_model.h"
#include "ort_peer.h"

namespace fs = std::filesystem;

namespace {

struct ModelCase {
  const char* label;
  const char* file;
  const char* input;
};

constexpr ModelCase kCases[] = {
    {"ppocrv4_det", "ch_PP-OCRv4_det_infer.onnx", "det_000.npy"},
    {"ppocrv4_rec", "ch_PP-OCRv4_rec_infer.onnx", "rec_000.npy"},
    {"ppocr_cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx", "cls_000.npy"},
};

fs::path g_data_dir;
fs::path g_source_dir = OPENBPU_SOURCE_DIR;

// Median ms of onnxruntime-node on the same model, input and thread count.
double ort_median_ms(const ModelCase& c, int threads) {
  return openbpu::bench::ort_median_ms(g_source_dir, g_data_dir / "models" / c.file, g_data_dir / "inputs" / c.input, threads);
}

void run_model(benchmark::State& state, const ModelCase& c, int threads, double ort_ms) {
  const openbpu::ir::Model model = openbpu::frontend::load_onnx(g_data_dir / "models" / c.file);
  openbpu::executor::FloatExecutor exec(model, {threads});
  const std::map<std::string, openbpu::kernels::Tensor> feeds = {
      {"x", openbpu::read_npy(g_data_dir / "inputs" / c.input)}};
  exec.run(feeds);  // warm-up
  double total_ms = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    auto result = exec.run(feeds);
    benchmark::DoNotOptimize(result);
    total_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  const double ours = total_ms / static_cast<double>(state.iterations());
  state.counters["ours_ms"] = ours;
  state.counters["ort_ms"] = ort_ms;
  state.counters["ratio_vs_ort"] = ort_ms > 0 ? ours / ort_ms : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* env = std::getenv("OPENBPU_REAL_MODELS_DIR");
  if (env) g_data_dir = env;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--data-dir=", 0) == 0) g_data_dir = arg.substr(11);
  }
  if (g_data_dir.empty() || !fs::exists(g_data_dir / "inputs" / "manifest.tsv")) {
    std::cerr << "model_benchmark: pass --data-dir=DIR prepared by tests/models/prepare_reference.sh\n";
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  for (const ModelCase& c : kCases) {
    for (int threads : {1, 2}) {
      const double ort_ms = ort_median_ms(c, threads);
      benchmark::RegisterBenchmark(
          (std::string(c.label) + "/threads:" + std::to_string(threads)).c_str(),
          [c, threads, ort_ms](benchmark::State& s) { run_model(s, c, threads, ort_ms); })
          ->Unit(benchmark::kMillisecond)
          ->MinTime(2.0)
          ->UseRealTime();
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
