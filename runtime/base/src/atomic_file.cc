#include "openbpu/base/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <random>

#include "openbpu/base/message.h"

namespace openbpu::base {

namespace {

// A name no other writer (thread or process) uses: pid, a per-process counter and a random
// number. Hidden, beside the target so that rename() stays on one file system.
std::string temp_path_for(const std::filesystem::path& dir, const std::filesystem::path& target) {
  static std::atomic<uint64_t> counter{0};
  std::random_device random;
  const std::string name = str_cat(".", target.filename().string(), ".tmp.", ::getpid(), ".",
                                   counter.fetch_add(1), ".", std::hex, random());
  return (dir / name).string();
}

bool write_all(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

// fsync of the directory, so that the rename in it is on disk: 0 or errno. EINVAL: the file
// system cannot sync a directory (nothing more to do there).
int sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  const int err = ::fsync(fd) == 0 || errno == EINVAL ? 0 : errno;
  ::close(fd);
  return err;
}

}  // namespace

std::string AtomicWriteError::describe() const {
  const char* what = "";
  switch (step) {
    case Step::kCreating: what = "creating "; break;
    case Step::kWriting: what = "writing "; break;
    case Step::kSyncing: what = "syncing "; break;
    case Step::kClosing: what = "closing "; break;
    case Step::kRenaming: what = "renaming "; break;
    case Step::kSyncingDirectory: what = "syncing directory "; break;
  }
  return str_cat(what, quote(file), " failed: ", errno_text(error_number));
}

std::optional<AtomicWriteError> write_file_atomically(const std::filesystem::path& path,
                                                      std::string_view bytes) {
  using Step = AtomicWriteError::Step;
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  const std::string temp = temp_path_for(dir, path);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int err = errno;
    return AtomicWriteError{Step::kCreating, temp, err};
  }
  std::optional<Step> failed;
  int err = 0;
  if (!write_all(fd, bytes)) {
    failed = Step::kWriting;
  } else if (::fsync(fd) != 0) {
    failed = Step::kSyncing;
  }
  if (failed) err = errno;
  if (::close(fd) != 0 && !failed) {
    failed = Step::kClosing;
    err = errno;
  }
  if (!failed && ::rename(temp.c_str(), path.c_str()) != 0) {
    failed = Step::kRenaming;
    err = errno;
  }
  if (failed) {
    ::unlink(temp.c_str());
    return AtomicWriteError{*failed, temp, err};
  }
  if (const int dir_err = sync_directory(dir.string()); dir_err != 0) {
    return AtomicWriteError{Step::kSyncingDirectory, dir.string(), dir_err};
  }
  return std::nullopt;
}

}  // namespace openbpu::base
