// conversion_kill: kill -9 of a conversion (hb_mapper makertbin, hb_compile) at chosen moments,
// and what it leaves in working_dir (design invariant 5).
//
//   conversion_kill --dir DIR --log LOG --working-dir OUT --at MOMENT... -- TOOL ARGS...
//
// First an uninterrupted run in DIR/baseline: its timeline (each line of the log file LOG as it is
// written, each name appearing in OUT) and its outputs, each loaded: stage models with the ONNX
// loader, the .bin / .hbm with the model-file verifier, the .json parsed. Then, for each MOMENT, in
// DIR/moment_<k>: a run killed with SIGKILL at that moment, after which every file in OUT must have
// a final name of the baseline and the baseline's bytes (complete: nothing half-written, no
// temporary) and load; then a rerun in the same place must succeed and leave the baseline's
// outputs, byte for byte.
//
// MOMENT is [over:]line:TEXT[#N] or [over:]file:TEXT[#N]:
//   line:TEXT  once the Nth (default: first) line of LOG containing TEXT is written;
//   file:TEXT  once the Nth name containing TEXT appears in OUT (created, linked or renamed into
//              it; a temporary's name contains its target's, so this is where writing that file
//              starts to show);
//   over:      OUT holds the baseline's outputs when the run starts (the run replaces them);
//              without it OUT starts empty.
// A moment is an event of the run, not a clock time: the kill is sent as soon as the event is
// seen. Every moment must occur in the baseline run (its time there is printed). A run that ends
// before the kill lands (a moment close to the end) is tried again, at most 3 times. Every wait is
// bounded (--timeout seconds per run).
#include <sys/inotify.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../child_process.h"
#include "openbpu/format/model_file.h"
#include "openbpu/frontend/onnx_model.h"

namespace fs = std::filesystem;
using openbpu::cli_test::Child;
using openbpu::cli_test::ChildExit;

namespace {

struct Event {
  double at = 0;      // seconds since the run started (when the driver saw it)
  bool file = false;  // a name in OUT, else a log line
  std::string text;
};

struct Moment {
  std::string spec;
  bool over = false;
  bool file = false;
  std::string text;
  int occurrence = 1;
};

Moment parse_moment(const std::string& spec) {
  Moment m;
  m.spec = spec;
  std::string rest = spec;
  if (rest.rfind("over:", 0) == 0) {
    m.over = true;
    rest = rest.substr(5);
  }
  if (rest.rfind("line:", 0) == 0) {
    m.file = false;
  } else if (rest.rfind("file:", 0) == 0) {
    m.file = true;
  } else {
    throw std::runtime_error("--at '" + spec +
                             "': expected [over:]line:TEXT[#N] or [over:]file:TEXT[#N]");
  }
  rest = rest.substr(5);
  if (const size_t hash = rest.rfind('#'); hash != std::string::npos) {
    m.occurrence = std::stoi(rest.substr(hash + 1));
    rest = rest.substr(0, hash);
  }
  if (rest.empty() || m.occurrence < 1)
    throw std::runtime_error("--at '" + spec + "': empty text or bad #N");
  m.text = rest;
  return m;
}

// The index of the event that is `m`, or -1.
int find_moment(const std::vector<Event>& events, const Moment& m) {
  int seen = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].file == m.file && events[i].text.find(m.text) != std::string::npos &&
        ++seen == m.occurrence) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

// The run's events through inotify: lines appended to the log file in `cwd`, names appearing in
// `out` (which must exist before the run starts).
class Watch {
 public:
  Watch(const fs::path& cwd, const std::string& log, const fs::path& out) : log_(cwd / log) {
    fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd_ < 0) throw std::runtime_error("inotify_init1 failed");
    cwd_wd_ = inotify_add_watch(fd_, cwd.c_str(), IN_MODIFY | IN_CREATE);
    out_wd_ = inotify_add_watch(fd_, out.c_str(), IN_CREATE | IN_MOVED_TO);
    if (cwd_wd_ < 0 || out_wd_ < 0)
      throw std::runtime_error("inotify_add_watch failed on " + out.string());
  }
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;
  ~Watch() { ::close(fd_); }
  int fd() const { return fd_; }

  // Appends what happened since the last call, in order, stamped `now`.
  void drain(double now, std::vector<Event>* events) {
    alignas(inotify_event) char buffer[64 * 1024];
    for (;;) {
      const ssize_t n = ::read(fd_, buffer, sizeof buffer);
      if (n <= 0) return;
      for (ssize_t at = 0; at < n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(buffer + at);
        at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
        const std::string name = e->len > 0 ? std::string(e->name) : std::string();
        if (e->wd == out_wd_ && !name.empty()) {
          events->push_back({now, true, name});
        } else if (e->wd == cwd_wd_ && name == log_.filename().string()) {
          read_lines(now, events);
        }
      }
    }
  }

 private:
  void read_lines(double now, std::vector<Event>* events) {
    std::ifstream in(log_, std::ios::binary);
    if (!in) return;
    in.seekg(static_cast<std::streamoff>(offset_));
    std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    offset_ += chunk.size();
    partial_ += chunk;
    for (size_t end; (end = partial_.find('\n')) != std::string::npos;) {
      events->push_back({now, false, partial_.substr(0, end)});
      partial_.erase(0, end + 1);
    }
  }

  fs::path log_;
  int fd_ = -1, cwd_wd_ = -1, out_wd_ = -1;
  uint64_t offset_ = 0;
  std::string partial_;
};

