// Files: atomic save (design invariant 5, through openbpu::base) and ModelFile, an aligned
// owning copy + its view.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include "internal.h"
#include "openbpu/base/atomic_file.h"
#include "openbpu/format/model_file.h"

namespace openbpu::format {

namespace {

using base::errno_text;
using internal::make_error;

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
    const std::string_view bytes(reinterpret_cast<const char*>(file.data()), file.size());
    const std::optional<base::AtomicWriteError> error = base::write_file_atomically(path, bytes);
    if (!error) return {};
    const bool opening = error->step == base::AtomicWriteError::Step::kCreating;
    return make_error(opening ? StatusCode::kCannotOpenFile : StatusCode::kWriteFailed, "cannot write ", what, " ",
                      internal::quote(path), ": ", error->describe());
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
    const auto size = static_cast<uint64_t>(st.st_size);
    if (size >= FLATBUFFERS_MAX_BUFFER_SIZE + kFooterSize) {  // refused before anything is read
      ::close(fd);
      return make_error(StatusCode::kPackageTooLarge, "model file ", internal::quote(path), " is ", size,
                        " bytes; a model file holds a flatbuffer under ", FLATBUFFERS_MAX_BUFFER_SIZE,
                        " bytes (2 GiB) and a ", kFooterSize, "-byte footer");
    }
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
