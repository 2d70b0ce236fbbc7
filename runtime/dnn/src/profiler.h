// The runtime profiler (HB_DNN_PROFILER_LOG_PATH; reference facts §1.6, §3.5).
//
// Read once, at the first model load of the process (Profiler::active()). When the variable is
// unset or empty the profiler does not exist: models and tasks hold a null pointer and every
// measurement is behind one branch on it. When set, each inference reports its layers'
// wall-clock latencies in one call (one mutex, per inference), each task its pending time
// (hbDNNInfer's submit to a worker starting it) and running time (start to done); the
// accumulators keep count / sum / min / max per key. Nothing is written per inference:
// profiler.log and profiler.csv are written when the last packed handle is released and at
// normal program exit (std::atexit; the profiler is never destroyed, so the handler is safe
// however static objects are torn down, and worker threads still running may keep reporting).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "openbpu/format/model_file.h"

namespace openbpu::dnn {

using ProfilerClock = std::chrono::steady_clock;

inline double ms_between(ProfilerClock::time_point a, ProfilerClock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

struct Accumulator {
  int64_t count = 0;
  double sum = 0, min = std::numeric_limits<double>::infinity(), max = 0;
  void add(double ms) {
    ++count;
    sum += ms;
    if (ms < min) min = ms;
    if (ms > max) max = ms;
  }
  void merge(const Accumulator& o) {
    count += o.count;
    sum += o.sum;
    if (o.min < min) min = o.min;
    if (o.max > max) max = o.max;
  }
};

// hrt_model_exec perf's own figures (openbpuDNNProfilerSetRunningCondition).
struct RunningCondition {
  std::string model_name;
  int32_t core_id = 0;
  int64_t frame_count = 0;
  double run_time_ms = 0;
  int32_t thread_num = 0;
  double average_latency_ms = 0;
  double fps = 0;
};

class Profiler {
 public:
  // The process's profiler, or nullptr when HB_DNN_PROFILER_LOG_PATH is unset or empty. The
  // variable is read at the first call (the first model load); the at-exit write is registered
  // then. Never destroyed.
  static Profiler* active();

  // A loaded model's layer keys in the order its Model::advance reports them. Returns the id of
  // its record (records outlive the model: the files are written after models are released).
  size_t register_model(const std::string& model, std::vector<std::string> keys);
  // One successful inference: `layer_ms` holds one latency per key of the record.
  void add_inference(size_t record, const std::vector<double>& layer_ms, double bpu_ms, double cpu_ms);
  // A task was submitted (hbDNNInfer with more = 0) from the calling thread.
  void task_submitted(ProfilerClock::time_point at);
  // A task finished successfully.
  void task_done(ProfilerClock::time_point submitted, ProfilerClock::time_point started, ProfilerClock::time_point done,
                 int32_t core_mask);
  void set_running_condition(RunningCondition rc);

  // Writes <path>/profiler.log and <path>/profiler.csv (the folder is created if missing).
  format::Status write();
  // write(); a failure is one line on stderr (printed once per process).
  void write_or_report() noexcept;
  // write_or_report() of the active profiler (registered with std::atexit).
  static void write_at_exit();

  const std::string& path() const { return path_; }

 private:
  explicit Profiler(std::string path) : path_(std::move(path)) {}

  struct Record {
    std::string model;
    std::vector<std::string> keys;
    std::vector<Accumulator> layers;
    Accumulator bpu, cpu;
  };
  struct Snapshot;
  Snapshot snapshot();
  static std::string render_log(const Snapshot& s);
  static std::string render_csv(const Snapshot& s);

  const std::string path_;
  std::mutex mutex_;
  std::deque<Record> records_;
  std::set<std::thread::id> submitters_;
  Accumulator pending_, running_, latency_;
  bool any_submit_ = false, any_done_ = false;
  ProfilerClock::time_point first_submit_, last_done_;
  std::optional<int32_t> core_mask_;  // the bpuCoreId of every finished task, if they all agree
  bool mixed_cores_ = false;
  std::optional<RunningCondition> override_;
  bool reported_failure_ = false;
};

}  // namespace openbpu::dnn
