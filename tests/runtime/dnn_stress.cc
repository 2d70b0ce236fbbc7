// dnn_stress: the runtime's concurrency and leak bars (issue 5). Depends on libdnn only (no
// toolchain library), so that its ThreadSanitizer build stays small.
//
//   dnn_stress threads --model A.bin --model B.bin [--threads 8] [--inferences 500] [--inputs 4]
//   dnn_stress rss --model A.bin [--inferences 100000] [--warmup 1000] [--max-growth-kib 4096]
//                  [--leak-bytes N]
//
// threads: loads the model files with one hbDNNInitializeFromFiles call, computes a reference
//   output for each of --inputs fixed random inputs per model (one task at a time, one thread),
//   then runs --threads threads; each runs --inferences iterations over every model: it
//   submits one task per model (both in flight together; every 8th iteration one task with a
//   sub-task per model, `more`), with a pseudo-random priority (one task in 4 at
//   HB_DNN_PRIORITY_PREEMP, which preempts at function-call boundaries), bpuCoreId alternating between
//   HB_BPU_CORE_ANY and HB_BPU_CORE_0, output memory allocated (hbSysAllocCachedMem) and freed
//   per inference, waits (forever, or polling with a 1 ms timeout) and releases. Every output
//   must equal the reference byte for byte; any error code or difference is reported and the
//   exit status is 1.
// rss: --inferences inferences of one model, one after the other (output memory allocated and
//   freed per inference, outputs checked against the first inference's). The resident set size
//   (/proc/self/statm) is sampled after --warmup inferences and at the end; growth above
//   --max-growth-kib fails (exit 1). 4 MiB over 100k inferences is 42 bytes per inference:
//   any per-inference leak of a heap object shows, while the allocator's own noise (arenas,
//   fragmentation: tens of KiB) does not.
// --leak-bytes N leaks N bytes per inference on purpose: the check of the bar itself.
// The runtime's own error log is off (HB_DNN_LOG_LEVEL=5 unless set): dnn_stress reports every
// failing call itself, with hbDNNGetErrorDesc.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dnn/hb_dnn.h"

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
  // data[k][i]: the bytes of input i of fixed input k (alignedByteSize, the model's layout).
  std::vector<std::vector<std::vector<uint8_t>>> data;
};

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
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    t.add(m.inputs[i]);
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
  }
  return packed;
}

// One task on model m: submit, wait for it, release it; any error code fails.
void infer_and_wait(const Model& m, Tensors& in, Tensors& out, const hbDNNInferCtrlParam& param) {
  hbDNNInferCtrlParam p = param;
  hbDNNTaskHandle_t task = nullptr;
  hbDNNTensor* outs = out.data();
  check(hbDNNInfer(&task, &outs, in.data(), m.handle, &p), "hbDNNInfer");
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
  infer_and_wait(m, in, out, param);
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
      for (const hbDNNTensorProperties& p : m.inputs) m.data[k].push_back(random_input(p, rng));
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

// One worker of the threads mode.
void worker(const std::vector<Model>& models, size_t thread, size_t iterations, std::atomic<bool>& stop) {
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
      hbDNNTensor* outs = out[m].data();
      const int32_t status = hbDNNInfer(task, &outs, in[m][input_of[m]].data(), models[m].handle, &param);
      if (status != HB_DNN_SUCCESS) {
        for (hbDNNTaskHandle_t t : tasks) {
          if (t != nullptr) (void)hbDNNReleaseTask(t);
        }
        check(status, "hbDNNInfer");
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
  }
}

int run_threads(std::vector<Model>& models, size_t threads, size_t iterations, size_t inputs) {
  hbPackedDNNHandle_t packed = load(models);
  prepare(models, inputs, 7);
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::string first_error;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      try {
        worker(models, t, iterations, stop);
      } catch (const Failure& f) {
        std::lock_guard<std::mutex> lock(mutex);
        if (first_error.empty()) first_error = f.message;
        stop = true;
      }
    });
  }
  for (std::thread& t : pool) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
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

size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) fail("cannot read /proc/self/statm");
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
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
    infer_and_wait(m, in, out, param);
    compare(m, 0, out, "at inference " + std::to_string(i));
    if (leak_bytes > 0) {
      static std::vector<std::unique_ptr<char[]>> leaked;  // never freed; touched so it is resident
      leaked.emplace_back(new char[leak_bytes]);
      std::memset(leaked.back().get(), 1, leak_bytes);
    }
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
            << "       dnn_stress rss --model A.bin [--inferences 100000] [--warmup 1000] [--max-growth-kib 4096] [--leak-bytes N]\n";
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
  if (mode != "threads" && mode != "rss") usage("unknown mode '" + mode + "'");
  const bool threads_mode = mode == "threads";
  std::vector<Model> models;
  size_t threads = 8, inputs = 4, warmup = 1000, max_growth_kib = 4096, leak_bytes = 0;
  size_t inferences = threads_mode ? 500 : 100000;
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage(flag + " wants a value");
    const char* value = argv[++i];
    if (flag == "--model") {
      models.emplace_back();
      models.back().file = value;
    } else if (flag == "--inferences") {
      inferences = number(flag, value);
    } else if (flag == "--threads" && threads_mode) {
      threads = number(flag, value);
    } else if (flag == "--inputs" && threads_mode) {
      inputs = number(flag, value);
    } else if (flag == "--warmup" && !threads_mode) {
      warmup = number(flag, value);
    } else if (flag == "--max-growth-kib" && !threads_mode) {
      max_growth_kib = number(flag, value);
    } else if (flag == "--leak-bytes" && !threads_mode) {
      leak_bytes = number(flag, value);
    } else {
      usage("unknown option " + flag + " for " + mode);
    }
  }
  if (models.empty()) usage("no --model");
  // The runtime would print every HB_DNN_TIMEOUT of the polling waits; failures are reported
  // here, with hbDNNGetErrorDesc's detail. HB_DNN_LOG_LEVEL set by the caller wins.
  setenv("HB_DNN_LOG_LEVEL", "5", 0);
  try {
    return threads_mode ? run_threads(models, threads, inferences, inputs) : run_rss(models, inferences, warmup, max_growth_kib, leak_bytes);
  } catch (const Failure& f) {
    std::cerr << "dnn_stress " << mode << ": FAILED: " << f.message << "\n";
    return 1;
  }
}
