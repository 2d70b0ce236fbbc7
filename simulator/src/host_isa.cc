#include "openbpu/simulator/host_isa.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#endif

namespace openbpu::simulator {

namespace {

constexpr HostIsa kAll[] = {HostIsa::kScalar, HostIsa::kAvx2, HostIsa::kAvx512, HostIsa::kAmx};

#if defined(__x86_64__) && defined(__GNUC__)
// Whether this process may use AMX tile data: the CPU has AMX-TILE and AMX-INT8 (CPUID leaf 7:
// EDX bits 24 and 25) and Linux grants the permission (asked once).
bool amx_usable() {
  static const bool usable = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || (d & (3u << 24)) != (3u << 24)) return false;
#if defined(__linux__)
    constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0;
#else
    return false;
#endif
  }();
  return usable;
}
#endif

bool cpu_runs(HostIsa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
  switch (isa) {
    case HostIsa::kScalar: return true;
    case HostIsa::kAvx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case HostIsa::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vnni");
    case HostIsa::kAmx: return cpu_runs(HostIsa::kAvx512) && amx_usable();
  }
  return false;
#else
  return isa == HostIsa::kScalar;
#endif
}

HostIsa best() {
  const std::vector<HostIsa> all = supported_host_isas();
  return all.back();
}

HostIsa from_environment() {
  const char* value = std::getenv("OPENBPU_ISA");
  if (value == nullptr || *value == '\0') return best();
  for (HostIsa isa : kAll) {
    if (host_isa_name(isa) != value) continue;
    if (cpu_runs(isa)) return isa;
    std::fprintf(stderr, "OPENBPU_ISA=%s: this CPU cannot run it; the functional units use %s\n", value,
                 std::string(host_isa_name(best())).c_str());
    return best();
  }
  std::fprintf(
      stderr, "OPENBPU_ISA=%s: not one of scalar, avx2, avx512, amx; the functional units use %s\n",
      value, std::string(host_isa_name(best())).c_str());
  return best();
}

std::atomic<HostIsa>& current() {
  static std::atomic<HostIsa> isa{from_environment()};
  return isa;
}

int threads_from_environment() {
  const char* value = std::getenv("OPENBPU_SIM_THREADS");
  if (value == nullptr || *value == '\0') return 1;
  char* end = nullptr;
  const long n = std::strtol(value, &end, 10);
  if (*end != '\0' || n < 1) {
    std::fprintf(stderr, "OPENBPU_SIM_THREADS=%s: not a positive integer; the functional units use 1 thread\n", value);
    return 1;
  }
  return static_cast<int>(std::min<long>(n, 64));
}

std::atomic<int>& thread_setting() {
  static std::atomic<int> threads{threads_from_environment()};
  return threads;
}

}  // namespace

int host_threads() { return thread_setting().load(std::memory_order_relaxed); }

void set_host_threads(int threads) { thread_setting().store(std::clamp(threads, 1, 64), std::memory_order_relaxed); }

std::string_view host_isa_name(HostIsa isa) {
  switch (isa) {
    case HostIsa::kScalar: return "scalar";
    case HostIsa::kAvx2: return "avx2";
    case HostIsa::kAvx512: return "avx512";
    case HostIsa::kAmx: return "amx";
  }
  return "?";
}

std::vector<HostIsa> supported_host_isas() {
  std::vector<HostIsa> out;
  for (HostIsa isa : kAll) {
    if (cpu_runs(isa)) out.push_back(isa);
  }
  return out;
}

HostIsa host_isa() { return current().load(std::memory_order_relaxed); }

bool set_host_isa(HostIsa isa) {
  if (!cpu_runs(isa)) return false;
  current().store(isa, std::memory_order_relaxed);
  return true;
}

}  // namespace openbpu::simulator
