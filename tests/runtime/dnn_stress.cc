// dnn_stress: the runtime's concurrency and leak bars (issues 5 and 28). Depends on libdnn only
// (no toolchain library), so that its ThreadSanitizer build stays small.
//
//   dnn_stress threads --model A.bin --model B.bin [--threads 8] [--inferences 500] [--inputs 4]
//   dnn_stress rss --model A.bin [--inferences 100000] [--warmup 1000] [--max-growth-kib 4096]
//                  [--leak-bytes N]
//   dnn_stress soak --model A.bin --model B.bin ... [--threads 8] [--inferences 100000] [--inputs 4]
//                   [--warmup N] [--max-growth-percent 2] [--leak-bytes N]
//   dnn_stress ucp --model A.bin --model B.bin [--threads 8] [--inferences 500] [--inputs 4]
//
// ucp: the threads mode through the UCP generation's API (dnn_stress_ucp.cc says how).
// threads: loads the model files with one hbDNNInitializeFromFiles call, computes a reference
//   output for each of --inputs fixed random inputs per model (one task at a time, one thread),
//   then runs --threads threads; each runs --inferences iterations over every model: it
//   submits one task per model (both in flight together; every 8th iteration one task with a
//   sub-task per model, `more`), with a pseudo-random priority (one task in 4 at
//   HB_DNN_PRIORITY_PREEMP, which preempts at function-call boundaries), bpuCoreId alternating between
//   HB_BPU_CORE_ANY and HB_BPU_CORE_0, output memory allocated (hbSysAllocCachedMem) and freed
//   per inference, waits (forever, or polling with a 1 ms timeout) and releases. Every output
//   must equal the reference byte for byte; any error code or difference is reported and the
//   exit status is 1. A model with a resizer input (input_source: resizer) runs with
//   hbDNNRoiInfer: each fixed input is a 64x48 NV12 image and a ROI of it (the input's size,
//   twice, half, 3 x 1.5 times it), so the resize runs at several scales.
// rss: --inferences inferences of one model, one after the other (output memory allocated and
//   freed per inference, outputs checked against the first inference's). The resident set size
//   (/proc/self/statm) is sampled after --warmup inferences and at the end; growth above
//   --max-growth-kib fails (exit 1). 4 MiB over 100k inferences is 42 bytes per inference:
//   any per-inference leak of a heap object shows, while the allocator's own noise (arenas,
//   fragmentation: tens of KiB) does not.
// soak: the threads mode for --inferences inferences in all (iterations of every model, spread
//   over the threads; at least that many), with the RSS sampled when --warmup inferences
//   (default: 5% of them) are done and at the end: growth above --max-growth-percent of the
//   RSS after the warm-up fails. Under AddressSanitizer the RSS bound is not applied (its
//   quarantine keeps freed memory resident); LeakSanitizer checks for leaks at exit instead.
// --leak-bytes N (rss, soak) leaks N bytes per inference on purpose, unreachable: the check of
//   the RSS bar and of LeakSanitizer themselves.
// The runtime's own error log is off (HB_DNN_LOG_LEVEL=5 unless set): dnn_stress reports every
// failing call itself, with hbDNNGetErrorDesc.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dnn/hb_dnn.h"
#include "dnn_stress_ucp.h"

