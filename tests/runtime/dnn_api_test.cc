// The hbDNN C API (libdnn): every function on a small two-BPU-segment model compiled in the
// test, its results against the quantized-model executor bit for bit, and its documented error
// paths. (The PP-OCR models are checked by the dnn_bit_exact_* ctests.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "dnn/hb_dnn.h"
#include "layer_dump.h"
#include "openbpu/compiler/compiler.h"
#include "openbpu/compiler/model_writer.h"
#include "openbpu/executor/float_executor.h"
#include "openbpu/format/model_file.h"
#include "openbpu/ir/parse.h"
#include "openbpu/simulator/device.h"
#include "openbpu/simulator/march.h"
#include "platform.h"
#include "simulator/driver.h"
#include "small_model.h"

namespace openbpu {
namespace {

using kernels::DataType;
using kernels::Tensor;

class DnnApi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("HB_DNN_LOG_LEVEL", "0", 1);  // the error paths below would print otherwise
    model_ = new ir::Model(ir::parse_model(kModelText));
    bytes_ = new std::vector<uint8_t>(model_file(*model_, "small"));
  }
  static void TearDownTestSuite() {
    delete bytes_;
    delete model_;
  }

  void SetUp() override {
    const void* data = bytes_->data();
    int32_t length = static_cast<int32_t>(bytes_->size());
    ASSERT_EQ(hbDNNInitializeFromDDR(&packed_, &data, &length, 1), 0) << hbDNNGetErrorDesc(-6000002);
    ASSERT_EQ(hbDNNGetModelHandle(&dnn_, packed_, "small"), 0);
  }
  void TearDown() override {
    for (hbSysMem& m : memory_) (void)hbSysFreeMem(&m);
    if (packed_ != nullptr) {
      EXPECT_EQ(hbDNNRelease(packed_), 0);
    }
  }

  hbSysMem alloc(uint32_t size) {
    hbSysMem m{};
    EXPECT_EQ(hbSysAllocCachedMem(&m, size), 0);
    memory_.push_back(m);
    return m;
  }
  // Input / output tensors for one inference of `x`.
  void tensors(const Tensor& x, hbDNNTensor* in, hbDNNTensor* out) {
    *in = {};
    *out = {};
    ASSERT_EQ(hbDNNGetInputTensorProperties(&in->properties, dnn_, 0), 0);
    ASSERT_EQ(hbDNNGetOutputTensorProperties(&out->properties, dnn_, 0), 0);
    in->sysMem[0] = alloc(static_cast<uint32_t>(in->properties.alignedByteSize));
    std::memcpy(in->sysMem[0].virAddr, x.raw_data(), x.byte_size());
    out->sysMem[0] = alloc(static_cast<uint32_t>(out->properties.alignedByteSize));
  }
  Tensor expected(const Tensor& x) {
    executor::FloatExecutor executor(*model_);
    return executor.run({{"x", x}}).at("y").clone();
  }
  int32_t infer(hbDNNTaskHandle_t* task, hbDNNTensor* in, hbDNNTensor* out, int32_t more = 0) {
    hbDNNInferCtrlParam p;
    HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&p);
    p.more = more;
    return hbDNNInfer(task, &out, in, dnn_, &p);
  }

  // One inference of `x` on model "small" of `packed` (a second load of the model, e.g. with
  // dumps on) into *out (its memory lives until TearDown), then releases `packed`.
  void infer_once_and_release(hbPackedDNNHandle_t packed, const Tensor& x, hbDNNTensor* out) {
    hbDNNHandle_t dnn = nullptr;
    ASSERT_EQ(hbDNNGetModelHandle(&dnn, packed, "small"), 0);
    std::swap(dnn, dnn_);
    hbDNNTensor in;
    tensors(x, &in, out);
    hbDNNTaskHandle_t task = nullptr;
    const int32_t submitted = infer(&task, &in, out);
    std::swap(dnn, dnn_);
    ASSERT_EQ(submitted, 0);
    ASSERT_EQ(hbDNNWaitTaskDone(task, 0), 0);
    ASSERT_EQ(hbDNNReleaseTask(task), 0);
    ASSERT_EQ(hbDNNRelease(packed), 0);
  }

  static ir::Model* model_;
  static std::vector<uint8_t>* bytes_;
  hbPackedDNNHandle_t packed_ = nullptr;
  hbDNNHandle_t dnn_ = nullptr;
  std::vector<hbSysMem> memory_;
};
ir::Model* DnnApi::model_ = nullptr;
std::vector<uint8_t>* DnnApi::bytes_ = nullptr;

TEST_F(DnnApi, VersionAndErrorDescriptions) {
  EXPECT_NE(std::string(hbDNNGetVersion()).find("OpenBPU"), std::string::npos);
  EXPECT_STREQ(hbDNNGetErrorDesc(HB_DNN_TIMEOUT), "timeout");
  EXPECT_EQ(std::string(hbDNNGetErrorDesc(-1)), "unknown status -1");
  int32_t count = 0;
  EXPECT_EQ(hbDNNGetInputCount(&count, nullptr), HB_DNN_INVALID_DNN_HANDLE);
  EXPECT_NE(std::string(hbDNNGetErrorDesc(HB_DNN_INVALID_DNN_HANDLE)).find("hbDNNGetInputCount: dnnHandle"), std::string::npos);
}

TEST_F(DnnApi, NamesCountsAndProperties) {
  const char** names = nullptr;
  int32_t n = 0;
  ASSERT_EQ(hbDNNGetModelNameList(&names, &n, packed_), 0);
  ASSERT_EQ(n, 1);
  EXPECT_STREQ(names[0], "small");
  int32_t inputs = 0, outputs = 0;
  ASSERT_EQ(hbDNNGetInputCount(&inputs, dnn_), 0);
  ASSERT_EQ(hbDNNGetOutputCount(&outputs, dnn_), 0);
  EXPECT_EQ(inputs, 1);
  EXPECT_EQ(outputs, 1);
  const char* name = nullptr;
  ASSERT_EQ(hbDNNGetInputName(&name, dnn_, 0), 0);
  EXPECT_STREQ(name, "x");
  ASSERT_EQ(hbDNNGetOutputName(&name, dnn_, 0), 0);
  EXPECT_STREQ(name, "y");
  hbDNNTensorProperties p{};
  ASSERT_EQ(hbDNNGetInputTensorProperties(&p, dnn_, 0), 0);
  EXPECT_EQ(p.tensorType, HB_DNN_TENSOR_TYPE_F32);
  EXPECT_EQ(p.tensorLayout, HB_DNN_LAYOUT_NCHW);
  EXPECT_EQ(p.validShape.numDimensions, 4);
  EXPECT_EQ(p.validShape.dimensionSize[1], 3);
  EXPECT_EQ(p.alignedByteSize, 3 * 8 * 8 * 4);
  EXPECT_EQ(p.stride[0], 3 * 8 * 8 * 4);
  EXPECT_EQ(p.stride[3], 4);
  EXPECT_EQ(p.quantiType, NONE);
  ASSERT_EQ(hbDNNGetOutputTensorProperties(&p, dnn_, 0), 0);
  EXPECT_EQ(p.alignedByteSize, 8 * 4);
  EXPECT_EQ(hbDNNGetInputName(&name, dnn_, 1), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNGetOutputName(&name, dnn_, -1), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNGetInputTensorProperties(&p, dnn_, 2), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNGetOutputTensorProperties(nullptr, dnn_, 0), HB_DNN_INVALID_ARGUMENT);
  hbDNNHandle_t other = nullptr;
  EXPECT_EQ(hbDNNGetModelHandle(&other, packed_, "nope"), HB_DNN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hbDNNGetErrorDesc(HB_DNN_INVALID_ARGUMENT)).find("models: small"), std::string::npos);
}

