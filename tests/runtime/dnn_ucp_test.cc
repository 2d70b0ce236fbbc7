// The UCP generation's API (hobot/hb_ucp.h, hobot/hb_ucp_sys.h, hobot/dnn/hb_dnn.h) on the runtime
// unit tests' model files (dnn_small_model_file): descriptions, hbDNNInferV2 against the classic
// API bit for bit (dnn_ucp_reference.cc), NV12 inputs as Y / UV planes with padded rows, tasks
// with sub-tasks, callbacks, priorities, the flush check, and every documented error status.
// This binary runs with one scheduler worker (set before the library starts it), so that a
// callback that blocks holds the whole scheduler: the priority test is then deterministic.
#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "dnn_ucp_reference.h"
#include "hobot/dnn/hb_dnn.h"
#include "hobot/dnn/hb_dnn_v1.h"
#include "hobot/hb_ucp.h"

namespace {

const int kOneWorker = (setenv("OPENBPU_DNN_THREADS", "1", 1), setenv("HB_DNN_LOG_LEVEL", "0", 1), 0);

std::string model_path(const char* file) { return std::string(OPENBPU_SMALL_MODELS_DIR) + "/" + file; }

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  std::mt19937 rng(seed);
  for (uint8_t& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

// A float input of the small models: uniform in [-2, 2).
std::vector<uint8_t> float_input(size_t elements, uint32_t seed) {
  std::vector<float> f(elements);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  for (float& x : f) x = d(rng);
  std::vector<uint8_t> bytes(elements * 4);
  std::memcpy(bytes.data(), f.data(), bytes.size());
  return bytes;
}

class Ucp : public ::testing::Test {
 protected:
  void load(const char* file) {
    const std::string path = model_path(file);
    const char* name = path.c_str();
    ASSERT_EQ(hbDNNInitializeFromFiles(&packed_, &name, 1), 0) << hbUCPGetErrorDesc(HB_UCP_MODEL_INVALID);
    const char** names = nullptr;
    int32_t count = 0;
    ASSERT_EQ(hbDNNGetModelNameList(&names, &count, packed_), 0);
    ASSERT_EQ(hbDNNGetModelHandle(&dnn_, packed_, names[0]), 0);
  }
  void TearDown() override {
    for (hbUCPSysMem& m : memory_) EXPECT_EQ(hbUCPFree(&m), 0);
    if (packed_ != nullptr) {
      EXPECT_EQ(hbDNNRelease(packed_), 0) << hbUCPGetErrorDesc(HB_UCP_MODEL_IS_INUSE);
    }
  }
  hbUCPSysMem alloc(uint64_t size, bool cached = true) {
    hbUCPSysMem m{};
    EXPECT_EQ(cached ? hbUCPMallocCached(&m, size, 0) : hbUCPMalloc(&m, size, 0), 0);
    memory_.push_back(m);
    return m;
  }
  // The model's single input filled with `data` (dense strides) and cleaned; its outputs.
  void tensors(hbDNNHandle_t dnn, const std::vector<uint8_t>& data, hbDNNTensor* in, std::vector<hbDNNTensor>* out) {
    *in = {};
    ASSERT_EQ(hbDNNGetInputTensorProperties(&in->properties, dnn, 0), 0);
    in->sysMem = alloc(data.size());
    std::memcpy(in->sysMem.virAddr, data.data(), data.size());
    ASSERT_EQ(hbUCPMemFlush(&in->sysMem, HB_SYS_MEM_CACHE_CLEAN), 0);
    int32_t n = 0;
    ASSERT_EQ(hbDNNGetOutputCount(&n, dnn), 0);
    out->assign(static_cast<size_t>(n), hbDNNTensor{});
    for (int32_t o = 0; o < n; ++o) {
      hbDNNTensor& t = (*out)[static_cast<size_t>(o)];
      ASSERT_EQ(hbDNNGetOutputTensorProperties(&t.properties, dnn, o), 0);
      t.sysMem = alloc(static_cast<uint64_t>(t.properties.alignedByteSize));
    }
  }
  static std::vector<uint8_t> bytes_of(const hbDNNTensor& t) {
    const auto* p = static_cast<const uint8_t*>(t.sysMem.virAddr);
    return std::vector<uint8_t>(p, p + t.properties.alignedByteSize);
  }
  hbUCPTaskHandle_t submitted(hbDNNTensor* in, std::vector<hbDNNTensor>& out, int32_t priority = 0) {
    hbUCPTaskHandle_t task = nullptr;
    EXPECT_EQ(hbDNNInferV2(&task, out.data(), in, dnn_), 0) << hbUCPGetErrorDesc(HB_UCP_INVALID_ARGUMENT);
    hbUCPSchedParam p;
    HB_UCP_INITIALIZE_SCHED_PARAM(&p);
    p.priority = priority;
    EXPECT_EQ(hbUCPSubmitTask(task, &p), 0) << hbUCPGetErrorDesc(HB_UCP_INVALID_ARGUMENT);
    return task;
  }

  hbDNNPackedHandle_t packed_ = nullptr;
  hbDNNHandle_t dnn_ = nullptr;
  std::vector<hbUCPSysMem> memory_;
};

TEST_F(Ucp, PropertiesCountsAndDescriptions) {
  load("small.bin");
  int32_t n = 0;
  ASSERT_EQ(hbDNNGetInputCount(&n, dnn_), 0);
  EXPECT_EQ(n, 1);
  const char* name = nullptr;
  ASSERT_EQ(hbDNNGetInputName(&name, dnn_, 0), 0);
  EXPECT_STREQ(name, "x");
  hbDNNTensorProperties p{};
  ASSERT_EQ(hbDNNGetInputTensorProperties(&p, dnn_, 0), 0);
  EXPECT_EQ(p.tensorType, HB_DNN_TENSOR_TYPE_F32);
  ASSERT_EQ(p.validShape.numDimensions, 4);
  EXPECT_EQ(p.validShape.dimensionSize[1], 3);
  EXPECT_EQ(p.alignedByteSize, 3 * 8 * 8 * 4);
  EXPECT_EQ(p.stride[3], 4);
  EXPECT_EQ(p.quantiType, NONE);
  ASSERT_EQ(hbDNNGetOutputTensorProperties(&p, dnn_, 0), 0);
  EXPECT_EQ(p.tensorType, HB_DNN_TENSOR_TYPE_F32);
  const char* desc = nullptr;
  uint32_t size = 0;
  int32_t type = -1;
  ASSERT_EQ(hbDNNGetModelDesc(&desc, &size, &type, dnn_), 0);
  EXPECT_EQ(type, HB_DNN_DESC_TYPE_STRING);
  EXPECT_EQ(size, std::strlen(desc));
  EXPECT_NE(std::string(desc).find("\"MARCH\": \"bayes-e\""), std::string::npos) << desc;
  ASSERT_EQ(hbDNNGetOutputDesc(&desc, &size, &type, dnn_, 0), 0);
  EXPECT_EQ(type, HB_DNN_DESC_TYPE_UNKNOWN);
  EXPECT_EQ(size, 0u);
  ASSERT_EQ(hbDNNGetHBMDesc(&desc, &size, &type, packed_, 0), 0);
  EXPECT_NE(std::string(desc).find("\"MODELS\": \"small\""), std::string::npos) << desc;
  EXPECT_EQ(hbDNNGetHBMDesc(&desc, &size, &type, packed_, 1), HB_DNN_INVALID_ARGUMENT);
  int32_t cores = 0;
  ASSERT_EQ(hbDNNGetCompileBpuCoreNum(&cores, dnn_), 0);
  EXPECT_EQ(cores, 1);
  EXPECT_NE(std::string(hbUCPGetVersion()).find("OpenBPU"), std::string::npos);
  EXPECT_STREQ(hbUCPGetSocName(), "openbpu-sim");
}

TEST_F(Ucp, InferV2SynchronousAndAsynchronousEqualTheClassicApi) {
  load("small.bin");
  const std::vector<uint8_t> x = float_input(3 * 8 * 8, 7);
  const std::vector<std::vector<uint8_t>> want = openbpu::ucp_reference::classic_run(model_path("small.bin"), {x});
  hbDNNTensor in;
  std::vector<hbDNNTensor> out;
  tensors(dnn_, x, &in, &out);
  ASSERT_EQ(hbDNNInferV2(nullptr, out.data(), &in, dnn_), 0) << hbUCPGetErrorDesc(HB_UCP_INVALID_ARGUMENT);
  ASSERT_EQ(hbUCPMemFlush(&out[0].sysMem, HB_SYS_MEM_CACHE_INVALIDATE), 0);
  EXPECT_EQ(bytes_of(out[0]), want[0]);
  std::memset(out[0].sysMem.virAddr, 0, want[0].size());
  hbUCPTaskHandle_t task = submitted(&in, out);
  EXPECT_EQ(hbUCPWaitTaskDone(task, 0), 0);
  EXPECT_EQ(hbUCPWaitTaskDone(task, 0), 0);  // again: the same result
  EXPECT_EQ(bytes_of(out[0]), want[0]);
  EXPECT_EQ(hbUCPReleaseTask(task), 0);
}

TEST_F(Ucp, SubTasksOfTwoModelsRunInOneTask) {
  load("small.bin");
  hbDNNPackedHandle_t packed16 = nullptr;
  const std::string path16 = model_path("small_16x16.bin");
  const char* file16 = path16.c_str();
  ASSERT_EQ(hbDNNInitializeFromFiles(&packed16, &file16, 1), 0);
  hbDNNHandle_t dnn16 = nullptr;
  ASSERT_EQ(hbDNNGetModelHandle(&dnn16, packed16, "small_16x16"), 0);
  const std::vector<uint8_t> x = float_input(3 * 8 * 8, 1), x16 = float_input(3 * 16 * 16, 2);
  hbDNNTensor in, in16;
  std::vector<hbDNNTensor> out, out16;
  tensors(dnn_, x, &in, &out);
  tensors(dnn16, x16, &in16, &out16);
  hbUCPTaskHandle_t task = nullptr;
  ASSERT_EQ(hbDNNInferV2(&task, out.data(), &in, dnn_), 0);
  ASSERT_EQ(hbDNNInferV2(&task, out16.data(), &in16, dnn16), 0);
  hbDNNTensorProperties p{};
  ASSERT_EQ(hbDNNGetTaskOutputTensorProperties(&p, task, 1, 0), 0);
  EXPECT_EQ(p.alignedByteSize, out16[0].properties.alignedByteSize);
  EXPECT_EQ(hbDNNGetTaskOutputTensorProperties(&p, task, 2, 0), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNRelease(packed16), HB_DNN_MODEL_IS_RUNNING);  // its sub-task holds it
  EXPECT_EQ(hbUCPSubmitTask(task, nullptr), 0);
  EXPECT_EQ(hbDNNInferV2(&task, out.data(), &in, dnn_), HB_DNN_INVALID_TASK_HANDLE);  // submitted: no more
  ASSERT_EQ(hbUCPWaitTaskDone(task, 0), 0);
  EXPECT_EQ(bytes_of(out[0]), openbpu::ucp_reference::classic_run(model_path("small.bin"), {x})[0]);
  EXPECT_EQ(bytes_of(out16[0]), openbpu::ucp_reference::classic_run(path16, {x16})[0]);
  EXPECT_EQ(hbUCPReleaseTask(task), 0);
  EXPECT_EQ(hbDNNRelease(packed16), 0);
}

// nv12.bin's NV12 input is two tensors, Y (1,16,16,1) and UV (1,8,8,2), with strides the caller
// sets: rows of 32 bytes here (16 of data, 16 of padding the runtime must skip).
TEST_F(Ucp, Nv12InputAsYAndUvPlanesWithPaddedRows) {
  load("nv12.bin");
  int32_t n = 0;
  ASSERT_EQ(hbDNNGetInputCount(&n, dnn_), 0);
  ASSERT_EQ(n, 2);
  const char* name = nullptr;
  ASSERT_EQ(hbDNNGetInputName(&name, dnn_, 1), 0);
  EXPECT_STREQ(name, "x_uv");
  hbDNNTensor y{}, uv{};
  ASSERT_EQ(hbDNNGetInputTensorProperties(&y.properties, dnn_, 0), 0);
  ASSERT_EQ(hbDNNGetInputTensorProperties(&uv.properties, dnn_, 1), 0);
  EXPECT_EQ(y.properties.tensorType, HB_DNN_TENSOR_TYPE_U8);
  const int32_t y_shape[4] = {1, 16, 16, 1}, uv_shape[4] = {1, 8, 8, 2};
  EXPECT_TRUE(std::equal(y_shape, y_shape + 4, y.properties.validShape.dimensionSize));
  EXPECT_TRUE(std::equal(uv_shape, uv_shape + 4, uv.properties.validShape.dimensionSize));
  EXPECT_EQ(y.properties.stride[1], -1);
  EXPECT_EQ(uv.properties.stride[2], 2);
  const std::vector<uint8_t> dense = random_bytes(16 * 16 * 3 / 2, 5);
  const std::vector<std::vector<uint8_t>> want = openbpu::ucp_reference::classic_run(model_path("nv12.bin"), {dense});
  y.properties.stride[1] = uv.properties.stride[1] = 32;
  y.properties.stride[0] = 32 * 16;
  uv.properties.stride[0] = 32 * 8;
  y.sysMem = alloc(32 * 16);
  uv.sysMem = alloc(32 * 8);
  std::memset(y.sysMem.virAddr, 0x77, 32 * 16);
  std::memset(uv.sysMem.virAddr, 0x77, 32 * 8);
  for (int r = 0; r < 24; ++r) {
    auto* plane = static_cast<uint8_t*>(r < 16 ? y.sysMem.virAddr : uv.sysMem.virAddr);
    std::memcpy(plane + (r < 16 ? r : r - 16) * 32, dense.data() + r * 16, 16);
  }
  hbDNNTensor inputs[2] = {y, uv};
  std::vector<hbDNNTensor> out(1);
  ASSERT_EQ(hbDNNGetOutputTensorProperties(&out[0].properties, dnn_, 0), 0);
  out[0].sysMem = alloc(static_cast<uint64_t>(out[0].properties.alignedByteSize));
  ASSERT_EQ(hbDNNInferV2(nullptr, out.data(), inputs, dnn_), 0) << hbUCPGetErrorDesc(HB_UCP_INVALID_ARGUMENT);
  EXPECT_EQ(bytes_of(out[0]), want[0]);
  // Rows must be at least the data, a multiple of 32, and the same in both planes.
  inputs[0].properties.stride[1] = 48;
  EXPECT_EQ(hbDNNInferV2(nullptr, out.data(), inputs, dnn_), HB_DNN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hbUCPGetErrorDesc(HB_UCP_INVALID_ARGUMENT)).find("multiple of 32"), std::string::npos);
  inputs[0].properties.stride[1] = 64;
  inputs[0].properties.stride[0] = 64 * 16;
  EXPECT_EQ(hbDNNInferV2(nullptr, out.data(), inputs, dnn_), HB_DNN_INVALID_ARGUMENT);  // UV's is 32
}

// roi.bin's resizer input: the source image (any size) as Y / UV planes, one ROI per batch;
// hbDNNRoiInferV2 equals the classic hbDNNRoiInfer, with dense and with padded rows.
TEST_F(Ucp, RoiInferV2EqualsTheClassicRoiInfer) {
  load("roi.bin");
  hbDNNTensor y{}, uv{};
  ASSERT_EQ(hbDNNGetInputTensorProperties(&y.properties, dnn_, 0), 0);
  ASSERT_EQ(hbDNNGetInputTensorProperties(&uv.properties, dnn_, 1), 0);
  EXPECT_EQ(y.properties.validShape.dimensionSize[1], -1);  // the source image's size: the caller's
  const int32_t width = 64, height = 48;
  const std::vector<uint8_t> nv12 = random_bytes(width * height * 3 / 2, 8);
  const std::vector<int32_t> rois = {0, 0, 31, 23, 10, 8, 25, 23};
  const std::vector<uint8_t> want = openbpu::ucp_reference::classic_roi_run(model_path("roi.bin"), nv12, width, height, rois);
  hbDNNTensor out{};
  ASSERT_EQ(hbDNNGetOutputTensorProperties(&out.properties, dnn_, 0), 0);
  for (int64_t row : {64, 96}) {
    const int32_t y_dims[4] = {1, height, width, 1}, uv_dims[4] = {1, height / 2, width / 2, 2};
    std::copy(y_dims, y_dims + 4, y.properties.validShape.dimensionSize);
    std::copy(uv_dims, uv_dims + 4, uv.properties.validShape.dimensionSize);
    y.properties.stride[1] = uv.properties.stride[1] = row;
    y.properties.stride[0] = row * height;
    uv.properties.stride[0] = row * height / 2;
    y.sysMem = alloc(static_cast<uint64_t>(row * height));
    uv.sysMem = alloc(static_cast<uint64_t>(row * height / 2));
    for (int r = 0; r < height * 3 / 2; ++r) {
      auto* plane = static_cast<uint8_t*>(r < height ? y.sysMem.virAddr : uv.sysMem.virAddr);
      std::memcpy(plane + (r < height ? r : r - height) * row, nv12.data() + r * width, width);
    }
    out.sysMem = alloc(want.size());
    hbDNNTensor inputs[4] = {y, uv, y, uv};
    hbDNNRoi boxes[2] = {{rois[0], rois[1], rois[2], rois[3]}, {rois[4], rois[5], rois[6], rois[7]}};
    hbUCPTaskHandle_t task = nullptr;
    ASSERT_EQ(hbDNNRoiInferV2(&task, &out, inputs, boxes, 2, dnn_), 0) << hbUCPGetErrorDesc(HB_UCP_INVALID_ARGUMENT);
    ASSERT_EQ(hbUCPSubmitTask(task, nullptr), 0);
    ASSERT_EQ(hbUCPWaitTaskDone(task, 0), 0);
    EXPECT_EQ(hbUCPReleaseTask(task), 0);
    const auto* p = static_cast<const uint8_t*>(out.sysMem.virAddr);
    EXPECT_EQ(std::vector<uint8_t>(p, p + want.size()), want) << "row stride " << row;
  }
  hbDNNTensor inputs[2] = {y, uv};
  hbDNNRoi odd_left = {1, 0, 30, 23};
  EXPECT_EQ(hbDNNRoiInferV2(nullptr, &out, inputs, &odd_left, 1, dnn_), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNInferV2(nullptr, &out, inputs, dnn_), HB_DNN_INVALID_ARGUMENT);  // the resizer's input
  EXPECT_NE(std::string(hbUCPGetErrorDesc(HB_UCP_INVALID_ARGUMENT)).find("hbDNNRoiInferV2"), std::string::npos);
}

TEST_F(Ucp, MisuseGetsItsDocumentedStatus) {
  load("small.bin");
  hbDNNTensor in;
  std::vector<hbDNNTensor> out;
  tensors(dnn_, float_input(3 * 8 * 8, 3), &in, &out);
  hbUCPTaskHandle_t task = nullptr;
  ASSERT_EQ(hbDNNInferV2(&task, out.data(), &in, dnn_), 0);
  EXPECT_EQ(hbUCPWaitTaskDone(task, 0), HB_UCP_API_USE_ERROR);  // not submitted
  hbUCPSchedParam p;
  HB_UCP_INITIALIZE_SCHED_PARAM(&p);
  p.backend = HB_UCP_DSP_CORE_0;
  EXPECT_EQ(hbUCPSubmitTask(task, &p), HB_UCP_OP_CMD_UNAVAILABLE);
  EXPECT_NE(std::string(hbUCPGetErrorDesc(HB_UCP_OP_CMD_UNAVAILABLE)).find("0x100"), std::string::npos);
  p.backend = HB_UCP_BPU_CORE_1;  // bayes-e has one core
  EXPECT_EQ(hbUCPSubmitTask(task, &p), HB_UCP_INVALID_ARGUMENT);
  p.backend = HB_UCP_BPU_CORE_0;
  p.priority = 256;
  EXPECT_EQ(hbUCPSubmitTask(task, &p), HB_UCP_INVALID_ARGUMENT);
  p.priority = HB_UCP_PRIORITY_HIGHEST;
  p.deviceId = 1;
  EXPECT_EQ(hbUCPSubmitTask(task, &p), HB_UCP_INVALID_ARGUMENT);
  p.deviceId = 0;
  ASSERT_EQ(hbUCPSubmitTask(task, &p), 0);
  EXPECT_EQ(hbUCPSubmitTask(task, &p), HB_UCP_API_USE_ERROR);  // twice
  EXPECT_EQ(hbUCPSetTaskDoneCb(task, [](hbUCPTaskHandle_t, int32_t, void*) {}, nullptr), HB_UCP_API_USE_ERROR);
  EXPECT_EQ(hbUCPWaitTaskDone(task, 0), 0);
  EXPECT_EQ(hbUCPReleaseTask(task), 0);
  // A released handle is refused by every call that takes one.
  EXPECT_EQ(hbUCPWaitTaskDone(task, 0), HB_UCP_TASK_HANDLE_INVALID);
  EXPECT_EQ(hbUCPSubmitTask(task, &p), HB_UCP_TASK_HANDLE_INVALID);
  EXPECT_EQ(hbUCPReleaseTask(task), HB_UCP_TASK_HANDLE_INVALID);
  EXPECT_EQ(hbUCPSetTaskDoneCb(task, [](hbUCPTaskHandle_t, int32_t, void*) {}, nullptr), HB_UCP_TASK_HANDLE_INVALID);
  hbDNNTensorProperties props{};
  EXPECT_EQ(hbDNNGetTaskOutputTensorProperties(&props, task, 0, 0), HB_UCP_TASK_HANDLE_INVALID);
  // Tensors: a stride neither the model's nor dense, a wrong type, freed memory.
  hbDNNTensor bad = in;
  bad.properties.stride[3] = 8;
  EXPECT_EQ(hbDNNInferV2(nullptr, out.data(), &bad, dnn_), HB_DNN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hbDNNGetErrorDesc(HB_DNN_INVALID_ARGUMENT)).find("stride"), std::string::npos);
  bad = in;
  bad.properties.tensorType = HB_DNN_TENSOR_TYPE_S8;
  EXPECT_EQ(hbDNNInferV2(nullptr, out.data(), &bad, dnn_), HB_DNN_INVALID_ARGUMENT);
  hbUCPSysMem freed{};
  ASSERT_EQ(hbUCPMallocCached(&freed, 3 * 8 * 8 * 4, 0), 0);
  bad = in;
  bad.sysMem = freed;
  ASSERT_EQ(hbUCPFree(&freed), 0);
  EXPECT_EQ(hbDNNInferV2(nullptr, out.data(), &bad, dnn_), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbUCPFree(&bad.sysMem), HB_UCP_MEM_IS_INVALID);
  EXPECT_EQ(hbUCPMemFlush(&bad.sysMem, HB_SYS_MEM_CACHE_CLEAN), HB_UCP_MEM_IS_INVALID);
  EXPECT_EQ(hbUCPMemFlush(&in.sysMem, 3), HB_UCP_INVALID_ARGUMENT);
  EXPECT_EQ(hbUCPMallocCached(&freed, 0, 0), HB_UCP_INVALID_ARGUMENT);
  EXPECT_EQ(hbUCPMalloc(nullptr, 64, 0), HB_UCP_INVALID_ARGUMENT);
  // Handles and files.
  int32_t n = 0;
  EXPECT_EQ(hbDNNGetInputCount(&n, reinterpret_cast<hbDNNHandle_t>(&n)), HB_DNN_INVALID_DNN_HANDLE);
  EXPECT_EQ(hbDNNGetInputCount(&n, dnn_), 0);
  hbDNNPackedHandle_t other = nullptr;
  const char* missing = "/nonexistent/model.hbm";
  EXPECT_EQ(hbDNNInitializeFromFiles(&other, &missing, 1), HB_DNN_CAN_NOT_OPEN_FILE);
  EXPECT_EQ(HB_DNN_CAN_NOT_OPEN_FILE, HB_UCP_FILE_OPEN_FAILED);
  EXPECT_NE(std::string(hbUCPGetErrorDesc(HB_UCP_FILE_OPEN_FAILED)).find("/nonexistent/model.hbm"), std::string::npos);
}

