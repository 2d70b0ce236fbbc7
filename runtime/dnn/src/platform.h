// The BPU platform a model runs on: one simulator::Device per BPU core of the model's march
// (the device interface a board driver would offer). Platforms are created on first use and
// live until the process exits; every model of a march shares its cores.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "openbpu/simulator/device.h"
#include "openbpu/simulator/march.h"

namespace openbpu::dnn {

class Platform {
 public:
  // The platform of a march name ("bayes-e", ...). Throws ApiError HB_DNN_INCOMPATIBLE_MODEL
  // for an unknown march, or one that HB_DNN_SIM_PLATFORM rules out.
  static Platform& of(const std::string& march);

  const simulator::MarchSpec& march() const { return *march_; }
  int cores() const { return static_cast<int>(devices_.size()); }
  simulator::Device& device(int core) { return *devices_[static_cast<size_t>(core)]; }

  // Picks a core allowed by `mask` (hbBPUCore bits; 0 = any): the one with the fewest jobs in
  // flight. Throws ApiError HB_DNN_INVALID_ARGUMENT if the mask names no core of the platform.
  int pick_core(int32_t mask);
  // Bookkeeping for pick_core().
  void job_started(int core) { in_flight_[static_cast<size_t>(core)]++; }
  void job_finished(int core) { in_flight_[static_cast<size_t>(core)]--; }

  explicit Platform(const simulator::MarchSpec& march);

 private:
  const simulator::MarchSpec* march_;
  std::vector<std::unique_ptr<simulator::Device>> devices_;
  std::unique_ptr<std::atomic<int>[]> in_flight_;
};

// The mask of all cores of `cores` cores.
inline int32_t all_cores_mask(int cores) { return static_cast<int32_t>((1u << cores) - 1u); }

}  // namespace openbpu::dnn
