// The simulator's BPU driver (driver.h).
#include "driver.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>

#include "openbpu/simulator/isa.h"
#include "openbpu/simulator/march.h"
#include "openbpu/simulator/program.h"

namespace openbpu::dnn {

namespace {

BpuStatus status_of(simulator::DeviceStatus s) {
  switch (s) {
    case simulator::DeviceStatus::kOk: return BpuStatus::kOk;
    case simulator::DeviceStatus::kInvalidProgram: return BpuStatus::kInvalidProgram;
    case simulator::DeviceStatus::kUnknownProgram: return BpuStatus::kUnknownProgram;
    case simulator::DeviceStatus::kWrongBuffers: return BpuStatus::kWrongBuffers;
    case simulator::DeviceStatus::kOutOfMemory: return BpuStatus::kOutOfMemory;
    case simulator::DeviceStatus::kInvalidPriority: return BpuStatus::kInvalidPriority;
    default: return BpuStatus::kFailed;
  }
}

BpuResult result_of(simulator::DeviceResult r) { return {status_of(r.status), std::move(r.message), r.id}; }

BpuElementType element_type_of(simulator::isa::ElementType t) {
  switch (t) {
    case simulator::isa::ElementType::kInt16: return BpuElementType::kInt16;
    case simulator::isa::ElementType::kInt32: return BpuElementType::kInt32;
    case simulator::isa::ElementType::kUint8: return BpuElementType::kUint8;
    default: return BpuElementType::kInt8;
  }
}

BpuBinding binding_of(const simulator::isa::TensorDesc& d) {
  BpuBinding b;
  b.type = element_type_of(d.type);
  b.dims.assign(d.dims, d.dims + d.rank);
  b.bytes = static_cast<size_t>(simulator::element_count(d) * simulator::isa::element_bytes(d.type));
  return b;
}

class SimulatorCore final : public BpuCore {
 public:
  BpuResult load(std::span<const uint8_t> program, std::span<const uint8_t> weights) override {
    BpuResult r = result_of(device_.load(program, weights));
    if (!r.ok()) return r;
    try {
      const simulator::Program& p = *device_.program(r.id);
      BpuProgramInfo info;
      for (const auto& d : p.inputs) info.inputs.push_back(binding_of(d));
      for (const auto& d : p.outputs) info.outputs.push_back(binding_of(d));
      std::lock_guard<std::mutex> lock(mutex_);
      infos_[r.id] = std::move(info);
    } catch (const std::bad_alloc&) {
      (void)device_.unload(r.id);
      return {BpuStatus::kOutOfMemory, "out of memory describing the program's bindings", 0};
    }
    return r;
  }

  BpuResult unload(uint64_t program) override {
    BpuResult r = result_of(device_.unload(program));
    std::lock_guard<std::mutex> lock(mutex_);
    infos_.erase(program);
    return r;
  }

  const BpuProgramInfo* program_info(uint64_t program) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = infos_.find(program);
    return it == infos_.end() ? nullptr : &it->second;
  }

  BpuResult submit(uint64_t program, std::span<const std::span<const uint8_t>> inputs,
                   std::span<const std::span<uint8_t>> outputs, int priority, BpuJobDone done) override {
    jobs_submitted_.fetch_add(1, std::memory_order_relaxed);
    return result_of(device_.submit_views(program, inputs, outputs, priority, {done.call, done.context}));
  }

  BpuCounters counters() const override {
    return {jobs_submitted_.load(std::memory_order_relaxed), device_.preemptions()};
  }

  simulator::Device& device() { return device_; }

 private:
  simulator::Device device_;
  mutable std::mutex mutex_;
  std::map<uint64_t, BpuProgramInfo> infos_;  // node-based: pointers stay valid until erase
  std::atomic<uint64_t> jobs_submitted_{0};
};

class SimulatorDriver final : public BpuDriver {
 public:
  explicit SimulatorDriver(const simulator::MarchSpec& march) {
    chip_.march = std::string(march.name);
    chip_.cores = std::max(1, march.bpu_cores);
    chip_.isa_version = simulator::isa::kIsaVersion;
    chip_.resizer_roi_min = march.resizer_roi_min;
    chip_.resizer_roi_max = march.resizer_roi_max;
    chip_.resizer_scale_min = march.resizer_scale_min;
    chip_.resizer_scale_max = march.resizer_scale_max;
    chip_.resizer_image_max = march.resizer_image_max;
    for (int i = 0; i < chip_.cores; ++i) cores_.push_back(std::make_unique<SimulatorCore>());
  }
  const BpuChipInfo& chip() const override { return chip_; }
  BpuCore& core(int index) override { return *cores_[static_cast<size_t>(index)]; }
  SimulatorCore& simulator_core(int index) { return *cores_[static_cast<size_t>(index)]; }

 private:
  BpuChipInfo chip_;
  std::vector<std::unique_ptr<SimulatorCore>> cores_;
};

// HB_DNN_SIM_PLATFORM names the simulated chip as the original runtime does (BERNOULLI2,
// BAYES, ...); our march names are accepted too. Empty = any march.
std::string sim_platform_march() {
  const char* v = std::getenv("HB_DNN_SIM_PLATFORM");
  if (v == nullptr || *v == 0) return {};
  std::string s(v);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

}  // namespace

std::unique_ptr<BpuDriver> make_simulator_driver(const std::string& march, std::string& error) {
  const auto m = simulator::march_from_name(march);
  if (!m) {
    error = "the model's march '" + march + "' is not a BPU this runtime simulates";
    return nullptr;
  }
  const std::string wanted = sim_platform_march();
  if (!wanted.empty() && wanted != march) {
    error = "the model was compiled for march '" + march + "' but HB_DNN_SIM_PLATFORM selects '" + wanted +
            "'; unset it or convert the model for that march";
    return nullptr;
  }
  return std::make_unique<SimulatorDriver>(simulator::march_spec(*m));
}

simulator::Device* simulator_device(BpuDriver& driver, int core) {
  auto* d = dynamic_cast<SimulatorDriver*>(&driver);
  return d == nullptr ? nullptr : &d->simulator_core(core).device();
}

}  // namespace openbpu::dnn
