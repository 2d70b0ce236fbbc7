// BPU platforms (platform.h).
#include "platform.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>

#include "error.h"

namespace openbpu::dnn {

namespace {

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

Platform::Platform(const simulator::MarchSpec& march) : march_(&march) {
  const int cores = std::max(1, march.bpu_cores);
  for (int i = 0; i < cores; ++i) devices_.push_back(std::make_unique<simulator::Device>());
  in_flight_ = std::make_unique<std::atomic<int>[]>(static_cast<size_t>(cores));
  for (int i = 0; i < cores; ++i) in_flight_[static_cast<size_t>(i)] = 0;
}

Platform& Platform::of(const std::string& march) {
  // Never destroyed: models still loaded at exit unload their programs from it.
  static std::mutex& mutex = *new std::mutex;
  static auto& platforms = *new std::map<std::string, std::unique_ptr<Platform>>;
  const auto m = simulator::march_from_name(march);
  if (!m) fail(HB_DNN_INCOMPATIBLE_MODEL, "the model's march '", march, "' is not a BPU this runtime simulates");
  const std::string wanted = sim_platform_march();
  if (!wanted.empty() && wanted != march) {
    fail(HB_DNN_INCOMPATIBLE_MODEL, "the model was compiled for march '", march, "' but HB_DNN_SIM_PLATFORM selects '", wanted,
         "'; unset it or convert the model for that march");
  }
  std::lock_guard<std::mutex> lock(mutex);
  auto& p = platforms[march];
  if (!p) p = std::make_unique<Platform>(simulator::march_spec(*m));
  return *p;
}

int Platform::pick_core(int32_t mask) {
  const int32_t usable = mask == 0 ? all_cores_mask(cores()) : (mask & all_cores_mask(cores()));
  if (usable == 0 || (mask & ~all_cores_mask(cores())) != 0) {
    fail(HB_DNN_INVALID_ARGUMENT, "bpuCoreId ", mask, " names a core this BPU (", march_->name, ", ", cores(),
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
