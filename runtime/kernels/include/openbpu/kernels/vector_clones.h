// Internal: float loops of the kernel library compiled for the baseline and, on x86-64, for
// AVX2 and AVX-512, the widest path the CPU runs chosen once at run time. The compiler
// vectorises the same source wider; with -ffp-contract=off each path performs the same IEEE
// operations in the same order per element, so all paths give the same bits (up to which NaN a
// NaN result is: the compiler may swap a commutative operation's operands).
//
// A loop is a type with an OPENBPU_KERNEL_INLINE static `run(args...)`; vector_dispatch<Loop>
// instantiates it inside one wrapper per target. Everything `run` calls must be inlinable
// (templates, lambdas, inline functions) to be compiled for the wrapper's target.
#pragma once

#define OPENBPU_KERNEL_INLINE [[gnu::always_inline]] inline

#if defined(__x86_64__) && defined(__GNUC__)
#define OPENBPU_KERNEL_X86 1
#define OPENBPU_KERNEL_AVX2 __attribute__((target("avx2,fma,bmi2")))
#define OPENBPU_KERNEL_AVX512 \
  __attribute__((target("avx2,fma,bmi2,avx512f,avx512bw,avx512vl,avx512dq,prefer-vector-width=512")))
#else
#define OPENBPU_KERNEL_X86 0
#endif

namespace openbpu::kernels {

enum class VectorPath { kBaseline, kAvx2, kAvx512 };

// The path in use: the widest one this CPU runs, unless set_vector_path chose another (tests
// compare the paths' bytes); false (nothing changed) when the CPU cannot run `path`.
VectorPath vector_path();
bool set_vector_path(VectorPath path);
bool vector_path_available(VectorPath path);

template <typename Loop, typename... Args>
void vector_loop_baseline(const Args&... args) {
  Loop::run(args...);
}
#if OPENBPU_KERNEL_X86
template <typename Loop, typename... Args>
OPENBPU_KERNEL_AVX2 void vector_loop_avx2(const Args&... args) {
  Loop::run(args...);
}
template <typename Loop, typename... Args>
OPENBPU_KERNEL_AVX512 void vector_loop_avx512(const Args&... args) {
  Loop::run(args...);
}
#endif

template <typename Loop, typename... Args>
void vector_dispatch(const Args&... args) {
  switch (vector_path()) {
#if OPENBPU_KERNEL_X86
    case VectorPath::kAvx512: return vector_loop_avx512<Loop>(args...);
    case VectorPath::kAvx2: return vector_loop_avx2<Loop>(args...);
#endif
    default: return vector_loop_baseline<Loop>(args...);
  }
}

}  // namespace openbpu::kernels
