// The virtual BPU timing model's latency for one model of a model file: every BPU segment's
// program is decoded and estimated (simulator/include/openbpu/simulator/timing.h), as the
// compiler does when it prints its per-subgraph estimate. A model of the virtual BPU, not a
// measurement.
#pragma once

#include <string>

namespace openbpu::hrt {

struct SimulatedLatency {
  bool ok = false;
  std::string error;  // when !ok
  std::string march;
  int segments = 0;  // BPU segments
  double latency_us = 0;
};

SimulatedLatency simulated_bpu_latency(const std::string& model_file, const std::string& model_name);

}  // namespace openbpu::hrt
