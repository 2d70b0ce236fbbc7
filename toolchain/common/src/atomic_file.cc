#include "openbpu/common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "openbpu/common/error.h"

namespace openbpu {

namespace {

std::string temp_name_for(const std::filesystem::path& path) {
  std::random_device rd;
  std::ostringstream name;
  name << '.' << path.filename().string() << ".tmp." << ::getpid() << '.' << std::hex << rd();
  return (path.parent_path() / name.str()).string();
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
  const std::string temp = temp_name_for(path);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) raise("cannot write ", path.string(), ": ", std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(temp.c_str());
      raise("cannot write ", path.string(), ": ", std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    raise("cannot write ", path.string(), ": ", std::strerror(err));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    raise("cannot write ", path.string(), ": ", std::strerror(err));
  }
}

std::string read_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) raise(path.string(), ": no such file");
  if (std::filesystem::is_directory(path, ec)) raise(path.string(), ": is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) raise(path.string(), ": cannot open for reading: ", std::strerror(errno));
  std::ostringstream data;
  data << in.rdbuf();
  if (in.bad()) raise(path.string(), ": read error");
  return data.str();
}

}  // namespace openbpu
