// The runtime profiler (HB_DNN_PROFILER_LOG_PATH): its own binary, because the variable is read
// once per process, at the first model load. Runs the unit tests' small model (two BPU segments,
// CPU operators around them), releases the packed handle (which writes the files) and checks
// profiler.log (two JSON objects separated by `***`) and profiler.csv.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "dnn/hb_dnn.h"
#include "dnn/openbpu_profiler.h"
#include "openbpu/ir/parse.h"
#include "small_model.h"

namespace openbpu {
namespace {

using nlohmann::json;

std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class DnnProfiler : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                     ("dnn_profiler_test_" + std::to_string(::getpid())) / "profile");
    std::filesystem::remove_all(dir_->parent_path());
    // Removed after the profiler's own at-exit write (handlers run in reverse order of
    // registration; the profiler registers its handler at the first model load, later).
    static const std::string root = dir_->parent_path().string();
    std::atexit([] { std::filesystem::remove_all(root); });
    setenv("HB_DNN_LOG_LEVEL", "0", 1);  // the NULL-argument check below would print
    // Before any model is loaded: the profiler reads the variable once. The folder does not
    // exist yet: the profiler creates it when it writes.
    setenv("HB_DNN_PROFILER_LOG_PATH", dir_->c_str(), 1);
    bytes_ = new std::vector<uint8_t>(model_file(ir::Model(ir::parse_model(kModelText)), "small"));
  }
  static void TearDownTestSuite() {
    delete bytes_;
    delete dir_;
  }

  // Loads the small model, runs `n` inferences from each of `threads` threads, releases it.
  static void run(int threads, int n) {
    hbPackedDNNHandle_t packed = nullptr;
    const void* data = bytes_->data();
    int32_t length = static_cast<int32_t>(bytes_->size());
    ASSERT_EQ(hbDNNInitializeFromDDR(&packed, &data, &length, 1), 0);
    hbDNNHandle_t dnn = nullptr;
    ASSERT_EQ(hbDNNGetModelHandle(&dnn, packed, "small"), 0);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        hbDNNTensor in{}, out{};
        ASSERT_EQ(hbDNNGetInputTensorProperties(&in.properties, dnn, 0), 0);
        ASSERT_EQ(hbDNNGetOutputTensorProperties(&out.properties, dnn, 0), 0);
        ASSERT_EQ(hbSysAllocCachedMem(&in.sysMem[0], static_cast<uint32_t>(in.properties.alignedByteSize)), 0);
        ASSERT_EQ(hbSysAllocCachedMem(&out.sysMem[0], static_cast<uint32_t>(out.properties.alignedByteSize)), 0);
        const kernels::Tensor x = random_input(static_cast<uint32_t>(t));
        std::memcpy(in.sysMem[0].virAddr, x.raw_data(), x.byte_size());
        for (int i = 0; i < n; ++i) {
          hbDNNInferCtrlParam p;
          HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&p);
          p.bpuCoreId = HB_BPU_CORE_0;
          hbDNNTaskHandle_t task = nullptr;
          hbDNNTensor* outs = &out;
          EXPECT_EQ(hbDNNInfer(&task, &outs, &in, dnn, &p), 0);
          EXPECT_EQ(hbDNNWaitTaskDone(task, 0), 0);
          EXPECT_EQ(hbDNNReleaseTask(task), 0);
        }
        (void)hbSysFreeMem(&in.sysMem[0]);
        (void)hbSysFreeMem(&out.sysMem[0]);
      });
    }
    for (std::thread& t : pool) t.join();
    ASSERT_EQ(hbDNNRelease(packed), 0);  // the last packed handle: writes the files
  }

  // profiler.log's two objects.
  static std::pair<json, json> read_log() {
    const std::string text = read_text(*dir_ / "profiler.log");
    const size_t sep = text.find("\n***\n");
    EXPECT_NE(sep, std::string::npos) << text;
    EXPECT_EQ(text.find("\n***\n", sep + 1), std::string::npos) << "more than one separator:\n" << text;
    return {json::parse(text.substr(0, sep + 1)), json::parse(text.substr(sep + 5))};
  }

  static void expect_times(const json& t) {
    ASSERT_TRUE(t.is_object());
    const double avg = t.at("avg_time"), max = t.at("max_time"), min = t.at("min_time");
    EXPECT_GE(min, 0.0);
    EXPECT_LE(min, avg + 1e-6) << t.dump();
    EXPECT_LE(avg, max + 1e-6) << t.dump();
  }

  static std::filesystem::path* dir_;
  static std::vector<uint8_t>* bytes_;
};
std::filesystem::path* DnnProfiler::dir_ = nullptr;
std::vector<uint8_t>* DnnProfiler::bytes_ = nullptr;

