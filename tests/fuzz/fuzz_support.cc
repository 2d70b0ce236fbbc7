#include "fuzz_support.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <new>
#include <stdexcept>
#include <typeinfo>

namespace openbpu::fuzz {

ScratchFile::ScratchFile() {
  fd_ = memfd_create("openbpu_fuzz_input", 0);
  char pattern[] = "/tmp/openbpu_fuzz_XXXXXX";
  const char* made = mkdtemp(pattern);
  if (fd_ < 0 || made == nullptr) {
    std::perror("fuzz: scratch file");
    std::abort();
  }
  dir_ = made;
}

ScratchFile::~ScratchFile() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
  if (fd_ >= 0) close(fd_);
}

std::string ScratchFile::write(std::string_view bytes, const std::string& ext) {
  if (ftruncate(fd_, 0) != 0 || pwrite(fd_, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) {
    std::perror("fuzz: writing the scratch file");
    std::abort();
  }
  const std::string path = dir_ + "/input" + (ext.empty() ? "" : "." + ext);
  if (!std::filesystem::is_symlink(path)) {
    std::filesystem::create_symlink("/proc/self/fd/" + std::to_string(fd_), path);
  }
  return path;
}

void reject_or_abort(const char* target) {
  try {
    throw;
  } catch (const std::runtime_error& e) {
    note_rejection(target, e.what());  // the library's documented error
    return;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz target %s: undocumented exception %s escaped the library: %s\n", target,
                 typeid(e).name(), e.what());
  } catch (...) {
    std::fprintf(stderr, "fuzz target %s: a non-standard exception escaped the library\n", target);
  }
  std::abort();
}

void note_rejection(const char* target, const std::string& reason) {
  static const bool verbose = std::getenv("OPENBPU_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "%s: rejected: %s\n", target, reason.c_str());
}

void require(bool condition, const char* target, const std::string& what) {
  if (condition) return;
  std::fprintf(stderr, "fuzz target %s: %s\n", target, what.c_str());
  std::abort();
}

}  // namespace openbpu::fuzz
