// The BPU driver interface: all libdnn knows of the hardware that runs the BPU segments of a
// model. The simulator's virtual BPU implements it (runtime/dnn/src/simulator/driver.cc, the
// only libdnn source that includes simulator headers); a real device backend implements the
// same classes and installs its factory with set_bpu_driver_factory() before the first model
// is loaded. C++, for backends; applications use hb_dnn.h.
//
// Rules every implementation keeps: nothing throws; every call is thread-safe; a completion
// callback runs once per job, on a thread of the driver, after the job's outputs are written
// (or with the reason it failed), must not block for long and may submit again.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace openbpu::dnn {

enum class BpuStatus {
  kOk = 0,
  kInvalidProgram,   // the program failed decoding / verification (see the message)
  kUnknownProgram,   // handle not loaded (or unloaded)
  kWrongBuffers,     // input / output count or a buffer size does not match the bindings
  kOutOfMemory,      // device memory or the job's bookkeeping could not be allocated
  kInvalidPriority,  // submit(): the priority is outside [0, 255]
  kFailed,           // anything else (the message says what)
};

struct BpuResult {
  BpuStatus status = BpuStatus::kOk;
  std::string message;  // empty on success
  uint64_t id = 0;      // program handle (load) or job id (submit)
  bool ok() const { return status == BpuStatus::kOk; }
};

// Element types of program bindings.
enum class BpuElementType { kInt8, kInt16, kInt32, kUint8 };

// One input or output binding of a loaded program: a dense row-major buffer of `bytes` bytes
// (the device's DMA applies the binding's layout).
struct BpuBinding {
  BpuElementType type = BpuElementType::kInt8;
  std::vector<int64_t> dims;
  size_t bytes = 0;
};

struct BpuProgramInfo {
  std::vector<BpuBinding> inputs;
  std::vector<BpuBinding> outputs;
};

// Completion of a submitted job (a driver's interrupt handler); failure == nullptr on success,
// else a static string saying why.
struct BpuJobDone {
  void (*call)(void* context, uint64_t job, const char* failure) = nullptr;
  void* context = nullptr;
};

struct BpuCounters {
  uint64_t jobs_submitted = 0;
  uint64_t preemptions = 0;  // jobs suspended by a priority-255 job
};

// One BPU core. Each loaded program owns its device memory, like a model with its own DDR.
class BpuCore {
 public:
  static constexpr int kLowestPriority = 0;
  static constexpr int kPreemptPriority = 255;  // HB_DNN_PRIORITY_PREEMP: preempts at a function-call boundary

  virtual ~BpuCore() = default;
  // Verifies `program`, allocates its memory and copies `weights` (the caller may free both).
  virtual BpuResult load(std::span<const uint8_t> program, std::span<const uint8_t> weights) = 0;
  // Forgets a program after its queued jobs have run.
  virtual BpuResult unload(uint64_t program) = 0;
  // The bindings of a loaded program (nullptr if unknown); valid until unload().
  virtual const BpuProgramInfo* program_info(uint64_t program) const = 0;
  // Queues one run; the span arrays and the bytes they view stay valid until done.call. A core
  // that already held as many jobs at once allocates nothing here.
  virtual BpuResult submit(uint64_t program, std::span<const std::span<const uint8_t>> inputs,
                           std::span<const std::span<uint8_t>> outputs, int priority, BpuJobDone done) = 0;
  virtual BpuCounters counters() const = 0;
};

// What libdnn needs to know of the chip a driver drives.
struct BpuChipInfo {
  std::string march;         // the models' march name ("bayes-e", ...)
  int cores = 1;
  uint32_t isa_version = 0;  // the newest program version the cores run
  // The input resizer (hbDNNRoiInfer): ROI sides in [roi_min, roi_max], each ROI side / input
  // side in (scale_min, scale_max], images at most image_max wide and high.
  int resizer_roi_min = 0;
  int resizer_roi_max = 0;
  double resizer_scale_min = 0;
  double resizer_scale_max = 0;
  int resizer_image_max = 0;
};

// The cores of one chip. Created on first use of a march, never destroyed (models still loaded
// at exit unload their programs from it).
class BpuDriver {
 public:
  virtual ~BpuDriver() = default;
  virtual const BpuChipInfo& chip() const = 0;
  virtual BpuCore& core(int index) = 0;  // 0 <= index < chip().cores
};

// Makes the driver for a march; on failure returns nullptr and sets `error` (the runtime reports
// it as HB_DNN_INCOMPATIBLE_MODEL).
using BpuDriverFactory = std::unique_ptr<BpuDriver> (*)(const std::string& march, std::string& error);

// The simulator's driver (the default factory).
std::unique_ptr<BpuDriver> make_simulator_driver(const std::string& march, std::string& error);

// Replaces the factory (nullptr: the simulator's again). Marches already in use keep their driver.
void set_bpu_driver_factory(BpuDriverFactory factory);

}  // namespace openbpu::dnn