namespace {

// Any failure: a message and exit status 1. Thrown from worker threads too (caught there).
struct Failure {
  std::string message;
};

template <typename... Args>
[[noreturn]] void fail(const Args&... args) {
  std::ostringstream s;
  (s << ... << args);
  throw Failure{s.str()};
}

void check(int32_t status, const char* what) {
  if (status != HB_DNN_SUCCESS) fail(what, " returned ", status, ": ", hbDNNGetErrorDesc(status));
}

struct Model {
  std::string file;
  hbDNNHandle_t handle = nullptr;
  std::vector<hbDNNTensorProperties> inputs, outputs;
  // reference[k][o]: output o for fixed input k.
  std::vector<std::vector<std::vector<uint8_t>>> reference;
  // data[k][i]: the bytes of input i of fixed input k (alignedByteSize of feeds[i]).
  std::vector<std::vector<std::vector<uint8_t>>> data;
  // What input i is fed: inputs[i], or for a resizer input the source image (kCanvas).
  std::vector<hbDNNTensorProperties> feeds;
  // rois[k]: one ROI per resizer input for fixed input k; empty for a model without resizer
  // inputs (hbDNNInfer).
  std::vector<std::vector<hbDNNRoi>> rois;
  std::vector<size_t> resizer_inputs;  // the inputs a resizer feeds, in input order
};

// The source image of a resizer input: NV12 (or Y) of kCanvasWidth x kCanvasHeight, rows of
// kCanvasWidth bytes.
constexpr int32_t kCanvasWidth = 64, kCanvasHeight = 48;

hbDNNTensorProperties canvas_properties(const hbDNNTensorProperties& input) {
  hbDNNTensorProperties p = input;
  p.validShape.dimensionSize[2] = p.alignedShape.dimensionSize[2] = kCanvasHeight;
  p.validShape.dimensionSize[3] = p.alignedShape.dimensionSize[3] = kCanvasWidth;
  const int32_t luma = kCanvasWidth * kCanvasHeight;
  p.alignedByteSize = p.tensorType == HB_DNN_IMG_TYPE_Y ? luma : luma + luma / 2;
  return p;
}

// The ROI of fixed input k for a resizer input of w x h: the input's size, twice, half, and
// 3 x 1.5 times it (several resize scales), at an even position that moves with k.
hbDNNRoi roi_of(size_t k, int32_t w, int32_t h) {
  const int32_t sizes[4][2] = {{w, h}, {2 * w, 2 * h}, {w / 2, h / 2}, {3 * w, 3 * h / 2}};
  const int32_t rw = sizes[k % 4][0] / 2 * 2, rh = sizes[k % 4][1] / 2 * 2;
  const int32_t left = static_cast<int32_t>(2 * (k % 5)), top = static_cast<int32_t>(2 * (k % 3));
  if (left + rw > kCanvasWidth || top + rh > kCanvasHeight) {
    fail("a resizer input of ", w, "x", h, " is too large for the ", kCanvasWidth, "x", kCanvasHeight, " source image");
  }
  return {left, top, left + rw - 1, top + rh - 1};
}

// Random bytes for a tensor in the model's layout; float tensors get values in [-1, 1).
std::vector<uint8_t> random_input(const hbDNNTensorProperties& p, std::mt19937& rng) {
  std::vector<uint8_t> bytes(static_cast<size_t>(p.alignedByteSize));
  if (p.tensorType == HB_DNN_TENSOR_TYPE_F32) {
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
      const float v = d(rng);
      std::memcpy(&bytes[i], &v, 4);
    }
  } else {
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng() & 0xff);
  }
  return bytes;
}

// Tensors of one inference of one model, in memory from hbSysAllocCachedMem, freed on destruction.
class Tensors {
 public:
  Tensors() = default;
  Tensors(Tensors&& other) noexcept : tensors_(std::move(other.tensors_)) { other.tensors_.clear(); }
  Tensors(const Tensors&) = delete;
  Tensors& operator=(const Tensors&) = delete;
  ~Tensors() {
    for (hbDNNTensor& t : tensors_) (void)hbSysFreeMem(&t.sysMem[0]);
  }
  void add(const hbDNNTensorProperties& p) {
    hbDNNTensor t{};
    t.properties = p;
    check(hbSysAllocCachedMem(&t.sysMem[0], static_cast<uint32_t>(p.alignedByteSize)), "hbSysAllocCachedMem");
    tensors_.push_back(t);
  }
  void write(size_t i, const std::vector<uint8_t>& bytes) {
    std::memcpy(tensors_[i].sysMem[0].virAddr, bytes.data(), bytes.size());
    check(hbSysFlushMem(&tensors_[i].sysMem[0], HB_SYS_MEM_CACHE_CLEAN), "hbSysFlushMem");
  }
  const uint8_t* read(size_t i) {
    check(hbSysFlushMem(&tensors_[i].sysMem[0], HB_SYS_MEM_CACHE_INVALIDATE), "hbSysFlushMem");
    return static_cast<const uint8_t*>(tensors_[i].sysMem[0].virAddr);
  }
  hbDNNTensor* data() { return tensors_.data(); }

 private:
  std::vector<hbDNNTensor> tensors_;
};

