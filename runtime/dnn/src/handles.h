// The library's live objects behind both C API generations (hb_dnn.h and hobot/dnn/hb_dnn.h):
// packed handles and their models, tasks handed to the user, and the steps both generations
// share (load, release, append sub-tasks, submit). Every function throws ApiError with the
// classic status code and the detail; the entry points translate codes for their generation.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "error.h"
#include "model.h"
#include "openbpu/format/model_file.h"
#include "scheduler.h"

namespace openbpu::dnn {

// A packed handle: the models of one hbDNNInitializeFrom* call and the files they came from.
struct Package {
  std::vector<format::ModelFile> files;
  std::vector<std::unique_ptr<Model>> models;
  std::vector<const char*> names;
  std::vector<std::string> descriptions;  // per file, hbDNNGetHBMDesc's JSON
};

struct Registry {
  std::mutex mutex;
  std::map<void*, std::unique_ptr<Package>> packages;
  std::set<void*> models;
  size_t live_tasks = 0;  // task handles the user holds (TaskPool, Task::live_handle)
  size_t model_count = 0;
};

Registry& registry();  // never destroyed: handles may outlive static teardown

// Loads and verifies model files (or whole files in memory) into a registered package; returns
// its handle. `what` names the arguments in errors ("modelFileNames", "modelData").
void* load_files(const char** file_names, int32_t count);
void* load_buffers(const void** data, const int32_t* lengths, int32_t count);
// The model names of a packed handle (owned by it) and a model's handle by name (the error
// lists the models there are).
void model_name_list(void* packed, const char*** names, int32_t* count);
void* model_handle(void* packed, const char* name);
// Unregisters and frees a package (HB_DNN_MODEL_IS_RUNNING while a task of it exists).
void release_package(void* handle);

// Look-ups; the caller holds r.mutex.
Package& package_of(Registry& r, void* handle);
Model& model_of(Registry& r, void* handle);
std::shared_ptr<Task> task_of(Registry& r, void* handle);
const Model& model_of(void* handle);  // locks the registry

template <typename T>
void require(const T* p, const char* what) {
  if (p == nullptr) fail(HB_DNN_INVALID_ARGUMENT, what, " is NULL");
}
void check_index(int32_t index, size_t count, const char* what);

// How a task is scheduled once submitted.
struct TaskParams {
  int32_t priority = 0;
  int64_t custom_id = 0;
  int32_t core_mask = 0;  // hbBPUCore bits of the model's platform; 0 = any
};

// Appends checked sub-tasks to the open task *taskHandle, or to a new task (from the pool,
// with `params`), copying them into the task's reused storage, and returns the task. The caller
// holds r.mutex and submits the task (submit_task) or leaves it open for more sub-tasks.
std::shared_ptr<Task> add_subtasks(Registry& r, void** task_handle, const TaskParams& params, Model& model,
                                   std::span<const SubTask> subs);
// The checked sub-tasks of one ROI inference (hbDNNRoiInfer's rules, hb_dnn.h): roiCount / R
// batches (R resizer inputs), batch b with inputs input[b·n, (b+1)·n), ROIs rois[b·R, (b+1)·R)
// and output i's slice at b · alignedByteSize of output[i]. Staged per thread: valid until the
// thread's next call.
std::span<const SubTask> roi_subtasks(Model& model, const hbDNNTensor* input, const hbDNNRoi* rois, int32_t roiCount,
                                      const hbDNNTensor* output);
// Queues an open task (its profiling starts here).
void submit_task(const std::shared_ptr<Task>& task);
// Waits for a submitted task (timeout <= 0: forever); throws its failure.
void wait_task(void* task_handle, int32_t timeout);
// Releases a task handle: cancels or stops the task, the pool takes it back when idle.
void release_task(void* task_handle);

}  // namespace openbpu::dnn
