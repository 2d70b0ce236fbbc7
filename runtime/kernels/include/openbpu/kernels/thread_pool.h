// The kernels' data-parallel loops run on openbpu::base's thread pool.
#pragma once

#include "openbpu/base/thread_pool.h"

namespace openbpu::kernels {

using base::parallel_for;
using base::ThreadPool;

}  // namespace openbpu::kernels