Tensors input_tensors(const Model& m, size_t k) {
  Tensors t;
  for (size_t i = 0; i < m.feeds.size(); ++i) {
    t.add(m.feeds[i]);
    t.write(i, m.data[k][i]);
  }
  return t;
}

void output_tensors(const Model& m, Tensors& t) {
  for (const hbDNNTensorProperties& p : m.outputs) t.add(p);
}

// Compares the outputs of model m for fixed input k with the reference.
void compare(const Model& m, size_t k, Tensors& outputs, const std::string& where) {
  for (size_t o = 0; o < m.outputs.size(); ++o) {
    const std::vector<uint8_t>& want = m.reference[k][o];
    const uint8_t* got = outputs.read(o);
    if (std::memcmp(got, want.data(), want.size()) != 0) {
      size_t at = 0;
      while (got[at] == want[at]) ++at;
      fail("MISMATCH ", where, ": ", m.file, " output ", o, " on input ", k, " differs from the single-threaded reference at byte ", at,
           " of ", want.size(), " (", int(got[at]), " vs ", int(want[at]), ")");
    }
  }
}

hbPackedDNNHandle_t load(std::vector<Model>& models) {
  std::vector<const char*> files;
  for (const Model& m : models) files.push_back(m.file.c_str());
  hbPackedDNNHandle_t packed = nullptr;
  check(hbDNNInitializeFromFiles(&packed, files.data(), static_cast<int32_t>(files.size())), "hbDNNInitializeFromFiles");
  const char** names = nullptr;
  int32_t count = 0;
  check(hbDNNGetModelNameList(&names, &count, packed), "hbDNNGetModelNameList");
  if (count != static_cast<int32_t>(models.size())) fail("the packed handle holds ", count, " models, ", models.size(), " files were given");
  for (size_t i = 0; i < models.size(); ++i) {
    Model& m = models[i];
    check(hbDNNGetModelHandle(&m.handle, packed, names[i]), "hbDNNGetModelHandle");
    int32_t in = 0, out = 0;
    check(hbDNNGetInputCount(&in, m.handle), "hbDNNGetInputCount");
    check(hbDNNGetOutputCount(&out, m.handle), "hbDNNGetOutputCount");
    m.inputs.resize(static_cast<size_t>(in));
    m.outputs.resize(static_cast<size_t>(out));
    for (int32_t j = 0; j < in; ++j) check(hbDNNGetInputTensorProperties(&m.inputs[j], m.handle, j), "hbDNNGetInputTensorProperties");
    for (int32_t j = 0; j < out; ++j) check(hbDNNGetOutputTensorProperties(&m.outputs[j], m.handle, j), "hbDNNGetOutputTensorProperties");
    for (int32_t j = 0; j < in; ++j) {
      int32_t source = HB_DNN_INPUT_FROM_DDR;
      check(hbDNNGetInputSource(&source, m.handle, j), "hbDNNGetInputSource");
      const bool resizer = source == HB_DNN_INPUT_FROM_RESIZER;
      m.feeds.push_back(resizer ? canvas_properties(m.inputs[j]) : m.inputs[j]);
      if (resizer) m.resizer_inputs.push_back(static_cast<size_t>(j));
    }
  }
  return packed;
}

// Submits one task (or, with param.more, one sub-task) of model m on fixed input k: hbDNNInfer,
// or hbDNNRoiInfer with input k's ROIs for a model with resizer inputs.
int32_t submit(const Model& m, size_t k, hbDNNTaskHandle_t* task, Tensors& in, Tensors& out, hbDNNInferCtrlParam* param) {
  hbDNNTensor* outs = out.data();
  if (m.resizer_inputs.empty()) return hbDNNInfer(task, &outs, in.data(), m.handle, param);
  std::vector<hbDNNRoi> rois = m.rois[k];  // hbDNNRoiInfer takes a non-const array
  return hbDNNRoiInfer(task, &outs, in.data(), rois.data(), static_cast<int32_t>(rois.size()), m.handle, param);
}

// One task on model m and fixed input k: submit, wait for it, release it; any error code fails.
void infer_and_wait(const Model& m, size_t k, Tensors& in, Tensors& out, const hbDNNInferCtrlParam& param) {
  hbDNNInferCtrlParam p = param;
  hbDNNTaskHandle_t task = nullptr;
  check(submit(m, k, &task, in, out, &p), m.resizer_inputs.empty() ? "hbDNNInfer" : "hbDNNRoiInfer");
  const int32_t done = hbDNNWaitTaskDone(task, 0);
  check(hbDNNReleaseTask(task), "hbDNNReleaseTask");
  check(done, "hbDNNWaitTaskDone");
}

