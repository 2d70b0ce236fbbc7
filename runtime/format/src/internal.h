// Helpers shared by the format library's sources (not installed, not public).
#pragma once

#include <cstdint>
#include <exception>
#include <new>
#include <span>
#include <string>
#include <utility>

#include "openbpu/base/message.h"
#include "openbpu/format/model_file.h"

namespace openbpu::format::internal {

using base::quote;
using base::str_cat;

template <typename... Args>
Status make_error(StatusCode code, Args&&... args) {
  return Status{code, str_cat(std::forward<Args>(args)...)};
}

// Runs `body` (which returns a Status) so that nothing escapes the API: std::bad_alloc becomes
// kOutOfMemory, any other exception kInternalError with its text.
template <typename Body>
Status guarded(Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Status{StatusCode::kOutOfMemory, "out of memory"};
  } catch (const std::exception& e) {
    return make_error(StatusCode::kInternalError, "internal error: ", e.what());
  }
}

// Little-endian 32-bit load / store (no alignment assumption).
inline uint32_t load_le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}
inline void store_le32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v >> 16);
  p[3] = static_cast<uint8_t>(v >> 24);
}

// The semantic checks of verify_package() (model_checks.cc) over a package that passed the
// flatbuffers Verifier. `flatbuffer` is the buffer the package lives in (for alignment checks).
Status check_package(const Package& package, std::span<const uint8_t> flatbuffer);

}  // namespace openbpu::format::internal
