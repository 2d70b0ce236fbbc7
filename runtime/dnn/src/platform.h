// The BPU platform a model runs on: the driver of its march's chip (openbpu/dnn/bpu_driver.h;
// the simulator's unless a backend installed its own) and the choice of core per job.
// Platforms are created on first use and live until the process exits; every model of a
// march shares its cores.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "openbpu/dnn/bpu_driver.h"

namespace openbpu::dnn {

class Platform {
 public:
  // The platform of a march name ("bayes-e", ...). Throws ApiError HB_DNN_INCOMPATIBLE_MODEL
  // when the driver factory has no driver for it (an unknown march, or one that
  // HB_DNN_SIM_PLATFORM rules out for the simulator).
  static Platform& of(const std::string& march);

  const BpuChipInfo& chip() const { return driver_->chip(); }
  int cores() const { return chip().cores; }
  BpuCore& core(int index) { return driver_->core(index); }
  BpuDriver& driver() { return *driver_; }

  // Picks a core allowed by `mask` (hbBPUCore bits; 0 = any): the one with the fewest jobs in
  // flight. Throws ApiError HB_DNN_INVALID_ARGUMENT if the mask names no core of the platform.
  int pick_core(int32_t mask);
  // Bookkeeping for pick_core().
  void job_started(int core) { in_flight_[static_cast<size_t>(core)]++; }
  void job_finished(int core) { in_flight_[static_cast<size_t>(core)]--; }

  explicit Platform(std::unique_ptr<BpuDriver> driver);

 private:
  std::unique_ptr<BpuDriver> driver_;
  std::unique_ptr<std::atomic<int>[]> in_flight_;
};

// The mask of all cores of `cores` cores.
inline int32_t all_cores_mask(int cores) { return static_cast<int32_t>((1u << cores) - 1u); }

}  // namespace openbpu::dnn
