// The queue model (queue_model.h).
#include "openbpu/simulator/queue_model.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <queue>
#include <sstream>
#include <tuple>
#include <utility>

#include "openbpu/simulator/device.h"
#include "openbpu/simulator/timing.h"

namespace openbpu::simulator {

// The model follows the device's rules, so it preempts at the device's priority.
static_assert(kQueuePreemptPriority == Device::kPreemptPriority);

namespace {

// A job on a core: its index and the call it runs next. Queued jobs have next_call == 0;
// suspended ones have completed at least one call (suspension happens only at a boundary).
struct Entry {
  int job = 0;
  size_t next_call = 0;
};

// What a core needs to know about every job to order them.
struct Jobs {
  std::span<const QueuedJob> input;
  const std::vector<uint64_t>& submit;  // resolved submit cycles
  // Earlier in the FIFO order: submit cycle, then job index.
  bool before(int a, int b) const { return std::tie(submit[a], a) < std::tie(submit[b], b); }
  int priority(int job) const { return input[static_cast<size_t>(job)].priority; }
};

// One core: self-contained (its jobs' progress lives here), so that a copy can be run forward to
// see where an "any core" job would start.
struct Core {
  bool running = false;
  Entry current;               // valid when running
  bool in_call = false;        // the current call is in progress (false: at a boundary)
  uint64_t call_end = 0;       // when in_call
  std::vector<Entry> waiting;  // queued and suspended jobs
  uint64_t busy = 0;

  bool has_preempting(const Jobs& jobs) const {
    return std::any_of(waiting.begin(), waiting.end(), [&](const Entry& e) {
      return e.next_call == 0 && jobs.priority(e.job) == kQueuePreemptPriority;
    });
  }

  // device.cc's next_job_locked(): a queued priority-255 job; else a suspended job (highest
  // priority, then first submitted); else the queued job of the highest priority, then first
  // submitted. waiting.end() when nothing waits.
  std::vector<Entry>::iterator pick(const Jobs& jobs) {
    auto better = [&](const Entry& a, const Entry& b) {
      return jobs.priority(a.job) != jobs.priority(b.job)
                 ? jobs.priority(a.job) > jobs.priority(b.job)
                 : jobs.before(a.job, b.job);
    };
    auto best_of = [&](auto&& eligible) {
      auto best = waiting.end();
      for (auto it = waiting.begin(); it != waiting.end(); ++it) {
        if (eligible(*it) && (best == waiting.end() || better(*it, *best))) best = it;
      }
      return best;
    };
    if (auto it = best_of([&](const Entry& e) {
          return e.next_call == 0 && jobs.priority(e.job) == kQueuePreemptPriority;
        });
        it != waiting.end()) {
      return it;
    }
    if (auto it = best_of([](const Entry& e) { return e.next_call > 0; }); it != waiting.end())
      return it;
    return best_of([](const Entry&) { return true; });
  }

  // The current call ends (in_call, call_end == now). Returns the job when that was its last call.
  std::optional<int> finish_call(const Jobs& jobs) {
    busy += jobs.input[static_cast<size_t>(current.job)].function_calls[current.next_call];
    ++current.next_call;
    in_call = false;
    if (current.next_call < jobs.input[static_cast<size_t>(current.job)].function_calls.size())
      return std::nullopt;
    running = false;
    return current.job;
  }

  struct Dispatch {
    int preempted = -1;    // the job suspended at this boundary
    int first_start = -1;  // the job that started its first call
  };
  // At `now`, with no call in progress: suspends the running job for a priority-255 one if the
  // rules say so, then starts the next call of whichever job runs.
  Dispatch dispatch(const Jobs& jobs, uint64_t now) {
    Dispatch d;
    if (in_call) return d;
    if (running && jobs.priority(current.job) < kQueuePreemptPriority && has_preempting(jobs)) {
      d.preempted = current.job;
      waiting.push_back(current);
      running = false;
    }
    if (!running) {
      auto it = pick(jobs);
      if (it == waiting.end()) return d;
      current = *it;
      waiting.erase(it);
      running = true;
      if (current.next_call == 0) d.first_start = current.job;
    }
    in_call = true;
    call_end = now + jobs.input[static_cast<size_t>(current.job)].function_calls[current.next_call];
    return d;
  }

