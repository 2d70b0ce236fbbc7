// Atomic, durable file writes (design invariant 5). The bytes go to an unnamed file in the
// target's directory (O_TMPFILE), which is fsync'ed and only then given a name: the target's own
// if it does not exist yet, else a temporary name renamed over the target. Then the directory is
// fsync'ed. After a crash, a kill -9 or a power loss the target holds either its old content or
// the whole new one, never a prefix, and once the call returns the new name itself survives a
// power loss (the rename lives in the directory, which fsync of the file alone does not make
// durable). A process killed while writing leaves no file behind: the kernel frees an unnamed
// file, and a complete temporary exists only between a link and a rename when replacing.
// Where unnamed files are not available (a file system without O_TMPFILE, no /proc), the bytes
// go to a named temporary file beside the target (`.<name>.tmp.<pid>.<n>.<random>`), renamed
// over it when complete; a process killed while writing leaves that temporary behind.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace openbpu::base {

// Why write_file_atomically() failed: the step, the file it was on and errno. Callers turn it
// into their own error type (format::Status, openbpu::Error, ...).
struct AtomicWriteError {
  enum class Step { kCreating, kWriting, kSyncing, kClosing, kRenaming, kSyncingDirectory, kLinking };
  Step step = Step::kCreating;
  std::string file;  // the temporary (or, unnamed, the target) file; the directory for kSyncingDirectory
  int error_number = 0;

  // "writing '<file>' failed: No space left on device".
  std::string describe() const;
};

// Writes `bytes` to `path` atomically and durably. On failure before the rename `path` is
// untouched and the temporary file removed; a kSyncingDirectory failure comes after the rename
// (`path` holds the new bytes, but may lose them on power loss). Safe from several threads and
// processes, also for one path (the last rename wins). Throws only std::bad_alloc.
std::optional<AtomicWriteError> write_file_atomically(const std::filesystem::path& path,
                                                      std::string_view bytes);

}  // namespace openbpu::base
