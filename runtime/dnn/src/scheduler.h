// Tasks and the scheduler behind hbDNNInfer / hbDNNWaitTaskDone / hbDNNReleaseTask.
//
// A task is one or more sub-tasks (one model inference each, appended with `more`), run in
// order. Tasks ready to run wait in one queue ordered by priority (higher first), then customId
// (smaller first), then submission order; a pool of worker threads (the CPU executors) takes
// the first and runs its CPU segments until it reaches a BPU segment. That segment goes to the
// queue of a BPU core of the model's platform (the bpuCoreId mask, or the least busy core; each
// core's queue is ordered by priority, and priority 255 preempts at function-call boundaries,
// simulator/device.h) and the worker moves on to another task: no worker waits for the BPU.
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

namespace openbpu::dnn {

struct SubTask {
  Model* model = nullptr;
  std::vector<hbDNNTensor> inputs;   // copies of the user's tensor structs
  std::vector<hbDNNTensor> outputs;
  std::vector<hbDNNRoi> rois;  // hbDNNRoiInfer: one per resizer input (empty: hbDNNInfer)
  const hbDNNRoi* roi_list() const { return rois.empty() ? nullptr : rois.data(); }
};

class Task {
 public:
  enum class State { kOpen, kQueued, kRunning, kDone };

  Task(int32_t priority, int64_t custom_id, int32_t core_mask)
      : priority(priority), custom_id(custom_id), core_mask(core_mask) {}
  ~Task();  // drops the sub-tasks' hold on their models if that has not happened yet

  // The task holds its models (hbDNNRelease refuses them) until it is both released by the user
  // and not running: called by hbDNNReleaseTask and by the worker at the end, under `mutex`.
  void release_models_if_idle_locked();

  const int32_t priority;
  const int64_t custom_id;
  const int32_t core_mask;
  uint64_t sequence = 0;
  // Under the scheduler's mutex: a worker took it from the ready queue once; its place in the
  // ready queue (an intrusive list, so queueing never allocates) and the queue's hold on it.
  bool taken = false;
  Task* next_ready = nullptr;
  std::shared_ptr<Task> queued;
  std::vector<SubTask> subtasks;
  std::atomic<bool> cancelled{false};
  // Progress, the running worker's or (while a BPU job is in flight) the job's:
  size_t next_subtask = 0;
  Inference inference;
  std::shared_ptr<Task> in_flight;  // holds the task while its BPU job runs
  // Profiling (null when off): set by hbDNNInfer at submission, `started` by the worker.
  Profiler* profiler = nullptr;
  ProfilerClock::time_point submitted, started;

  // Under mutex:
  State state = State::kOpen;
  bool released = false;         // hbDNNReleaseTask was called
  bool models_released = false;  // the hold on the models was dropped
  int32_t status = HB_DNN_SUCCESS;
  std::string message;
  std::mutex mutex;
  std::condition_variable finished;
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
  // A BPU job's completion (simulator::JobDone, on the device's thread): the task is ready again.
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
