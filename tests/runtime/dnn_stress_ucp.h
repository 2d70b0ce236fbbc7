// dnn_stress's ucp mode (dnn_stress_ucp.cc): the UCP generation's API under concurrency. Its own
// translation unit: the two API generations' headers cannot meet in one.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace openbpu::stress {

// Returns the exit status (0: every output equal to its reference, no error), printing failures.
int run_ucp(const std::vector<std::string>& model_files, size_t threads, size_t iterations, size_t inputs);

}  // namespace openbpu::stress
