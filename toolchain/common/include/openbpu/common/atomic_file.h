// Atomic file writes (design invariant 5): data goes to a temporary file beside the target,
// is flushed to disk, and is renamed over the final name only when complete. A crash or an
// error never leaves a half-written file under the final name.
#pragma once

#include <filesystem>
#include <string_view>

namespace openbpu {

// Writes `bytes` to `path` atomically. Throws Error naming the path on failure.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

// Reads a whole file. Throws Error naming the path if it is missing or unreadable.
std::string read_file(const std::filesystem::path& path);

}  // namespace openbpu
