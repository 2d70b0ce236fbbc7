// A command run as a child process by the command-line test drivers (crash_safety,
// resource_limits): started in a directory with its output in a file, waited for with a bound,
// reaped with wait4() for its exit status, peak resident set size and wall time.
//
// The peak RSS is the child's ru_maxrss: Linux carries the maximum over an execve, so it is the
// larger of the command's own peak and the driver's RSS when it forked (the drivers stay small).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace openbpu::cli_test {

struct ChildExit {
  int exit_code = -1;     // WEXITSTATUS, or -1 if a signal ended the child
  int signal = 0;         // the signal that ended it, or 0
  double seconds = 0;     // wall time from start to reaping
  long peak_rss_kib = 0;  // ru_maxrss (see the file comment)
};

class Child {
 public:
  // Forks and runs argv[0] (a path) with argv in `cwd`, stdout and stderr to `output` (created or
  // truncated), with RLIMIT_DATA at `data_limit_bytes` unless 0. Throws std::runtime_error if the
  // fork or the pidfd fails; a failed exec ends the child with exit code 127.
  Child(const std::vector<std::string>& argv, const std::filesystem::path& cwd,
        const std::filesystem::path& output, uint64_t data_limit_bytes = 0)
      : start_(std::chrono::steady_clock::now()) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const std::string dir = cwd.string(), out = output.string();
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0 || ::chdir(dir.c_str()) != 0 || ::dup2(fd, 1) < 0 || ::dup2(fd, 2) < 0)
        ::_exit(127);
      const rlimit limit{data_limit_bytes, data_limit_bytes};
      if (data_limit_bytes != 0 && ::setrlimit(RLIMIT_DATA, &limit) != 0) ::_exit(127);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
    if (pidfd_ < 0) {
      kill();
      (void)wait();
      throw std::runtime_error("pidfd_open failed");
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    if (!reaped_) {
      kill();
      (void)wait();
    }
  }

  pid_t pid() const { return pid_; }
  // Readable (POLLIN) once the child has ended.
  int pidfd() const { return pidfd_; }
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  void kill() const { ::kill(pid_, SIGKILL); }

  // Waits at most `seconds` for the child to end; false if it is still running.
  bool wait_for(double seconds) const {
    pollfd p{pidfd_, POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(seconds * 1000)) == 1;
  }

  // Reaps the child (blocks until it ends).
  ChildExit wait() {
    ChildExit result;
    int status = 0;
    rusage usage{};
    while (::wait4(pid_, &status, 0, &usage) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    if (pidfd_ >= 0) ::close(pidfd_);
    result.seconds = elapsed();
    result.peak_rss_kib = usage.ru_maxrss;
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    return result;
  }

 private:
  pid_t pid_ = -1;
  int pidfd_ = -1;
  bool reaped_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace openbpu::cli_test