TEST_F(DnnApi, InferEqualsTheQuantizedModelBitForBit) {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    const Tensor x = random_input(seed);
    hbDNNTensor in, out;
    tensors(x, &in, &out);
    hbDNNTaskHandle_t task = nullptr;
    ASSERT_EQ(infer(&task, &in, &out), 0) << hbDNNGetErrorDesc(HB_DNN_INVALID_ARGUMENT);
    ASSERT_NE(task, nullptr);
    ASSERT_EQ(hbDNNWaitTaskDone(task, 0), 0) << hbDNNGetErrorDesc(HB_DNN_RUN_TASK_FAILED);
    EXPECT_EQ(hbDNNWaitTaskDone(task, 1000), 0);  // may be asked again
    ASSERT_EQ(hbDNNReleaseTask(task), 0);
    const Tensor want = expected(x);
    ASSERT_EQ(want.byte_size(), static_cast<size_t>(out.properties.alignedByteSize));
    EXPECT_EQ(std::memcmp(want.raw_data(), out.sysMem[0].virAddr, want.byte_size()), 0) << "seed " << seed;
  }
}

TEST_F(DnnApi, SubTasksAppendedWithMoreRunInOneTask) {
  const Tensor x1 = random_input(7), x2 = random_input(8);
  hbDNNTensor in1, out1, in2, out2;
  tensors(x1, &in1, &out1);
  tensors(x2, &in2, &out2);
  hbDNNTaskHandle_t task = nullptr;
  ASSERT_EQ(infer(&task, &in1, &out1, 1), 0);
  EXPECT_EQ(hbDNNWaitTaskDone(task, 10), HB_DNN_API_USE_ERROR);  // still open
  hbDNNTaskHandle_t same = task;
  ASSERT_EQ(infer(&same, &in2, &out2, 0), 0);
  EXPECT_EQ(same, task);
  ASSERT_EQ(hbDNNWaitTaskDone(task, 0), 0);
  hbDNNTaskHandle_t again = task;
  EXPECT_EQ(infer(&again, &in2, &out2), HB_DNN_INVALID_TASK_HANDLE);  // submitted: closed
  ASSERT_EQ(hbDNNReleaseTask(task), 0);
  EXPECT_EQ(std::memcmp(expected(x1).raw_data(), out1.sysMem[0].virAddr, 32), 0);
  EXPECT_EQ(std::memcmp(expected(x2).raw_data(), out2.sysMem[0].virAddr, 32), 0);
}

TEST_F(DnnApi, TensorsThatDoNotMatchTheModelAreRefused) {
  const Tensor x = random_input(3);
  hbDNNTensor in, out;
  tensors(x, &in, &out);
  hbDNNTaskHandle_t task = nullptr;
  hbDNNTensor bad = in;
  bad.properties.tensorType = HB_DNN_TENSOR_TYPE_S8;
  EXPECT_EQ(infer(&task, &bad, &out), HB_DNN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hbDNNGetErrorDesc(HB_DNN_INVALID_ARGUMENT)).find("tensorType"), std::string::npos);
  bad = in;
  bad.properties.alignedShape.dimensionSize[3] = 9;
  EXPECT_EQ(infer(&task, &bad, &out), HB_DNN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hbDNNGetErrorDesc(HB_DNN_INVALID_ARGUMENT)).find("alignedShape"), std::string::npos);
  bad = in;
  bad.sysMem[0].memSize = 16;
  EXPECT_EQ(infer(&task, &bad, &out), HB_DNN_INVALID_ARGUMENT);
  bad = in;
  bad.sysMem[0].virAddr = static_cast<char*>(in.sysMem[0].virAddr) + 64;  // runs past the block
  EXPECT_EQ(infer(&task, &bad, &out), HB_DNN_INVALID_ARGUMENT);
  float stack[3 * 8 * 8];
  bad = in;
  bad.sysMem[0].virAddr = stack;  // not BPU memory
  EXPECT_EQ(infer(&task, &bad, &out), HB_DNN_INVALID_ARGUMENT);
  hbDNNTensor bad_out = out;
  bad_out.properties.tensorType = HB_DNN_TENSOR_TYPE_S32;
  EXPECT_EQ(infer(&task, &in, &bad_out), HB_DNN_INVALID_ARGUMENT);
  // Freed memory is detected, not read.
  hbDNNTensor freed = in;
  hbSysMem m = alloc(static_cast<uint32_t>(in.properties.alignedByteSize));
  freed.sysMem[0] = m;
  ASSERT_EQ(hbSysFreeMem(&m), 0);
  EXPECT_EQ(infer(&task, &freed, &out), HB_DNN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hbDNNGetErrorDesc(HB_DNN_INVALID_ARGUMENT)).find("freed"), std::string::npos);
  EXPECT_EQ(task, nullptr);  // nothing was submitted
}

TEST_F(DnnApi, ArgumentsAndHandlesAreChecked) {
  const Tensor x = random_input(4);
  hbDNNTensor in, out;
  tensors(x, &in, &out);
  hbDNNTensor* outs = &out;
  hbDNNInferCtrlParam p;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&p);
  hbDNNTaskHandle_t task = nullptr;
  EXPECT_EQ(hbDNNInfer(nullptr, &outs, &in, dnn_, &p), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNInfer(&task, nullptr, &in, dnn_, &p), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNInfer(&task, &outs, nullptr, dnn_, &p), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNInfer(&task, &outs, &in, dnn_, nullptr), HB_DNN_INVALID_ARGUMENT);
  int dummy = 0;
  EXPECT_EQ(hbDNNInfer(&task, &outs, &in, &dummy, &p), HB_DNN_INVALID_DNN_HANDLE);
  p.priority = 256;
  EXPECT_EQ(hbDNNInfer(&task, &outs, &in, dnn_, &p), HB_DNN_INVALID_ARGUMENT);
  p.priority = 0;
  p.bpuCoreId = 1 << 5;
  EXPECT_EQ(hbDNNInfer(&task, &outs, &in, dnn_, &p), HB_DNN_INVALID_ARGUMENT);
  p.bpuCoreId = HB_BPU_CORE_0;
  hbDNNTaskHandle_t bogus = &dummy;
  EXPECT_EQ(hbDNNInfer(&bogus, &outs, &in, dnn_, &p), HB_DNN_INVALID_TASK_HANDLE);
  EXPECT_EQ(hbDNNWaitTaskDone(&dummy, 0), HB_DNN_INVALID_TASK_HANDLE);
  EXPECT_EQ(hbDNNReleaseTask(nullptr), HB_DNN_INVALID_TASK_HANDLE);
  EXPECT_EQ(hbDNNRelease(&dummy), HB_DNN_INVALID_PACKED_DNN_HANDLE);
  const char** names = nullptr;
  int32_t n = 0;
  EXPECT_EQ(hbDNNGetModelNameList(&names, &n, nullptr), HB_DNN_INVALID_PACKED_DNN_HANDLE);
  EXPECT_EQ(hbDNNGetModelNameList(nullptr, &n, packed_), HB_DNN_INVALID_ARGUMENT);
  hbDNNHandle_t h = nullptr;
  EXPECT_EQ(hbDNNGetModelHandle(&h, packed_, nullptr), HB_DNN_INVALID_ARGUMENT);
  hbDNNRoi roi{0, 0, 7, 7};
  EXPECT_EQ(hbDNNRoiInfer(&task, &outs, &in, &roi, 1, dnn_, &p), HB_DNN_INCOMPATIBLE_MODEL);
  EXPECT_EQ(hbDNNRoiInfer(&task, &outs, &in, nullptr, 1, dnn_, &p), HB_DNN_INVALID_ARGUMENT);
  int32_t source = -1;
  EXPECT_EQ(hbDNNGetInputSource(&source, dnn_, 0), 0);
  EXPECT_EQ(source, HB_DNN_INPUT_FROM_DDR);  // a float input
  EXPECT_EQ(hbDNNGetInputSource(nullptr, dnn_, 0), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNGetInputSource(&source, dnn_, 1), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNGetInputSource(&source, nullptr, 0), HB_DNN_INVALID_DNN_HANDLE);

  // A task on core 0 runs; its handle dies with hbDNNReleaseTask.
  ASSERT_EQ(hbDNNInfer(&task, &outs, &in, dnn_, &p), 0);
  EXPECT_EQ(hbDNNRelease(packed_), HB_DNN_MODEL_IS_RUNNING);
  ASSERT_EQ(hbDNNWaitTaskDone(task, 0), 0);
  ASSERT_EQ(hbDNNReleaseTask(task), 0);
  EXPECT_EQ(hbDNNReleaseTask(task), HB_DNN_INVALID_TASK_HANDLE);
  EXPECT_EQ(hbDNNWaitTaskDone(task, 0), HB_DNN_INVALID_TASK_HANDLE);
}