// hb_dnn_v1.h: the classic calls (more = 1 appends, more = 0 submits) on this generation's
// tensors and tasks; a submission that fails leaves the caller no task.
TEST_F(Ucp, TheV1HeaderKeepsTheClassicCalls) {
  load("small.bin");
  const std::vector<uint8_t> x1 = float_input(3 * 8 * 8, 21), x2 = float_input(3 * 8 * 8, 22);
  hbDNNTensor in1, in2;
  std::vector<hbDNNTensor> out1, out2;
  tensors(dnn_, x1, &in1, &out1);
  tensors(dnn_, x2, &in2, &out2);
  hbDNNInferCtrlParam p;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&p);
  p.more = 1;
  p.priority = HB_DNN_PRIORITY_PREEMP;
  hbDNNTaskHandle_t task = nullptr;
  hbDNNTensor* o1 = out1.data();
  hbDNNTensor* o2 = out2.data();
  ASSERT_EQ(hbDNNInfer(&task, &o1, &in1, dnn_, &p), 0);
  EXPECT_EQ(hbDNNWaitTaskDone(task, 0), HB_DNN_API_USE_ERROR);  // not submitted yet
  p.more = 0;
  ASSERT_EQ(hbDNNInfer(&task, &o2, &in2, dnn_, &p), 0);
  ASSERT_EQ(hbDNNWaitTaskDone(task, 0), 0);
  EXPECT_EQ(bytes_of(out1[0]), openbpu::ucp_reference::classic_run(model_path("small.bin"), {x1})[0]);
  EXPECT_EQ(bytes_of(out2[0]), openbpu::ucp_reference::classic_run(model_path("small.bin"), {x2})[0]);
  EXPECT_EQ(hbDNNReleaseTask(task), 0);
  EXPECT_EQ(hbDNNReleaseTask(task), HB_DNN_INVALID_TASK_HANDLE);
  EXPECT_EQ(hbDNNInfer(&task, &o1, &in1, dnn_, nullptr), HB_DNN_INVALID_ARGUMENT);
  p.bpuCoreId = 16;
  task = nullptr;
  EXPECT_EQ(hbDNNInfer(&task, &o1, &in1, dnn_, &p), HB_DNN_INVALID_ARGUMENT);
  p.bpuCoreId = HB_BPU_CORE_1;  // bayes-e has one core: refused at submission, no task left
  for (int i = 0; i < 40; ++i) {  // more than the 32 tasks that may exist: none leaks
    EXPECT_EQ(hbDNNInfer(&task, &o1, &in1, dnn_, &p), HB_DNN_INVALID_ARGUMENT);
    EXPECT_EQ(task, nullptr);
  }
}

