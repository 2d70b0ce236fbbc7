// The runtime profiler (profiler.h).
#include "profiler.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <span>
#include <system_error>

namespace openbpu::dnn {

namespace {

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  return buf;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

double avg(const Accumulator& a) { return a.count == 0 ? 0 : a.sum / static_cast<double>(a.count); }
double lo(const Accumulator& a) { return a.count == 0 ? 0 : a.min; }

// {"avg_time": .., "max_time": .., "min_time": ..} at `indent` spaces (keys sorted, as the
// reference's files have them).
std::string json_times(const Accumulator& a, const std::string& indent) {
  const std::string in = indent + "    ";
  return "{\n" + in + "\"avg_time\": " + number(avg(a)) + ",\n" + in + "\"max_time\": " + number(a.max) + ",\n" + in +
         "\"min_time\": " + number(lo(a)) + "\n" + indent + "}";
}

std::string csv_times(const std::string& name, const Accumulator& a) {
  return csv_field(name) + "," + number(avg(a)) + "," + number(a.max) + "," + number(lo(a)) + "\n";
}

std::string json_object(const std::map<std::string, Accumulator>& m, const std::string& indent) {
  if (m.empty()) return "{}";
  std::string out = "{\n";
  size_t i = 0;
  for (const auto& [key, acc] : m) {
    out += indent + "    " + json_string(key) + ": " + json_times(acc, indent + "    ") + (++i < m.size() ? ",\n" : "\n");
  }
  return out + indent + "}";
}

}  // namespace

struct Profiler::Snapshot {
  RunningCondition condition;
  std::map<std::string, Accumulator> chip, model, task;
};

Profiler* Profiler::active() {
  static Profiler* const profiler = []() -> Profiler* {
    const char* path = std::getenv("HB_DNN_PROFILER_LOG_PATH");
    if (path == nullptr || *path == '\0') return nullptr;
    Profiler* p = new Profiler(path);  // never destroyed: written at exit, reported to by workers
    std::atexit(&Profiler::write_at_exit);
    return p;
  }();
  return profiler;
}

size_t Profiler::register_model(const std::string& model, std::vector<std::string> keys) {
  std::lock_guard<std::mutex> lock(mutex_);
  Record r;
  r.model = model;
  r.layers.resize(keys.size());
  r.keys = std::move(keys);
  records_.push_back(std::move(r));
  return records_.size() - 1;
}

void Profiler::add_inference(size_t record, const std::vector<double>& layer_ms, double bpu_ms, double cpu_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  Record& r = records_[record];
  for (size_t i = 0; i < layer_ms.size() && i < r.layers.size(); ++i) r.layers[i].add(layer_ms[i]);
  r.bpu.add(bpu_ms);
  r.cpu.add(cpu_ms);
}

void Profiler::task_submitted(ProfilerClock::time_point at) {
  std::lock_guard<std::mutex> lock(mutex_);
  submitters_.insert(std::this_thread::get_id());
  if (!any_submit_ || at < first_submit_) first_submit_ = at;
  any_submit_ = true;
}

void Profiler::task_done(ProfilerClock::time_point submitted, ProfilerClock::time_point started, ProfilerClock::time_point done,
                         int32_t core_mask) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.add(ms_between(submitted, started));
  running_.add(ms_between(started, done));
  latency_.add(ms_between(submitted, done));
  if (!any_done_ || done > last_done_) last_done_ = done;
  any_done_ = true;
  if (core_mask_.has_value() && *core_mask_ != core_mask) mixed_cores_ = true;
  core_mask_ = core_mask;
}

void Profiler::set_running_condition(RunningCondition rc) {
  std::lock_guard<std::mutex> lock(mutex_);
  override_ = std::move(rc);
}