TEST_F(DnnApi, AtMost32TasksExist) {
  const Tensor x = random_input(5);
  hbDNNTensor in, out;
  tensors(x, &in, &out);
  std::vector<hbDNNTaskHandle_t> tasks;
  for (int i = 0; i < HB_DNN_MAX_TASK_NUM; ++i) {
    hbDNNTaskHandle_t t = nullptr;
    ASSERT_EQ(infer(&t, &in, &out), 0) << i;
    tasks.push_back(t);
  }
  hbDNNTaskHandle_t extra = nullptr;
  EXPECT_EQ(infer(&extra, &in, &out), HB_DNN_TASK_NUM_EXCEED_LIMIT);
  // Released before they ran (or while running): cancelled, never a crash.
  for (size_t i = 0; i < tasks.size(); i += 2) EXPECT_EQ(hbDNNReleaseTask(tasks[i]), 0);
  for (size_t i = 1; i < tasks.size(); i += 2) {
    EXPECT_EQ(hbDNNWaitTaskDone(tasks[i], 0), 0);
    EXPECT_EQ(hbDNNReleaseTask(tasks[i]), 0);
  }
  // The released ones may still be finishing on a worker: the model is busy until they do.
  for (int i = 0; i < 1000 && hbDNNRelease(packed_) == HB_DNN_MODEL_IS_RUNNING; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  packed_ = nullptr;
}

TEST_F(DnnApi, LoadFailuresNameTheCause) {
  hbPackedDNNHandle_t p = nullptr;
  const char* missing = "/nonexistent/model.bin";
  EXPECT_EQ(hbDNNInitializeFromFiles(&p, &missing, 1), HB_DNN_CAN_NOT_OPEN_FILE);
  EXPECT_NE(std::string(hbDNNGetErrorDesc(HB_DNN_CAN_NOT_OPEN_FILE)).find("/nonexistent/model.bin"), std::string::npos);
  EXPECT_EQ(hbDNNInitializeFromFiles(&p, &missing, 0), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNInitializeFromFiles(nullptr, &missing, 1), HB_DNN_INVALID_ARGUMENT);
  std::vector<uint8_t> corrupt = *bytes_;
  corrupt[corrupt.size() / 2] ^= 0x10;
  const void* data = corrupt.data();
  int32_t length = static_cast<int32_t>(corrupt.size());
  EXPECT_EQ(hbDNNInitializeFromDDR(&p, &data, &length, 1), HB_DNN_INVALID_MODEL);
  EXPECT_NE(std::string(hbDNNGetErrorDesc(HB_DNN_INVALID_MODEL)).find("modelData[0]"), std::string::npos);
  length = 0;
  EXPECT_EQ(hbDNNInitializeFromDDR(&p, &data, &length, 1), HB_DNN_INVALID_ARGUMENT);
  // Two buffers holding models of the same name.
  const void* two[2] = {bytes_->data(), bytes_->data()};
  int32_t lengths[2] = {static_cast<int32_t>(bytes_->size()), static_cast<int32_t>(bytes_->size())};
  EXPECT_EQ(hbDNNInitializeFromDDR(&p, two, lengths, 2), HB_DNN_INVALID_ARGUMENT);
  // A file without the CPU operators' opsets (format 1.0) cannot be run.
  const std::vector<uint8_t> old = model_file(*model_, "old", true);
  data = old.data();
  length = static_cast<int32_t>(old.size());
  EXPECT_EQ(hbDNNInitializeFromDDR(&p, &data, &length, 1), HB_DNN_INCOMPATIBLE_MODEL);
  EXPECT_NE(std::string(hbDNNGetErrorDesc(HB_DNN_INCOMPATIBLE_MODEL)).find("opset"), std::string::npos);
  EXPECT_EQ(p, nullptr);
}

// HB_DNN_DUMP_PATH at load: every inference writes the model input and each layer's outputs
// (4 CPU operators and 2 BPU segments around them, then the final Dequantize).
TEST_F(DnnApi, LayerDumpsWhenHbDnnDumpPathIsSet) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("dnn_dump_" + std::to_string(::getpid())) / "layers";
  std::filesystem::remove_all(dir.parent_path());
  unsetenv("HB_DNN_DUMP_FORMAT");  // the default: .bin only
  ASSERT_EQ(setenv("HB_DNN_DUMP_PATH", dir.c_str(), 1), 0);
  hbPackedDNNHandle_t packed = nullptr;
  const void* data = bytes_->data();
  int32_t length = static_cast<int32_t>(bytes_->size());
  const int32_t loaded = hbDNNInitializeFromDDR(&packed, &data, &length, 1);
  // A dump folder that cannot be created fails the load and names the variable.
  const std::filesystem::path file = dir.parent_path() / "a_file";
  std::ofstream(file) << "x";
  ASSERT_EQ(setenv("HB_DNN_DUMP_PATH", file.c_str(), 1), 0);
  hbPackedDNNHandle_t refused = nullptr;
  EXPECT_EQ(hbDNNInitializeFromDDR(&refused, &data, &length, 1), HB_DNN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hbDNNGetErrorDesc(HB_DNN_INVALID_ARGUMENT)).find("HB_DNN_DUMP_PATH"), std::string::npos);
  unsetenv("HB_DNN_DUMP_PATH");
  ASSERT_EQ(loaded, 0) << hbDNNGetErrorDesc(loaded);

  const Tensor x = random_input(7);
  hbDNNTensor out;
  infer_once_and_release(packed, x, &out);

  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  ASSERT_EQ(names.size(), 8u) << ::testing::PrintToString(names);
  EXPECT_EQ(names.front(), "small_000_input_input_x.bin");
  EXPECT_EQ(std::count_if(names.begin(), names.end(), [](const std::string& n) { return n.find("_BPU_") != std::string::npos; }), 2);
  EXPECT_EQ(names.back().rfind("small_007_CPU_", 0), 0u) << names.back();
  auto read = [&](const std::string& name) {
    std::ifstream f(dir / name, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(f), {});
  };
  const std::vector<char> input = read(names.front()), output = read(names.back());
  ASSERT_EQ(input.size(), x.byte_size());
  EXPECT_EQ(std::memcmp(input.data(), x.raw_data(), input.size()), 0);
  ASSERT_EQ(output.size(), 32u);
  EXPECT_EQ(std::memcmp(output.data(), out.sysMem[0].virAddr, 32), 0);
  std::filesystem::remove_all(dir.parent_path());
}

