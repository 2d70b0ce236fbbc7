// The virtual BPU as a device: the interface a BPU driver offers (load a program and its
// weights into device memory, submit a job, wait for it), so that the runtime's BPU executor
// never knows it talks to a simulator.
//
// Jobs run on the device's own worker thread (one BPU core), one function call at a time
// (program.h, function_call_end). Each job has a priority, 0..255: queued jobs start highest
// priority first, in submission order within a priority. A job of priority 255
// (kPreemptPriority, hbDNN's HB_DNN_PRIORITY_PREEMP) preempts a running job of lower priority at
// its next function-call boundary: the running job is suspended with its resume point, the
// preempting job runs to its end, and suspended jobs resume (highest priority first) before any
// other job starts; a job of priority 255 is never preempted.
//
// Each loaded program owns its device memory (constants at address 0, activations after them),
// like a model with its own DDR on a board. So a job never starts while another job of the same
// program is suspended or running: a priority-255 job of the program that is running (or
// suspended) waits for that job to end instead of preempting it. A job writes its inputs into the
// program's input bindings when it starts, runs the program and reads the output bindings when it
// ends. Inputs and outputs are dense row-major buffers of the bindings' logical shapes (the
// device's DMA applies the binding's layout). Nothing throws; every call is thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
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
  kInvalidPriority,  // submit(): the priority is outside [0, 255]
};

struct DeviceResult {
  DeviceStatus status = DeviceStatus::kOk;
  std::string message;  // empty on success
  uint64_t id = 0;      // program handle (load) or job id (submit)
  bool ok() const { return status == DeviceStatus::kOk; }
};

// What a DeviceObserver sees (tests and tracing). kSubmitted comes from the submitting thread
// once the job is queued, kStopping from the destructor, the others from the worker thread.
struct DeviceEvent {
  enum class Kind {
    kSubmitted,         // the job is queued
    kFunctionCallDone,  // the job finished a function call and has more; next comes the check
                        // whether a queued job preempts it (a job submitted now is seen)
    kPreempted,         // the job is suspended at that boundary
    kResumed,           // a suspended job runs again
    kFinished,          // the job ended (outputs written, or failed); wait() returns after it
    kStopping,          // the device is being destroyed; it finishes its jobs first
  };
  Kind kind = Kind::kSubmitted;
  uint64_t job = 0;             // 0 for kStopping
  int priority = 0;
  uint32_t function_calls = 0;  // function calls the job has completed
};
// Called without the device's lock held: it may call submit(), program(), preemptions(). It
// runs on the device's threads, so whatever it blocks on, the device waits for.
using DeviceObserver = std::function<void(const DeviceEvent&)>;

// Completion of a job submitted with one (a driver's interrupt handler): called once, on the
// device's worker thread, without the device's lock held, after the job's outputs are written
// (failure == nullptr) or after it stopped (failure: why, a static string). The job is then
// gone (wait() does not know it). It must not block for long and must not throw; it may call
// submit().
struct JobDone {
  void (*call)(void* context, uint64_t job, const char* failure) = nullptr;
  void* context = nullptr;
};

class Device {
 public:
  static constexpr int kLowestPriority = 0;
  static constexpr int kPreemptPriority = 255;  // hbDNN's HB_DNN_PRIORITY_PREEMP (= HIGHEST)

  Device();
  ~Device();  // finishes queued jobs, then stops the worker
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  // Decodes and verifies `program`, allocates its device memory and copies `weights` to
  // address 0. The bytes are copied; the caller may free them afterwards.
  DeviceResult load(std::span<const uint8_t> program, std::span<const uint8_t> weights);
  // Forgets a program after its queued jobs have run.
  DeviceResult unload(uint64_t program);

