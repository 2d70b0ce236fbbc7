// End-to-end model timing: the float executor on the PP-OCR models, beside onnxruntime-node on
// the same input and thread count measured in the same run (ort_run.js is started per model
// and thread count before our runs). Reports our time per run and, as counters, ORT's median
// time and the ratio ours / ORT. The models also run exported the other ways users bring them
// (model_variants.h: half precision; det also dynamically quantized), written next to the data
// and loaded from there by both; cos_vs_float is our output's cosine with our float model's.
//
//   model_benchmark --data-dir DIR [google benchmark flags]
// DIR is prepared by tests/models/prepare_reference.sh (models, rendered inputs).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "model_variants.h"
#include "openbpu/calibration/fake_quant_evaluation.h"
#include "openbpu/common/npy.h"
#include "openbpu/executor/float_executor.h"
#include "openbpu/frontend/onnx_model.h"
#include "ort_peer.h"

namespace fs = std::filesystem;

namespace {

enum class Export { kFloat, kFloat16, kDynamicInt8 };

struct ModelCase {
  const char* label;
  const char* file;
  const char* input;
  Export variant = Export::kFloat;
};

constexpr ModelCase kCases[] = {
    {"ppocrv4_det", "ch_PP-OCRv4_det_infer.onnx", "det_000.npy"},
    {"ppocrv4_rec", "ch_PP-OCRv4_rec_infer.onnx", "rec_000.npy"},
    {"ppocr_cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx", "cls_000.npy"},
    // (No det in half precision: some of its BatchNormalization variances exceed float16's
    // range, so such an export computes nothing useful.)
    {"ppocrv4_rec_fp16", "ch_PP-OCRv4_rec_infer.onnx", "rec_000.npy", Export::kFloat16},
    {"ppocr_cls_fp16", "ch_ppocr_mobile_v2.0_cls_infer.onnx", "cls_000.npy", Export::kFloat16},
    // Dynamic quantization needs opset 11 (DynamicQuantizeLinear): det is exported at 11, rec and
    // cls at opsets whose Slice/Clip forms would need a version converter first.
    {"ppocrv4_det_dynamic_int8", "ch_PP-OCRv4_det_infer.onnx", "det_000.npy", Export::kDynamicInt8},
};

fs::path g_data_dir;
fs::path g_source_dir = OPENBPU_SOURCE_DIR;

// The model file of a case: the float model, or its variant written under variants/.
fs::path model_file(const ModelCase& c) {
  const fs::path original = g_data_dir / "models" / c.file;
  if (c.variant == Export::kFloat) return original;
  const fs::path out = g_data_dir / "variants" / (std::string(c.label) + ".onnx");
  if (!fs::exists(out)) {
    fs::create_directories(out.parent_path());
    openbpu::ir::Model model = openbpu::frontend::load_onnx(original);
    if (c.variant == Export::kFloat16) {
      openbpu::bench::make_float16_export(model);
    } else {
      openbpu::bench::make_dynamic_quantized_export(model);
    }
    openbpu::frontend::save_onnx(model, out);
  }
  return out;
}

// Median ms of onnxruntime-node on the same model, input and thread count.
double ort_median_ms(const ModelCase& c, int threads) {
  return openbpu::bench::ort_median_ms(g_source_dir, model_file(c), g_data_dir / "inputs" / c.input,
                                       threads);
}

void run_model(benchmark::State& state, const ModelCase& c, int threads, double ort_ms) {
  const openbpu::ir::Model model = openbpu::frontend::load_onnx(model_file(c));
  openbpu::executor::FloatExecutor exec(model, {threads});
  const std::map<std::string, openbpu::kernels::Tensor> feeds = {
      {"x", openbpu::read_npy(g_data_dir / "inputs" / c.input)}};
  const openbpu::kernels::Tensor first = exec.run(feeds).tensors[0];  // and warm-up
  if (c.variant != Export::kFloat) {
    const openbpu::ir::Model float_model =
        openbpu::frontend::load_onnx(g_data_dir / "models" / c.file);
    openbpu::executor::FloatExecutor float_exec(float_model);
    state.counters["cos_vs_float"] =
        openbpu::calibration::cosine_similarity(first, float_exec.run(feeds).tensors[0]);
  }
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