TEST_F(DnnProfiler, ReleasingTheLastModelWritesTheLogAndTheCsv) {
  run(2, 5);
  ASSERT_TRUE(std::filesystem::is_regular_file(*dir_ / "profiler.log"));
  ASSERT_TRUE(std::filesystem::is_regular_file(*dir_ / "profiler.csv"));
  const auto [first, second] = read_log();

  // What the library observed: 10 inferences from 2 threads, every task on core 0.
  const json& rc = first.at("running_condition");
  EXPECT_EQ(rc.at("frame_count"), 10);
  EXPECT_EQ(rc.at("thread_num"), 2);
  EXPECT_EQ(rc.at("model_name"), "small");
  EXPECT_EQ(rc.at("core_id"), 1);
  const double run_time = rc.at("run_time");
  EXPECT_GT(run_time, 0.0);
  const json& perf = first.at("perf_result");
  EXPECT_NEAR(perf.at("FPS").get<double>(), 10 * 1000.0 / run_time, 0.01);
  EXPECT_GT(perf.at("average_latency").get<double>(), 0.0);

  // Layers: the input copy, both BPU segments, every CPU operator, the output copy.
  const json& layers = second.at("model_latency");
  int bpu = 0, cpu_ops = 0;
  bool relu = false;
  for (const auto& [key, t] : layers.items()) {
    expect_times(t);
    if (key.rfind("BPU_small_subgraph_", 0) == 0) {
      ++bpu;
    } else if (key.find("_layout_convert") == std::string::npos) {
      ++cpu_ops;  // <operator name>_<op type>
      relu = relu || key.find("Relu") != std::string::npos;
    }
  }
  EXPECT_EQ(bpu, 2) << layers.dump(2);
  EXPECT_GE(cpu_ops, 3) << layers.dump(2);  // Quantize, Dequantize, Relu, ... (some may be in BPU segments)
  EXPECT_TRUE(relu) << layers.dump(2);
  EXPECT_TRUE(layers.contains("small_subgraph_0_input_layout_convert")) << layers.dump(2);
  EXPECT_TRUE(layers.contains("small_subgraph_0_output_layout_convert")) << layers.dump(2);

  for (const char* k : {"BPU_inference_time_cost", "CPU_inference_time_cost"}) expect_times(second.at("chip_latency").at(k));
  EXPECT_GT(second.at("chip_latency").at("BPU_inference_time_cost").at("avg_time").get<double>(), 0.0);
  for (const char* k : {"TaskPendingTime", "TaskRunningTime"}) expect_times(second.at("task_latency").at(k));
  // A task's running time covers its inference's layers.
  EXPECT_GE(second.at("task_latency").at("TaskRunningTime").at("max_time").get<double>(),
            second.at("chip_latency").at("BPU_inference_time_cost").at("min_time").get<double>());

  const std::string csv = read_text(*dir_ / "profiler.csv");
  for (const char* line : {"running_condition\nthread_num,2\ncore_id,1\nframe_count,10\nrun_time,", "\nmodel_name,small\n\nperf_result\naverage_latency,",
                           "\n\nchip_latency\nname,avg_time,max_time,min_time\nBPU_inference_time_cost,",
                           "\n\nmodel_latency\nname,avg_time,max_time,min_time\n",
                           "\nsmall_subgraph_0_input_layout_convert,",
                           "\n\ntask_latency\nname,avg_time,max_time,min_time\nTaskPendingTime,", "\nTaskRunningTime,"}) {
    EXPECT_NE(csv.find(line), std::string::npos) << "no '" << line << "' in\n" << csv;
  }
}

TEST_F(DnnProfiler, ARunningConditionSetByTheToolReplacesTheObservedOne) {
  run(1, 3);
  ASSERT_EQ(openbpuDNNProfilerSetRunningCondition("small \"x\"", 2, 42, 123.5, 3, 7.25, 340.1), 0);
  ASSERT_EQ(openbpuDNNProfilerFlush(), 0);
  const auto [first, second] = read_log();
  const json& rc = first.at("running_condition");
  EXPECT_EQ(rc.at("frame_count"), 42);
  EXPECT_EQ(rc.at("thread_num"), 3);
  EXPECT_EQ(rc.at("core_id"), 2);
  EXPECT_EQ(rc.at("model_name"), "small \"x\"");  // escaped in JSON
  EXPECT_DOUBLE_EQ(rc.at("run_time").get<double>(), 123.5);
  EXPECT_DOUBLE_EQ(first.at("perf_result").at("average_latency").get<double>(), 7.25);
  EXPECT_DOUBLE_EQ(first.at("perf_result").at("FPS").get<double>(), 340.1);
  // The layers keep accumulating over both tests' inferences (10 + 3): every key is there.
  EXPECT_TRUE(second.at("model_latency").contains("small_subgraph_0_output_layout_convert"));
  const std::string csv = read_text(*dir_ / "profiler.csv");
  EXPECT_NE(csv.find("\nmodel_name,\"small \"\"x\"\"\"\n"), std::string::npos) << csv;  // quoted in csv
  EXPECT_EQ(openbpuDNNProfilerSetRunningCondition(nullptr, 0, 0, 0, 0, 0, 0), HB_DNN_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace openbpu
