// Errors raised by kernels: bad attributes, incompatible shapes or types, unsupported cases.
//
// Kernels throw KernelError; the float executor (host) reports it with the node's name, and the
// runtime's C API catches it at the boundary and returns a status code (design invariant 4).
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include "openbpu/base/message.h"

namespace openbpu::kernels {

class KernelError : public std::runtime_error {
 public:
  explicit KernelError(const std::string& message) : std::runtime_error(message) {}
};

using base::str_cat;

template <typename... Args>
[[noreturn]] void fail(Args&&... args) {
  throw KernelError(str_cat(std::forward<Args>(args)...));
}

}  // namespace openbpu::kernels

// Throws KernelError with the message if `condition` is false. The message states the rule:
//   OPENBPU_CHECK(k >= 0, "k must be >= 0, got ", k);
// The message arguments are evaluated only when the check fails, so checks on the per-run path
// cost a comparison, not a string.
#define OPENBPU_CHECK(condition, ...)                               \
  do {                                                              \
    if (!(condition)) ::openbpu::kernels::fail(__VA_ARGS__);        \
  } while (false)

