// Internal: compiling one functional-unit body per host ISA (openbpu/simulator/host_isa.h).
// A unit's hot loop nest is a Kernel type with an OPENBPU_INLINE static template
// `run<HostIsa>(args...)`; host_dispatch<Kernel>(args...) instantiates it inside one wrapper
// per target (OPENBPU_TARGET_AVX2 / OPENBPU_TARGET_AVX512: the compiler vectorises the same
// integer code wider, and `run` may pick intrinsics by its HostIsa) and calls the wrapper
// host_isa() names. Everything `run` calls must be OPENBPU_INLINE too, or it runs as the
// scalar build.
#pragma once

#include "openbpu/simulator/host_isa.h"

#define OPENBPU_INLINE [[gnu::always_inline]] inline

#if defined(__x86_64__) && defined(__GNUC__)
#define OPENBPU_HOST_X86 1
#include <immintrin.h>
#define OPENBPU_TARGET_AVX2 __attribute__((target("avx2,fma,bmi,bmi2,popcnt")))
#define OPENBPU_TARGET_AVX512 \
  __attribute__((target("avx2,fma,bmi,bmi2,popcnt,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))
#else
#define OPENBPU_HOST_X86 0
#endif

namespace openbpu::simulator::functional {

template <typename Kernel, typename... Args>
void run_scalar(const Args&... args) {
  Kernel::template run<HostIsa::kScalar>(args...);
}
#if OPENBPU_HOST_X86
template <typename Kernel, typename... Args>
OPENBPU_TARGET_AVX2 void run_avx2(const Args&... args) {
  Kernel::template run<HostIsa::kAvx2>(args...);
}
template <typename Kernel, typename... Args>
OPENBPU_TARGET_AVX512 void run_avx512(const Args&... args) {
  Kernel::template run<HostIsa::kAvx512>(args...);
}
#endif

template <typename Kernel, typename... Args>
void host_dispatch(const Args&... args) {
  switch (host_isa()) {
#if OPENBPU_HOST_X86
    case HostIsa::kAvx512:
    case HostIsa::kAmx:
      return run_avx512<Kernel>(args...);  // AMX: a choice inside the AVX-512 body
    case HostIsa::kAvx2: return run_avx2<Kernel>(args...);
#endif
    default: return run_scalar<Kernel>(args...);
  }
}

}  // namespace openbpu::simulator::functional
