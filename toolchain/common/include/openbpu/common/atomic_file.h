// The host tools' file access: atomic, durable writes (design invariant 5; the one
// implementation is base::write_file_atomically, this throws Error) and whole-file reads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace openbpu {

// Writes `bytes` to `path` atomically and durably. Throws Error naming the path and the
// failed step.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

// Reads a whole file. Throws Error naming the path if it is missing or unreadable, or when it
// holds more than `max_bytes` (read up to there only: a device or a pipe that never ends is
// refused too).
std::string read_file(const std::filesystem::path& path, uint64_t max_bytes = UINT64_MAX);

}  // namespace openbpu
