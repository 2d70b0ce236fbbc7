// Host instruction sets and host threads of the functional units (version 3).
//
// The virtual BPU's functional units are one C++ definition (isa.h, integer_arithmetic.h)
// compiled several times: for the baseline of the build target ("scalar": x86-64 or aarch64
// with no extension chosen at run time; the reference) and, on x86-64, for AVX2 and for
// AVX-512 (F, BW, VL, DQ, VNNI). The path is chosen once per process from the CPU's features,
// or forced by the environment variable OPENBPU_ISA=scalar|avx2|avx512|amx (a value this CPU
// cannot run, or an unknown one, falls back to the best path with one line on stderr). Every
// path gives the same bytes: the arithmetic is integer and exact, and only the code generated
// for it differs. Tests and benchmarks switch paths with set_host_isa(); thread-safe.
//
// Version 3: "amx" is the AVX-512 path whose convolution engine multiplies on AMX-INT8 tiles;
// it needs the CPU's AMX-TILE and AMX-INT8 and the kernel's permission for tile data (Linux
// arch_prctl ARCH_REQ_XCOMP_PERM, requested once when the path is first considered).
//
// Version 2: a functional unit may split one instruction's output pixels over host threads
// (the convolution engines): host_threads() of them, from OPENBPU_SIM_THREADS, else 1. Each
// output element is computed by one thread from the same inputs, so the bytes never depend on
// the count.
#pragma once

#include <string_view>
#include <vector>

namespace openbpu::simulator {

enum class HostIsa { kScalar, kAvx2, kAvx512, kAmx };

std::string_view host_isa_name(HostIsa isa);

// The paths this CPU runs, scalar first.
std::vector<HostIsa> supported_host_isas();

// The path in use (OPENBPU_ISA, else the best supported one).
HostIsa host_isa();

// Uses `isa` from now on; false (nothing changed) when this CPU cannot run it.
bool set_host_isa(HostIsa isa);

// Host threads one instruction may use (OPENBPU_SIM_THREADS, else 1), and setting it: clamped
// to [1, 64]; takes effect at the next instruction of each calling thread (each thread that runs
// instructions keeps its own pool of that many - 1 workers). Thread-safe.
int host_threads();
void set_host_threads(int threads);

}  // namespace openbpu::simulator