Profiler::Snapshot Profiler::snapshot() {
  std::lock_guard<std::mutex> lock(mutex_);
  Snapshot s;
  // Models that ran, by name (a model loaded twice is one entry).
  std::map<std::string, std::map<std::string, Accumulator>> by_model;
  Accumulator bpu, cpu;
  int64_t frames = 0;
  for (const Record& r : records_) {
    if (r.cpu.count == 0) continue;
    frames += r.cpu.count;
    bpu.merge(r.bpu);
    cpu.merge(r.cpu);
    auto& layers = by_model[r.model];
    for (size_t i = 0; i < r.keys.size(); ++i) layers[r.keys[i]].merge(r.layers[i]);
  }
  for (const auto& [model, layers] : by_model) {
    for (const auto& [key, acc] : layers) s.model[by_model.size() > 1 ? model + "/" + key : key].merge(acc);
  }
  s.chip["BPU_inference_time_cost"] = bpu;
  s.chip["CPU_inference_time_cost"] = cpu;
  s.task["TaskPendingTime"] = pending_;
  s.task["TaskRunningTime"] = running_;

  if (override_.has_value()) {
    s.condition = *override_;
    return s;
  }
  RunningCondition& c = s.condition;
  for (const auto& [model, layers] : by_model) c.model_name += (c.model_name.empty() ? "" : ",") + model;
  c.frame_count = frames;
  c.run_time_ms = any_submit_ && any_done_ && last_done_ > first_submit_ ? ms_between(first_submit_, last_done_) : 0;
  c.thread_num = static_cast<int32_t>(submitters_.size());
  c.average_latency_ms = avg(latency_);
  c.fps = c.run_time_ms > 0 ? static_cast<double>(frames) * 1000.0 / c.run_time_ms : 0;
  // The core_id flag's numbering: 0 any core, k + 1 when every task asked for core k alone.
  if (core_mask_.has_value() && !mixed_cores_) {
    const int32_t m = *core_mask_;
    if (m > 0 && (m & (m - 1)) == 0) {
      int32_t k = 0;
      while ((m >> k) != 1) ++k;
      c.core_id = k + 1;
    }
  }
  return s;
}

std::string Profiler::render_log(const Snapshot& s) {
  const RunningCondition& c = s.condition;
  std::string out = "{\n";
  out += "    \"perf_result\": {\n";
  out += "        \"FPS\": " + number(c.fps) + ",\n";
  out += "        \"average_latency\": " + number(c.average_latency_ms) + "\n";
  out += "    },\n";
  out += "    \"running_condition\": {\n";
  out += "        \"core_id\": " + std::to_string(c.core_id) + ",\n";
  out += "        \"frame_count\": " + std::to_string(c.frame_count) + ",\n";
  out += "        \"model_name\": " + json_string(c.model_name) + ",\n";
  out += "        \"run_time\": " + number(c.run_time_ms) + ",\n";
  out += "        \"thread_num\": " + std::to_string(c.thread_num) + "\n";
  out += "    }\n}\n***\n{\n";
  out += "    \"chip_latency\": " + json_object(s.chip, "    ") + ",\n";
  out += "    \"model_latency\": " + json_object(s.model, "    ") + ",\n";
  out += "    \"task_latency\": " + json_object(s.task, "    ") + "\n}\n";
  return out;
}

std::string Profiler::render_csv(const Snapshot& s) {
  const RunningCondition& c = s.condition;
  std::string out = "running_condition\n";
  out += "thread_num," + std::to_string(c.thread_num) + "\n";
  out += "core_id," + std::to_string(c.core_id) + "\n";
  out += "frame_count," + std::to_string(c.frame_count) + "\n";
  out += "run_time," + number(c.run_time_ms) + "\n";
  out += "model_name," + csv_field(c.model_name) + "\n\n";
  out += "perf_result\n";
  out += "average_latency," + number(c.average_latency_ms) + "\n";
  out += "FPS," + number(c.fps) + "\n";
  const std::pair<const char*, const std::map<std::string, Accumulator>*> blocks[] = {
      {"chip_latency", &s.chip}, {"model_latency", &s.model}, {"task_latency", &s.task}};
  for (const auto& [title, m] : blocks) {
    out += std::string("\n") + title + "\nname,avg_time,max_time,min_time\n";
    for (const auto& [key, acc] : *m) out += csv_times(key, acc);
  }
  return out;
}

format::Status Profiler::write() {
  const Snapshot s = snapshot();
  std::error_code ec;
  std::filesystem::create_directories(path_, ec);  // an error shows in the write below
  const std::string log = render_log(s), csv = render_csv(s);
  auto bytes = [](const std::string& text) { return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()); };
  format::Status st = format::write_file_atomically(path_ + "/profiler.log", bytes(log), "profiler.log (HB_DNN_PROFILER_LOG_PATH)");
  if (!st.ok()) return st;
  return format::write_file_atomically(path_ + "/profiler.csv", bytes(csv), "profiler.csv (HB_DNN_PROFILER_LOG_PATH)");
}

void Profiler::write_or_report() noexcept {
  try {
    const format::Status st = write();
    if (!st.ok()) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!reported_failure_) std::fprintf(stderr, "[E][DNN][profiler] %s\n", st.message.c_str());
      reported_failure_ = true;
    }
  } catch (...) {
    std::fprintf(stderr, "[E][DNN][profiler] out of memory while writing the profiler files to '%s'\n", path_.c_str());
  }
}

void Profiler::write_at_exit() {
  if (Profiler* p = active()) p->write_or_report();
}

}  // namespace openbpu::dnn