  // The cycle `job` (not yet on this core) would start here if it joined now and nothing else
  // arrived: a copy of the core runs forward until it starts.
  uint64_t start_if_joined(const Jobs& jobs, int job, uint64_t now) const {
    Core c = *this;
    c.waiting.push_back({job, 0});
    uint64_t t = now;
    for (;;) {
      if (c.dispatch(jobs, t).first_start == job) return t;
      t = c.call_end;  // a call is in progress: the core had work before `job`
      c.finish_call(jobs);
    }
  }
};

std::string check_jobs(std::span<const QueuedJob> jobs, int cores) {
  if (cores < 1) return "the BPU has " + std::to_string(cores) + " cores; it needs at least 1";
  for (size_t i = 0; i < jobs.size(); ++i) {
    const QueuedJob& j = jobs[i];
    const std::string job = "job " + std::to_string(i) + ": ";
    if (j.function_calls.empty()) return job + "has no function call; a job runs at least one";
    if (j.priority < 0 || j.priority > kQueuePreemptPriority) {
      return job + "priority " + std::to_string(j.priority) + " is outside [0, 255]";
    }
    if (j.core != kAnyCore && (j.core < 0 || j.core >= cores)) {
      return job + "core " + std::to_string(j.core) + " is out of range [0, " +
             std::to_string(cores) + ") (or kAnyCore = -1)";
    }
    if (j.after != kNoPredecessor && (j.after < 0 || static_cast<size_t>(j.after) >= i)) {
      return job + "after " + std::to_string(j.after) + " must name an earlier job (in [0, " +
             std::to_string(i) + ")) or be kNoPredecessor = -1";
    }
  }
  return "";
}

}  // namespace

QueueReport simulate_queues(std::span<const QueuedJob> input, int core_count) {
  QueueReport r;
  r.error = check_jobs(input, core_count);
  if (!r.error.empty()) return r;
  r.cores = core_count;
  r.jobs.resize(input.size());
  std::vector<uint64_t> submit(input.size(), 0);
  const Jobs jobs{input, submit};
  std::vector<Core> cores(static_cast<size_t>(core_count));
  // Submitted jobs not yet on a core, earliest first, then by index.
  using Arrival = std::pair<uint64_t, int>;
  std::priority_queue<Arrival, std::vector<Arrival>, std::greater<>> arrivals;
  std::vector<std::vector<int>> successors(input.size());
  for (size_t i = 0; i < input.size(); ++i) {
    if (input[i].after == kNoPredecessor) {
      submit[i] = input[i].submit_cycle;
      arrivals.push({submit[i], static_cast<int>(i)});
    } else {
      successors[static_cast<size_t>(input[i].after)].push_back(static_cast<int>(i));
    }
  }
  for (;;) {
    std::optional<uint64_t> next;
    if (!arrivals.empty()) next = arrivals.top().first;
    for (const Core& c : cores) {
      if (c.in_call) next = std::min(next.value_or(c.call_end), c.call_end);
    }
    if (!next) break;
    const uint64_t now = *next;
    // 1. Calls that end now; jobs that end release their successors.
    for (Core& c : cores) {
      if (!c.in_call || c.call_end != now) continue;
      const std::optional<int> ended = c.finish_call(jobs);
      if (!ended) continue;
      r.jobs[static_cast<size_t>(*ended)].end_cycle = now;
      for (int s : successors[static_cast<size_t>(*ended)]) {
        submit[static_cast<size_t>(s)] = now + input[static_cast<size_t>(s)].submit_cycle;
        arrivals.push({submit[static_cast<size_t>(s)], s});
      }
    }
    // 2. Arrivals now join a queue.
    while (!arrivals.empty() && arrivals.top().first == now) {
      const int job = arrivals.top().second;
      arrivals.pop();
      int core = input[static_cast<size_t>(job)].core;
      if (core == kAnyCore) {
        uint64_t best = 0;
        for (size_t k = 0; k < cores.size(); ++k) {
          const uint64_t start = cores[k].start_if_joined(jobs, job, now);
          if (core == kAnyCore || start < best) core = static_cast<int>(k), best = start;
        }
      }
      r.jobs[static_cast<size_t>(job)].core = core;
      cores[static_cast<size_t>(core)].waiting.push_back({job, 0});
    }
    // 3. Each core without a call in progress picks its next one.
    for (Core& c : cores) {
      const Core::Dispatch d = c.dispatch(jobs, now);
      if (d.preempted >= 0) ++r.jobs[static_cast<size_t>(d.preempted)].preemptions;
      if (d.first_start >= 0) r.jobs[static_cast<size_t>(d.first_start)].start_cycle = now;
    }
  }
  r.per_core.resize(cores.size());
  for (size_t k = 0; k < cores.size(); ++k) r.per_core[k].busy_cycles = cores[k].busy;
  uint64_t last_end = 0, busy = 0;
  for (size_t i = 0; i < input.size(); ++i) {
    JobTiming& t = r.jobs[i];
    t.submit_cycle = submit[i];
    uint64_t run = 0;
    for (uint64_t c : input[i].function_calls) run += c;
    t.wait_cycles = t.end_cycle - t.submit_cycle - run;
    r.wait_cycles += t.wait_cycles;
    r.preemptions += static_cast<uint64_t>(t.preemptions);
    ++r.per_core[static_cast<size_t>(t.core)].jobs;
    r.first_submit_cycle = i == 0 ? t.submit_cycle : std::min(r.first_submit_cycle, t.submit_cycle);
    last_end = std::max(last_end, t.end_cycle);
  }
  for (const CoreTiming& c : r.per_core) busy += c.busy_cycles;
  if (!input.empty()) r.makespan_cycles = last_end - r.first_submit_cycle;
  if (r.makespan_cycles > 0) {
    r.utilisation =
        static_cast<double>(busy) / (static_cast<double>(r.makespan_cycles) * core_count);
  }
  r.ok = true;
  return r;
}

QueueReport simulate_queues(std::span<const QueuedJob> jobs, const MarchSpec& march) {
  return simulate_queues(jobs, march.bpu_cores);
}

std::vector<uint64_t> function_call_cycles(const Program& program, const MarchSpec& march,
                                           int cores) {
  const ProgramEstimate e = estimate_program(program, march, cores);
  std::vector<uint64_t> calls;
  for (size_t begin = 0; begin < program.instructions.size();) {
    const size_t end = function_call_end(program, begin);
    uint64_t cycles = 0;
    for (size_t i = begin; i < end; ++i) cycles += e.instructions[i].cycles;
    calls.push_back(cycles);
    begin = end;
  }
  return calls;
}

std::string queue_json(const QueueReport& r, const MarchSpec& march) {
  std::ostringstream out;
  out << "{\"march\": \"" << march.name << "\", ";
  if (!r.ok) {
    // The messages are ours and hold no quote or backslash.
    out << "\"error\": \"" << r.error << "\"}";
    return out.str();
  }
  out << "\"clock_mhz\": " << march.clock_mhz << ", \"cores\": " << r.cores
      << ", \"first_submit_cycle\": " << r.first_submit_cycle
      << ", \"makespan_cycles\": " << r.makespan_cycles
      << ", \"makespan_us\": " << static_cast<double>(r.makespan_cycles) / march.clock_mhz
      << ", \"utilisation\": " << r.utilisation << ", \"preemptions\": " << r.preemptions
      << ", \"wait_cycles\": " << r.wait_cycles << ", \"jobs\": [";
  for (size_t i = 0; i < r.jobs.size(); ++i) {
    const JobTiming& j = r.jobs[i];
    out << (i ? ", " : "") << "{\"index\": " << i << ", \"core\": " << j.core
        << ", \"submit_cycle\": " << j.submit_cycle << ", \"start_cycle\": " << j.start_cycle
        << ", \"end_cycle\": " << j.end_cycle << ", \"wait_cycles\": " << j.wait_cycles
        << ", \"preemptions\": " << j.preemptions << "}";
  }
  out << "], \"per_core\": [";
  for (size_t k = 0; k < r.per_core.size(); ++k) {
    out << (k ? ", " : "") << "{\"core\": " << k
        << ", \"busy_cycles\": " << r.per_core[k].busy_cycles
        << ", \"jobs\": " << r.per_core[k].jobs << "}";
  }
  out << "]}";
  return out.str();
}

}  // namespace openbpu::simulator
