// Runtime timing: hbDNNInfer + hbDNNWaitTaskDone on the converted PP-OCR model files (.bin,
// CPU operators on the kernel library, BPU segments on the virtual BPU simulator), beside
// onnxruntime-node on the float model (fp32) and on ONNX Runtime's static int8 QDQ peer model,
// on the same input file and thread count, measured in the same run (tests/models/ort_run.js
// is started per model before our runs, as in model_benchmark). Also the round trip of a
// one-operator model (hbDNNInfer overhead: queue, worker hand-off, CPU quantize / dequantize,
// one BPU function call, wait).
//
//   dnn_benchmark --conversion-dir=DIR --inputs-dir=DIR --float-models-dir=DIR
//                 --peer-models-dir=DIR [--threads=N] [--write-one-op=FILE.bin]
//                 [google benchmark flags]
// conversion-dir: <case>/model_output/<case>.bin of the conversion_accuracy_{det,rec,cls}
// ctests; inputs-dir: <kind>/input/000.npy (the held-out evaluation set of the ocr_dataset
// fixture); float-models-dir: the npm PP-OCR models (scripts/fetch_npm_packages.sh);
// peer-models-dir: ../shared/peer-models. --threads sets onnxruntime's intraOpNumThreads and
// OPENBPU_DNN_THREADS (the scheduler's workers; one inference runs on one worker) and
// OPENBPU_SIM_THREADS (the host threads one BPU job's functional units may use).
// --write-one-op writes the one-operator model file (for hrt_model_exec perf) and exits.
// Models or inputs that are missing are skipped with a line on stderr.
#include <benchmark/benchmark.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "dnn/hb_dnn.h"
#include "dnn/hb_sys.h"
#include "bayes_model_file.h"
#include "ort_peer.h"
#include "openbpu/common/npy.h"
#include "openbpu/ir/parse.h"

namespace fs = std::filesystem;

namespace {

struct ModelCase {
  const char* label;
  const char* conversion_case;  // <conversion-dir>/<case>/model_output/<case>.bin
  const char* float_model;      // fp32 model for onnxruntime
  const char* peer_model;       // ORT static int8 QDQ model
};

constexpr ModelCase kCases[] = {
    {"ppocrv4_det_704x960", "det", "ch_PP-OCRv4_det_infer.onnx", "ppocrv4_det_704x960.ort-qdq-int8.onnx"},
    {"ppocrv4_rec_48x320", "rec", "ch_PP-OCRv4_rec_infer.onnx", "ppocrv4_rec_48x320.ort-qdq-int8.onnx"},
    {"ppocr_cls_48x192", "cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx", "ppocr_cls_48x192.ort-qdq-int8.onnx"},
};

fs::path g_conversion_dir, g_inputs_dir, g_float_dir, g_peer_dir;
int g_threads = 1;
const fs::path g_source_dir = OPENBPU_SOURCE_DIR;

void check(int32_t status, const char* what) {
  if (status != 0) {
    std::cerr << "dnn_benchmark: " << what << " failed: " << hbDNNGetErrorDesc(status) << "\n";
    std::exit(1);
  }
}

double ort_median_ms(const fs::path& model, const fs::path& input) {
  return openbpu::bench::ort_median_ms(g_source_dir, model, input, g_threads);
}

// A loaded model file with one inference's tensors in BPU memory (inputs filled).
class Session {
 public:
  explicit Session(const std::string& file) {
    const char* f = file.c_str();
    check(hbDNNInitializeFromFiles(&packed_, &f, 1), "hbDNNInitializeFromFiles");
    const char** names = nullptr;
    int32_t n = 0;
    check(hbDNNGetModelNameList(&names, &n, packed_), "hbDNNGetModelNameList");
    check(hbDNNGetModelHandle(&dnn_, packed_, names[0]), "hbDNNGetModelHandle");
    int32_t in_count = 0, out_count = 0;
    check(hbDNNGetInputCount(&in_count, dnn_), "hbDNNGetInputCount");
    check(hbDNNGetOutputCount(&out_count, dnn_), "hbDNNGetOutputCount");
    inputs_.resize(static_cast<size_t>(in_count));
    outputs_.resize(static_cast<size_t>(out_count));
    for (int32_t i = 0; i < in_count; ++i) {
      hbDNNTensor& t = inputs_[static_cast<size_t>(i)];
      check(hbDNNGetInputTensorProperties(&t.properties, dnn_, i), "hbDNNGetInputTensorProperties");
      t.properties.alignedShape = t.properties.validShape;  // dense data: the runtime pads
      check(hbSysAllocCachedMem(&t.sysMem[0], static_cast<uint32_t>(t.properties.alignedByteSize)),
            "hbSysAllocCachedMem");
    }
    for (int32_t o = 0; o < out_count; ++o) {
      hbDNNTensor& t = outputs_[static_cast<size_t>(o)];
      check(hbDNNGetOutputTensorProperties(&t.properties, dnn_, o), "hbDNNGetOutputTensorProperties");
      check(hbSysAllocCachedMem(&t.sysMem[0], static_cast<uint32_t>(t.properties.alignedByteSize)),
            "hbSysAllocCachedMem");
    }
  }
  Session(const Session&) = delete;
  ~Session() {
    for (hbDNNTensor& t : inputs_) (void)hbSysFreeMem(&t.sysMem[0]);
    for (hbDNNTensor& t : outputs_) (void)hbSysFreeMem(&t.sysMem[0]);
    (void)hbDNNRelease(packed_);
  }

