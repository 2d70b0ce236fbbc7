// Errors inside the runtime library. Internal code throws ApiError (a status code and the
// detail a user needs: which argument, tensor, operator, and the rule); the C API boundary
// (api.cc) catches it, records the detail for hbDNNGetErrorDesc and returns the code. Nothing
// thrown here crosses the C ABI (design invariant 4).
#pragma once

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "dnn/hb_dnn_status.h"

namespace openbpu::dnn {

class ApiError : public std::runtime_error {
 public:
  ApiError(int32_t code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int32_t code() const noexcept { return code_; }

 private:
  int32_t code_;
};

template <typename... Parts>
[[noreturn]] void fail(int32_t code, const Parts&... parts) {
  std::ostringstream s;
  (s << ... << parts);
  throw ApiError(code, s.str());
}

// The code's meaning ("invalid argument", ...), or nullptr for an unknown code.
const char* status_text(int32_t code) noexcept;
// Remembers the detail of the last failure on this thread (for hbDNNGetErrorDesc).
void set_last_error(int32_t code, const std::string& detail) noexcept;

}  // namespace openbpu::dnn