struct RunResult {
  ChildExit exit;
  std::vector<Event> events;
  bool sent_kill = false;
  double seen_at = 0, kill_at = 0;  // the moment's event, the kill
};

// Runs the command in `cwd`, killing it at `moment` (if given). Throws if it outlives `timeout`.
RunResult run(const std::vector<std::string>& command, const fs::path& cwd, const std::string& log,
              const fs::path& out, const Moment* moment, double timeout) {
  Watch watch(cwd, log, out);
  Child child(command, cwd, cwd / "run.out");
  RunResult r;
  for (;;) {
    pollfd fds[2] = {{watch.fd(), POLLIN, 0}, {child.pidfd(), POLLIN, 0}};
    const double left = timeout - child.elapsed();
    if (left <= 0)
      throw std::runtime_error("the run in " + cwd.string() + " did not end in " +
                               std::to_string(timeout) + " s");
    if (::poll(fds, 2, static_cast<int>(left * 1000) + 1) < 0 && errno != EINTR)
      throw std::runtime_error("poll failed");
    watch.drain(child.elapsed(), &r.events);
    if (const int i = moment != nullptr && !r.sent_kill ? find_moment(r.events, *moment) : -1;
        i >= 0) {
      child.kill();
      r.sent_kill = true;
      r.seen_at = r.events[static_cast<size_t>(i)].at;
      r.kill_at = child.elapsed();
    }
    if (fds[1].revents & POLLIN) break;
  }
  r.exit = child.wait();
  watch.drain(r.exit.seconds, &r.events);
  return r;
}

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Why `file` does not load as what its name says, or "".
std::string load_problem(const fs::path& file) {
  const std::string ext = file.extension().string();
  try {
    if (ext == ".onnx") {
      (void)openbpu::frontend::load_onnx(file);
    } else if (ext == ".bin" || ext == ".hbm") {
      openbpu::format::ModelFile model;
      const openbpu::format::Status st = openbpu::format::ModelFile::load(file.string(), &model);
      if (!st.ok()) return st.message;
    } else if (ext == ".json") {
      if (!nlohmann::json::accept(read_bytes(file))) return "not valid json";
    }
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

using Files = std::map<std::string, std::string>;  // name → bytes

Files read_outputs(const fs::path& out, std::vector<std::string>* problems) {
  Files files;
  for (const fs::directory_entry& e : fs::directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file()) {
      problems->push_back("'" + name + "' is not a regular file");
      continue;
    }
    files[name] = read_bytes(e.path());
  }
  return files;
}

// What is wrong with OUT after a kill: names the baseline does not have, files that are not the
// baseline's bytes or do not load.
std::vector<std::string> check_after_kill(const fs::path& out, const Files& baseline) {
  std::vector<std::string> problems;
  for (const auto& [name, bytes] : read_outputs(out, &problems)) {
    const auto it = baseline.find(name);
    if (it == baseline.end()) {
      problems.push_back("'" + name + "' is left behind (" + std::to_string(bytes.size()) +
                         " bytes): not an output of the run, a temporary or partial name");
      continue;
    }
    if (bytes != it->second) {
      problems.push_back("'" + name +
                         "' is incomplete or damaged: " + std::to_string(bytes.size()) +
                         " bytes, not the complete file's " + std::to_string(it->second.size()));
    }
    if (const std::string why = load_problem(out / name); !why.empty()) {
      problems.push_back("'" + name + "' does not load: " + why);
    }
  }
  return problems;
}

std::vector<std::string> check_rerun(const fs::path& out, const Files& baseline) {
  std::vector<std::string> problems;
  const Files files = read_outputs(out, &problems);
  for (const auto& [name, bytes] : baseline) {
    const auto it = files.find(name);
    if (it == files.end()) {
      problems.push_back("'" + name + "' is missing after the rerun");
    } else if (it->second != bytes) {
      problems.push_back("'" + name + "' differs from the uninterrupted run's");
    }
  }
  for (const auto& [name, bytes] : files) {
    if (baseline.count(name) == 0) problems.push_back("'" + name + "' is left after the rerun");
  }
  return problems;
}

void fresh_directory(const fs::path& dir) {
  fs::remove_all(dir);
  fs::create_directories(dir);
}

void prepare_out(const fs::path& out, const Files& contents) {
  fresh_directory(out);
  for (const auto& [name, bytes] : contents) std::ofstream(out / name, std::ios::binary) << bytes;
}

struct Options {
  fs::path dir;
  std::string log, working_dir;
  std::vector<std::string> moments, command;
  double timeout = 60;
};

// The uninterrupted run: its events and outputs (each checked to load). Throws if it fails.
Files baseline(const Options& o, std::vector<Event>* events) {
  const fs::path cwd = o.dir / "baseline", out = cwd / o.working_dir;
  fresh_directory(cwd);
  fs::create_directories(out);
  RunResult r = run(o.command, cwd, o.log, out, nullptr, o.timeout);
  if (r.exit.exit_code != 0) {
    throw std::runtime_error("the uninterrupted run failed (exit " +
                             std::to_string(r.exit.exit_code) + "): see " +
                             (cwd / "run.out").string());
  }
  std::vector<std::string> problems;
  Files files = read_outputs(out, &problems);
  for (const auto& [name, bytes] : files) {
    if (const std::string why = load_problem(out / name); !why.empty())
      problems.push_back(name + ": " + why);
  }
  if (!problems.empty() || files.empty()) {
    throw std::runtime_error("the uninterrupted run's outputs: " +
                             (files.empty() ? "none" : problems.front()));
  }
  std::printf("baseline: %zu outputs in %.3f s, %zu log lines, peak RSS %.1f MiB\n", files.size(),
              r.exit.seconds, r.events.size(), r.exit.peak_rss_kib / 1024.0);
  *events = std::move(r.events);
  return files;
}

// One moment: killed run, its check, the rerun and its check. True if all is well.
bool try_moment(const Options& o, size_t k, const Moment& m, double baseline_at,
                const Files& outputs) {
  const fs::path cwd = o.dir / ("moment_" + std::to_string(k + 1)), out = cwd / o.working_dir;
  RunResult killed;
  int attempt = 1;
  for (;; ++attempt) {
    fresh_directory(cwd);
    prepare_out(out, m.over ? outputs : Files{});
    killed = run(o.command, cwd, o.log, out, &m, o.timeout);
    if (killed.exit.signal == SIGKILL) break;
    if (attempt == 3) {
      std::printf("moment %zu %s: the run ended (exit %d) before the kill landed, 3 times\n", k + 1,
                  m.spec.c_str(), killed.exit.exit_code);
      return false;
    }
  }
  const std::vector<std::string> left = check_after_kill(out, outputs);
  size_t present = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(out))
    present += e.is_regular_file() ? 1 : 0;
  const ChildExit rerun = run(o.command, cwd, o.log, out, nullptr, o.timeout).exit;
  std::vector<std::string> after = check_rerun(out, outputs);
  if (rerun.exit_code != 0)
    after.insert(after.begin(), "the rerun failed (exit " + std::to_string(rerun.exit_code) + ")");
  std::printf(
      "moment %zu %s (baseline +%.3f s): seen at +%.3f s, killed at +%.3f s%s, %zu file(s) left%s; "
      "rerun %s\n",
      k + 1, m.spec.c_str(), baseline_at, killed.seen_at, killed.kill_at,
      attempt > 1 ? (" (attempt " + std::to_string(attempt) + ")").c_str() : "", present,
      left.empty() ? ", all complete" : "", after.empty() ? "identical" : "FAILED");
  for (const std::string& p : left) std::printf("  after the kill: %s\n", p.c_str());
  for (const std::string& p : after) std::printf("  after the rerun: %s\n", p.c_str());
  return left.empty() && after.empty();
}

