// The virtual BPU as a device: the interface a BPU driver offers (load a program and its
// weights into device memory, submit a job, wait for it), so that the runtime's BPU executor
// never knows it talks to a simulator.
//
// Jobs run in submission order on the device's own worker thread (one BPU core). Each loaded
// program owns its device memory (constants at address 0, activations after them); a job
// writes its inputs into the program's input bindings, runs the program and reads the output
// bindings. Inputs and outputs are dense row-major buffers of the bindings' logical shapes
// (the device's DMA applies the binding's layout). Nothing throws; every call is thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "openbpu/simulator/program.h"

namespace openbpu::simulator {

enum class DeviceStatus {
  kOk = 0,
  kInvalidProgram,   // the program failed decoding / verification (see the message)
  kUnknownProgram,   // handle not loaded (or unloaded)
  kUnknownJob,       // job id never issued or already waited for
  kWrongBuffers,     // input/output count or a buffer size does not match the bindings
  kTimeout,          // wait() gave up; the job is still queued or running
  kOutOfMemory,      // device memory or the job's bookkeeping could not be allocated
  kJobFailed,        // the job stopped while running (wait() reports why; outputs undefined)
};

struct DeviceResult {
  DeviceStatus status = DeviceStatus::kOk;
  std::string message;  // empty on success
  uint64_t id = 0;      // program handle (load) or job id (submit)
  bool ok() const { return status == DeviceStatus::kOk; }
};

class Device {
 public:
  Device();
  ~Device();  // finishes queued jobs, then stops the worker
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  // Decodes and verifies `program`, allocates its device memory and copies `weights` to
  // address 0. The bytes are copied; the caller may free them afterwards.
  DeviceResult load(std::span<const uint8_t> program, std::span<const uint8_t> weights);
  // Forgets a program after its queued jobs have run.
  DeviceResult unload(uint64_t program);

  // Queues one run of `program`. inputs[i] holds element_count(binding)·element size bytes of
  // input binding i, dense row-major; outputs[i] likewise for output binding i. The buffers must
  // stay valid until wait() returns kOk for this job.
  DeviceResult submit(uint64_t program, std::vector<std::span<const uint8_t>> inputs,
                      std::vector<std::span<uint8_t>> outputs);
  // Waits for a job; kOk once its outputs are written (the id is then released).
  DeviceResult wait(uint64_t job, std::chrono::milliseconds timeout);

  // The decoded program of a handle (nullptr if unknown); valid until unload().
  const Program* program(uint64_t handle) const;

 private:
  struct Loaded {
    Program program;
    std::vector<uint8_t> memory;
  };
  struct Job {
    uint64_t id = 0;
    std::shared_ptr<Loaded> loaded;
    std::vector<std::span<const uint8_t>> inputs;
    std::vector<std::span<uint8_t>> outputs;
  };

  void run_worker();

  mutable std::mutex mutex_;
  std::condition_variable queued_;
  std::condition_variable finished_;
  std::map<uint64_t, std::shared_ptr<Loaded>> programs_;
  std::deque<Job> queue_;
  struct JobState {
    bool done = false;
    std::string failure;  // non-empty: the job stopped while running
  };
  std::map<uint64_t, JobState> jobs_;
  uint64_t next_program_ = 1;
  uint64_t next_job_ = 1;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace openbpu::simulator
