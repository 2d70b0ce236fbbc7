// The conversion log: every line `YYYY-MM-DD HH:MM:SS,mmm LEVEL message`, written to the log
// file (hb_mapper_makertbin.log, hb_compile.log, hb_mapper_checker.log in the current
// directory) and, the same line, to the console.
#pragma once

#include <chrono>
#include <cstdint>
#include <fstream>
#include <mutex>
#include <string>

#include "openbpu/base/message.h"
#include "openbpu/common/text.h"  // fixed(), for log lines

namespace openbpu::pipeline {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

class Log {
 public:
  // Opens (truncates) `file`; an empty path logs to the console only. Throws Error if the file
  // cannot be created.
  Log(const std::string& file, LogLevel console_level = LogLevel::kInfo);

  template <typename... Args>
  void debug(Args&&... args) { write(LogLevel::kDebug, base::str_cat(std::forward<Args>(args)...)); }
  template <typename... Args>
  void info(Args&&... args) { write(LogLevel::kInfo, base::str_cat(std::forward<Args>(args)...)); }
  template <typename... Args>
  void warning(Args&&... args) { write(LogLevel::kWarning, base::str_cat(std::forward<Args>(args)...)); }
  template <typename... Args>
  void error(Args&&... args) { write(LogLevel::kError, base::str_cat(std::forward<Args>(args)...)); }

  // Multi-line text: one log line per line.
  void write(LogLevel level, const std::string& text);
  // A console-only progress line (rewritten in place on a terminal).
  void progress(const std::string& text, bool done);

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::ofstream file_;
  LogLevel console_level_;
  std::mutex mutex_;
  bool tty_ = false;
};

// "count/total, rate/s, ETA" progress for long steps (calibration over N samples).
class Progress {
 public:
  Progress(Log& log, std::string label, size_t total);
  void step();   // one item done
  void finish(); // final line in the log
 private:
  Log& log_;
  std::string label_;
  size_t total_, done_ = 0;
  std::chrono::steady_clock::time_point start_, last_print_;
};

}  // namespace openbpu::pipeline
