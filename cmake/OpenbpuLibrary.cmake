# openbpu_add_library(<name> [STATIC] SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...]
#                     [INCLUDE_DIR <dir>])
# Declares target openbpu_<name> with alias openbpu::<name>, the project's warning flags and
# C++20. INCLUDE_DIR (default: include/ beside the sources, if present) is public.
function(openbpu_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wnon-virtual-dtor
                         -Wimplicit-fallthrough)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wshadow=local)  # clang (the fuzz preset) lacks =local
  endif()
  # GCC 12 reports known false positives from inlined std::string / std::vector code at -O3
  # (GCC bugs 105329, 105651, 106199, and -Wmaybe-uninitialized through std::optional); they are not diagnostics of our code.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict -Wno-free-nonheap-object
                           -Wno-array-bounds -Wno-stringop-overflow -Wno-stringop-overread
                           -Wno-maybe-uninitialized)
  endif()
  if(OPENBPU_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

function(openbpu_add_library name)
  cmake_parse_arguments(ARG "" "INCLUDE_DIR" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(openbpu_${name} STATIC ${ARG_SOURCES})
  add_library(openbpu::${name} ALIAS openbpu_${name})
  if(NOT ARG_INCLUDE_DIR AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/include)
    set(ARG_INCLUDE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/include)
  endif()
  if(ARG_INCLUDE_DIR)
    target_include_directories(openbpu_${name} PUBLIC ${ARG_INCLUDE_DIR})
  endif()
  target_link_libraries(openbpu_${name} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  openbpu_set_warnings(openbpu_${name})
endfunction()

# openbpu_add_executable(<name> SOURCES ... [DEPS ...])
function(openbpu_add_executable name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  openbpu_set_warnings(${name})
endfunction()

# openbpu_add_test_executable(<name> SOURCES ... [DEPS ...])
# A test program under tests/ (GoogleTest units, a check tool, a fixture writer). Its own code
# compiles at -O0 whatever the build type, and several sources compile as a unity build in
# batches of 8: test code has no hot loops, so this only shortens the build (docs/testing.md
# has the measurement; under ASan+UBSan -O0 halves the test programs' compile time). The
# libraries it links keep the build type's level. Benchmarks use openbpu_add_executable.
function(openbpu_add_test_executable name)
  openbpu_add_executable(${name} ${ARGN})
  target_compile_options(${name} PRIVATE -O0)
  set_target_properties(${name} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
endfunction()
