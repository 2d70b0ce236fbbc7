// Tasks and the scheduler (scheduler.h).
#include "scheduler.h"

#include <algorithm>
#include <cstdlib>
#include <new>

#include "error.h"
#include "memory.h"

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
  inference.reset(nullptr, nullptr);  // its context back to the model (the scheduler did that already)
  if (!models_released) {
    for (size_t i = 0; i < subtask_count; ++i) subtasks[i].model->live_tasks--;
  }
}

void Task::start(int32_t task_priority, int64_t task_custom_id, int32_t task_core_mask) {
  priority = task_priority;
  custom_id = task_custom_id;
  core_mask = task_core_mask;
  sequence = 0;
  taken = false;
  next_ready = nullptr;
  queued.reset();
  subtask_count = 0;
  cancelled = false;
  next_subtask = 0;
  inference.reset(nullptr, nullptr);
  in_flight.reset();
  profiler = nullptr;
  done_callback = nullptr;
  done_userdata = nullptr;
  check_flush = false;
  state = State::kOpen;
  released = false;
  models_released = false;
  live_handle = false;
  status = HB_DNN_SUCCESS;
  message.clear();
}

SubTask& Task::add_subtask() {
  if (subtask_count == subtasks.size()) subtasks.emplace_back();
  return subtasks[subtask_count++];
}

void Task::release_models_if_idle_locked() {
  if (models_released || !released || state == State::kRunning) return;
  for (size_t i = 0; i < subtask_count; ++i) subtasks[i].model->live_tasks--;
  models_released = true;
}

TaskPool& TaskPool::instance() {
  static TaskPool& pool = *new TaskPool;  // never destroyed, as the scheduler
  return pool;
}

std::shared_ptr<Task> TaskPool::acquire(int32_t priority, int64_t custom_id, int32_t core_mask) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_.empty()) {
    all_.reserve(all_.size() + 1);
    free_.reserve(all_.size() + 1);
    all_.push_back(std::make_shared<Task>());
    free_.push_back(all_.back().get());
  }
  Task* t = free_.back();
  free_.pop_back();
  t->start(priority, custom_id, core_mask);
  return t->shared_from_this();  // all_ holds it: no allocation
}

void TaskPool::give_back(Task* task) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(task);
}

std::shared_ptr<Task> TaskPool::find(const void* handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const std::shared_ptr<Task>& p : all_) {
    if (p.get() == handle && p->live_handle) return p;
  }
  return nullptr;
}

Scheduler& Scheduler::instance() {
  // Never destroyed: tasks may still run while static objects are torn down at exit.
  static Scheduler& scheduler = *new Scheduler;
  return scheduler;
}

Scheduler::Scheduler() {
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

void Scheduler::push_locked(std::shared_ptr<Task> task) {
  Task* t = task.get();
  t->queued = std::move(task);
  t->next_ready = ready_;
  ready_ = t;
}

std::shared_ptr<Task> Scheduler::pop_best_locked() {
  Task** best = &ready_;
  for (Task** link = &ready_->next_ready; *link != nullptr; link = &(*link)->next_ready) {
    if (before(**link, **best)) best = link;
  }
  Task* t = *best;
  *best = t->next_ready;
  t->next_ready = nullptr;
  return std::move(t->queued);
}

void Scheduler::submit(const std::shared_ptr<Task>& task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task->sequence = next_sequence_++;
    push_locked(task);
  }
  has_ready_.notify_one();
}

bool Scheduler::withdraw(const std::shared_ptr<Task>& task) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (task->taken) return false;  // running, or waiting for the BPU, or back after it
  for (Task** link = &ready_; *link != nullptr; link = &(*link)->next_ready) {
    if (*link == task.get()) {
      *link = task->next_ready;
      task->next_ready = nullptr;
      task->queued.reset();  // the caller holds it too
      return true;
    }
  }
  return false;
}

void Scheduler::run_worker() {
  for (;;) {
    std::shared_ptr<Task> task;
    bool first = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      has_ready_.wait(lock, [this] { return ready_ != nullptr; });
      task = pop_best_locked();
      first = !task->taken;
      task->taken = true;
    }
    if (first) {
      {
        std::lock_guard<std::mutex> lock(task->mutex);
        // Released between leaving the queue and here: it has let go of its models; skip it.
        if (task->released) {
          TaskPool::instance().give_back(task.get());
          continue;
        }
        task->state = Task::State::kRunning;
      }
      if (task->profiler != nullptr) task->started = ProfilerClock::now();
      task->inference.reset(task->subtasks[0].inputs.data(), task->subtasks[0].outputs.data(), task->subtasks[0].roi_list());
    }
    step(task);
  }
}