  // Queues one run of `program` with `priority` (0..255, see above). inputs[i] holds
  // element_count(binding)·element size bytes of input binding i, dense row-major; outputs[i]
  // likewise for output binding i. The buffers must stay valid until wait() returns kOk for this
  // job (or the device is destroyed: it runs every queued and suspended job to its end first).
  DeviceResult submit(uint64_t program, std::vector<std::span<const uint8_t>> inputs,
                      std::vector<std::span<uint8_t>> outputs, int priority = kLowestPriority);
  // The same, but the job reports its end through `done` (done.call not null) instead of
  // wait(); the buffers must stay valid until done.call is called.
  DeviceResult submit(uint64_t program, std::vector<std::span<const uint8_t>> inputs,
                      std::vector<std::span<uint8_t>> outputs, int priority, JobDone done);
  // The same without copying the lists: `inputs` and `outputs` (the span arrays as well as the
  // bytes they view) must stay valid until done.call is called (done.call must not be null).
  // The storage of a job that ended is reused for the next one, so a device that already held
  // as many jobs at once allocates nothing here (a driver's submit does not allocate either).
  DeviceResult submit_views(uint64_t program, std::span<const std::span<const uint8_t>> inputs,
                            std::span<const std::span<uint8_t>> outputs, int priority, JobDone done);
  // Waits for a job; kOk once its outputs are written (the id is then released).
  DeviceResult wait(uint64_t job, std::chrono::milliseconds timeout);

  // The decoded program of a handle (nullptr if unknown); valid until unload().
  const Program* program(uint64_t handle) const;

  // Jobs suspended so far by a priority-255 job (each suspension counts once).
  uint64_t preemptions() const;
  // Replaces the observer (null: none). Events already being delivered may still reach the
  // previous one.
  void set_observer(std::shared_ptr<const DeviceObserver> observer);

 private:
  struct Loaded {
    Program program;
    std::vector<uint8_t> memory;
  };
  struct Job {
    uint64_t id = 0;
    int priority = kLowestPriority;
    std::shared_ptr<Loaded> loaded;
    // What the job reads and writes: views of the caller's lists (submit_views) or of the
    // lists below (submit, which moves them in).
    std::span<const std::span<const uint8_t>> inputs;
    std::span<const std::span<uint8_t>> outputs;
    std::vector<std::span<const uint8_t>> owned_inputs;
    std::vector<std::span<uint8_t>> owned_outputs;
    JobDone done;  // call null: the job's end is reported to wait() through jobs_
    // Set under mutex_ when the job first runs: from then on it owns its program's memory.
    bool started = false;
    // The worker's alone (the job is in no other thread's hands while it runs):
    size_t next_instruction = 0;  // the resume point
    uint32_t function_calls = 0;  // completed
  };
  using JobList = std::list<Job>;

  void run_worker();
  // Runs `job` from its resume point until it ends (true) or is preempted (false).
  bool run_job(Job& job, const char*& failure);
  // Checks a submission and queues it in a recycled list node (spare_) or a new one; `fill`
  // sets the job's buffers.
  template <typename Fill>
  DeviceResult queue_job(uint64_t program, std::span<const std::span<const uint8_t>> inputs,
                         std::span<const std::span<uint8_t>> outputs, int priority, JobDone done, const Fill& fill);
  // Moves an ended job's node to spare_ (under mutex_), dropping its hold on the program.
  void retire_locked(JobList::iterator it);
  // The job the worker runs next (queue_ not empty): see next_job_locked() in device.cc.
  JobList::iterator next_job_locked();
  // A queued priority-255 job that may start now, or queue_.end().
  JobList::iterator preempting_job_locked();
  bool program_in_use_locked(const Loaded* loaded) const;
  void notify(const DeviceEvent& event);

  mutable std::mutex mutex_;
  std::condition_variable queued_;
  std::condition_variable finished_;
  std::map<uint64_t, std::shared_ptr<Loaded>> programs_;
  // Queued, suspended and running jobs; a job leaves it when it ends, for spare_: list nodes
  // of ended jobs, spliced back into queue_ by the next submission (no allocation).
  JobList queue_;
  JobList spare_;
  uint64_t preemptions_ = 0;
  std::shared_ptr<const DeviceObserver> observer_;
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