// One inference, alone: outputs of model m on fixed input k.
std::vector<std::vector<uint8_t>> infer_alone(const Model& m, size_t k) {
  Tensors in = input_tensors(m, k);
  Tensors out;
  output_tensors(m, out);
  hbDNNInferCtrlParam param;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
  infer_and_wait(m, k, in, out, param);
  std::vector<std::vector<uint8_t>> result;
  for (size_t o = 0; o < m.outputs.size(); ++o) {
    const uint8_t* p = out.read(o);
    result.emplace_back(p, p + m.outputs[o].alignedByteSize);
  }
  return result;
}

void prepare(std::vector<Model>& models, size_t inputs, uint32_t seed) {
  std::mt19937 rng(seed);
  for (Model& m : models) {
    m.data.resize(inputs);
    for (size_t k = 0; k < inputs; ++k) {
      for (const hbDNNTensorProperties& p : m.feeds) m.data[k].push_back(random_input(p, rng));
      if (!m.resizer_inputs.empty()) {
        m.rois.emplace_back();
        for (size_t i : m.resizer_inputs) {
          const hbDNNTensorShape& shape = m.inputs[i].validShape;
          m.rois.back().push_back(roi_of(k, shape.dimensionSize[3], shape.dimensionSize[2]));
        }
      }
      m.reference.push_back(infer_alone(m, k));
      // Outputs that do not depend on the input could not show an inference that read another
      // thread's input or wrote another task's output.
      for (size_t j = 0; j < k; ++j) {
        if (m.reference[j] == m.reference[k]) fail(m.file, ": fixed inputs ", j, " and ", k, " give the same outputs");
      }
    }
  }
}

void wait(hbDNNTaskHandle_t task, bool poll) {
  if (!poll) {
    check(hbDNNWaitTaskDone(task, 0), "hbDNNWaitTaskDone");
    return;
  }
  for (;;) {
    const int32_t status = hbDNNWaitTaskDone(task, 1);
    if (status != HB_DNN_TIMEOUT) {
      check(status, "hbDNNWaitTaskDone(timeout 1 ms)");
      return;
    }
  }
}