// HB_DNN_DUMP_FORMAT=bin,txt: a .txt beside each .bin, "# <dtype>[<shape>]" then the values,
// which read back to the .bin's values exactly (floats round-trip). An unknown value fails the
// load, naming the variable and the value.
TEST_F(DnnApi, LayerDumpTextWhenHbDnnDumpFormatHasTxt) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("dnn_dump_txt_" + std::to_string(::getpid())) / "layers";
  std::filesystem::remove_all(dir.parent_path());
  ASSERT_EQ(setenv("HB_DNN_DUMP_PATH", dir.c_str(), 1), 0);
  const void* data = bytes_->data();
  int32_t length = static_cast<int32_t>(bytes_->size());
  ASSERT_EQ(setenv("HB_DNN_DUMP_FORMAT", "xml", 1), 0);
  hbPackedDNNHandle_t refused = nullptr;
  EXPECT_EQ(hbDNNInitializeFromDDR(&refused, &data, &length, 1), HB_DNN_INVALID_ARGUMENT);
  EXPECT_NE(
      std::string(hbDNNGetErrorDesc(HB_DNN_INVALID_ARGUMENT)).find("HB_DNN_DUMP_FORMAT 'xml'"),
      std::string::npos)
      << hbDNNGetErrorDesc(HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(refused, nullptr);
  ASSERT_EQ(setenv("HB_DNN_DUMP_FORMAT", "bin,txt", 1), 0);
  hbPackedDNNHandle_t packed = nullptr;
  const int32_t loaded = hbDNNInitializeFromDDR(&packed, &data, &length, 1);
  unsetenv("HB_DNN_DUMP_PATH");
  unsetenv("HB_DNN_DUMP_FORMAT");
  ASSERT_EQ(loaded, 0) << hbDNNGetErrorDesc(loaded);

  const Tensor x = random_input(11);
  hbDNNTensor out;
  infer_once_and_release(packed, x, &out);

  std::vector<std::string> bins, txts;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    (e.path().extension() == ".txt" ? txts : bins).push_back(name.substr(0, name.size() - 4));
  }
  std::sort(bins.begin(), bins.end());
  std::sort(txts.begin(), txts.end());
  ASSERT_EQ(bins.size(), 8u) << ::testing::PrintToString(bins);
  EXPECT_EQ(txts, bins);
  auto read = [&](const std::string& name) {
    std::ifstream f(dir / name, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  // The model input: float32, one line per row of 8 values, each parsing back to the input.
  const std::string input_text = read("small_000_input_input_x.txt");
  std::istringstream lines(input_text);
  std::string header;
  std::getline(lines, header);
  EXPECT_EQ(header, "# " + x.describe());
  EXPECT_EQ(std::count(input_text.begin(), input_text.end(), '\n'), 1 + 3 * 8) << input_text;
  std::vector<float> values;
  for (std::string v; lines >> v;) values.push_back(std::strtof(v.c_str(), nullptr));
  ASSERT_EQ(values.size(), static_cast<size_t>(x.element_count()));
  EXPECT_EQ(std::memcmp(values.data(), x.raw_data(), x.byte_size()), 0);
  // Every dump: the .txt's values are the .bin's, whatever the type (int8 between the segments).
  int int8_dumps = 0;
  for (const std::string& stem : bins) {
    const std::string bin = read(stem + ".bin"), text = read(stem + ".txt");
    std::istringstream t(text);
    std::getline(t, header);
    const bool is_int8 = header.rfind("# int8[", 0) == 0;
    ASSERT_TRUE(is_int8 || header.rfind("# float32[", 0) == 0) << stem << ": " << header;
    int8_dumps += is_int8 ? 1 : 0;
    const size_t count = is_int8 ? bin.size() : bin.size() / 4;
    size_t i = 0;
    for (std::string v; t >> v; ++i) {
      ASSERT_LT(i, count) << stem;
      if (is_int8) {
        EXPECT_EQ(std::stol(v), static_cast<int8_t>(bin[i])) << stem << " value " << i;
      } else {
        float want;
        std::memcpy(&want, bin.data() + 4 * i, 4);
        EXPECT_EQ(std::strtof(v.c_str(), nullptr), want) << stem << " value " << i << ": " << v;
      }
    }
    EXPECT_EQ(i, count) << stem;
  }
  EXPECT_GT(int8_dumps, 0);
  std::filesystem::remove_all(dir.parent_path());
}

// The text of one dump, for types the small model does not produce: 64-bit integers exactly,
// float64 with 17 digits, bools as 0/1, and HB_DNN_DUMP_FORMAT's accepted values.
TEST(LayerDumpText, TypesAndFormatValues) {
  const Tensor i64 =
      Tensor::from_values<int64_t>({2}, std::vector<int64_t>{(int64_t{1} << 62) + 1, -3});
  EXPECT_EQ(dnn::layer_dump_text(i64), "# int64[2]\n4611686018427387905 -3\n");
  const Tensor u64 = Tensor::from_values<uint64_t>({1}, std::vector<uint64_t>{UINT64_MAX});
  EXPECT_EQ(dnn::layer_dump_text(u64), "# uint64[1]\n18446744073709551615\n");
  const Tensor f64 = Tensor::from_values<double>({2, 2}, std::vector<double>{0.1, 1e-300, 2, 3});
  EXPECT_EQ(dnn::layer_dump_text(f64), "# float64[2,2]\n0.10000000000000001 1e-300\n2 3\n");
  const Tensor f32 = Tensor::scalar<float>(0.1f);
  EXPECT_EQ(dnn::layer_dump_text(f32), "# float32[]\n0.100000001\n");
  Tensor flags(DataType::kBool, {2});
  static_cast<uint8_t*>(flags.raw_data())[0] = 1;
  static_cast<uint8_t*>(flags.raw_data())[1] = 0;
  EXPECT_EQ(dnn::layer_dump_text(flags), "# bool[2]\n1 0\n");
  EXPECT_FALSE(dnn::parse_layer_dump_format(nullptr)->txt);
  EXPECT_FALSE(dnn::parse_layer_dump_format("bin")->txt);
  EXPECT_TRUE(dnn::parse_layer_dump_format("txt")->txt);
  EXPECT_TRUE(dnn::parse_layer_dump_format("bin,txt")->txt);
  EXPECT_FALSE(dnn::parse_layer_dump_format("BIN").has_value());
  EXPECT_FALSE(dnn::parse_layer_dump_format("bin,txt,").has_value());
}

TEST_F(DnnApi, ManyThreadsShareOneModel) {
  constexpr int kThreads = 4, kRuns = 10;
  std::vector<Tensor> inputs, wants;
  for (int i = 0; i < kThreads; ++i) {
    inputs.push_back(random_input(100 + static_cast<uint32_t>(i)));
    wants.push_back(expected(inputs.back()));
  }
  std::vector<hbDNNTensor> in(kThreads), out(kThreads);
  for (int i = 0; i < kThreads; ++i) tensors(inputs[size_t(i)], &in[size_t(i)], &out[size_t(i)]);
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int r = 0; r < kRuns; ++r) {
        hbDNNTaskHandle_t task = nullptr;
        hbDNNTensor* o = &out[size_t(i)];
        hbDNNInferCtrlParam p;
        HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&p);
        p.priority = i * 60;
        p.bpuCoreId = r % 2 == 0 ? HB_BPU_CORE_ANY : HB_BPU_CORE_0;
        if (hbDNNInfer(&task, &o, &in[size_t(i)], dnn_, &p) != 0 || hbDNNWaitTaskDone(task, 0) != 0 ||
            hbDNNReleaseTask(task) != 0 ||
            std::memcmp(wants[size_t(i)].raw_data(), out[size_t(i)].sysMem[0].virAddr, 32) != 0) {
          failures[size_t(i)]++;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) EXPECT_EQ(failures[size_t(i)], 0) << "thread " << i;
}

