// The virtual BPU's queue model: a layer over the timing model (timing.h) that runs several jobs
// through a BPU of N cores, each core with its own job queue, and says when each job starts and
// ends. Deterministic discrete-event simulation in cycles; no threads, no data, no clock.
//
// A job is a list of function-call durations (a BPU program's function calls, isa.h
// FunctionBegin; function_call_cycles() below gives them for a decoded program). The scheduling
// rules are those of the simulator's device (device.h), so the model predicts what the runtime's
// BPU cores do:
//
//   queue order   each core runs the job of the highest priority (0..255) first; equal
//                 priorities in submission order (submit cycle, then job index)
//   preemption    only at a function-call boundary, never inside a call, and only by a job of
//                 priority 255 (kQueuePreemptPriority, hbDNN's HB_DNN_PRIORITY_PREEMP): at the
//                 end of each call of a running job of lower priority, a queued priority-255
//                 job on that core suspends it. A lower priority, however high, only overtakes
//                 queued jobs. A priority-255 job is never preempted.
//   resumption    suspended jobs go on (highest priority, then first submitted) before any other
//                 job of lower than priority 255 starts
//   affinity      a job names its core, or kAnyCore: it then joins, when submitted, the queue of
//                 the core where it would start earliest if no other job arrived (ties: the
//                 lowest core index). It stays there: cores do not steal each other's jobs, so a
//                 later arrival may leave it waiting while another core idles.
//   simultaneity  at one cycle, calls that end are handled first, then arrivals (in job index
//                 order), then each core picks its next call, lowest core index first; a job
//                 arriving at the very cycle a call ends is seen at that boundary
//
// What it leaves out: the device's rule that two jobs of one loaded program never overlap (that
// is the simulator's memory model, not the hardware's), CPU work, and the submission and
// interrupt overheads of the driver. A model of the virtual BPU, not a measurement.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "openbpu/simulator/march.h"
#include "openbpu/simulator/program.h"

namespace openbpu::simulator {

inline constexpr int kAnyCore = -1;
inline constexpr int kQueuePreemptPriority = 255;  // = Device::kPreemptPriority
inline constexpr int kNoPredecessor = -1;

struct QueuedJob {
  // Cycles of each function call, in program order; at least one call (a call may take 0).
  std::vector<uint64_t> function_calls;
  int priority = 0;     // 0..255
  int core = kAnyCore;  // a core index in [0, cores), or kAnyCore
  // Submitted at submit_cycle, or, when `after` names an earlier job (its index, < this job's),
  // submit_cycle cycles after that job ends: a closed-loop client resubmitting when its
  // previous frame is done, or the next BPU segment of the same frame.
  uint64_t submit_cycle = 0;
  int after = kNoPredecessor;
};

struct JobTiming {
  int core = 0;
  uint64_t submit_cycle = 0;  // resolved (after `after` ended)
  uint64_t start_cycle = 0;   // its first call starts
  uint64_t end_cycle = 0;     // its last call ends
  // Cycles between submission and end not spent running: waiting in the queue before it starts
  // and while suspended.
  uint64_t wait_cycles = 0;
  int preemptions = 0;  // times it was suspended
};

struct CoreTiming {
  uint64_t busy_cycles = 0;  // sum of the calls it ran
  int jobs = 0;              // jobs that ran on it
};

struct QueueReport {
  bool ok = false;
  std::string error;  // when !ok: "job 3: core 2 is out of range [0, 2)"
  int cores = 0;
  std::vector<JobTiming> jobs;  // one per input job, same order
  std::vector<CoreTiming> per_core;
  // From the first submission to the last end (0 without jobs).
  uint64_t first_submit_cycle = 0;
  uint64_t makespan_cycles = 0;
  // busy cycles of all cores / (cores · makespan); 0 without jobs.
  double utilisation = 0;
  uint64_t preemptions = 0;
  uint64_t wait_cycles = 0;  // sum over jobs
};

// Runs `jobs` on a BPU of `cores` cores (≥ 1). Never throws on bad input: !ok and an error
// naming the job, the value and the rule.
QueueReport simulate_queues(std::span<const QueuedJob> jobs, int cores);
// The same on the march's cores (MarchSpec::bpu_cores).
QueueReport simulate_queues(std::span<const QueuedJob> jobs, const MarchSpec& march);

// The function calls of a decoded program as durations: estimate_program(program, march,
// cores)'s per-instruction cycles summed per call (function_call_end in program.h delimits
// them), so the sum is the estimate's cycles. A program without FunctionBegin is one call;
// an empty program has no call.
std::vector<uint64_t> function_call_cycles(const Program& program, const MarchSpec& march,
                                           int cores = 1);

// The report as JSON, in the style of estimate_json: {"march":..., "clock_mhz":..., "cores":...,
// "makespan_cycles":..., "utilisation":..., "jobs": [{...}], "per_core": [{...}]}; an error
// report is {"march":..., "error": "..."}.
std::string queue_json(const QueueReport& report, const MarchSpec& march);

}  // namespace openbpu::simulator
