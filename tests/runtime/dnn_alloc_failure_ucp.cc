// Allocation-failure injection (dnn_alloc_failure_test.cc) on the UCP generation's calls: the
// n-th allocation of load, memory, hbDNNInferV2, callback, submit and wait fails, for every n
// until the sequence completes without reaching it. Every call returns HB_UCP_SUCCESS or
// HB_UCP_MEM_ALLOC_FAIL, never crashes; a successful run gives the quantized model's output;
// under ASan/LeakSanitizer nothing leaks.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "alloc_injection.h"
#include "hobot/dnn/hb_dnn.h"
#include "hobot/hb_ucp.h"

namespace openbpu {
namespace {

// One run of the UCP calls; what it made is released by the destructor (injection off).
struct UcpRun {
  hbDNNPackedHandle_t packed = nullptr;
  hbDNNHandle_t dnn = nullptr;
  hbDNNTensor in{}, out{};
  hbUCPTaskHandle_t task = nullptr;

  // The first failing call's status, or 0.
  int32_t run(const std::vector<uint8_t>& bytes, const std::vector<uint8_t>& x) {
    const void* data = bytes.data();
    int32_t length = static_cast<int32_t>(bytes.size());
    int32_t rc = hbDNNInitializeFromDDR(&packed, &data, &length, 1);
    if (rc == 0) rc = hbDNNGetModelHandle(&dnn, packed, "small");
    if (rc == 0) rc = hbDNNGetInputTensorProperties(&in.properties, dnn, 0);
    if (rc == 0) rc = hbDNNGetOutputTensorProperties(&out.properties, dnn, 0);
    if (rc == 0) rc = hbUCPMallocCached(&in.sysMem, x.size(), 0);
    if (rc == 0) rc = hbUCPMallocCached(&out.sysMem, static_cast<uint64_t>(out.properties.alignedByteSize), 0);
    if (rc == 0) {
      std::memcpy(in.sysMem.virAddr, x.data(), x.size());
      rc = hbUCPMemFlush(&in.sysMem, HB_SYS_MEM_CACHE_CLEAN);
    }
    if (rc == 0) rc = hbDNNInferV2(&task, &out, &in, dnn);
    if (rc == 0) rc = hbUCPSetTaskDoneCb(task, [](hbUCPTaskHandle_t, int32_t, void*) {}, nullptr);
    if (rc == 0) rc = hbUCPSubmitTask(task, nullptr);
    if (rc == 0) rc = hbUCPWaitTaskDone(task, 0);
    if (rc == 0) rc = hbUCPMemFlush(&out.sysMem, HB_SYS_MEM_CACHE_INVALIDATE);
    return rc;
  }
  ~UcpRun() {
    if (task != nullptr) {
      EXPECT_EQ(hbUCPReleaseTask(task), 0);
    }
    if (in.sysMem.virAddr != nullptr) {
      EXPECT_EQ(hbUCPFree(&in.sysMem), 0);
    }
    if (out.sysMem.virAddr != nullptr) {
      EXPECT_EQ(hbUCPFree(&out.sysMem), 0);
    }
    if (packed != nullptr) {
      EXPECT_EQ(hbDNNRelease(packed), 0);
    }
  }
};

TEST(DnnAllocationFailureUcp, EveryAllocationOfTheUcpCallsMayFail) {
  setenv("HB_DNN_LOG_LEVEL", "0", 1);
  const std::vector<uint8_t> bytes = alloc_injection::small_model_bytes();
  const std::vector<uint8_t> x = alloc_injection::small_model_input();
  const std::vector<uint8_t> want = alloc_injection::small_model_output();
  {
    UcpRun warm;  // the library's singletons and pools, outside the injection
    ASSERT_EQ(warm.run(bytes, x), 0);
  }
  int failures = 0;
  for (long n = 0;; ++n) {
    const long before = alloc_injection::injected();
    UcpRun r;
    alloc_injection::fail_at(n);
    const int32_t rc = r.run(bytes, x);
    alloc_injection::fail_at(-1);
    ASSERT_TRUE(rc == 0 || rc == HB_UCP_MEM_ALLOC_FAIL) << "allocation " << n << ": " << rc << " " << hbUCPGetErrorDesc(rc);
    if (rc == 0) {
      ASSERT_EQ(std::memcmp(r.out.sysMem.virAddr, want.data(), want.size()), 0) << "allocation " << n;
    } else {
      ++failures;
    }
    if (alloc_injection::injected() == before) {
      ASSERT_EQ(rc, 0);
      std::printf("UCP load + infer: %ld allocations, each failure reported\n", n);
      break;
    }
  }
  EXPECT_GT(failures, 10);
}

}  // namespace
}  // namespace openbpu
