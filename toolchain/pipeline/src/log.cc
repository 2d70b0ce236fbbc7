#include "openbpu/pipeline/log.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "openbpu/common/error.h"

namespace openbpu::pipeline {

namespace {

std::string timestamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  localtime_r(&t, &tm);
  std::ostringstream out;
  out << std::put_time(&tm, "%Y-%m-%d %H:%M:%S") << ',' << std::setw(3) << std::setfill('0') << ms;
  return out.str();
}

const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug: return "DEBUG";
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kWarning: return "WARNING";
    case LogLevel::kError: return "ERROR";
  }
  return "INFO";
}

}  // namespace

Log::Log(const std::string& file, LogLevel console_level)
    : path_(file), console_level_(console_level), tty_(isatty(fileno(stdout)) != 0) {
  if (!file.empty()) {
    file_.open(file, std::ios::trunc);
    if (!file_) raise("cannot create the log file ", file);
  }
}

void Log::write(LogLevel level, const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string prefix = timestamp() + " " + level_name(level) + " ";
  std::istringstream lines(text);
  std::string line;
  bool any = false;
  while (std::getline(lines, line) || !any) {
    any = true;
    if (file_) file_ << prefix << line << '\n';
    if (level >= console_level_) {
      std::ostream& out = level >= LogLevel::kError ? std::cerr : std::cout;
      out << prefix << line << '\n';
    }
    if (lines.eof()) break;
  }
  if (file_) file_.flush();
}

void Log::progress(const std::string& text, bool done) {
  std::lock_guard<std::mutex> lock(mutex_);
  // On a terminal the line is rewritten in place and cleared when done (the final state goes to
  // the log as a normal line); elsewhere progress is not printed.
  if (!tty_) return;
  std::cout << "\r\033[K" << (done ? "" : text) << std::flush;
}

Progress::Progress(Log& log, std::string label, size_t total)
    : log_(log), label_(std::move(label)), total_(total),
      start_(std::chrono::steady_clock::now()), last_print_(start_) {}

void Progress::step() {
  ++done_;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_print_ < std::chrono::milliseconds(200) && done_ < total_) return;
  last_print_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double rate = seconds > 0 ? done_ / seconds : 0;
  const double eta = rate > 0 ? (total_ - done_) / rate : 0;
  std::ostringstream s;
  s << label_ << ": " << done_ << "/" << total_ << std::fixed << std::setprecision(2) << ", "
    << rate << " it/s, ETA " << std::setprecision(0) << eta << " s";
  log_.progress(s.str(), false);
}

void Progress::finish() {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::ostringstream s;
  s << label_ << ": " << done_ << "/" << total_ << " done in " << std::fixed << std::setprecision(2)
    << seconds << " s";
  log_.progress("", true);
  log_.info(s.str());
}

}  // namespace openbpu::pipeline
