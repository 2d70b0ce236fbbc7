# Cross-compilation for 64-bit Arm Linux boards with Debian's aarch64-linux-gnu toolchain
# (apt: g++-aarch64-linux-gnu). Board-side code (runtime/, simulator/, board_tools/) needs only
# the C++ library; executables are linked fully static, so that a board's glibc (older, or
# none at all in a minimal root) does not matter and qemu-user runs them with no sysroot.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
# No fused multiply-add contraction (GCC contracts a*b+c by default on aarch64, never on baseline
# x86-64): the CPU kernels then round exactly as the x86 build does.
set(CMAKE_CXX_FLAGS_INIT "-ffp-contract=off")
set(CMAKE_C_FLAGS_INIT "-ffp-contract=off")