  // Copies `bytes` (the dense validShape data) into input 0.
  void set_input(const void* bytes, size_t size) {
    hbDNNTensor& t = inputs_.at(0);
    if (size > static_cast<size_t>(t.properties.alignedByteSize)) {
      std::cerr << "dnn_benchmark: input of " << size << " bytes is larger than the model's input\n";
      std::exit(1);
    }
    std::memcpy(t.sysMem[0].virAddr, bytes, size);
    check(hbSysFlushMem(&t.sysMem[0], HB_SYS_MEM_CACHE_CLEAN), "hbSysFlushMem");
  }

  // One hbDNNInfer + hbDNNWaitTaskDone + hbDNNReleaseTask; returns the time hbDNNInfer took (µs).
  double infer() {
    hbDNNInferCtrlParam param;
    HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
    hbDNNTaskHandle_t task = nullptr;
    hbDNNTensor* outs = outputs_.data();
    const auto t0 = std::chrono::steady_clock::now();
    check(hbDNNInfer(&task, &outs, inputs_.data(), dnn_, &param), "hbDNNInfer");
    const auto t1 = std::chrono::steady_clock::now();
    check(hbDNNWaitTaskDone(task, 0), "hbDNNWaitTaskDone");
    check(hbDNNReleaseTask(task), "hbDNNReleaseTask");
    return std::chrono::duration<double, std::micro>(t1 - t0).count();
  }

 private:
  hbPackedDNNHandle_t packed_ = nullptr;
  hbDNNHandle_t dnn_ = nullptr;
  std::vector<hbDNNTensor> inputs_, outputs_;
};

void run_model(benchmark::State& state, const std::string& bin, const fs::path& input, double fp32_ms,
               double int8_ms) {
  Session session(bin);
  const openbpu::kernels::Tensor data = openbpu::read_npy(input);
  session.set_input(data.raw_data(), data.byte_size());
  session.infer();  // warm-up
  double total_ms = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    session.infer();
    total_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  const double ours = total_ms / static_cast<double>(state.iterations());
  state.counters["hbdnn_ms"] = ours;
  state.counters["ort_fp32_ms"] = fp32_ms;
  state.counters["ort_int8_ms"] = int8_ms;
  state.counters["vs_fp32"] = fp32_ms > 0 ? ours / fp32_ms : 0;
  state.counters["vs_int8"] = int8_ms > 0 ? ours / int8_ms : 0;
}

// The one-operator model: float x[1,8,8,8] → Quantize (CPU) → one 1x1 HzSQuantizedConv (BPU,
// one segment) → Dequantize (CPU) → float y. The CPU quantize / dequantize pair is what every
// featuremap-input model has around its BPU part.
constexpr const char* kOneOpText = R"(model opsets=[ai.onnx:17, horizon:1]
graph one_op (%x: float32[1,8,8,8]) -> (%y) {
  init %w: int8[8,8,1,1] uniform(-128, 128)
  init %b: int32[8] uniform(-3000, 3000)
  %xq = horizon::Quantize[scale=0.03125](%x)
  %c = horizon::HzSQuantizedConv[kernel_shape=[1,1], strides=[1,1], pads=[0,0,0,0], dilations=[1,1], group=1, output_type="int8", multipliers=[1288490189,1288490189,1288490189,1288490189,1288490189,1288490189,1288490189,1288490189], shifts=[40,40,40,40,40,40,40,40]](%xq, %w, %b)
  %y = horizon::Dequantize[scales=[0.05]](%c)
}
)";