// The resident set size (/proc/self/statm), read without allocating: a sample must not change
// what it measures.
size_t resident_bytes() {
  char text[128] = {};
  const int fd = ::open("/proc/self/statm", O_RDONLY);
  const ssize_t n = fd < 0 ? -1 : ::read(fd, text, sizeof text - 1);
  if (fd >= 0) ::close(fd);
  unsigned long long size = 0, resident = 0;
  if (n <= 0 || std::sscanf(text, "%llu %llu", &size, &resident) != 2) fail("cannot read /proc/self/statm");
  return static_cast<size_t>(resident) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// --leak-bytes: `bytes` allocated, touched (resident) and lost: only the last block stays
// reachable (through last_leaked), so LeakSanitizer reports the others.
char* volatile last_leaked = nullptr;
void leak(size_t bytes) {
  char* block = new char[bytes];
  std::memset(block, 1, bytes);
  last_leaked = block;
}

// The soak's count of finished inferences, and the RSS sampled when it passes the warm-up and
// every 1000 after it.
struct Progress {
  size_t warmup = 0, leak_bytes = 0;
  std::atomic<size_t> done{0}, after_warmup{0}, peak{0};

  void record(size_t inferences) {
    const size_t before = done.fetch_add(inferences), after = before + inferences;
    for (size_t i = 0; leak_bytes > 0 && i < inferences; ++i) leak(leak_bytes);
    if (before < warmup && after >= warmup) after_warmup = resident_bytes();
    if (after > warmup && before / 1000 != after / 1000) {
      const size_t now = resident_bytes();
      size_t seen = peak.load();
      while (now > seen && !peak.compare_exchange_weak(seen, now)) {
      }
    }
  }
};

// One worker of the threads and soak modes (`progress`: the soak's, else null).
void worker(const std::vector<Model>& models, size_t thread, size_t iterations, std::atomic<bool>& stop, Progress* progress) {
  std::mt19937 rng(static_cast<uint32_t>(1000 + thread));
  const size_t inputs = models[0].data.size();
  // This thread's inputs: every fixed input of every model, in its own memory.
  std::vector<std::vector<Tensors>> in(models.size());
  for (size_t m = 0; m < models.size(); ++m) {
    for (size_t k = 0; k < inputs; ++k) in[m].push_back(input_tensors(models[m], k));
  }
  for (size_t it = 0; it < iterations && !stop.load(std::memory_order_relaxed); ++it) {
    const std::string where = "in thread " + std::to_string(thread) + ", iteration " + std::to_string(it);
    const bool combined = it % 8 == 7;  // one task with a sub-task per model
    const bool poll = it % 3 == 1;
    std::vector<Tensors> out(models.size());
    std::vector<size_t> input_of(models.size());
    std::vector<hbDNNTaskHandle_t> tasks(models.size(), nullptr);
    for (size_t m = 0; m < models.size(); ++m) {
      output_tensors(models[m], out[m]);
      input_of[m] = (thread + it + m) % inputs;
      hbDNNInferCtrlParam param;
      HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
      // One task in 4 is HB_DNN_PRIORITY_PREEMP: it preempts the other model's running BPU job
      // at a function-call boundary when that model has several calls (chain.bin).
      param.priority = rng() % 4 == 0 ? HB_DNN_PRIORITY_PREEMP : static_cast<int32_t>(rng() % 255);
      param.bpuCoreId = (it + m) % 2 == 0 ? HB_BPU_CORE_ANY : HB_BPU_CORE_0;
      param.customId = static_cast<int64_t>(rng() % 16);
      hbDNNTaskHandle_t* task = &tasks[combined ? 0 : m];
      if (combined) param.more = m + 1 < models.size() ? 1 : 0;
      const int32_t status = submit(models[m], input_of[m], task, in[m][input_of[m]], out[m], &param);
      if (status != HB_DNN_SUCCESS) {
        for (hbDNNTaskHandle_t t : tasks) {
          if (t != nullptr) (void)hbDNNReleaseTask(t);
        }
        check(status, models[m].resizer_inputs.empty() ? "hbDNNInfer" : "hbDNNRoiInfer");
      }
    }
    std::string error;
    for (hbDNNTaskHandle_t t : tasks) {
      if (t == nullptr) continue;
      try {
        wait(t, poll);
      } catch (const Failure& f) {
        if (error.empty()) error = f.message;
      }
      const int32_t released = hbDNNReleaseTask(t);
      if (released != HB_DNN_SUCCESS && error.empty()) error = "hbDNNReleaseTask returned " + std::to_string(released);
    }
    if (!error.empty()) fail(error, " ", where);
    for (size_t m = 0; m < models.size(); ++m) compare(models[m], input_of[m], out[m], where);
    if (progress != nullptr) progress->record(models.size());
  }
}

// Runs `threads` workers of `iterations` iterations each; returns the first failure ("" if none)
// and the wall time in *seconds.
std::string run_workers(const std::vector<Model>& models, size_t threads, size_t iterations, Progress* progress,
                        double* seconds) {
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::string first_error;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      try {
        worker(models, t, iterations, stop, progress);
      } catch (const Failure& f) {
        std::lock_guard<std::mutex> lock(mutex);
        if (first_error.empty()) first_error = f.message;
        stop = true;
      }
    });
  }
  for (std::thread& t : pool) t.join();
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return first_error;
}

