// Internal: compiling one functional-unit body per host ISA (openbpu/simulator/host_isa.h).
// A hot loop nest is written once as an OPENBPU_INLINE template; thin wrappers carrying
// OPENBPU_TARGET_AVX2 / OPENBPU_TARGET_AVX512 instantiate it for those targets (the compiler
// vectorises the same integer code wider), and a dispatcher calls the one host_isa() names.
// Everything the body calls must be OPENBPU_INLINE too, or it runs as the scalar build.
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
