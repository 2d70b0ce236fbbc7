// Atomic, durable file writes (design invariant 5). The bytes go to a temporary file beside the
// target, which is fsync'ed, renamed over the target, and then the directory is fsync'ed:
// after a crash or power loss the target holds either its old content or the whole new one,
// never a prefix, and once the call returns the new name itself survives a power loss (the
// rename lives in the directory, which fsync of the file alone does not make durable).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace openbpu::base {

// Why write_file_atomically() failed: the step, the file it was on and errno. Callers turn it
// into their own error type (format::Status, openbpu::Error, ...).
struct AtomicWriteError {
  enum class Step { kCreating, kWriting, kSyncing, kClosing, kRenaming, kSyncingDirectory };
  Step step = Step::kCreating;
  std::string file;  // the temporary file, or the directory for kSyncingDirectory
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
