// Allocation-failure injection on libdnn: the n-th allocation (operator new, or aligned_alloc,
// which hbSysAllocMem / hbSysAllocCachedMem take their blocks from; in any thread) of model
// loading, and then of one inference, fails, for every n until a call completes without
// reaching it; and of every hb_sys.h function, also with every allocation from the n-th on
// failing. Every call must return an error code (or succeed), never crash or hang; after a
// failure the same call without one succeeds; and under ASan/LeakSanitizer nothing may leak.
// Own binary: it replaces the global operator new and aligned_alloc. The UCP generation's calls:
// dnn_alloc_failure_ucp.cc, through alloc_injection.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "dnn/hb_dnn.h"
#include "dnn/hb_sys.h"
#include "alloc_injection.h"
#include "openbpu/executor/float_executor.h"
#include "small_model.h"

// The replacements below pair malloc with free by design; GCC cannot see that operator new
// here is malloc and warns at -O2 (the sanitizer build).
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

// Under ASan, memory from the sanitizer's own operator new (used outside this binary's
// replacement) may reach the delete below (free): that pairing is by design here.
extern "C" const char* __asan_default_options() { return "alloc_dealloc_mismatch=0"; }

namespace {

std::atomic<long> countdown{-1};  // < 0: off; the allocation that takes it from 0 fails
std::atomic<bool> keep_failing{false};  // then every later allocation fails too
std::atomic<long> injected{0};
std::atomic<long> allocations{0};  // every operator new so far

void* allocate(size_t n, size_t align) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (countdown.load(std::memory_order_relaxed) >= 0 && countdown.fetch_sub(1) == 0) {
    injected++;
    if (keep_failing) countdown = 0;
    return nullptr;
  }
  if (n == 0) n = 1;
  if (align <= alignof(std::max_align_t)) return std::malloc(n);
  void* p = nullptr;
  return posix_memalign(&p, align, n) == 0 ? p : nullptr;  // pairs with free, also under ASan
}

}  // namespace

// The executable's definition wins over libc's (and over ASan's interceptor) for the statically
// linked libdnn: a block of BPU memory is one more allocation that may fail.
extern "C" void* aligned_alloc(size_t align, size_t n) noexcept { return allocate(n, align); }