int run_threads(std::vector<Model>& models, size_t threads, size_t iterations, size_t inputs) {
  hbPackedDNNHandle_t packed = load(models);
  prepare(models, inputs, 7);
  double seconds = 0;
  const std::string first_error = run_workers(models, threads, iterations, nullptr, &seconds);
  check(hbDNNRelease(packed), "hbDNNRelease");
  if (!first_error.empty()) {
    std::cerr << "dnn_stress threads: FAILED: " << first_error << "\n";
    return 1;
  }
  std::cout << "dnn_stress threads: " << threads << " threads x " << models.size() << " models x " << iterations
            << " inferences = " << threads * models.size() * iterations << " inferences in " << seconds
            << " s, every output equal to the single-threaded reference\n";
  return 0;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

struct SoakOptions {
  size_t threads = 8, inferences = 100000, inputs = 4, warmup = 0, max_growth_percent = 2, leak_bytes = 0;
};

int run_soak(std::vector<Model>& models, const SoakOptions& o) {
  const size_t per_iteration = o.threads * models.size();
  const size_t iterations = (o.inferences + per_iteration - 1) / per_iteration;
  Progress progress;
  progress.warmup = o.warmup != 0 ? o.warmup : o.inferences / 20;
  progress.leak_bytes = o.leak_bytes;
  if (progress.warmup >= o.inferences) fail("--warmup must be below --inferences");
  hbPackedDNNHandle_t packed = load(models);
  // The references are computed on a thread of their own, so that the code a thread runs when it
  // ends (the runtime's thread_local staging) is resident before the warm-up, like the rest:
  // RSS counts the pages of code too, and the first run of a function would look like growth.
  std::string error;
  std::thread([&] {
    try {
      prepare(models, o.inputs, 7);
    } catch (const Failure& f) {
      error = f.message;
    }
  }).join();
  if (!error.empty()) fail(error);
  (void)resident_bytes();
  double seconds = 0;
  const std::string first_error = run_workers(models, o.threads, iterations, &progress, &seconds);
  const size_t end = resident_bytes(), after_warmup = progress.after_warmup.load();
  check(hbDNNRelease(packed), "hbDNNRelease");
  if (!first_error.empty()) {
    std::cerr << "dnn_stress soak: FAILED: " << first_error << "\n";
    return 1;
  }
  const size_t done = progress.done.load();
  const auto kib = [](size_t b) { return b / 1024; };
  const long long growth = static_cast<long long>(end) - static_cast<long long>(after_warmup);
  const double percent = 100.0 * static_cast<double>(growth) / static_cast<double>(after_warmup);
  std::ostringstream names;
  for (const Model& m : models) names << (&m == &models[0] ? "" : ", ") << m.file;
  std::cout << "dnn_stress soak: " << done << " inferences (" << o.threads << " threads x " << models.size()
            << " models x " << iterations << ") of " << names.str() << " in " << seconds
            << " s, every output equal to the single-threaded reference; RSS after " << progress.warmup << ": "
            << kib(after_warmup) << " KiB, at the end: " << kib(end) << " KiB (growth " << growth / 1024 << " KiB = "
            << percent << " %, peak " << kib(std::max(progress.peak.load(), end)) << " KiB, bound " << o.max_growth_percent
            << " %)\n";
  if (kAddressSanitizer) {
    std::cout << "dnn_stress soak: the RSS bound is not applied under AddressSanitizer (its quarantine keeps freed memory "
                 "resident); LeakSanitizer checks at exit\n";
  } else if (percent > static_cast<double>(o.max_growth_percent)) {
    std::cerr << "dnn_stress soak: FAILED: RSS grew by " << growth / 1024 << " KiB (" << percent
              << " % of the RSS after the warm-up, " << double(growth) / double(done - progress.warmup)
              << " bytes per inference), more than " << o.max_growth_percent << " %\n";
    return 1;
  }
  return 0;
}

int run_rss(std::vector<Model>& models, size_t inferences, size_t warmup, size_t max_growth_kib, size_t leak_bytes) {
  if (models.size() != 1) fail("rss takes one --model");
  if (warmup >= inferences) fail("--warmup must be below --inferences");
  hbPackedDNNHandle_t packed = load(models);
  prepare(models, 1, 7);
  const Model& m = models[0];
  Tensors in = input_tensors(m, 0);
  hbDNNInferCtrlParam param;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
  size_t after_warmup = 0, peak = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < inferences; ++i) {
    if (i == warmup) after_warmup = resident_bytes();
    if (i > warmup && i % 1000 == 0) peak = std::max(peak, resident_bytes());
    Tensors out;
    output_tensors(m, out);
    infer_and_wait(m, 0, in, out, param);
    compare(m, 0, out, "at inference " + std::to_string(i));
    if (leak_bytes > 0) leak(leak_bytes);
  }
  const size_t end = resident_bytes();
  peak = std::max(peak, end);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  check(hbDNNRelease(packed), "hbDNNRelease");
  const auto kib = [](size_t b) { return b / 1024; };
  const long long growth = static_cast<long long>(end) - static_cast<long long>(after_warmup);
  std::cout << "dnn_stress rss: " << inferences << " inferences of " << m.file << " in " << seconds << " s; RSS after " << warmup
            << ": " << kib(after_warmup) << " KiB, at the end: " << kib(end) << " KiB (growth " << growth / 1024
            << " KiB, peak " << kib(peak) << " KiB, bound " << max_growth_kib << " KiB)\n";
  if (growth > static_cast<long long>(max_growth_kib) * 1024) {
    std::cerr << "dnn_stress rss: FAILED: RSS grew by " << growth / 1024 << " KiB (" << double(growth) / double(inferences - warmup)
              << " bytes per inference), more than " << max_growth_kib << " KiB\n";
    return 1;
  }
  return 0;
}

