// Files: atomic save (design invariant 5) and ModelFile, an aligned owning copy + its view.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <new>
#include <random>
#include <string>
#include <system_error>

#include "internal.h"
#include "openbpu/format/model_file.h"

namespace openbpu::format {

namespace {

using internal::make_error;

std::string errno_text(int err) {
  return std::error_code(err, std::generic_category()).message();
}

// A name no other writer (thread or process) uses: pid, a per-process counter and a random
// number. Hidden, beside the target so that rename() stays on one file system.
std::string temp_path_for(const std::filesystem::path& target) {
  static std::atomic<uint64_t> counter{0};
  std::random_device random;
  const std::filesystem::path dir =
      target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  const std::string name = internal::str_cat(".", target.filename().string(), ".tmp.", ::getpid(),
                                             ".", counter.fetch_add(1), ".", std::hex, random());
  return (dir / name).string();
}

bool write_all(int fd, const uint8_t* data, size_t size, int* err) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      *err = errno;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

uint8_t* allocate_aligned(size_t size) {
  const size_t rounded =
      (size + kModelFileAlignment - 1) / kModelFileAlignment * kModelFileAlignment;
  return static_cast<uint8_t*>(::operator new (rounded == 0 ? kModelFileAlignment : rounded,
                                               std::align_val_t{kModelFileAlignment},
                                               std::nothrow));
}

}  // namespace

Status save_model_file(const std::string& path, std::span<const uint8_t> file) noexcept {
  return write_file_atomically(path, file, "model file");
}

Status write_file_atomically(const std::string& path, std::span<const uint8_t> file, const char* what) noexcept {
  return internal::guarded([&]() -> Status {
    if (path.empty()) return Status{StatusCode::kCannotOpenFile, internal::str_cat("cannot write ", what, ": empty path")};
    const std::filesystem::path target(path);
    const std::string temp = temp_path_for(target);
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
      return make_error(StatusCode::kCannotOpenFile, "cannot write ", what, " ",
                        internal::quote(path), ": creating ", internal::quote(temp),
                        " failed: ", errno_text(errno));
    }
    int err = 0;
    const char* step = "writing";
    bool ok = write_all(fd, file.data(), file.size(), &err);
    if (ok && ::fsync(fd) != 0) {
      ok = false;
      err = errno;
      step = "syncing";
    }
    if (::close(fd) != 0 && ok) {
      ok = false;
      err = errno;
      step = "closing";
    }
    if (ok && ::rename(temp.c_str(), path.c_str()) != 0) {
      ok = false;
      err = errno;
      step = "renaming";
    }
    if (!ok) {
      ::unlink(temp.c_str());
      return make_error(StatusCode::kWriteFailed, "cannot write ", what, " ", internal::quote(path),
                        ": ", step, " ", internal::quote(temp), " failed: ", errno_text(err));
    }
    // Make the rename itself durable (best effort: the data is already complete on disk).
    const std::string dir = target.has_parent_path() ? target.parent_path().string() : ".";
    const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd >= 0) {
      (void)::fsync(dir_fd);
      ::close(dir_fd);
    }
    return {};
  });
}

void ModelFile::AlignedDelete::operator()(uint8_t* p) const noexcept {
  ::operator delete (p, std::align_val_t{kModelFileAlignment});
}

Status ModelFile::from_bytes(std::span<const uint8_t> bytes, ModelFile* out) noexcept {
  return internal::guarded([&]() -> Status {
    ModelFile file;
    file.storage_.reset(allocate_aligned(bytes.size()));
    if (file.storage_ == nullptr) {
      return make_error(StatusCode::kOutOfMemory, "out of memory copying a ", bytes.size(),
                        "-byte model file");
    }
    if (!bytes.empty()) std::memcpy(file.storage_.get(), bytes.data(), bytes.size());
    file.size_ = bytes.size();
    Status status =
        verify_package(std::span<const uint8_t>(file.storage_.get(), file.size_), &file.view_);
    if (!status.ok()) return status;
    *out = std::move(file);
    return {};
  });
}

Status ModelFile::load(const std::string& path, ModelFile* out) noexcept {
  return internal::guarded([&]() -> Status {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return make_error(StatusCode::kCannotOpenFile, "cannot open model file ",
                        internal::quote(path), ": ", errno_text(errno));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      return make_error(StatusCode::kReadFailed, "cannot read model file ", internal::quote(path),
                        ": ", errno_text(err));
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      return make_error(StatusCode::kCannotOpenFile, "cannot open model file ",
                        internal::quote(path), ": not a regular file");
    }
    const auto size = static_cast<size_t>(st.st_size);
    ModelFile file;
    file.storage_.reset(allocate_aligned(size));
    if (file.storage_ == nullptr) {
      ::close(fd);
      return make_error(StatusCode::kOutOfMemory, "out of memory reading model file ",
                        internal::quote(path), " (", size, " bytes)");
    }
    size_t done = 0;
    while (done < size) {
      const ssize_t n = ::read(fd, file.storage_.get() + done, size - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = n < 0 ? errno : 0;
        ::close(fd);
        return make_error(StatusCode::kReadFailed, "cannot read model file ", internal::quote(path),
                          ": ", n < 0 ? errno_text(err) : std::string("file shrank while reading"));
      }
      done += static_cast<size_t>(n);
    }
    ::close(fd);
    file.size_ = size;
    Status status =
        verify_package(std::span<const uint8_t>(file.storage_.get(), file.size_), &file.view_);
    if (!status.ok()) {
      status.message = internal::str_cat(path, ": ", status.message);
      return status;
    }
    *out = std::move(file);
    return {};
  });
}

}  // namespace openbpu::format
