#include "openbpu/kernels/vector_clones.h"

#include <atomic>

namespace openbpu::kernels {

namespace {

VectorPath widest() {
  for (VectorPath p : {VectorPath::kAvx512, VectorPath::kAvx2}) {
    if (vector_path_available(p)) return p;
  }
  return VectorPath::kBaseline;
}

std::atomic<VectorPath>& current() {
  static std::atomic<VectorPath> path{widest()};
  return path;
}

}  // namespace

bool vector_path_available(VectorPath path) {
#if OPENBPU_KERNEL_X86
  switch (path) {
    case VectorPath::kBaseline: return true;
    case VectorPath::kAvx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case VectorPath::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  }
  return false;
#else
  return path == VectorPath::kBaseline;
#endif
}

VectorPath vector_path() {
  return current().load(std::memory_order_relaxed);
}

bool set_vector_path(VectorPath path) {
  if (!vector_path_available(path)) return false;
  current().store(path, std::memory_order_relaxed);
  return true;
}

}  // namespace openbpu::kernels
