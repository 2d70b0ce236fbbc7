// The host toolchain's error type. Host tools use exceptions internally and turn each one into
// a single clear error line and a non-zero exit (the runtime's C API never throws).
#pragma once

#include <stdexcept>
#include <string>

#include "openbpu/kernels/error.h"

namespace openbpu {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

using base::str_cat;

template <typename... Args>
[[noreturn]] void raise(Args&&... args) {
  throw Error(str_cat(std::forward<Args>(args)...));
}

}  // namespace openbpu
