// dnn_stress ucp (dnn_stress.cc's usage): loads the model files with one hbDNNInitializeFromFiles
// of the UCP generation, computes a reference output per model for each of `inputs` fixed random
// inputs (hbDNNInferV2 synchronous, one thread), then runs `threads` threads of `iterations`
// iterations each: every model as its own task (all in flight together), every 4th iteration one
// task with a sub-task per model instead; one task in 4 at priority 255 (preempting), the
// backend alternating HB_UCP_BPU_CORE_ANY and HB_UCP_BPU_CORE_0; completion by callback (which
// releases every 3rd task itself) or by hbUCPWaitTaskDone polling with a 1 ms timeout; output
// memory from hbUCPMallocCached, flushed as a board needs. Every output must equal its
// reference byte for byte. Models with one input that is not an NV12 image.
#include "dnn_stress_ucp.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <mutex>
#include <random>
#include <thread>

#include "hobot/dnn/hb_dnn.h"
#include "hobot/hb_ucp.h"

namespace openbpu::stress {

namespace {

struct UcpModel {
  hbDNNHandle_t handle = nullptr;
  std::string name;
  hbDNNTensorProperties in{}, out{};
  std::vector<std::vector<uint8_t>> inputs, references;
};

std::mutex report_mutex;
std::atomic<int> failures{0};

void report(const std::string& what, int32_t rc) {
  failures++;
  std::lock_guard<std::mutex> lock(report_mutex);
  std::cerr << "dnn_stress ucp: " << what << ": " << rc << " " << hbUCPGetErrorDesc(rc) << "\n";
}

bool ok(int32_t rc, const std::string& what) {
  if (rc != 0) report(what, rc);
  return rc == 0;
}

std::vector<uint8_t> random_input(const hbDNNTensorProperties& p, uint32_t seed) {
  std::vector<uint8_t> bytes(static_cast<size_t>(p.alignedByteSize));
  std::mt19937 rng(seed);
  if (p.tensorType == HB_DNN_TENSOR_TYPE_F32) {
    std::uniform_real_distribution<float> d(-2.0f, 2.0f);
    for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
      const float v = d(rng);
      std::memcpy(&bytes[i], &v, 4);
    }
  } else {
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  }
  return bytes;
}

// One inference's tensors in BPU memory.
struct Buffers {
  hbDNNTensor in{}, out{};
  bool make(const UcpModel& m, const std::vector<uint8_t>& input) {
    in.properties = m.in;
    out.properties = m.out;
    if (!ok(hbUCPMallocCached(&in.sysMem, input.size(), 0), "hbUCPMallocCached") ||
        !ok(hbUCPMallocCached(&out.sysMem, static_cast<uint64_t>(m.out.alignedByteSize), 0), "hbUCPMallocCached")) {
      return false;
    }
    std::memcpy(in.sysMem.virAddr, input.data(), input.size());
    return ok(hbUCPMemFlush(&in.sysMem, HB_SYS_MEM_CACHE_CLEAN), "hbUCPMemFlush clean");
  }
  std::vector<uint8_t> output() {
    if (!ok(hbUCPMemFlush(&out.sysMem, HB_SYS_MEM_CACHE_INVALIDATE), "hbUCPMemFlush invalidate")) return {};
    const auto* p = static_cast<const uint8_t*>(out.sysMem.virAddr);
    return std::vector<uint8_t>(p, p + out.properties.alignedByteSize);
  }
  ~Buffers() {
    if (in.sysMem.virAddr != nullptr) ok(hbUCPFree(&in.sysMem), "hbUCPFree");
    if (out.sysMem.virAddr != nullptr) ok(hbUCPFree(&out.sysMem), "hbUCPFree");
  }
};

// A task in flight: its completion, set by the callback.
struct Flight {
  hbUCPTaskHandle_t task = nullptr;
  bool by_callback = false, callback_releases = false;
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  int32_t status = 0;
};

void on_done(hbUCPTaskHandle_t task, int32_t status, void* user) {
  auto* f = static_cast<Flight*>(user);
  if (f->callback_releases) ok(hbUCPReleaseTask(task), "hbUCPReleaseTask in the callback");
  std::lock_guard<std::mutex> lock(f->mutex);
  f->done = true;
  f->status = status;
  f->cv.notify_all();
}

void finish(Flight& f) {
  if (f.by_callback) {
    std::unique_lock<std::mutex> lock(f.mutex);
    f.cv.wait(lock, [&] { return f.done; });
    ok(f.status, "the task (callback status)");
    if (f.callback_releases) return;
  } else {
    int32_t rc;
    while ((rc = hbUCPWaitTaskDone(f.task, 1)) == HB_UCP_TASK_TIMEOUT) {
    }
    ok(rc, "hbUCPWaitTaskDone");
  }
  ok(hbUCPReleaseTask(f.task), "hbUCPReleaseTask");
}

void run_thread(std::vector<UcpModel>& models, size_t thread, size_t iterations) {
  std::mt19937 rng(static_cast<uint32_t>(1000 + thread));
  for (size_t it = 0; it < iterations && failures == 0; ++it) {
    const bool one_task = it % 4 == 3;
    std::vector<Buffers> buffers(models.size());
    std::vector<size_t> which(models.size());
    std::vector<Flight> flights(one_task ? 1 : models.size());
    hbUCPSchedParam sched;
    HB_UCP_INITIALIZE_SCHED_PARAM(&sched);
    sched.priority = rng() % 4 == 0 ? HB_UCP_PRIORITY_HIGHEST : static_cast<int32_t>(rng() % 200);
    sched.backend = it % 2 == 0 ? HB_UCP_BPU_CORE_ANY : HB_UCP_BPU_CORE_0;
    for (size_t m = 0; m < models.size(); ++m) {
      which[m] = rng() % models[m].inputs.size();
      if (!buffers[m].make(models[m], models[m].inputs[which[m]])) return;
      Flight& f = flights[one_task ? 0 : m];
      if (!ok(hbDNNInferV2(&f.task, &buffers[m].out, &buffers[m].in, models[m].handle), "hbDNNInferV2")) return;
      if (one_task && m + 1 < models.size()) continue;
      f.by_callback = rng() % 2 == 0;
      f.callback_releases = f.by_callback && rng() % 3 == 0;
      if (f.by_callback && !ok(hbUCPSetTaskDoneCb(f.task, on_done, &f), "hbUCPSetTaskDoneCb")) return;
      if (!ok(hbUCPSubmitTask(f.task, &sched), "hbUCPSubmitTask")) return;
    }
    for (Flight& f : flights) finish(f);
    for (size_t m = 0; m < models.size(); ++m) {
      if (buffers[m].output() != models[m].references[which[m]]) {
        failures++;
        std::lock_guard<std::mutex> lock(report_mutex);
        std::cerr << "dnn_stress ucp: thread " << thread << " iteration " << it << ": model '" << models[m].name
                  << "' input " << which[m] << ": the output differs from the reference\n";
      }
    }
  }
}

}  // namespace