struct Done {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<int> order;  // tags, in completion order
  std::vector<int32_t> status;
};

struct Tagged {
  Done* done;
  int tag;
  bool release;  // the callback releases its task
};

void record(hbUCPTaskHandle_t task, int32_t status, void* user) {
  auto* t = static_cast<Tagged*>(user);
  if (t->release) {
    EXPECT_EQ(hbUCPReleaseTask(task), 0);
  }
  std::lock_guard<std::mutex> lock(t->done->mutex);
  t->done->order.push_back(t->tag);
  t->done->status.push_back(status);
  t->done->cv.notify_all();
}

TEST_F(Ucp, CallbackRunsOnceWithTheStatusAndMayReleaseTheTask) {
  load("small.bin");
  hbDNNTensor in;
  std::vector<hbDNNTensor> out;
  tensors(dnn_, float_input(3 * 8 * 8, 4), &in, &out);
  Done done;
  Tagged tag{&done, 1, true};
  hbUCPTaskHandle_t task = nullptr;
  ASSERT_EQ(hbDNNInferV2(&task, out.data(), &in, dnn_), 0);
  ASSERT_EQ(hbUCPSetTaskDoneCb(task, record, &tag), 0);
  ASSERT_EQ(hbUCPSubmitTask(task, nullptr), 0);
  std::unique_lock<std::mutex> lock(done.mutex);
  ASSERT_TRUE(done.cv.wait_for(lock, std::chrono::seconds(60), [&] { return !done.order.empty(); }));
  EXPECT_EQ(done.order, std::vector<int>{1});
  EXPECT_EQ(done.status, std::vector<int32_t>{0});
}