void* operator new(size_t n) {
  if (void* p = allocate(n, 0)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
void* operator new(size_t n, std::align_val_t a) {
  if (void* p = allocate(n, static_cast<size_t>(a))) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n, std::align_val_t a) { return operator new(n, a); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return allocate(n, 0); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return allocate(n, 0); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }

namespace openbpu {

namespace alloc_injection {

void fail_at(long n) { countdown = n; }
long injected() { return ::injected.load(); }
std::vector<uint8_t> small_model_bytes() { return model_file(ir::parse_model(kModelText), "small"); }
std::vector<uint8_t> small_model_input() {
  const Tensor x = random_input(11);
  const auto* p = static_cast<const uint8_t*>(x.raw_data());
  return std::vector<uint8_t>(p, p + x.byte_size());
}
std::vector<uint8_t> small_model_output() {
  const ir::Model model = ir::parse_model(kModelText);
  executor::FloatExecutor executor(model);
  const Tensor y = executor.run({{"x", random_input(11)}}).at("y").clone();
  const auto* p = static_cast<const uint8_t*>(y.raw_data());
  return std::vector<uint8_t>(p, p + y.byte_size());
}

}  // namespace alloc_injection

namespace {

bool allowed(int32_t rc, std::initializer_list<int32_t> codes) {
  for (int32_t c : codes) {
    if (rc == c) return true;
  }
  return false;
}

// Model `name` of `bytes` loaded, with its one input and one output in hbSysAllocMem memory and
// `x` copied into the input; released at the end of the scope.
struct LoadedModel {
  hbPackedDNNHandle_t packed = nullptr;
  hbDNNHandle_t dnn = nullptr;
  hbDNNTensor in{}, out{};

  LoadedModel(const std::vector<uint8_t>& bytes, const char* name, const Tensor& x) {
    const void* data = bytes.data();
    int32_t length = static_cast<int32_t>(bytes.size());
    EXPECT_EQ(hbDNNInitializeFromDDR(&packed, &data, &length, 1), 0);
    EXPECT_EQ(hbDNNGetModelHandle(&dnn, packed, name), 0);
    EXPECT_EQ(hbDNNGetInputTensorProperties(&in.properties, dnn, 0), 0);
    EXPECT_EQ(hbDNNGetOutputTensorProperties(&out.properties, dnn, 0), 0);
    EXPECT_EQ(hbSysAllocMem(&in.sysMem[0], static_cast<uint32_t>(in.properties.alignedByteSize)), 0);
    EXPECT_EQ(hbSysAllocMem(&out.sysMem[0], static_cast<uint32_t>(out.properties.alignedByteSize)), 0);
    if (in.sysMem[0].virAddr != nullptr) std::memcpy(in.sysMem[0].virAddr, x.raw_data(), x.byte_size());
  }
  ~LoadedModel() {
    EXPECT_EQ(hbSysFreeMem(&in.sysMem[0]), 0);
    EXPECT_EQ(hbSysFreeMem(&out.sysMem[0]), 0);
    EXPECT_EQ(hbDNNRelease(packed), 0);
  }
  LoadedModel(const LoadedModel&) = delete;
  LoadedModel& operator=(const LoadedModel&) = delete;
};

TEST(DnnAllocationFailure, EveryAllocationOfLoadAndInferMayFail) {
  setenv("HB_DNN_LOG_LEVEL", "0", 1);
  const ir::Model model = ir::parse_model(kModelText);
  const std::vector<uint8_t> bytes = model_file(model, "small");
  const Tensor x = random_input(11);
  executor::FloatExecutor executor(model);
  const Tensor want = executor.run({{"x", x}}).at("y").clone();

  // Warm the library's lazily created singletons (scheduler, platform) outside the injection.
  {
    hbPackedDNNHandle_t p = nullptr;
    const void* data = bytes.data();
    int32_t length = static_cast<int32_t>(bytes.size());
    ASSERT_EQ(hbDNNInitializeFromDDR(&p, &data, &length, 1), 0);
    ASSERT_EQ(hbDNNRelease(p), 0);
  }

  int load_failures = 0, infer_failures = 0, successes = 0;
  for (long n = 0;; ++n) {
    const long before = injected.load();
    hbPackedDNNHandle_t packed = nullptr;
    const void* data = bytes.data();
    int32_t length = static_cast<int32_t>(bytes.size());
    countdown = n;
    const int32_t rc = hbDNNInitializeFromDDR(&packed, &data, &length, 1);
    countdown = -1;
    if (injected.load() == before) {
      ASSERT_EQ(rc, 0);
      ASSERT_EQ(hbDNNRelease(packed), 0);
      std::printf("load: %ld allocations, each failure reported\n", n);
      break;
    }
    ASSERT_TRUE(allowed(rc, {0, HB_DNN_OUT_OF_MEMORY})) << "allocation " << n << ": " << rc;
    if (rc == 0) {
      ASSERT_EQ(hbDNNRelease(packed), 0);
    } else {
      EXPECT_EQ(packed, nullptr);
      ++load_failures;
    }
  }

  // One inference with allocation n failing: the error (or success) it reports, its output
  // compared with the executor's when it succeeded.
  auto infer_failing_at = [&](LoadedModel& m, long n) {
    std::memset(m.out.sysMem[0].virAddr, 0, want.byte_size());
    hbDNNInferCtrlParam p;
    HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&p);
    hbDNNTaskHandle_t task = nullptr;
    hbDNNTensor* outs = &m.out;
    countdown = n;
    const int32_t rc = hbDNNInfer(&task, &outs, &m.in, m.dnn, &p);
    int32_t done = rc;
    if (rc == 0) done = hbDNNWaitTaskDone(task, 0);
    countdown = -1;
    if (task != nullptr) {
      EXPECT_EQ(hbDNNReleaseTask(task), 0);
    }
    EXPECT_TRUE(allowed(rc, {0, HB_DNN_OUT_OF_MEMORY})) << "allocation " << n << ": " << rc;
    EXPECT_TRUE(allowed(done, {0, HB_DNN_OUT_OF_MEMORY})) << "allocation " << n << ": " << done << " "
                                                         << hbDNNGetErrorDesc(done);
    if (done == 0) {
      EXPECT_EQ(std::memcmp(m.out.sysMem[0].virAddr, want.raw_data(), want.byte_size()), 0) << "allocation " << n;
    }
    return done;
  };

  // The first inference of a freshly loaded model (its execution context is made then; the
  // task pool and the other process-wide storage are made by the first iterations), then one
  // without failures on the same model: it reuses whatever the failed one left (a context with
  // some outputs made) and gives the exact output.
  for (long n = 0;; ++n) {
    LoadedModel m(bytes, "small", x);
    ASSERT_FALSE(::testing::Test::HasFailure());
    const long before = injected.load();
    const int32_t done = infer_failing_at(m, n);
    const bool reached = injected.load() != before;
    ASSERT_EQ(infer_failing_at(m, -1), 0) << "after allocation " << n << " failed";
    ASSERT_FALSE(::testing::Test::HasFailure());
    if (done != 0) ++infer_failures;
    if (!reached) {
      ASSERT_EQ(done, 0);
      ++successes;
      std::printf("infer: %ld allocations, each failure reported\n", n);
      break;
    }
  }
  EXPECT_GT(load_failures, 10);
  EXPECT_GT(infer_failures, 5);
  EXPECT_EQ(successes, 1);
}

// Loads model `name` from `bytes`, runs `count` inferences one after the other (infer, wait,
// release) and returns the allocations of each, from its hbDNNInfer to its hbDNNReleaseTask.
std::vector<long> allocations_of_inferences(const std::vector<uint8_t>& bytes, const char* name, const Tensor& x, int count) {
  LoadedModel m(bytes, name, x);
  std::vector<long> made;
  made.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    const long before = allocations.load();
    hbDNNInferCtrlParam p;
    HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&p);
    hbDNNTaskHandle_t task = nullptr;
    hbDNNTensor* outs = &m.out;
    EXPECT_EQ(hbDNNInfer(&task, &outs, &m.in, m.dnn, &p), 0);
    EXPECT_EQ(hbDNNWaitTaskDone(task, 0), 0);
    EXPECT_EQ(hbDNNReleaseTask(task), 0);
    made.push_back(allocations.load() - before);
  }
  return made;
}

// After the first inference of a model, hbDNNInfer + hbDNNWaitTaskDone + hbDNNReleaseTask
// allocate nothing, in any thread: the task and its lists come from the task pool, the tensor
// table, CPU operator outputs and BPU span lists from the model's execution context, the BPU
// job from the device's spare list, the functional units' temporaries from their scratch arena.
// Two models: the small one (5 CPU operators, 2 BPU segments with a convolution, a LUT and a
// pooling) and the chain model (2 CPU operators, 1 BPU segment of 6 function calls).
TEST(DnnAllocations, AnInferenceAfterTheFirstAllocatesNothing) {
  setenv("HB_DNN_LOG_LEVEL", "0", 1);
  const ir::Model small = ir::parse_model(kModelText);
  const ir::Model chain = ir::parse_model(kChainModelText);
  std::vector<uint8_t> chain_bytes;
  const format::Status st = chain_model_file(chain, "chain", &chain_bytes);
  ASSERT_TRUE(st.ok()) << st.message;
  const std::vector<uint8_t> small_bytes = model_file(small, "small");
  for (int round = 0; round < 2; ++round) {
    const std::vector<long> small_counts = allocations_of_inferences(small_bytes, "small", random_input(3), 20);
    const std::vector<long> chain_counts = allocations_of_inferences(chain_bytes, "chain", chain_input(3), 20);
    std::printf("round %d: first inference of the small model %ld allocations, of the chain model %ld\n", round,
                small_counts[0], chain_counts[0]);
    // The first makes the model's execution context (and, in round 0, the task and the arena).
    EXPECT_GT(small_counts[0], 5);
    EXPECT_GT(chain_counts[0], 5);
    for (size_t i = 1; i < small_counts.size(); ++i) EXPECT_EQ(small_counts[i], 0) << "small model, inference " << i;
    for (size_t i = 1; i < chain_counts.size(); ++i) EXPECT_EQ(chain_counts[i], 0) << "chain model, inference " << i;
  }
}

// The memory the hb_sys.h calls below work on, made before and released after each call (the
// injection is off then): an allocated block, the copy of a freed one, a registered and an
// unregistered caller buffer, and `fresh` for the allocating calls to fill.
struct SysMemory {
  std::vector<char> own = std::vector<char>(512), other = std::vector<char>(256),
                    bytes = std::vector<char>(512);
  hbSysMem block{}, freed{}, fresh{};
  hbSysMem registered{0, own.data(), 256}, unregistered{0, other.data(), 256},
      overlap{0, own.data() + 8, 16};

  SysMemory() {
    EXPECT_EQ(hbSysAllocMem(&block, 256), 0);
    hbSysMem gone{};
    EXPECT_EQ(hbSysAllocMem(&gone, 64), 0);
    freed = gone;
    EXPECT_EQ(hbSysFreeMem(&gone), 0);
    EXPECT_EQ(hbSysRegisterMem(&registered), 0);
  }
  ~SysMemory() {  // whatever the call left: each of these may fail harmlessly
    (void)hbSysFreeMem(&block);
    (void)hbSysFreeMem(&fresh);
    (void)hbSysUnregisterMem(&registered);
    (void)hbSysUnregisterMem(&unregistered);
  }
  SysMemory(const SysMemory&) = delete;
  SysMemory& operator=(const SysMemory&) = delete;
};

// One call of an hb_sys.h function and the statuses hb_sys.h documents for it: the first is
// the one without failing allocations, HB_SYS_OUT_OF_MEMORY is listed where it is documented.
struct SysCall {
  const char* what;
  int32_t (*call)(SysMemory&);
  std::vector<int32_t> statuses;
};

const std::vector<SysCall>& sys_calls() {
  static const std::vector<SysCall> calls = {
      {"hbSysAllocMem",
       [](SysMemory& m) { return hbSysAllocMem(&m.fresh, 256); },
       {0, HB_SYS_OUT_OF_MEMORY}},
      {"hbSysAllocMem(NULL)",
       [](SysMemory&) { return hbSysAllocMem(nullptr, 16); },
       {HB_SYS_INVALID_ARGUMENT}},
      {"hbSysAllocMem(size 0)",
       [](SysMemory& m) { return hbSysAllocMem(&m.fresh, 0); },
       {HB_SYS_INVALID_ARGUMENT}},
      {"hbSysAllocCachedMem",
       [](SysMemory& m) { return hbSysAllocCachedMem(&m.fresh, 100); },
       {0, HB_SYS_OUT_OF_MEMORY}},
      {"hbSysAllocCachedMem(size 0)",
       [](SysMemory& m) { return hbSysAllocCachedMem(&m.fresh, 0); },
       {HB_SYS_INVALID_ARGUMENT}},
      {"hbSysFlushMem",
       [](SysMemory& m) { return hbSysFlushMem(&m.block, HB_SYS_MEM_CACHE_CLEAN); },
       {0}},
      {"hbSysFlushMem(flag 3)",
       [](SysMemory& m) { return hbSysFlushMem(&m.block, 3); },
       {HB_SYS_INVALID_ARGUMENT}},
      {"hbSysFlushMem(freed)",
       [](SysMemory& m) { return hbSysFlushMem(&m.freed, HB_SYS_MEM_CACHE_INVALIDATE); },
       {HB_SYS_INVALID_ARGUMENT}},
      {"hbSysFreeMem", [](SysMemory& m) { return hbSysFreeMem(&m.block); }, {0}},
      {"hbSysFreeMem(freed)",
       [](SysMemory& m) { return hbSysFreeMem(&m.freed); },
       {HB_SYS_INVALID_ARGUMENT}},
      {"hbSysFreeMem(registered)",
       [](SysMemory& m) { return hbSysFreeMem(&m.registered); },
       {HB_SYS_INVALID_ARGUMENT}},
      {"hbSysWriteMem",
       [](SysMemory& m) { return hbSysWriteMem(&m.block, m.bytes.data(), 256); },
       {0}},
      {"hbSysWriteMem(too large)",
       [](SysMemory& m) { return hbSysWriteMem(&m.block, m.bytes.data(), 257); },
       {HB_SYS_INVALID_ARGUMENT}},
      {"hbSysReadMem",
       [](SysMemory& m) { return hbSysReadMem(m.bytes.data(), &m.block, 256); },
       {0}},
      {"hbSysReadMem(NULL)",
       [](SysMemory& m) { return hbSysReadMem(nullptr, &m.block, 1); },
       {HB_SYS_INVALID_ARGUMENT}},
      {"hbSysRegisterMem",
       [](SysMemory& m) { return hbSysRegisterMem(&m.unregistered); },
       {0, HB_SYS_OUT_OF_MEMORY}},
      {"hbSysRegisterMem(overlap)",
       [](SysMemory& m) { return hbSysRegisterMem(&m.overlap); },
       {HB_SYS_INVALID_ARGUMENT}},
      {"hbSysUnregisterMem", [](SysMemory& m) { return hbSysUnregisterMem(&m.registered); }, {0}},
      {"hbSysUnregisterMem(not registered)",
       [](SysMemory& m) { return hbSysUnregisterMem(&m.unregistered); },
       {HB_SYS_REGISTER_MEM_FAILED}},
  };
  return calls;
}

// `c` with allocation n failing (and, with `keep`, every one after it), for every n until the
// call completes without reaching it. Returns that n: the allocations of the call.
long sys_call_failing_everywhere(const SysCall& c, bool keep) {
  for (long n = 0;; ++n) {
    SysMemory m;
    const long before = injected.load();
    keep_failing = keep;
    countdown = n;
    const int32_t rc = c.call(m);
    countdown = -1;
    keep_failing = false;
    const bool reached = injected.load() != before;
    const std::string where = std::string(c.what) +
                              (keep ? ", every allocation from " : ", allocation ") +
                              std::to_string(n) + " failing";
    EXPECT_NE(std::find(c.statuses.begin(), c.statuses.end(), rc), c.statuses.end())
        << where << ": " << rc;
    EXPECT_NE(hbDNNGetErrorDesc(rc), nullptr) << where;
    if (rc == HB_SYS_OUT_OF_MEMORY) {  // nothing was allocated or registered
      EXPECT_EQ(m.fresh.virAddr, nullptr) << where;
      EXPECT_EQ(hbSysUnregisterMem(&m.unregistered), HB_SYS_REGISTER_MEM_FAILED) << where;
    }
    // The failure left the registry as it was: the same call, without one, does what it does
    // when nothing fails (and what it made is usable, then freed or forgotten by ~SysMemory).
    if (rc != c.statuses.front()) {
      EXPECT_EQ(c.call(m), c.statuses.front()) << where << ", then the same call without a failure";
      if (m.fresh.virAddr != nullptr) {
        EXPECT_EQ(hbSysFlushMem(&m.fresh, HB_SYS_MEM_CACHE_CLEAN), 0) << where;
      }
    }
    if (!reached) {
      EXPECT_EQ(rc, c.statuses.front()) << where;
      return n;
    }
    if (::testing::Test::HasFailure()) return n;
  }
}

// hbSysAllocMem and hbSysAllocCachedMem when the block itself cannot be had (aligned_alloc
// fails: allocation 0 of the call): HB_SYS_OUT_OF_MEMORY with its detail, *mem untouched, and
// the next call gives a block that an inference can use.
TEST(DnnAllocationFailure, ABlockThatCannotBeAllocatedIsOutOfMemory) {
  setenv("HB_DNN_LOG_LEVEL", "5", 1);
  const ir::Model model = ir::parse_model(kModelText);
  const std::vector<uint8_t> bytes = model_file(model, "small");
  const Tensor x = random_input(5);
  for (const bool cached : {false, true}) {
    const char* what = cached ? "hbSysAllocCachedMem" : "hbSysAllocMem";
    auto alloc = [&](hbSysMem* mem, uint32_t size) { return cached ? hbSysAllocCachedMem(mem, size) : hbSysAllocMem(mem, size); };
    LoadedModel m(bytes, "small", x);
    ASSERT_EQ(hbSysFreeMem(&m.out.sysMem[0]), 0);
    const long before = injected.load();
    countdown = 0;
    const int32_t rc = alloc(&m.out.sysMem[0], static_cast<uint32_t>(m.out.properties.alignedByteSize));
    countdown = -1;
    ASSERT_EQ(injected.load(), before + 1) << what << ": the block allocation was not reached";
    EXPECT_EQ(rc, HB_SYS_OUT_OF_MEMORY) << what;
    const std::string desc = hbDNNGetErrorDesc(rc);
    const std::string detail =
        std::string(what) + ": " + std::to_string(m.out.properties.alignedByteSize) + " bytes could not be allocated";
    EXPECT_NE(desc.find(detail), std::string::npos) << desc;
    EXPECT_EQ(m.out.sysMem[0].virAddr, nullptr) << what;
    EXPECT_EQ(m.out.sysMem[0].memSize, 0u) << what;
    ASSERT_EQ(alloc(&m.out.sysMem[0], static_cast<uint32_t>(m.out.properties.alignedByteSize)), 0) << what << ", the next call";
    hbDNNInferCtrlParam p;
    HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&p);
    hbDNNTaskHandle_t task = nullptr;
    hbDNNTensor* outs = &m.out;
    ASSERT_EQ(hbDNNInfer(&task, &outs, &m.in, m.dnn, &p), 0) << what;
    EXPECT_EQ(hbDNNWaitTaskDone(task, 0), 0) << what;
    EXPECT_EQ(hbDNNReleaseTask(task), 0) << what;
  }
}