int run_ucp(const std::vector<std::string>& model_files, size_t threads, size_t iterations, size_t inputs) {
  std::vector<const char*> files;
  for (const std::string& f : model_files) files.push_back(f.c_str());
  hbDNNPackedHandle_t packed = nullptr;
  if (!ok(hbDNNInitializeFromFiles(&packed, files.data(), static_cast<int32_t>(files.size())), "hbDNNInitializeFromFiles")) return 1;
  const char** names = nullptr;
  int32_t count = 0;
  if (!ok(hbDNNGetModelNameList(&names, &count, packed), "hbDNNGetModelNameList")) return 1;
  std::vector<UcpModel> models(static_cast<size_t>(count));
  for (int32_t i = 0; i < count; ++i) {
    UcpModel& m = models[static_cast<size_t>(i)];
    m.name = names[i];
    int32_t n_in = 0, n_out = 0;
    if (!ok(hbDNNGetModelHandle(&m.handle, packed, names[i]), "hbDNNGetModelHandle") ||
        !ok(hbDNNGetInputCount(&n_in, m.handle), "hbDNNGetInputCount") ||
        !ok(hbDNNGetOutputCount(&n_out, m.handle), "hbDNNGetOutputCount") ||
        !ok(hbDNNGetInputTensorProperties(&m.in, m.handle, 0), "hbDNNGetInputTensorProperties") ||
        !ok(hbDNNGetOutputTensorProperties(&m.out, m.handle, 0), "hbDNNGetOutputTensorProperties")) {
      return 1;
    }
    if (n_in != 1 || n_out != 1 || m.in.alignedByteSize <= 0) {
      std::cerr << "dnn_stress ucp: model '" << m.name << "' is not one input (not NV12) and one output\n";
      return 1;
    }
    for (size_t k = 0; k < inputs; ++k) {
      m.inputs.push_back(random_input(m.in, static_cast<uint32_t>(100 * i + k)));
      Buffers b;
      if (!b.make(m, m.inputs.back()) || !ok(hbDNNInferV2(nullptr, &b.out, &b.in, m.handle), "reference hbDNNInferV2")) return 1;
      m.references.push_back(b.output());
    }
  }
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) pool.emplace_back(run_thread, std::ref(models), t, iterations);
  for (std::thread& t : pool) t.join();
  if (!ok(hbDNNRelease(packed), "hbDNNRelease")) return 1;
  if (failures != 0) {
    std::cerr << "dnn_stress ucp: FAILED: " << failures.load() << " failure(s)\n";
    return 1;
  }
  std::cout << "dnn_stress ucp: " << threads << " threads x " << iterations << " iterations x " << models.size()
            << " models through the UCP API: every output equal to its reference\n";
  return 0;
}

}  // namespace openbpu::stress