// One worker (this binary's setting): a callback that blocks holds it, so tasks submitted
// meanwhile queue; released, the worker takes the priority-255 task first, and it is done
// before any of the low-priority tasks queued before it.
TEST_F(Ucp, Priority255TaskOvertakesQueuedLowPriorityTasks) {
  load("small.bin");
  Done done;
  std::mutex gate_mutex;
  std::condition_variable gate_cv;
  bool open = false, blocking = false;
  struct Gate {
    std::mutex* mutex;
    std::condition_variable* cv;
    bool* open;
    bool* blocking;
  } gate{&gate_mutex, &gate_cv, &open, &blocking};
  auto block = [](hbUCPTaskHandle_t, int32_t, void* user) {
    auto* g = static_cast<Gate*>(user);
    std::unique_lock<std::mutex> lock(*g->mutex);
    *g->blocking = true;
    g->cv->notify_all();
    g->cv->wait(lock, [&] { return *g->open; });
  };
  constexpr int kLow = 4;
  std::vector<hbDNNTensor> ins(kLow + 2);
  std::vector<std::vector<hbDNNTensor>> outs(kLow + 2);
  for (int i = 0; i < kLow + 2; ++i) tensors(dnn_, float_input(3 * 8 * 8, 10 + i), &ins[i], &outs[i]);
  std::vector<hbUCPTaskHandle_t> tasks(kLow + 2, nullptr);
  ASSERT_EQ(hbDNNInferV2(&tasks[0], outs[0].data(), &ins[0], dnn_), 0);
  ASSERT_EQ(hbUCPSetTaskDoneCb(tasks[0], block, &gate), 0);
  ASSERT_EQ(hbUCPSubmitTask(tasks[0], nullptr), 0);
  {
    std::unique_lock<std::mutex> lock(gate_mutex);
    ASSERT_TRUE(gate_cv.wait_for(lock, std::chrono::seconds(60), [&] { return blocking; }));
  }
  std::vector<Tagged> tags;
  for (int i = 1; i <= kLow + 1; ++i) tags.push_back(Tagged{&done, i, false});
  for (int i = 1; i <= kLow + 1; ++i) {
    ASSERT_EQ(hbDNNInferV2(&tasks[i], outs[i].data(), &ins[i], dnn_), 0);
    ASSERT_EQ(hbUCPSetTaskDoneCb(tasks[i], record, &tags[i - 1]), 0);
    hbUCPSchedParam p;
    HB_UCP_INITIALIZE_SCHED_PARAM(&p);
    p.priority = i == kLow + 1 ? HB_UCP_PRIORITY_HIGHEST : HB_UCP_PRIORITY_LOWEST;
    ASSERT_EQ(hbUCPSubmitTask(tasks[i], &p), 0);
  }
  {
    std::lock_guard<std::mutex> lock(gate_mutex);
    open = true;
  }
  gate_cv.notify_all();
  for (hbUCPTaskHandle_t t : tasks) EXPECT_EQ(hbUCPWaitTaskDone(t, 60000), 0);
  {
    std::unique_lock<std::mutex> lock(done.mutex);
    ASSERT_TRUE(done.cv.wait_for(lock, std::chrono::seconds(60), [&] { return done.order.size() == kLow + 1; }));
    EXPECT_EQ(done.order.front(), kLow + 1) << "the priority-255 task was not done first";
  }
  for (hbUCPTaskHandle_t t : tasks) EXPECT_EQ(hbUCPReleaseTask(t), 0);
}

