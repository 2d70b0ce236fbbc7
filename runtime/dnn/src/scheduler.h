// Tasks and the scheduler behind hbDNNInfer / hbDNNWaitTaskDone / hbDNNReleaseTask.
//
// A task is one or more sub-tasks (one model inference each, appended with `more`), run in
// order by one worker thread. Submitted tasks wait in one queue ordered by priority (higher
// first), then customId (smaller first), then submission order; a pool of worker threads takes
// the first. BPU segments go to a core of the model's platform (the bpuCoreId mask, or the
// least busy core); CPU segments run on the worker itself.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
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
  std::vector<SubTask> subtasks;
  std::atomic<bool> cancelled{false};
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
  static void execute(Task& task);

  std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<std::shared_ptr<Task>> queue_;
  uint64_t next_sequence_ = 1;
};

}  // namespace openbpu::dnn