// The table above calls every function hb_sys.h declares.
TEST(DnnAllocationFailure, HbSysCallsCoverTheHeader) {
  std::ifstream in(std::string(OPENBPU_SOURCE_DIR) + "/runtime/include/dnn/hb_sys.h");
  ASSERT_TRUE(in) << "hb_sys.h not found";
  std::stringstream header;
  header << in.rdbuf();
  const std::string text = header.str();
  const std::regex declaration(R"(int32_t\s+(hbSys\w+)\s*\()");
  std::set<std::string> declared, called;
  for (std::sregex_iterator it(text.begin(), text.end(), declaration), end; it != end; ++it)
    declared.insert((*it)[1]);
  for (const SysCall& c : sys_calls())
    called.insert(std::string(c.what).substr(0, std::string(c.what).find('(')));
  EXPECT_EQ(declared.size(), 8u);
  EXPECT_EQ(declared, called);
}

TEST(DnnAllocationFailure, EveryHbSysFunctionReportsItsDocumentedStatus) {
  setenv("HB_DNN_LOG_LEVEL", "0", 1);
  for (const SysCall& c : sys_calls()) {
    for (bool keep : {false, true}) {
      const long allocations_of_call = sys_call_failing_everywhere(c, keep);
      ASSERT_FALSE(::testing::Test::HasFailure()) << c.what;
      if (!keep) std::printf("%s: %ld allocations\n", c.what, allocations_of_call);
      if (c.statuses == std::vector<int32_t>{0}) {
        EXPECT_EQ(allocations_of_call, 0) << c.what << " allocates, but hb_sys.h says it does not";
      } else if (c.statuses.front() != 0) {
        EXPECT_GT(allocations_of_call, 0)
            << c.what << ": its error text allocates, so the test injects failures";
      }
    }
  }
}

}  // namespace
}  // namespace openbpu