// A long low-priority task (small_model.h's chain model: 6 LUTs, each a function call) runs on
// core 0; at its first function-call boundary a priority-255
// (HB_DNN_PRIORITY_PREEMP) task of the small model is submitted from the device's observer. The
// small model's BPU jobs preempt the chain at its boundaries, and the priority-255 task is done
// while the chain's job is still on the device. Deterministic: the observer holds the chain at
// its boundaries until the small model's jobs are queued / its task is done (a timeout there
// only turns a deadlock into a failure); no timing is assumed.
// A task waiting for its BPU job holds no scheduler worker, so this holds with one worker too
// (ctest dnn_api_one_worker runs the suite with OPENBPU_DNN_THREADS=1).
TEST_F(DnnApi, PreempTaskCompletesWhileALongLowPriorityTaskRuns) {
  const ir::Model chain = ir::parse_model(kChainModelText);
  const Tensor chain_x = chain_input(21);
  std::vector<uint8_t> chain_bytes;
  ASSERT_TRUE(chain_model_file(chain, "chain", &chain_bytes).ok());
  hbPackedDNNHandle_t chain_packed = nullptr;
  const void* data = chain_bytes.data();
  int32_t length = static_cast<int32_t>(chain_bytes.size());
  ASSERT_EQ(hbDNNInitializeFromDDR(&chain_packed, &data, &length, 1), 0);
  hbDNNHandle_t chain_dnn = nullptr;
  ASSERT_EQ(hbDNNGetModelHandle(&chain_dnn, chain_packed, "chain"), 0);
  hbDNNTensor chain_in{}, chain_out{};
  ASSERT_EQ(hbDNNGetInputTensorProperties(&chain_in.properties, chain_dnn, 0), 0);
  ASSERT_EQ(hbDNNGetOutputTensorProperties(&chain_out.properties, chain_dnn, 0), 0);
  chain_in.sysMem[0] = alloc(static_cast<uint32_t>(chain_in.properties.alignedByteSize));
  std::memcpy(chain_in.sysMem[0].virAddr, chain_x.raw_data(), chain_x.byte_size());
  chain_out.sysMem[0] = alloc(static_cast<uint32_t>(chain_out.properties.alignedByteSize));
  const Tensor x = random_input(31);
  hbDNNTensor in, out;
  tensors(x, &in, &out);

  simulator::Device& device = *dnn::simulator_device(dnn::Platform::of("bayes-e").driver(), 0);
  const uint64_t preemptions_before = device.preemptions();
  // Shared with the observer (device worker and scheduler threads), under `mutex`.
  std::mutex mutex;
  std::condition_variable changed;
  int preemp_jobs_queued = 0, low_boundaries = 0;
  hbDNNTaskHandle_t preemp_task = nullptr;
  int32_t preemp_infer = 1, preemp_done = 1;
  bool preemp_done_while_low_on_device = false;
  auto wait_until = [&](std::unique_lock<std::mutex>& lock, auto predicate) {
    return changed.wait_for(lock, std::chrono::seconds(60), predicate);
  };
  device.set_observer(std::make_shared<const simulator::DeviceObserver>([&](const simulator::DeviceEvent& e) {
    using Kind = simulator::DeviceEvent::Kind;
    std::unique_lock<std::mutex> lock(mutex);
    if (e.kind == Kind::kSubmitted && e.priority == 255) {
      ++preemp_jobs_queued;
      changed.notify_all();
      return;
    }
    if (e.kind != Kind::kFunctionCallDone || e.priority != 0) return;
    // A boundary of the chain's job: the device decides about preemption when this returns.
    switch (++low_boundaries) {
      case 1: {  // submit the priority-255 task; return once its first BPU job is queued
        hbDNNInferCtrlParam p;
        HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&p);
        p.priority = HB_DNN_PRIORITY_PREEMP;
        p.bpuCoreId = HB_BPU_CORE_0;
        hbDNNTensor* o = &out;
        lock.unlock();
        const int32_t rc = hbDNNInfer(&preemp_task, &o, &in, dnn_, &p);
        lock.lock();
        preemp_infer = rc;
        if (rc == 0) wait_until(lock, [&] { return preemp_jobs_queued >= 1; });
        break;
      }
      case 2:  // its first BPU job has run (preempting the chain); wait for the second
        if (preemp_infer == 0) wait_until(lock, [&] { return preemp_jobs_queued >= 2; });
        break;
      case 3:  // both have run: only CPU operators are left
        if (preemp_infer == 0) {
          lock.unlock();
          const int32_t rc = hbDNNWaitTaskDone(preemp_task, 60000);
          lock.lock();
          preemp_done = rc;
          preemp_done_while_low_on_device = rc == 0;
        }
        break;
      default: break;
    }
  }));
  struct ObserverReset {
    simulator::Device& device;
    ~ObserverReset() { device.set_observer(nullptr); }
  } reset{device};

  hbDNNInferCtrlParam p;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&p);
  p.priority = HB_DNN_PRIORITY_LOWEST;
  p.bpuCoreId = HB_BPU_CORE_0;
  hbDNNTaskHandle_t low_task = nullptr;
  hbDNNTensor* o = &chain_out;
  ASSERT_EQ(hbDNNInfer(&low_task, &o, &chain_in, chain_dnn, &p), 0);
  ASSERT_EQ(hbDNNWaitTaskDone(low_task, 0), 0) << hbDNNGetErrorDesc(HB_DNN_RUN_TASK_FAILED);
  device.set_observer(nullptr);
  {
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(low_boundaries, 5);  // 6 function calls
    EXPECT_EQ(preemp_infer, 0) << hbDNNGetErrorDesc(HB_DNN_INVALID_ARGUMENT);
    EXPECT_EQ(preemp_jobs_queued, 2);  // the small model's two BPU segments
    EXPECT_EQ(preemp_done, 0);
    EXPECT_TRUE(preemp_done_while_low_on_device);
  }
  // The first job preempted the chain at its first boundary; the second at its second, unless
  // it was queued before the chain resumed (then it ran right after the first).
  const uint64_t preemptions = device.preemptions() - preemptions_before;
  EXPECT_GE(preemptions, 1u);
  EXPECT_LE(preemptions, 2u);
  ASSERT_NE(preemp_task, nullptr);
  EXPECT_EQ(hbDNNWaitTaskDone(preemp_task, 0), 0);
  EXPECT_EQ(hbDNNReleaseTask(preemp_task), 0);
  EXPECT_EQ(hbDNNReleaseTask(low_task), 0);
  // Both outputs are the quantized models' own, bit for bit.
  const Tensor want = expected(x);
  EXPECT_EQ(std::memcmp(want.raw_data(), out.sysMem[0].virAddr, want.byte_size()), 0);
  executor::FloatExecutor chain_executor(chain);
  const Tensor chain_want = chain_executor.run({{"x", chain_x}}).at("y").clone();
  ASSERT_EQ(chain_want.byte_size(), static_cast<size_t>(chain_out.properties.alignedByteSize));
  EXPECT_EQ(std::memcmp(chain_want.raw_data(), chain_out.sysMem[0].virAddr, chain_want.byte_size()), 0);
  EXPECT_EQ(hbDNNRelease(chain_packed), 0);
}

