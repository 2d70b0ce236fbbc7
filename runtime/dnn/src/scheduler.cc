// Tasks and the scheduler (scheduler.h).
#include "scheduler.h"

#include <algorithm>
#include <cstdlib>
#include <new>

#include "error.h"

namespace openbpu::dnn {

namespace {

// Worker threads: OPENBPU_DNN_THREADS if set (1..64), else the hardware's threads (at least 2).
size_t worker_count() {
  if (const char* v = std::getenv("OPENBPU_DNN_THREADS"); v != nullptr) {
    const long n = std::strtol(v, nullptr, 10);
    if (n >= 1 && n <= 64) return static_cast<size_t>(n);
  }
  return std::max<size_t>(2, std::thread::hardware_concurrency());
}

// True if a runs before b.
bool before(const Task& a, const Task& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.custom_id != b.custom_id) return a.custom_id < b.custom_id;
  return a.sequence < b.sequence;
}

}  // namespace

Task::~Task() {
  if (!models_released) {
    for (SubTask& s : subtasks) s.model->live_tasks--;
  }
}

void Task::release_models_if_idle_locked() {
  if (models_released || !released || state == State::kRunning) return;
  for (SubTask& s : subtasks) s.model->live_tasks--;
  models_released = true;
}

Scheduler& Scheduler::instance() {
  // Never destroyed: tasks may still run while static objects are torn down at exit.
  static Scheduler& scheduler = *new Scheduler;
  return scheduler;
}

Scheduler::Scheduler() {
  // The queue never holds more than the live tasks: reserved so that submit() cannot allocate.
  queue_.reserve(2 * HB_DNN_MAX_TASK_NUM);
  const size_t n = worker_count();
  size_t started = 0;
  for (size_t i = 0; i < n; ++i) {
    try {
      std::thread([this] { run_worker(); }).detach();
      ++started;
    } catch (...) {
      if (started == 0) throw;  // no thread refers to this object yet
      break;                    // run with the workers we have
    }
  }
}

void Scheduler::submit(const std::shared_ptr<Task>& task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task->sequence = next_sequence_++;
    queue_.push_back(task);
  }
  ready_.notify_one();
}

bool Scheduler::withdraw(const std::shared_ptr<Task>& task) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::find(queue_.begin(), queue_.end(), task);
  if (it == queue_.end()) return false;
  queue_.erase(it);
  return true;
}

void Scheduler::run_worker() {
  for (;;) {
    std::shared_ptr<Task> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_.wait(lock, [this] { return !queue_.empty(); });
      auto best = std::min_element(queue_.begin(), queue_.end(),
                                   [](const std::shared_ptr<Task>& a, const std::shared_ptr<Task>& b) { return before(*a, *b); });
      task = *best;
      queue_.erase(best);
    }
    {
      std::lock_guard<std::mutex> lock(task->mutex);
      // Released between leaving the queue and here: it has let go of its models; skip it.
      if (task->released) continue;
      task->state = Task::State::kRunning;
    }
    if (task->profiler != nullptr) task->started = ProfilerClock::now();
    execute(*task);
  }
}

void Scheduler::execute(Task& task) {
  int32_t status = HB_DNN_SUCCESS;
  std::string message;
  try {
    RunControl control;
    control.core_mask = task.core_mask;
    control.priority = task.priority;
    control.cancel = &task.cancelled;
    for (size_t i = 0; i < task.subtasks.size(); ++i) {
      SubTask& s = task.subtasks[i];
      if (!s.model->run(s.inputs.data(), s.outputs.data(), control)) break;
    }
  } catch (const ApiError& e) {
    status = e.code();
    message = e.what();
  } catch (const std::bad_alloc&) {
    status = HB_DNN_OUT_OF_MEMORY;
    message = "out of memory while running the task";
  } catch (const std::exception& e) {
    status = HB_DNN_RUN_TASK_FAILED;
    message = e.what();
  }
  if (task.profiler != nullptr && status == HB_DNN_SUCCESS && !task.cancelled) {
    try {
      task.profiler->task_done(task.submitted, task.started, ProfilerClock::now(), task.core_mask);
    } catch (...) {  // std::mutex::lock: a task's figures are not worth failing it
    }
  }
  {
    std::lock_guard<std::mutex> lock(task.mutex);
    task.status = status;
    task.message = std::move(message);
    task.state = Task::State::kDone;
    task.release_models_if_idle_locked();
  }
  task.finished.notify_all();
}

}  // namespace openbpu::dnn