openbpu::kernels::Tensor one_op_input() { return openbpu::uniform_input({1, 8, 8, 8}, 1); }

// Compiles the one-operator model for bayes-e and writes its model file.
void write_one_op_model(const fs::path& file) {
  using namespace openbpu;
  const ir::Model model = ir::parse_model(kOneOpText);
  std::vector<uint8_t> bytes;
  const format::Status st = compile_bayes_model_file(model, one_op_input(), "one_op", "dnn_benchmark", &bytes);
  if (!st.ok()) {
    std::cerr << "dnn_benchmark: one-op model: " << st.message << "\n";
    std::exit(1);
  }
  std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
}

void run_one_op(benchmark::State& state, const std::string& bin) {
  Session session(bin);
  const openbpu::kernels::Tensor data = one_op_input();
  session.set_input(data.raw_data(), data.byte_size());
  session.infer();  // warm-up
  double infer_us = 0;
  for (auto _ : state) infer_us += session.infer();
  state.counters["hbDNNInfer_call_us"] = infer_us / static_cast<double>(state.iterations());
}

}  // namespace

int main(int argc, char** argv) {
  fs::path write_one_op;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      const size_t n = std::strlen(flag);
      return arg.compare(0, n, flag) == 0 ? argv[i] + n : nullptr;
    };
    if (const char* v = value("--conversion-dir=")) g_conversion_dir = v;
    if (const char* v = value("--inputs-dir=")) g_inputs_dir = v;
    if (const char* v = value("--float-models-dir=")) g_float_dir = v;
    if (const char* v = value("--peer-models-dir=")) g_peer_dir = v;
    if (const char* v = value("--threads=")) g_threads = std::atoi(v);
    if (const char* v = value("--write-one-op=")) write_one_op = v;
  }
  if (!write_one_op.empty()) {
    write_one_op_model(write_one_op);
    return 0;
  }
  if (g_threads < 1 || g_threads > 64 || g_conversion_dir.empty() || g_inputs_dir.empty() ||
      g_float_dir.empty() || g_peer_dir.empty()) {
    std::cerr << "usage: dnn_benchmark --conversion-dir=DIR --inputs-dir=DIR --float-models-dir=DIR "
                 "--peer-models-dir=DIR [--threads=N] (scripts/benchmark_runtime.sh prepares them)\n";
    return 2;
  }
  // Before the first hbDNN call: the scheduler reads it once.
  setenv("OPENBPU_DNN_THREADS", std::to_string(g_threads).c_str(), 1);
  setenv("OPENBPU_SIM_THREADS", std::to_string(g_threads).c_str(), 1);  // host threads of a BPU job
  benchmark::Initialize(&argc, argv);
  const std::string suffix = "/threads:" + std::to_string(g_threads);
  for (const ModelCase& c : kCases) {
    const fs::path bin = g_conversion_dir / c.conversion_case / "model_output" / (std::string(c.conversion_case) + ".bin");
    const fs::path input = g_inputs_dir / c.conversion_case / "input" / "000.npy";
    if (!fs::exists(bin) || !fs::exists(input)) {
      std::cerr << "dnn_benchmark: skipping " << c.label << ": " << bin << " or " << input << " is missing\n";
      continue;
    }
    const double fp32_ms = ort_median_ms(g_float_dir / c.float_model, input);
    const double int8_ms = ort_median_ms(g_peer_dir / c.peer_model, input);
    benchmark::RegisterBenchmark((std::string(c.label) + suffix).c_str(),
                                 [bin, input, fp32_ms, int8_ms](benchmark::State& s) {
                                   run_model(s, bin.string(), input, fp32_ms, int8_ms);
                                 })
        ->Unit(benchmark::kMillisecond)
        ->MinTime(2.0)
        ->UseRealTime();
  }
  const fs::path one_op = fs::temp_directory_path() / ("dnn_benchmark_one_op_" + std::to_string(getpid()) + ".bin");
  write_one_op_model(one_op);
  benchmark::RegisterBenchmark(("one_op_round_trip" + suffix).c_str(),
                               [one_op](benchmark::State& s) { run_one_op(s, one_op.string()); })
      ->Unit(benchmark::kMicrosecond)
      ->MinTime(1.0)
      ->UseRealTime();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  fs::remove(one_op);
  return 0;
}
