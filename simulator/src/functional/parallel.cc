// The functional units' host thread pools (parallel.h).
#include "parallel.h"

#include <algorithm>
#include <memory>

#include "openbpu/simulator/host_isa.h"

namespace openbpu::simulator::functional {

base::ThreadPool* unit_pool() {
  thread_local std::unique_ptr<base::ThreadPool> pool;
  const int threads = host_threads();
  if (threads == 1) return nullptr;
  if (pool == nullptr || pool->thread_count() != threads) pool = std::make_unique<base::ThreadPool>(threads);
  return pool.get();
}

int64_t part_count(int64_t n, int64_t min_items) {
  return std::clamp<int64_t>(n / std::max<int64_t>(min_items, 1), 1, host_threads());
}

}  // namespace openbpu::simulator::functional