[[noreturn]] void usage(const std::string& error) {
  std::cerr << "dnn_stress: " << error << "\n"
            << "usage: dnn_stress threads --model A.bin --model B.bin [--threads 8] [--inferences 500] [--inputs 4]\n"
            << "       dnn_stress rss --model A.bin [--inferences 100000] [--warmup 1000] [--max-growth-kib 4096] [--leak-bytes N]\n"
            << "       dnn_stress soak --model A.bin --model B.bin ... [--threads 8] [--inferences 100000] [--inputs 4]\n"
            << "                       [--warmup N] [--max-growth-percent 2] [--leak-bytes N]\n";
  std::exit(2);
}

size_t number(const std::string& flag, const char* text) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || v == 0) usage(flag + " wants a positive integer, not '" + text + "'");
  return static_cast<size_t>(v);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage("no mode");
  const std::string mode = argv[1];
  if (mode != "threads" && mode != "rss" && mode != "soak" && mode != "ucp") usage("unknown mode '" + mode + "'");
  // The flags each mode takes.
  const std::map<std::string, std::set<std::string>> flags = {
      {"threads", {"--model", "--inferences", "--threads", "--inputs"}},
      {"ucp", {"--model", "--inferences", "--threads", "--inputs"}},
      {"rss", {"--model", "--inferences", "--warmup", "--max-growth-kib", "--leak-bytes"}},
      {"soak", {"--model", "--inferences", "--threads", "--inputs", "--warmup", "--max-growth-percent", "--leak-bytes"}}};
  std::vector<Model> models;
  SoakOptions o;
  size_t rss_warmup = 1000, max_growth_kib = 4096;
  if (mode == "threads" || mode == "ucp") o.inferences = 500;
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage(flag + " wants a value");
    const char* value = argv[++i];
    if (flags.at(mode).count(flag) == 0) usage("unknown option " + flag + " for " + mode);
    if (flag == "--model") {
      models.emplace_back();
      models.back().file = value;
      continue;
    }
    const size_t v = number(flag, value);
    if (flag == "--inferences") o.inferences = v;
    if (flag == "--threads") o.threads = v;
    if (flag == "--inputs") o.inputs = v;
    if (flag == "--warmup") o.warmup = rss_warmup = v;
    if (flag == "--max-growth-kib") max_growth_kib = v;
    if (flag == "--max-growth-percent") o.max_growth_percent = v;
    if (flag == "--leak-bytes") o.leak_bytes = v;
  }
  if (models.empty()) usage("no --model");
  // The runtime would print every HB_DNN_TIMEOUT of the polling waits; failures are reported
  // here, with hbDNNGetErrorDesc's detail. HB_DNN_LOG_LEVEL set by the caller wins.
  setenv("HB_DNN_LOG_LEVEL", "5", 0);
  try {
    if (mode == "threads") return run_threads(models, o.threads, o.inferences, o.inputs);
    if (mode == "ucp") {
      std::vector<std::string> files;
      for (const Model& m : models) files.push_back(m.file);
      return openbpu::stress::run_ucp(files, o.threads, o.inferences, o.inputs);
    }
    if (mode == "rss") return run_rss(models, o.inferences, rss_warmup, max_growth_kib, o.leak_bytes);
    return run_soak(models, o);
  } catch (const Failure& f) {
    std::cerr << "dnn_stress " << mode << ": FAILED: " << f.message << "\n";
    return 1;
  }
}