// Batch inputs as separate tensors: kModelText with batch 2 takes its input as one [2,3,8,8]
// tensor or as two [1,3,8,8] batch items (input0[b0], input0[b1]), dense or in the alignedShape
// layout; both give the batch model's own outputs, bit for bit. A wrong item names itself.
TEST(DnnBatch, InputAsOneTensorOrAsSeparateBatchItems) {
  setenv("HB_DNN_LOG_LEVEL", "0", 1);
  std::string text = kModelText;
  const std::string one = "float32[1,3,8,8]";
  text.replace(text.find(one), one.size(), "float32[2,3,8,8]");
  const ir::Model model = ir::parse_model(text);
  const Tensor x = uniform_input({2, 3, 8, 8}, 41);
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(compile_bayes_model_file(model, x, "batch", "test", &bytes).ok());
  hbPackedDNNHandle_t packed = nullptr;
  const void* data = bytes.data();
  int32_t length = static_cast<int32_t>(bytes.size());
  ASSERT_EQ(hbDNNInitializeFromDDR(&packed, &data, &length, 1), 0) << hbDNNGetErrorDesc(-6000002);
  hbDNNHandle_t dnn = nullptr;
  ASSERT_EQ(hbDNNGetModelHandle(&dnn, packed, "batch"), 0);
  int32_t count = 0;
  ASSERT_EQ(hbDNNGetInputCount(&count, dnn), 0);
  EXPECT_EQ(count, 1);  // the model's inputs; the batch items are a way to pass them

  std::vector<hbSysMem> memory;
  auto alloc = [&](int32_t size) {
    hbSysMem m{};
    EXPECT_EQ(hbSysAllocCachedMem(&m, static_cast<uint32_t>(size)), 0);
    memory.push_back(m);
    return m;
  };
  hbDNNTensorProperties in_props{}, out_props{};
  ASSERT_EQ(hbDNNGetInputTensorProperties(&in_props, dnn, 0), 0);
  ASSERT_EQ(hbDNNGetOutputTensorProperties(&out_props, dnn, 0), 0);
  ASSERT_EQ(in_props.validShape.dimensionSize[0], 2);
  executor::FloatExecutor executor(model);
  const Tensor want = executor.run({{"x", x}}).at("y").clone();
  ASSERT_EQ(want.byte_size(), static_cast<size_t>(out_props.alignedByteSize));

  auto run = [&](hbDNNTensor* inputs, int32_t* status) {
    hbDNNTensor out{};
    out.properties = out_props;
    out.sysMem[0] = alloc(out_props.alignedByteSize);
    hbDNNTensor* o = &out;
    hbDNNTaskHandle_t task = nullptr;
    hbDNNInferCtrlParam p;
    HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&p);
    *status = hbDNNInfer(&task, &o, inputs, dnn, &p);
    if (*status != 0) return std::vector<uint8_t>();
    EXPECT_EQ(hbDNNWaitTaskDone(task, 0), 0);
    EXPECT_EQ(hbDNNReleaseTask(task), 0);
    const auto* b = static_cast<const uint8_t*>(out.sysMem[0].virAddr);
    return std::vector<uint8_t>(b, b + want.byte_size());
  };
  const std::vector<uint8_t> want_bytes(static_cast<const uint8_t*>(want.raw_data()),
                                        static_cast<const uint8_t*>(want.raw_data()) + want.byte_size());
  // One tensor.
  hbDNNTensor whole{};
  whole.properties = in_props;
  whole.sysMem[0] = alloc(in_props.alignedByteSize);
  std::memcpy(whole.sysMem[0].virAddr, x.raw_data(), x.byte_size());
  int32_t status = -1;
  EXPECT_EQ(run(&whole, &status), want_bytes);
  EXPECT_EQ(status, 0) << hbDNNGetErrorDesc(status);
  // Two batch items: their validShape / alignedShape say batch 1.
  const size_t item_bytes = x.byte_size() / 2;
  hbDNNTensor items[2] = {};
  for (int b = 0; b < 2; ++b) {
    items[b].properties = in_props;
    items[b].properties.validShape.dimensionSize[0] = 1;
    items[b].properties.alignedShape.dimensionSize[0] = 1;
    items[b].properties.alignedByteSize = in_props.alignedByteSize / 2;
    items[b].sysMem[0] = alloc(items[b].properties.alignedByteSize);
    std::memcpy(items[b].sysMem[0].virAddr, static_cast<const uint8_t*>(x.raw_data()) + b * item_bytes, item_bytes);
  }
  EXPECT_EQ(run(items, &status), want_bytes);
  EXPECT_EQ(status, 0) << hbDNNGetErrorDesc(status);
  // Swapped items: the batch's outputs swap too (each item is one batch entry, not a copy).
  hbDNNTensor swapped[2] = {items[1], items[0]};
  const std::vector<uint8_t> got = run(swapped, &status);
  ASSERT_EQ(status, 0) << hbDNNGetErrorDesc(status);
  const size_t out_item = want_bytes.size() / 2;
  EXPECT_TRUE(std::equal(got.begin(), got.begin() + out_item, want_bytes.begin() + out_item));
  EXPECT_TRUE(std::equal(got.begin() + out_item, got.end(), want_bytes.begin()));
  // An item with too little memory: refused, naming the item.
  hbDNNTensor small[2] = {items[0], items[1]};
  small[1].sysMem[0] = alloc(static_cast<int32_t>(item_bytes / 2));
  EXPECT_EQ(run(small, &status), std::vector<uint8_t>());
  EXPECT_EQ(status, HB_DNN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hbDNNGetErrorDesc(status)).find("input 0 ('x') batch item 1 (input tensor 1): sysMem[0].memSize"),
            std::string::npos)
      << hbDNNGetErrorDesc(status);
  for (hbSysMem& m : memory) EXPECT_EQ(hbSysFreeMem(&m), 0);
  EXPECT_EQ(hbDNNRelease(packed), 0);
}

// Sibling BPU branches in one segment (docs/compiler.md): conv(xq) and add(xq, quantize(relu
// x)) share no producer but xq, so the compiler makes them one segment with two inputs and two
// outputs; the runtime runs it between the CPU operators and gives the executor's y bit for bit.
// A model file from bytes with its first input and every output allocated: load() (under
// ASSERT_NO_FATAL_FAILURE), then infer() once per input, output(i) to read a result.
class BytesModel {
 public:
  BytesModel() = default;
  BytesModel(const BytesModel&) = delete;
  BytesModel& operator=(const BytesModel&) = delete;
  ~BytesModel() {
    if (in_.sysMem[0].virAddr != nullptr) {
      EXPECT_EQ(hbSysFreeMem(&in_.sysMem[0]), 0);
    }
    for (hbDNNTensor& t : out_) {
      if (t.sysMem[0].virAddr != nullptr) {
        EXPECT_EQ(hbSysFreeMem(&t.sysMem[0]), 0);
      }
    }
    if (packed_ != nullptr) {
      EXPECT_EQ(hbDNNRelease(packed_), 0);
    }
  }

