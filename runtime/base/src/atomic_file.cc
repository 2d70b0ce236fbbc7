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

using Step = AtomicWriteError::Step;

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

// Writes and fsyncs: the failed step (errno set), or nullopt.
std::optional<Step> fill(int fd, std::string_view bytes) {
  if (!write_all(fd, bytes)) return Step::kWriting;
  if (::fsync(fd) != 0) return Step::kSyncing;
  return std::nullopt;
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

// An unnamed file is linked through its /proc/self/fd entry (linkat's AT_EMPTY_PATH needs a
// capability); without /proc the named route is taken.
bool can_link_unnamed_files() {
  static const bool proc_fd = ::access("/proc/self/fd", X_OK) == 0;
  return proc_fd;
}

// Gives the unnamed file `fd` the name `name`: 0 or errno (EEXIST if the name is taken).
int link_unnamed(int fd, const std::string& name) {
  const std::string self = str_cat("/proc/self/fd/", fd);
  return ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0 ? 0
                                                                                          : errno;
}

// The unnamed route: the bytes in an O_TMPFILE file of `dir`, named only when complete and on
// disk. False if `dir`'s file system has no unnamed files (nothing was created; the caller takes
// the named route); true otherwise, with *error set if a step failed.
bool write_unnamed(const std::string& dir, const std::filesystem::path& path,
                   std::string_view bytes, std::optional<AtomicWriteError>* error) {
  if (!can_link_unnamed_files()) return false;
  const int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  // EOPNOTSUPP, EISDIR (no O_TMPFILE), ENOENT...: the named route tries, and reports.
  if (fd < 0) return false;
  if (const std::optional<Step> failed = fill(fd, bytes)) {
    const int err = errno;
    ::close(fd);
    *error = AtomicWriteError{*failed, path.string(), err};
    return true;
  }
  // A new name is the target's at once; an existing one is replaced by a rename from a temporary
  // name (linkat does not replace), which a kill can catch only between these two calls.
  int err = link_unnamed(fd, path.string());
  if (err == EEXIST) {
    const std::string temp = temp_path_for(dir, path);
    err = link_unnamed(fd, temp);
    if (err != 0) {
      *error = AtomicWriteError{Step::kLinking, temp, err};
    } else if (::rename(temp.c_str(), path.c_str()) != 0) {
      *error = AtomicWriteError{Step::kRenaming, temp, errno};
      ::unlink(temp.c_str());
    }
  } else if (err != 0) {
    *error = AtomicWriteError{Step::kLinking, path.string(), err};
  }
  ::close(fd);  // the data is on disk (fsync above); a late close error changes nothing
  return true;
}

// The named route: a temporary file beside the target, renamed over it when complete.
std::optional<AtomicWriteError> write_named(const std::string& dir,
                                            const std::filesystem::path& path,
                                            std::string_view bytes) {
  const std::string temp = temp_path_for(dir, path);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int err = errno;
    return AtomicWriteError{Step::kCreating, temp, err};
  }
  std::optional<Step> failed = fill(fd, bytes);
  int err = failed ? errno : 0;
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
  return std::nullopt;
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
    case Step::kLinking: what = "linking "; break;
  }
  return str_cat(what, quote(file), " failed: ", errno_text(error_number));
}

std::optional<AtomicWriteError> write_file_atomically(const std::filesystem::path& path,
                                                      std::string_view bytes) {
  const std::string dir = path.has_parent_path() ? path.parent_path().string() : ".";
  std::optional<AtomicWriteError> error;
  if (!write_unnamed(dir, path, bytes, &error)) error = write_named(dir, path, bytes);
  if (error) return error;
  if (const int dir_err = sync_directory(dir); dir_err != 0) {
    return AtomicWriteError{Step::kSyncingDirectory, dir, dir_err};
  }
  return std::nullopt;
}

}  // namespace openbpu::base
