// OpenBPU runtime extension for tools (not part of the Horizon API): the virtual BPU timing
// model's latency and throughput for one model of a model file, as hrt_model_exec perf prints
// them. Every BPU segment's program is decoded and estimated as the compiler does when it
// prints its per-subgraph estimate; throughput runs perf's threads as closed-loop clients
// through the simulator's queue model. A model of the virtual BPU, not a measurement.
// C++; nothing throws (errors come back in `error`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace openbpu::dnn {

struct SimulatedLatency {
  bool ok = false;
  std::string error;  // when !ok
  std::string march;
  int segments = 0;  // BPU segments
  double latency_us = 0;
};

SimulatedLatency simulated_bpu_latency(const std::string& model_file, const std::string& model_name);

// Frames each client runs in simulated_bpu_throughput(): enough for the start (all clients
// submitting at cycle 0) to weigh little.
inline constexpr int kSimulatedFramesPerThread = 200;

struct SimulatedThroughput {
  bool ok = false;
  std::string error;  // when !ok
  std::string march;
  int threads = 0;
  int cores = 0;     // BPU cores the frames are queued on
  int core_num = 1;  // the model's compiler_parameters.core_num
  int64_t frames = 0;
  double fps = 0;              // frames / makespan at the march's clock
  double average_wait_us = 0;  // per frame: time its BPU jobs spent queued or suspended
  double utilisation = 0;      // of the `cores` cores over the makespan
};

// `threads` closed-loop clients: each submits its frame's BPU segments one after the other (a
// segment when the previous one ends; CPU segments take no time here), and its next frame when
// the last segment ends, `frames_per_thread` times; every job of priority 0, on the core
// `core_id` names (hrt_model_exec's --core_id: 0 any, 1 core 0, 2 core 1). `segment_calls`
// holds each BPU segment's function-call cycles with cores = core_num, `march` is a march name.
//
// Cores: a model compiled for core_num cores spreads each conv / matmul over that many (its
// calls are estimated so), so a frame occupies core_num cores and the march's cores hold
// bpu_cores / core_num frames at once (at least one): the model queues on that many "cores",
// each standing for core_num real ones. --core_id then applies only when core_num is 1.
SimulatedThroughput simulated_throughput_of(const std::vector<std::vector<uint64_t>>& segment_calls,
                                            const std::string& march, int core_num, int threads, int core_id,
                                            int frames_per_thread = kSimulatedFramesPerThread);

// The same for one model of a model file (its segments decoded and estimated as for the latency).
SimulatedThroughput simulated_bpu_throughput(const std::string& model_file, const std::string& model_name,
                                             int threads, int core_id,
                                             int frames_per_thread = kSimulatedFramesPerThread);

}  // namespace openbpu::dnn