  void load(const std::vector<uint8_t>& bytes, const char* name) {
    const void* data = bytes.data();
    int32_t length = static_cast<int32_t>(bytes.size());
    ASSERT_EQ(hbDNNInitializeFromDDR(&packed_, &data, &length, 1), 0) << hbDNNGetErrorDesc(-6000002);
    ASSERT_EQ(hbDNNGetModelHandle(&dnn_, packed_, name), 0);
    ASSERT_EQ(hbDNNGetInputTensorProperties(&in_.properties, dnn_, 0), 0);
    ASSERT_EQ(hbSysAllocCachedMem(&in_.sysMem[0], static_cast<uint32_t>(in_.properties.alignedByteSize)), 0);
    int32_t outputs = 0;
    ASSERT_EQ(hbDNNGetOutputCount(&outputs, dnn_), 0);
    out_.resize(static_cast<size_t>(outputs));
    for (int32_t i = 0; i < outputs; ++i) {
      hbDNNTensor& t = out_[static_cast<size_t>(i)];
      ASSERT_EQ(hbDNNGetOutputTensorProperties(&t.properties, dnn_, i), 0);
      ASSERT_EQ(hbSysAllocCachedMem(&t.sysMem[0], static_cast<uint32_t>(t.properties.alignedByteSize)), 0);
    }
  }

  void infer(const Tensor& x) {
    ASSERT_EQ(x.byte_size(), static_cast<size_t>(in_.properties.alignedByteSize));
    std::memcpy(in_.sysMem[0].virAddr, x.raw_data(), x.byte_size());
    hbDNNTensor* o = out_.data();
    hbDNNTaskHandle_t task = nullptr;
    hbDNNInferCtrlParam p;
    HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&p);
    ASSERT_EQ(hbDNNInfer(&task, &o, &in_, dnn_, &p), 0) << hbDNNGetErrorDesc(-6000001);
    ASSERT_EQ(hbDNNWaitTaskDone(task, 0), 0) << hbDNNGetErrorDesc(-6000003);
    EXPECT_EQ(hbDNNReleaseTask(task), 0);
  }

  const hbDNNTensor& output(size_t i) const { return out_.at(i); }

  // Output i holds `want`'s bytes.
  void expect_output(size_t i, const Tensor& want, const std::string& what) const {
    ASSERT_EQ(want.byte_size(), static_cast<size_t>(out_.at(i).properties.alignedByteSize)) << what;
    EXPECT_EQ(std::memcmp(out_.at(i).sysMem[0].virAddr, want.raw_data(), want.byte_size()), 0) << what;
  }

 private:
  hbPackedDNNHandle_t packed_ = nullptr;
  hbDNNHandle_t dnn_ = nullptr;
  hbDNNTensor in_{};
  std::vector<hbDNNTensor> out_;
};

TEST(DnnSegments, SiblingBranchesInOneSegmentRunAsTheExecutorDoes) {
  setenv("HB_DNN_LOG_LEVEL", "0", 1);
  const ir::Model model = ir::parse_model(R"(model opsets=[ai.onnx:17, horizon:1]
graph g (%x: float32[1,3,8,8]) -> (%y) {
  init %w: int8[8,3,3,3] uniform(-128, 128)
  init %b: int32[8] uniform(-3000, 3000)
  %xq = horizon::Quantize[scale=0.03125](%x)
  %xr = Relu(%x)
  %rq = horizon::Quantize[scale=0.03125](%xr)
  %c = horizon::HzSQuantizedConv[kernel_shape=[3,3], strides=[1,1], pads=[1,1,1,1], dilations=[1,1], group=1, output_type="int8", multipliers=[1288490189,1288490189,1288490189,1288490189,1503238554,1503238554,1503238554,1503238554], shifts=[40,40,40,40,41,41,41,41]](%xq, %w, %b)
  %s = horizon::HzSElementwiseAdd[input_multipliers=[1288490189,1503238554], input_shifts=[30,31], intermediate_shift=8, output_type="int8", output_scale=0.05](%xq, %rq)
  %cf = horizon::Dequantize[scales=[0.05]](%c)
  %sf = horizon::Dequantize[scales=[0.05]](%s)
  %y = Concat[axis=1](%cf, %sf)
}
)");
  const compiler::TensorInfos infos = compiler::observe_tensor_infos(model, {{"x", uniform_input({1, 3, 8, 8}, 5)}});
  ASSERT_EQ(compiler::find_bpu_segments(*model.graph, infos).size(), 1u);
  std::vector<uint8_t> bytes;
  const format::Status compiled = compile_bayes_model_file(model, uniform_input({1, 3, 8, 8}, 5), "siblings", "test", &bytes);
  ASSERT_TRUE(compiled.ok()) << compiled.message;
  BytesModel bin;
  ASSERT_NO_FATAL_FAILURE(bin.load(bytes, "siblings"));
  executor::FloatExecutor executor(model);
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const Tensor x = uniform_input({1, 3, 8, 8}, seed);
    const Tensor want = executor.run({{"x", x}}).at("y").clone();
    ASSERT_NO_FATAL_FAILURE(bin.infer(x));
    bin.expect_output(0, want, "seed " + std::to_string(seed));
  }
}

