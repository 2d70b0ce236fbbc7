// The allocation-failure injection of dnn_alloc_failure_test.cc, for its other translation unit
// (dnn_alloc_failure_ucp.cc, which includes the UCP generation's headers and so cannot share one
// with the classic ones).
#pragma once

#include <cstdint>
#include <vector>

namespace openbpu::alloc_injection {

// The n-th allocation from now fails (n < 0: none).
void fail_at(long n);
// Allocations failed on purpose so far.
long injected();
// small_model.h's model file ("small", float [1,3,8,8] input), an input of it, and the quantized
// model's output for that input (the executor's), as bytes.
std::vector<uint8_t> small_model_bytes();
std::vector<uint8_t> small_model_input();
std::vector<uint8_t> small_model_output();

}  // namespace openbpu::alloc_injection
