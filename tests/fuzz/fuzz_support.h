// What the fuzz targets (tests/fuzz/*_fuzz.cc) share: reading fields off the front of the
// input, handing bytes to readers that only take a path, and the rule for what counts as a
// rejected input.
//
// Each target calls the function a user's input reaches (the CLI's or the C API's entry) and
// treats the library's documented failure as a rejection: a Status / error code from the C
// API, or a std::runtime_error (openbpu::Error, ConfigError, KernelError, yaml-cpp's and
// protobuf's errors derive from it) naming the file and the rule. Anything else escaping the
// library — std::logic_error (out_of_range, invalid_argument, length_error), std::bad_alloc,
// a json exception, a non-standard exception — is a finding: reject_or_abort() prints it and
// aborts, so that libFuzzer records the input and the CI replay fails.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace openbpu::fuzz {

// The model (graph text) a config is resolved against by the config_yaml and quant_config
// targets: input 'x' [1,3,8,8], a Conv and a Relu.
inline constexpr char kConfigTestModel[] = R"(model opsets=[ai.onnx:13]
graph g (%x: float32[1,3,8,8]) -> (%y) {
  init %w: float32[4,3,3,3]
  %c: float32[1,4,8,8] = Conv[pads=[1,1,1,1]](%x, %w)
  %y: float32[1,4,8,8] = Relu(%c)
}
)";

// Consumes an input from the front: fixed-size fields first, the rest as the payload. Reading
// past the end gives zeros / empty views (so every input is usable).
class InputReader {
 public:
  InputReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(byte()) << (8 * i);
    return v;
  }
  // A value in [0, n) taken from one byte (n <= 256).
  size_t pick(size_t n) { return byte() % n; }
  std::string_view take(size_t n) {
    n = std::min(n, size_ - at_);
    std::string_view v(reinterpret_cast<const char*>(data_ + at_), n);
    at_ += n;
    return v;
  }
  std::string_view rest() { return take(size_ - at_); }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

// Splits `input` at the first `separator`: {before, after}; {input, ""} when absent.
inline std::pair<std::string_view, std::string_view> split_at(std::string_view input,
                                                              std::string_view separator) {
  const size_t at = input.find(separator);
  if (at == std::string_view::npos) return {input, {}};
  return {input.substr(0, at), input.substr(at + separator.size())};
}

// The bytes of one input as a file, for readers that take a path: an in-memory file (memfd)
// reached through a symlink "<dir>/input.<ext>", so that readers choosing by extension see it.
// One per target, reused for every input; the folder is removed at exit.
class ScratchFile {
 public:
  ScratchFile();
  ~ScratchFile();
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  // Replaces the content with `bytes`; returns the path "<dir>/input.<ext>" ("<dir>/input" for
  // an empty `ext`).
  std::string write(std::string_view bytes, const std::string& ext);

 private:
  int fd_ = -1;
  std::string dir_;
};

// Called in a catch (...) block at the target's boundary: returns for a rejection, aborts
// with the exception's type and text for a finding (see above).
void reject_or_abort(const char* target);

// With OPENBPU_FUZZ_VERBOSE=1 in the environment, rejections print their reason to stderr
// (to see what a corpus exercises: fuzz_replay <target> <file>).
void note_rejection(const char* target, const std::string& reason);

// Aborts with `what` when `condition` is false: a broken promise of the library (e.g. a load
// that succeeded but returned no model).
void require(bool condition, const char* target, const std::string& what);

}  // namespace openbpu::fuzz