// CPU control flow in a model file (format 1.3): a BPU LUT's output v scaled by max|x|, then
// `y = v; while max|y| > 1 (at most 6 times): y = y · half`, the Loop's body a graph of the file
// reading `half` and `limit` from the main graph; the runtime gives what the quantized-model
// executor gives, bit for bit, for inputs that take different numbers of iterations.
TEST(DnnControlFlow, AWhileLoopOnTheCpuRunsItsBodyAsTheExecutorDoes) {
  setenv("HB_DNN_LOG_LEVEL", "0", 1);
  ir::Model model = ir::parse_model(R"(model opsets=[ai.onnx:17, horizon:1]
graph g (%x: float32[1,3,8,8]) -> (%y) {
  init %t: int8[256] uniform(-128, 128)
  init %half: float32[] {0.5}
  init %limit: float32[] {1}
  init %at_most: int64[] {6}
  %xq = horizon::Quantize[scale=0.03125](%x)
  %l = horizon::HzLut[function="test"](%xq, %t)
  %lf = horizon::Dequantize[scales=[0.05]](%l)
  %xa = Abs(%x)
  %k = ReduceMax[keepdims=0](%xa)
  %v = Mul(%lf, %k)
  %a = Abs(%v)
  %m = ReduceMax[keepdims=0](%a)
  %go = Greater(%m, %limit)
  %y = Loop(%at_most, %go, %v)
}
)");
  auto body = std::make_shared<ir::Graph>();
  body->set_name("shrink");
  ir::Value* s = nullptr;
  for (const auto& [name, type] : {std::pair{"i", ir::TensorType::of(DataType::kInt64, {})},
                                   std::pair{"c", ir::TensorType::of(DataType::kBool, {})},
                                   std::pair{"s", ir::TensorType::of(DataType::kFloat32, {1, 8, 8, 8})}}) {
    s = body->add_value(name, type);
    body->add_input(s);
  }
  ir::Node* mul = body->add_node({"Mul", {s, body->add_outer_scope_value("half")}, {"s2"}, "mul", "", {}});
  ir::Node* abs = body->add_node({"Abs", {mul->output(0)}, {"a2"}, "abs", "", {}});
  kernels::AttributeMap flat;
  flat.set("keepdims", int64_t{0});
  ir::Node* max = body->add_node({"ReduceMax", {abs->output(0)}, {"m2"}, "max", "", flat});
  ir::Node* go = body->add_node({"Greater", {max->output(0), body->add_outer_scope_value("limit")}, {"go2"}, "test", "", {}});
  body->add_output(go->output(0));
  body->add_output(mul->output(0));
  for (ir::Node* n : model.graph->nodes()) {
    if (n->op_type() == "Loop") n->graph_attrs().push_back({"body", {body}, false});
  }
  std::vector<uint8_t> bytes;
  const format::Status compiled = compile_bayes_model_file(model, uniform_input({1, 3, 8, 8}, 7), "loop", "test", &bytes);
  ASSERT_TRUE(compiled.ok()) << compiled.message;
  BytesModel bin;
  ASSERT_NO_FATAL_FAILURE(bin.load(bytes, "loop"));
  executor::FloatExecutor executor(model);
  std::set<long> iterations;  // max |v| / max |y| = 2^iterations
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    Tensor x = uniform_input({1, 3, 8, 8}, seed);  // narrowed: max|v| and the iteration count vary
    for (int64_t i = 0; i < x.element_count(); ++i) x.data<float>()[i] *= 0.005f * static_cast<float>(seed * seed);
    executor::RunOptions extra;
    extra.extra_outputs = {"v"};
    const executor::RunResult result = executor.run({{"x", x}}, extra);
    const Tensor want = result.at("y").clone();
    ASSERT_NO_FATAL_FAILURE(bin.infer(x));
    bin.expect_output(0, want, "seed " + std::to_string(seed));
    double before = 0, after = 0;
    for (int64_t i = 0; i < want.element_count(); ++i) {
      before = std::max(before, std::fabs(result.at("v").float_at(i)));
      after = std::max(after, std::fabs(want.float_at(i)));
    }
    iterations.insert(std::lround(std::log2(before / after)));
  }
  EXPECT_GT(iterations.size(), 2u);
}

// A comparison on the BPU writes an int8 mask: a Where on the BPU reads it, and a bool graph
// output (U8 in the classic tensor types) gets it through a CPU Cast; both bit-exact.
TEST(DnnMask, ABpuComparisonFeedsAWhereAndABoolOutput) {
  setenv("HB_DNN_LOG_LEVEL", "0", 1);
  const ir::Model model = ir::parse_model(R"(model opsets=[ai.onnx:17, horizon:1]
graph g (%x: float32[1,3,8,8]) -> (%y, %mask) {
  init %t: int8[256] uniform(-128, 128)
  init %k: int8[] {40}
  init %fill: int8[] {-128}
  %xq = horizon::Quantize[scale=0.03125](%x)
  %l = horizon::HzLut[function="test"](%xq, %t)
  %m = horizon::HzSElementwiseGreater[input_multipliers=[1073741824, 1073741824], input_shifts=[22, 22], intermediate_shift=8, output_type="int8"](%l, %k)
  %s = horizon::HzSWhere[input_multipliers=[1073741824, 1073741824], input_shifts=[22, 22], intermediate_shift=8, output_type="int8"](%m, %l, %fill)
  %y = horizon::Dequantize[scales=[0.05]](%s)
  %mask = Cast[to=9](%m)
}
)");
  std::vector<uint8_t> bytes;
  const format::Status compiled = compile_bayes_model_file(model, uniform_input({1, 3, 8, 8}, 7), "mask", "test", &bytes);
  ASSERT_TRUE(compiled.ok()) << compiled.message;
  BytesModel bin;
  ASSERT_NO_FATAL_FAILURE(bin.load(bytes, "mask"));
  EXPECT_EQ(bin.output(1).properties.tensorType, HB_DNN_TENSOR_TYPE_U8);  // bool: one byte, 0 or 1
  executor::FloatExecutor executor(model);
  const Tensor x = uniform_input({1, 3, 8, 8}, 3);
  const executor::RunResult want = executor.run({{"x", x}});
  ASSERT_NO_FATAL_FAILURE(bin.infer(x));
  bin.expect_output(0, want.at("y"), "y");
  bin.expect_output(1, want.at("mask"), "mask");
  int64_t set = 0;
  for (int64_t i = 0; i < 192; ++i) set += static_cast<const uint8_t*>(bin.output(1).sysMem[0].virAddr)[i];
  EXPECT_GT(set, 0);
  EXPECT_LT(set, 192);  // both outcomes occur
}

TEST(HbSys, MemoryFunctionsCheckTheirArguments) {
  setenv("HB_DNN_LOG_LEVEL", "0", 1);
  hbSysMem m{};
  EXPECT_EQ(hbSysAllocMem(&m, 0), HB_SYS_INVALID_ARGUMENT);
  EXPECT_EQ(hbSysAllocMem(nullptr, 16), HB_SYS_INVALID_ARGUMENT);
  ASSERT_EQ(hbSysAllocMem(&m, 100), 0);
  EXPECT_EQ(m.memSize, 100u);
  EXPECT_EQ(m.phyAddr, reinterpret_cast<uintptr_t>(m.virAddr));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(m.virAddr) % 64, 0u);
  char src[100], dst[100];
  for (int i = 0; i < 100; ++i) src[i] = static_cast<char>(i);
  ASSERT_EQ(hbSysWriteMem(&m, src, 100), 0);
  ASSERT_EQ(hbSysReadMem(dst, &m, 100), 0);
  EXPECT_EQ(std::memcmp(src, dst, 100), 0);
  EXPECT_EQ(hbSysWriteMem(&m, src, 101), HB_SYS_INVALID_ARGUMENT);
  EXPECT_EQ(hbSysReadMem(nullptr, &m, 1), HB_SYS_INVALID_ARGUMENT);
  EXPECT_EQ(hbSysFlushMem(&m, HB_SYS_MEM_CACHE_CLEAN), 0);
  EXPECT_EQ(hbSysFlushMem(&m, 3), HB_SYS_INVALID_ARGUMENT);
  hbSysMem copy = m;
  ASSERT_EQ(hbSysFreeMem(&m), 0);
  EXPECT_EQ(m.virAddr, nullptr);
  EXPECT_EQ(hbSysFreeMem(&copy), HB_SYS_INVALID_ARGUMENT);  // double free detected
  EXPECT_EQ(hbSysWriteMem(&copy, src, 1), HB_SYS_INVALID_ARGUMENT);
  EXPECT_EQ(hbSysFlushMem(&copy, HB_SYS_MEM_CACHE_CLEAN), HB_SYS_INVALID_ARGUMENT);

  std::vector<char> own(256);
  hbSysMem reg{0, own.data(), 256};
  ASSERT_EQ(hbSysRegisterMem(&reg), 0);
  hbSysMem overlap{0, own.data() + 8, 16};
  EXPECT_EQ(hbSysRegisterMem(&overlap), HB_SYS_INVALID_ARGUMENT);
  EXPECT_EQ(hbSysFreeMem(&reg), HB_SYS_INVALID_ARGUMENT);  // not ours to free
  EXPECT_EQ(hbSysUnregisterMem(&reg), 0);
  EXPECT_EQ(hbSysUnregisterMem(&reg), HB_SYS_REGISTER_MEM_FAILED);
}

}  // namespace
}  // namespace openbpu
