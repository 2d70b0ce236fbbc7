// The BPU driver interface (openbpu/dnn/bpu_driver.h): libdnn runs models on whatever driver
// the installed factory makes. A backend that wraps the simulator's driver and counts what
// libdnn asks of it sees every program load and job; a factory that refuses a march makes
// hbDNNInitializeFromDDR fail with its message. Its own binary: the factory is process-wide.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "dnn/hb_dnn.h"
#include "openbpu/dnn/bpu_driver.h"
#include "openbpu/ir/parse.h"
#include "small_model.h"

namespace openbpu {
namespace {

using dnn::BpuCore;
using dnn::BpuDriver;
using dnn::BpuResult;

std::atomic<int> loads{0}, unloads{0}, submits{0};

// A backend of its own: the simulator's cores behind counting wrappers.
class CountingCore final : public BpuCore {
 public:
  explicit CountingCore(BpuCore& inner) : inner_(inner) {}
  BpuResult load(std::span<const uint8_t> program, std::span<const uint8_t> weights) override {
    ++loads;
    return inner_.load(program, weights);
  }
  BpuResult unload(uint64_t program) override {
    ++unloads;
    return inner_.unload(program);
  }
  const dnn::BpuProgramInfo* program_info(uint64_t program) const override { return inner_.program_info(program); }
  BpuResult submit(uint64_t program, std::span<const std::span<const uint8_t>> inputs,
                   std::span<const std::span<uint8_t>> outputs, int priority, dnn::BpuJobDone done) override {
    ++submits;
    return inner_.submit(program, inputs, outputs, priority, done);
  }
  dnn::BpuCounters counters() const override { return inner_.counters(); }

 private:
  BpuCore& inner_;
};

class CountingDriver final : public BpuDriver {
 public:
  explicit CountingDriver(std::unique_ptr<BpuDriver> inner) : inner_(std::move(inner)) {
    for (int c = 0; c < inner_->chip().cores; ++c) cores_.push_back(std::make_unique<CountingCore>(inner_->core(c)));
  }
  const dnn::BpuChipInfo& chip() const override { return inner_->chip(); }
  BpuCore& core(int index) override { return *cores_[static_cast<size_t>(index)]; }

 private:
  std::unique_ptr<BpuDriver> inner_;
  std::vector<std::unique_ptr<CountingCore>> cores_;
};

std::unique_ptr<BpuDriver> refusing_factory(const std::string& march, std::string& error) {
  error = "no board of march '" + march + "' is attached";
  return nullptr;
}

std::unique_ptr<BpuDriver> counting_factory(const std::string& march, std::string& error) {
  std::unique_ptr<BpuDriver> simulator = dnn::make_simulator_driver(march, error);
  if (simulator == nullptr) return nullptr;
  return std::make_unique<CountingDriver>(std::move(simulator));
}

TEST(BpuDriver, LibdnnRunsOnTheInstalledDriver) {
  const std::vector<uint8_t> bytes = model_file(ir::Model(ir::parse_model(kModelText)), "small");
  const void* data = bytes.data();
  int32_t length = static_cast<int32_t>(bytes.size());
  hbPackedDNNHandle_t packed = nullptr;

  dnn::set_bpu_driver_factory(&refusing_factory);
  EXPECT_EQ(hbDNNInitializeFromDDR(&packed, &data, &length, 1), HB_DNN_INCOMPATIBLE_MODEL);
  EXPECT_EQ(loads, 0);

  dnn::set_bpu_driver_factory(&counting_factory);
  ASSERT_EQ(hbDNNInitializeFromDDR(&packed, &data, &length, 1), 0);
  hbDNNHandle_t model = nullptr;
  ASSERT_EQ(hbDNNGetModelHandle(&model, packed, "small"), 0);
  int cores = 0;
  {
    std::string error;
    cores = dnn::make_simulator_driver("bayes-e", error)->chip().cores;
  }
  EXPECT_EQ(loads, 2 * cores) << "two BPU segments, loaded on every core";

  hbDNNTensor in{}, out{};
  ASSERT_EQ(hbDNNGetInputTensorProperties(&in.properties, model, 0), 0);
  ASSERT_EQ(hbDNNGetOutputTensorProperties(&out.properties, model, 0), 0);
  ASSERT_EQ(hbSysAllocCachedMem(&in.sysMem[0], static_cast<uint32_t>(in.properties.alignedByteSize)), 0);
  ASSERT_EQ(hbSysAllocCachedMem(&out.sysMem[0], static_cast<uint32_t>(out.properties.alignedByteSize)), 0);
  const kernels::Tensor x = random_input(3);
  std::memcpy(in.sysMem[0].virAddr, x.raw_data(), x.byte_size());
  for (int i = 0; i < 3; ++i) {
    hbDNNInferCtrlParam p;
    HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&p);
    hbDNNTaskHandle_t task = nullptr;
    hbDNNTensor* outs = &out;
    ASSERT_EQ(hbDNNInfer(&task, &outs, &in, model, &p), 0);
    ASSERT_EQ(hbDNNWaitTaskDone(task, 0), 0);
    ASSERT_EQ(hbDNNReleaseTask(task), 0);
  }
  EXPECT_EQ(submits, 3 * 2) << "one job per BPU segment and inference";
  EXPECT_EQ(hbSysFreeMem(&in.sysMem[0]), 0);
  EXPECT_EQ(hbSysFreeMem(&out.sysMem[0]), 0);
  ASSERT_EQ(hbDNNRelease(packed), 0);
  EXPECT_EQ(unloads, loads.load());
  dnn::set_bpu_driver_factory(nullptr);
}

}  // namespace
}  // namespace openbpu