void Scheduler::step(const std::shared_ptr<Task>& task) {
  Task& t = *task;
  int32_t status = HB_DNN_SUCCESS;
  std::string message;
  try {
    RunControl control;
    control.core_mask = t.core_mask;
    control.priority = t.priority;
    control.cancel = &t.cancelled;
    const BpuJobDone done{&Scheduler::bpu_job_done, &t};
    while (t.next_subtask < t.subtask_count) {
      const SubTask& s = t.subtasks[t.next_subtask];
      t.in_flight = task;
      const Progress p = s.model->advance(t.inference, control, done);
      // Waiting for the BPU: the job's completion owns the task now (it may be running on
      // another worker already); this worker lets go of it.
      if (p == Progress::kWaitingForBpu) return;
      t.in_flight.reset();
      if (p == Progress::kCancelled) break;
      if (++t.next_subtask < t.subtask_count) {
        SubTask& next = t.subtasks[t.next_subtask];
        t.inference.reset(next.inputs.data(), next.outputs.data(), next.roi_list());
      }
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
  t.in_flight.reset();  // no job in flight: advance() throws only before a submission or after its collection
  t.inference.reset(nullptr, nullptr);  // the tensors go now, not when the user releases the task
  finish(t, status, std::move(message));
}

void Scheduler::bpu_job_done(void* task, uint64_t /*job*/, const char* failure) {
  Task& t = *static_cast<Task*>(task);
  t.inference.bpu_failure = failure;
  t.inference.bpu_end = ProfilerClock::now();
  Scheduler& s = instance();
  {
    std::lock_guard<std::mutex> lock(s.mutex_);
    s.push_locked(std::move(t.in_flight));  // no allocation, no throw
  }
  s.has_ready_.notify_one();
}

void Scheduler::hide_outputs(Task& task) {
  for (size_t i = 0; i < task.subtask_count; ++i) {
    const SubTask& s = task.subtasks[i];
    for (size_t o = 0; o < s.outputs.size(); ++o) {
      const hbDNNTensor& t = s.outputs[o];
      const size_t bytes = static_cast<size_t>(s.model->outputs()[o].properties.alignedByteSize);
      MemoryRegistry::instance().hide_until_invalidated(t.sysMem[0].virAddr, std::min<size_t>(bytes, t.sysMem[0].memSize));
    }
  }
}

void Scheduler::finish(Task& task, int32_t status, std::string message) {
  if (task.profiler != nullptr && status == HB_DNN_SUCCESS && !task.cancelled) {
    try {
      task.profiler->task_done(task.submitted, task.started, ProfilerClock::now(), task.core_mask);
    } catch (...) {  // std::mutex::lock: a task's figures are not worth failing it
    }
  }
  if (task.check_flush && status == HB_DNN_SUCCESS && !task.cancelled) {
    try {
      hide_outputs(task);
    } catch (const std::bad_alloc&) {  // the hidden copies: on a worker thread nothing may escape
      status = HB_DNN_OUT_OF_MEMORY;
      message = "out of memory while keeping the outputs from the CPU (OPENBPU_UCP_CHECK_FLUSH)";
    }
  }
  bool reusable = false;
  ucp::TaskDoneCb callback = nullptr;
  void* userdata = nullptr;
  {
    std::lock_guard<std::mutex> lock(task.mutex);
    task.status = status;
    task.message = std::move(message);
    task.state = Task::State::kDone;
    task.release_models_if_idle_locked();
    reusable = task.released;  // the user let go of it while it ran: no one waits for it
    if (!reusable) {
      callback = task.done_callback;
      userdata = task.done_userdata;
    }
  }
  task.finished.notify_all();
  if (reusable) TaskPool::instance().give_back(&task);
  // After the waiters are woken: the callback may release the task (or wait for it).
  if (callback != nullptr) callback(&task, ucp_status(status), userdata);
}

}  // namespace openbpu::dnn
