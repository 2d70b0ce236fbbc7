// Errors inside the runtime library. Internal code throws ApiError (a status code and the
// detail a user needs: which argument, tensor, operator, and the rule); every C API entry point
// (hbDNN* in api.cc, hbSys* in memory.cc) runs its body in guarded(), which catches it, records
// the detail for hbDNNGetErrorDesc and returns the code. Nothing thrown here crosses the C ABI
// (design invariant 4).
#pragma once

#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "dnn/hb_dnn_status.h"
#include "openbpu/base/message.h"

namespace openbpu::dnn {

// Holds its text in a std::string it takes over, so that making one never allocates (a
// std::runtime_error would copy the text).
class ApiError : public std::exception {
 public:
  ApiError(int32_t code, std::string message) noexcept
      : code_(code), message_(std::move(message)) {}
  int32_t code() const noexcept { return code_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  int32_t code_;
  std::string message_;
};

// Throws ApiError(code, the parts concatenated). Without memory for the text it throws the code
// alone: the status a caller gets does not depend on whether describing it ran out of memory.
template <typename... Parts>
[[noreturn]] void fail(int32_t code, const Parts&... parts) {
  std::string message;
  try {
    message = base::str_cat(parts...);
  } catch (const std::bad_alloc&) {
  }
  throw ApiError(code, std::move(message));
}

// The code's meaning ("invalid argument", ...), or nullptr for an unknown code.
const char* status_text(int32_t code) noexcept;

// Records a failure of C API function `fn`: "<fn>: <prefix><detail>" for hbDNNGetErrorDesc on
// this thread, and a log line (HB_DNN_LOG_LEVEL). Returns `code`. Without memory for the text,
// the code alone is recorded.
int32_t report(const char* fn, int32_t code, std::string_view detail,
               std::string_view prefix = {}) noexcept;

// Runs the body of C API function `fn` so that no exception crosses extern "C": ApiError
// becomes its code, std::bad_alloc `out_of_memory` (HB_SYS_OUT_OF_MEMORY for hbSys*), anything
// else HB_DNN_RUN_TASK_FAILED. Returns 0 (HB_DNN_SUCCESS, HB_SYS_SUCCESS) when `body` returns.
template <typename Body>
int32_t guarded(const char* fn, int32_t out_of_memory, Body&& body) noexcept {
  try {
    body();
    return HB_DNN_SUCCESS;
  } catch (const ApiError& e) {
    return report(fn, e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return report(fn, out_of_memory, "out of memory");
  } catch (const std::exception& e) {
    return report(fn, HB_DNN_RUN_TASK_FAILED, e.what(), "internal error: ");
  } catch (...) {
    return report(fn, HB_DNN_RUN_TASK_FAILED, "internal error");
  }
}

// guarded() of an hbDNN* function: std::bad_alloc is HB_DNN_OUT_OF_MEMORY.
template <typename Body>
int32_t guarded(const char* fn, Body&& body) noexcept {
  return guarded(fn, HB_DNN_OUT_OF_MEMORY, std::forward<Body>(body));
}

// The UCP generation (hobot/hb_ucp_status.h): the code of a classic status (a code that is
// already a UCP one is returned as is), and a UCP code's meaning or nullptr (api_ucp.cc).
int32_t ucp_status(int32_t classic) noexcept;
const char* ucp_status_text(int32_t code) noexcept;
// The last failure recorded on this thread with code `from` is re-labelled `to` (api.cc).
void relabel_last_error(int32_t from, int32_t to) noexcept;
// hbDNNGetErrorDesc / hbUCPGetErrorDesc: `text` (the code's meaning, or nullptr for an unknown
// code) and, when this thread's last failure had `code`, its detail. Valid until the next call
// on this thread (api.cc).
const char* describe_status(int32_t code, const char* text) noexcept;

// guarded() of a UCP-generation function: the same body, the status in the UCP code space.
template <typename Body>
int32_t guarded_ucp(const char* fn, Body&& body) noexcept {
  const int32_t classic = guarded(fn, HB_DNN_OUT_OF_MEMORY, std::forward<Body>(body));
  if (classic == HB_DNN_SUCCESS) return 0;
  const int32_t code = ucp_status(classic);
  relabel_last_error(classic, code);
  return code;
}

}  // namespace openbpu::dnn
