// Tasks and the scheduler behind hbDNNInfer / hbDNNWaitTaskDone / hbDNNReleaseTask.
//
// A task is one or more sub-tasks (one model inference each, appended with `more`), run in
// order. Tasks ready to run wait in one queue ordered by priority (higher first), then customId
// (smaller first), then submission order; a pool of worker threads (the CPU executors) takes
// the first and runs its CPU segments until it reaches a BPU segment. That segment goes to the
// queue of a BPU core of the model's platform (the bpuCoreId mask, or the least busy core; each
// core's queue is ordered by priority, and priority 255 preempts at function-call boundaries,
// openbpu/dnn/bpu_driver.h) and the worker moves on to another task: no worker waits for the BPU.
// When the core finishes the job its completion puts the task back into the ready queue, in
// its place by the same order, and a worker continues it. So tasks on the BPU never hold the
// CPU workers, and a task of higher priority always gets a worker and the BPU queue next.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dnn/hb_dnn.h"
#include "model.h"
#include "ucp_types.h"

namespace openbpu::dnn {

struct SubTask {
  Model* model = nullptr;
  std::vector<hbDNNTensor> inputs;   // copies of the user's tensor structs
  std::vector<hbDNNTensor> outputs;
  std::vector<hbDNNRoi> rois;  // hbDNNRoiInfer: one per resizer input (empty: hbDNNInfer)
  const hbDNNRoi* roi_list() const { return rois.empty() ? nullptr : rois.data(); }
};

// Tasks are made once and reused (TaskPool): a task's storage, its sub-task list and their
// tensor lists included, serves one hbDNNInfer after another, so a task allocates nothing once
// as many tasks existed at the same time before.
class Task : public std::enable_shared_from_this<Task> {
 public:
  enum class State { kOpen, kQueued, kRunning, kDone };

  Task() = default;
  ~Task();  // drops the sub-tasks' hold on their models if that has not happened yet
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;

  // Ready for a new hbDNNInfer (TaskPool::acquire): every field back to a new task's.
  void start(int32_t task_priority, int64_t task_custom_id, int32_t task_core_mask);
  // A sub-task slot after the task's sub-tasks, with the storage of an earlier use if there is
  // one; the caller fills every field. std::bad_alloc leaves the task as it was.
  SubTask& add_subtask();

  // The task holds its models (hbDNNRelease refuses them) until it is both released by the user
  // and not running: called by hbDNNReleaseTask and by the worker at the end, under `mutex`.
  void release_models_if_idle_locked();

  int32_t priority = 0;
  int64_t custom_id = 0;
  int32_t core_mask = 0;
  uint64_t sequence = 0;
  // Under the scheduler's mutex: a worker took it from the ready queue once; its place in the
  // ready queue (an intrusive list, so queueing never allocates) and the queue's hold on it.
  bool taken = false;
  Task* next_ready = nullptr;
  std::shared_ptr<Task> queued;
  // The task's sub-tasks are the first subtask_count (the rest keep storage for reuse).
  std::vector<SubTask> subtasks;
  size_t subtask_count = 0;
  std::atomic<bool> cancelled{false};
  // Progress, the running worker's or (while a BPU job is in flight) the job's:
  size_t next_subtask = 0;
  Inference inference;
  std::shared_ptr<Task> in_flight;  // holds the task while its BPU job runs
  // The UCP API (api_ucp.cc): the function hbUCPSetTaskDoneCb set, called with the task's
  // status (UCP code) on the worker once the task is done, unless it was released; and the
  // flush check (OPENBPU_UCP_CHECK_FLUSH at hbUCPSubmitTask): the outputs' cached memory is
  // hidden from the CPU until invalidated (MemoryRegistry::hide_until_invalidated).
  ucp::TaskDoneCb done_callback = nullptr;
  void* done_userdata = nullptr;
  bool check_flush = false;
  // Profiling (null when off): set by hbDNNInfer at submission, `started` by the worker.
  Profiler* profiler = nullptr;
  ProfilerClock::time_point submitted, started;

  // Under mutex:
  State state = State::kOpen;
  bool released = false;         // hbDNNReleaseTask was called
  bool models_released = false;  // the hold on the models was dropped
  bool live_handle = false;      // under the registry's mutex: a handle the user holds
  int32_t status = HB_DNN_SUCCESS;
  std::string message;
  std::mutex mutex;
  std::condition_variable finished;
};

// All tasks ever made (never freed: a stale reference of the scheduler is harmless) and the
// free ones. A task goes back when the user has released it and the scheduler is done with it
// (never submitted, withdrawn, skipped, or finished): whichever of hbDNNReleaseTask and the
// worker sees both last gives it back.
class TaskPool {
 public:
  static TaskPool& instance();
  // A free task, started with these parameters, or a new one (std::bad_alloc).
  std::shared_ptr<Task> acquire(int32_t priority, int64_t custom_id, int32_t core_mask);
  void give_back(Task* task) noexcept;
  // The task of a handle the user holds (live_handle, read under the registry's mutex), or null.
  std::shared_ptr<Task> find(const void* handle);

 private:
  std::mutex mutex_;
  std::vector<std::shared_ptr<Task>> all_;
  std::vector<Task*> free_;  // capacity all_.size(): give_back never allocates
};

class Scheduler {
 public:
  // The process's scheduler; its worker threads run until the process exits.
  static Scheduler& instance();

  // Queues a task whose sub-tasks are complete.
  void submit(const std::shared_ptr<Task>& task);
  // Removes a queued task that has not started (true), or returns false.
  bool withdraw(const std::shared_ptr<Task>& task);

 private:
  Scheduler();
  void run_worker();
  // Runs the task on until its next BPU job is in flight or it ends.
  void step(const std::shared_ptr<Task>& task);
  static void finish(Task& task, int32_t status, std::string message);
  static void hide_outputs(Task& task);  // the flush check (Task::check_flush)
  // A BPU job's completion (BpuJobDone, on the device's thread): the task is ready again.
  static void bpu_job_done(void* task, uint64_t job, const char* failure);

  std::mutex mutex_;
  // Ready tasks, in no particular order (a worker picks the first by before()); a task is in
  // it at most once.
  void push_locked(std::shared_ptr<Task> task);
  std::shared_ptr<Task> pop_best_locked();  // the list is not empty
  Task* ready_ = nullptr;
  std::condition_variable has_ready_;
  uint64_t next_sequence_ = 1;
};

}  // namespace openbpu::dnn