// OPENBPU_UCP_CHECK_FLUSH: a cached input written after its last CLEAN is refused at submission;
// a cached output reads 0xCD until invalidated; non-cached memory needs no flush.
TEST_F(Ucp, TheFlushCheckReportsAMissingFlush) {
  load("small.bin");
  setenv("OPENBPU_UCP_CHECK_FLUSH", "1", 1);
  const std::vector<uint8_t> x = float_input(3 * 8 * 8, 9);
  const std::vector<uint8_t> want = openbpu::ucp_reference::classic_run(model_path("small.bin"), {x})[0];
  hbDNNTensor in;
  std::vector<hbDNNTensor> out;
  tensors(dnn_, x, &in, &out);
  static_cast<uint8_t*>(in.sysMem.virAddr)[0] ^= 1;  // written after the CLEAN
  hbUCPTaskHandle_t task = nullptr;
  ASSERT_EQ(hbDNNInferV2(&task, out.data(), &in, dnn_), 0);
  EXPECT_EQ(hbUCPSubmitTask(task, nullptr), HB_UCP_API_USE_ERROR);
  EXPECT_NE(std::string(hbUCPGetErrorDesc(HB_UCP_API_USE_ERROR)).find("HB_SYS_MEM_CACHE_CLEAN"), std::string::npos);
  static_cast<uint8_t*>(in.sysMem.virAddr)[0] ^= 1;
  ASSERT_EQ(hbUCPMemFlush(&in.sysMem, HB_SYS_MEM_CACHE_CLEAN), 0);
  ASSERT_EQ(hbUCPSubmitTask(task, nullptr), 0);
  ASSERT_EQ(hbUCPWaitTaskDone(task, 0), 0);
  EXPECT_EQ(bytes_of(out[0]), std::vector<uint8_t>(want.size(), 0xCD));  // not invalidated yet
  ASSERT_EQ(hbUCPMemFlush(&out[0].sysMem, HB_SYS_MEM_CACHE_INVALIDATE), 0);
  EXPECT_EQ(bytes_of(out[0]), want);
  EXPECT_EQ(hbUCPReleaseTask(task), 0);
  // Non-cached memory: no flush needed either way.
  hbDNNTensor plain = in;
  plain.sysMem = alloc(x.size(), false);
  std::memcpy(plain.sysMem.virAddr, x.data(), x.size());
  std::vector<hbDNNTensor> plain_out = out;
  plain_out[0].sysMem = alloc(want.size(), false);
  ASSERT_EQ(hbDNNInferV2(nullptr, plain_out.data(), &plain, dnn_), 0) << hbUCPGetErrorDesc(HB_UCP_API_USE_ERROR);
  EXPECT_EQ(bytes_of(plain_out[0]), want);
  unsetenv("OPENBPU_UCP_CHECK_FLUSH");
}

}  // namespace
