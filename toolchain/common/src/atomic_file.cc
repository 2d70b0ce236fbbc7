#include "openbpu/common/atomic_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>

#include "openbpu/base/atomic_file.h"
#include "openbpu/common/error.h"

namespace openbpu {

void write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
  if (const std::optional<base::AtomicWriteError> error = base::write_file_atomically(path, bytes)) {
    raise("cannot write ", path.string(), ": ", error->describe());
  }
}

std::string read_file(const std::filesystem::path& path, uint64_t max_bytes) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) raise(path.string(), ": no such file");
  if (std::filesystem::is_directory(path, ec)) raise(path.string(), ": is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) raise(path.string(), ": cannot open for reading: ", std::strerror(errno));
  std::string data;
  char chunk[1 << 16];
  while (in) {
    in.read(chunk, sizeof chunk);
    data.append(chunk, static_cast<size_t>(in.gcount()));
    if (data.size() > max_bytes) raise(path.string(), ": more than ", max_bytes, " bytes; the file may hold at most that");
  }
  if (in.bad()) raise(path.string(), ": read error");
  return data;
}

}  // namespace openbpu
