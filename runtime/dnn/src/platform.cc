// BPU platforms (platform.h) and the driver factory (bpu_driver.h).
#include "platform.h"

#include <atomic>
#include <map>
#include <mutex>

#include "error.h"

namespace openbpu::dnn {

namespace {

std::atomic<BpuDriverFactory> driver_factory{nullptr};

}  // namespace

void set_bpu_driver_factory(BpuDriverFactory factory) { driver_factory.store(factory); }

Platform::Platform(std::unique_ptr<BpuDriver> driver) : driver_(std::move(driver)) {
  in_flight_ = std::make_unique<std::atomic<int>[]>(static_cast<size_t>(cores()));
  for (int i = 0; i < cores(); ++i) in_flight_[static_cast<size_t>(i)] = 0;
}

Platform& Platform::of(const std::string& march) {
  // Never destroyed: models still loaded at exit unload their programs from it.
  static std::mutex& mutex = *new std::mutex;
  static auto& platforms = *new std::map<std::string, std::unique_ptr<Platform>>;
  std::lock_guard<std::mutex> lock(mutex);
  auto& p = platforms[march];
  if (!p) {
    const BpuDriverFactory factory = driver_factory.load();
    std::string error;
    std::unique_ptr<BpuDriver> driver = factory != nullptr ? factory(march, error) : make_simulator_driver(march, error);
    if (driver == nullptr) {
      platforms.erase(march);
      fail(HB_DNN_INCOMPATIBLE_MODEL, error);
    }
    p = std::make_unique<Platform>(std::move(driver));
  }
  return *p;
}

int Platform::pick_core(int32_t mask) {
  const int32_t usable = mask == 0 ? all_cores_mask(cores()) : (mask & all_cores_mask(cores()));
  if (usable == 0 || (mask & ~all_cores_mask(cores())) != 0) {
    fail(HB_DNN_INVALID_ARGUMENT, "bpuCoreId ", mask, " names a core this BPU (", chip().march, ", ", cores(),
         " core", cores() == 1 ? "" : "s", ") does not have");
  }
  int best = -1;
  for (int c = 0; c < cores(); ++c) {
    if ((usable & (1 << c)) == 0) continue;
    if (best < 0 || in_flight_[static_cast<size_t>(c)] < in_flight_[static_cast<size_t>(best)]) best = c;
  }
  return best;
}

}  // namespace openbpu::dnn