int run_all(const Options& o) {
  std::vector<Moment> moments;
  for (const std::string& spec : o.moments) moments.push_back(parse_moment(spec));
  std::vector<Event> timeline;
  const Files outputs = baseline(o, &timeline);
  std::vector<double> at;
  for (const Moment& m : moments) {
    const int i = find_moment(timeline, m);
    if (i < 0)
      throw std::runtime_error("moment '" + m.spec + "' does not occur in the uninterrupted run");
    at.push_back(timeline[static_cast<size_t>(i)].at);
  }
  size_t passed = 0;
  for (size_t k = 0; k < moments.size(); ++k)
    passed += try_moment(o, k, moments[k], at[k], outputs) ? 1 : 0;
  std::printf(
      "conversion_kill: %zu/%zu moments left only complete files and reran to identical outputs\n",
      passed, moments.size());
  return passed == moments.size() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kill -9 of a conversion at chosen moments; what it leaves in working_dir"};
  Options o;
  app.add_option("--dir", o.dir, "where the runs happen (one folder each)")->required();
  app.add_option("--log", o.log,
                 "the tool's log file in the current directory (hb_compile.log, ...)")
      ->required();
  app.add_option("--working-dir", o.working_dir, "the config's working_dir (relative)")->required();
  app.add_option("--at", o.moments, "[over:]line:TEXT[#N] or [over:]file:TEXT[#N]")->required();
  app.add_option("--timeout", o.timeout, "bound of one run, seconds")->capture_default_str();
  // The command follows "--" (split off here: everything after it is the tool's).
  int ours = 1;
  while (ours < argc && std::string(argv[ours]) != "--") ++ours;
  for (int i = ours + 1; i < argc; ++i) o.command.emplace_back(argv[i]);
  CLI11_PARSE(app, ours, argv);
  try {
    if (o.command.empty()) throw std::runtime_error("no command after --");
    o.command[0] = fs::absolute(o.command[0]).string();
    return run_all(o);
  } catch (const std::exception& e) {
    std::cerr << "conversion_kill: " << e.what() << "\n";
    return 1;
  }
}
