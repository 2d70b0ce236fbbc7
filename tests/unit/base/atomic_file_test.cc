#include "openbpu/base/atomic_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace openbpu::base {
namespace {

class AtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("openbpu_base_atomic_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_))
      names.push_back(e.path().filename().string());
    return names;
  }
  static std::string content(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  std::filesystem::path dir_;
};

TEST_F(AtomicFile, WritesAndReplacesLeavingNoTemporary) {
  const auto path = dir_ / "a.bin";
  EXPECT_FALSE(write_file_atomically(path, "hello"));
  EXPECT_FALSE(write_file_atomically(path, std::string("wo\0rld", 6)));
  EXPECT_EQ(content(path), std::string("wo\0rld", 6));
  EXPECT_EQ(entries(), std::vector<std::string>{"a.bin"});
  EXPECT_FALSE(write_file_atomically(path, ""));
  EXPECT_EQ(content(path), "");
}

// A new file gets its name only when complete (written to an unnamed file first): no other name
// ever appears in the directory, so a process killed while writing leaves nothing behind.
TEST_F(AtomicFile, ANewFileAppearsOnlyUnderItsOwnName) {
  const int probe = ::open(dir_.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  if (probe < 0) GTEST_SKIP() << "the temporary directory's file system has no O_TMPFILE";
  ::close(probe);
  const int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_GE(inotify_add_watch(fd, dir_.c_str(), IN_CREATE | IN_MOVED_TO), 0);
  EXPECT_FALSE(write_file_atomically(dir_ / "a.bin", "hello"));
  std::vector<std::string> names;
  alignas(inotify_event) char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) {
    for (ssize_t at = 0; at < n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(buffer + at);
      if (e->len > 0) names.emplace_back(e->name);
      at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
    }
  }
  ::close(fd);
  EXPECT_EQ(names, std::vector<std::string>{"a.bin"});
  EXPECT_EQ(content(dir_ / "a.bin"), "hello");
}

TEST_F(AtomicFile, MissingDirectoryFailsCreatingTheTemporary) {
  const auto path = dir_ / "missing" / "a.bin";
  const std::optional<AtomicWriteError> error = write_file_atomically(path, "x");
  ASSERT_TRUE(error);
  EXPECT_EQ(error->step, AtomicWriteError::Step::kCreating);
  EXPECT_EQ(error->error_number, ENOENT);
  EXPECT_EQ(std::filesystem::path(error->file).parent_path(), path.parent_path());
  EXPECT_EQ(error->describe().rfind("creating '" + error->file + "' failed: No such file", 0), 0u)
      << error->describe();
  EXPECT_TRUE(entries().empty());
}

TEST_F(AtomicFile, RenameOntoADirectoryFailsAndRemovesTheTemporary) {
  std::filesystem::create_directories(dir_ / "taken" / "inside");
  const std::optional<AtomicWriteError> error = write_file_atomically(dir_ / "taken", "x");
  ASSERT_TRUE(error);
  EXPECT_EQ(error->step, AtomicWriteError::Step::kRenaming);
  EXPECT_EQ(entries(), std::vector<std::string>{"taken"});
}

TEST_F(AtomicFile, RelativePathWritesIntoTheCurrentDirectory) {
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir_);
  const std::optional<AtomicWriteError> error = write_file_atomically("plain.txt", "text");
  std::filesystem::current_path(cwd);
  EXPECT_FALSE(error) << error->describe();
  EXPECT_EQ(content(dir_ / "plain.txt"), "text");
}

}  // namespace
}  // namespace openbpu::base
