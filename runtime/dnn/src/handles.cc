// The library's live objects (handles.h).
#include "handles.h"

#include <chrono>

#include "error.h"
#include "profiler.h"

namespace openbpu::dnn {

namespace {

constexpr size_t kMaxModels = 512;  // models loaded at once (HB_DNN_MODEL_NUMBER_EXCEED_LIMIT)

int32_t format_status_code(const format::Status& st) {
  using format::StatusCode;
  switch (st.code) {
    case StatusCode::kCannotOpenFile:
    case StatusCode::kReadFailed: return HB_DNN_CAN_NOT_OPEN_FILE;
    case StatusCode::kOutOfMemory: return HB_DNN_OUT_OF_MEMORY;
    case StatusCode::kUnsupportedFormatVersion:
    case StatusCode::kUnknownSegmentKind: return HB_DNN_INCOMPATIBLE_MODEL;
    default: return HB_DNN_INVALID_MODEL;
  }
}

// Builds a package from verified files; registers it and returns its handle.
void* load_package(std::vector<format::ModelFile> files, const std::vector<std::string>& sources) {
  auto package = std::make_unique<Package>();
  std::set<std::string> names;
  size_t count = 0;
  for (const format::ModelFile& f : files) count += f.package().models()->size();
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.model_count + count > kMaxModels) {
      fail(HB_DNN_MODEL_NUMBER_EXCEED_LIMIT, count, " more models would exceed the limit of ", kMaxModels, " loaded models");
    }
  }
  for (size_t f = 0; f < files.size(); ++f) {
    for (const format::Model* m : *files[f].package().models()) {
      const std::string name = m->name()->str();
      if (!names.insert(name).second) {
        fail(HB_DNN_INVALID_ARGUMENT, "model name '", name, "' of '", sources[f], "' is also in an earlier file; names must be unique");
      }
      package->models.push_back(std::make_unique<Model>(*m, Platform::of(m->march()->str()), sources[f]));
    }
  }
  for (const format::ModelFile& f : files) package->descriptions.push_back(package_description(f.package()));
  package->files = std::move(files);
  for (const auto& m : package->models) package->names.push_back(m->name().c_str());
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.model_count + package->models.size() > kMaxModels) {
    fail(HB_DNN_MODEL_NUMBER_EXCEED_LIMIT, "loading would exceed the limit of ", kMaxModels, " loaded models");
  }
  void* handle = package.get();
  for (const auto& m : package->models) r.models.insert(m.get());
  r.model_count += package->models.size();
  r.packages.emplace(handle, std::move(package));
  return handle;
}

}  // namespace

Registry& registry() {
  static Registry& r = *new Registry;
  return r;
}

void* load_files(const char** file_names, int32_t count) {
  require(file_names, "modelFileNames");
  if (count <= 0) fail(HB_DNN_INVALID_ARGUMENT, "modelFileCount ", count, " must be > 0");
  std::vector<format::ModelFile> files(static_cast<size_t>(count));
  std::vector<std::string> sources;
  for (int32_t i = 0; i < count; ++i) {
    if (file_names[i] == nullptr) fail(HB_DNN_INVALID_ARGUMENT, "modelFileNames[", i, "] is NULL");
    sources.emplace_back(file_names[i]);
    const format::Status st = format::ModelFile::load(sources.back(), &files[static_cast<size_t>(i)]);
    if (!st.ok()) fail(format_status_code(st), st.message);
  }
  return load_package(std::move(files), sources);
}

void* load_buffers(const void** data, const int32_t* lengths, int32_t count) {
  require(data, "modelData");
  require(lengths, "modelDataLengths");
  if (count <= 0) fail(HB_DNN_INVALID_ARGUMENT, "modelDataCount ", count, " must be > 0");
  std::vector<format::ModelFile> files(static_cast<size_t>(count));
  std::vector<std::string> sources;
  for (int32_t i = 0; i < count; ++i) {
    if (data[i] == nullptr) fail(HB_DNN_INVALID_ARGUMENT, "modelData[", i, "] is NULL");
    if (lengths[i] <= 0) fail(HB_DNN_INVALID_ARGUMENT, "modelDataLengths[", i, "] ", lengths[i], " must be > 0");
    sources.push_back("modelData[" + std::to_string(i) + "]");
    const std::span<const uint8_t> bytes(static_cast<const uint8_t*>(data[i]), static_cast<size_t>(lengths[i]));
    const format::Status st = format::ModelFile::from_bytes(bytes, &files[static_cast<size_t>(i)]);
    if (!st.ok()) fail(format_status_code(st), sources.back(), ": ", st.message);
  }
  return load_package(std::move(files), sources);
}

void model_name_list(void* packed, const char*** names, int32_t* count) {
  require(names, "modelNameList");
  require(count, "modelNameCount");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  Package& package = package_of(r, packed);
  *names = package.names.data();
  *count = static_cast<int32_t>(package.names.size());
}

void* model_handle(void* packed, const char* name) {
  require(name, "modelName");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const Package& package = package_of(r, packed);
  for (const auto& m : package.models) {
    if (m->name() == name) return m.get();
  }
  std::string known;
  for (const char* n : package.names) known += (known.empty() ? "" : ", ") + std::string(n);
  fail(HB_DNN_INVALID_ARGUMENT, "no model named '", name, "' in the packed handle (models: ", known, ")");
}

void release_package(void* handle) {
  std::unique_ptr<Package> package;
  bool last = false;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.packages.find(handle);
    if (handle == nullptr || it == r.packages.end()) {
      fail(HB_DNN_INVALID_PACKED_DNN_HANDLE, "packedDNNHandle is not a loaded packed handle (NULL, released, or never returned)");
    }
    for (const auto& m : it->second->models) {
      if (m->live_tasks > 0) {
        fail(HB_DNN_MODEL_IS_RUNNING, "model '", m->name(), "' has ", m->live_tasks.load(), " task(s) not released; release them first");
      }
    }
    package = std::move(it->second);
    r.packages.erase(it);
    for (const auto& m : package->models) r.models.erase(m.get());
    r.model_count -= package->models.size();
    last = r.packages.empty();
  }
  // Destroyed outside the lock: unloading programs waits for the BPU cores.
  package.reset();
  // The profiler's files are written when the last packed handle goes (and at exit).
  if (Profiler* profiler = last ? Profiler::active() : nullptr) profiler->write_or_report();
}

Package& package_of(Registry& r, void* handle) {
  auto it = r.packages.find(handle);
  if (handle == nullptr || it == r.packages.end()) {
    fail(HB_DNN_INVALID_PACKED_DNN_HANDLE, "packedDNNHandle is not a loaded packed handle (NULL, released, or never returned)");
  }
  return *it->second;
}

Model& model_of(Registry& r, void* handle) {
  if (handle == nullptr || r.models.count(handle) == 0) {
    fail(HB_DNN_INVALID_DNN_HANDLE, "dnnHandle is not a model handle of a loaded packed handle (NULL, released, or never returned)");
  }
  return *static_cast<Model*>(handle);
}

const Model& model_of(void* handle) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return model_of(r, handle);
}

std::shared_ptr<Task> task_of(Registry& /*r*/, void* handle) {
  std::shared_ptr<Task> task = handle == nullptr ? nullptr : TaskPool::instance().find(handle);
  if (task == nullptr) {
    fail(HB_DNN_INVALID_TASK_HANDLE, "taskHandle is not a live task (NULL, released, or never returned by an inference call)");
  }
  return task;
}

void check_index(int32_t index, size_t count, const char* what) {
  if (index < 0 || static_cast<size_t>(index) >= count) {
    fail(HB_DNN_INVALID_ARGUMENT, what, " index ", index, " is out of range [0, ", count, ")");
  }
}

std::shared_ptr<Task> add_subtasks(Registry& r, void** task_handle, const TaskParams& params, Model& model,
                                   std::span<const SubTask> subs) {
  std::shared_ptr<Task> task;
  const bool fresh = *task_handle == nullptr;
  if (!fresh) {
    task = task_of(r, *task_handle);
    std::lock_guard<std::mutex> task_lock(task->mutex);
    if (task->state != Task::State::kOpen) {
      fail(HB_DNN_INVALID_TASK_HANDLE, "*taskHandle was already submitted (only a task not yet submitted takes more sub-tasks); ",
           "set *taskHandle to NULL for a new task");
    }
    if (task->subtask_count + subs.size() > HB_DNN_MAX_SUB_TASK_NUM) {
      fail(HB_DNN_TASK_BATCH_SIZE_EXCEED_LIMIT, "a task holds at most ", HB_DNN_MAX_SUB_TASK_NUM, " sub-tasks");
    }
  } else {
    if (r.live_tasks >= HB_DNN_MAX_TASK_NUM) {
      fail(HB_DNN_TASK_NUM_EXCEED_LIMIT, HB_DNN_MAX_TASK_NUM, " tasks exist; release finished tasks first");
    }
    task = TaskPool::instance().acquire(params.priority, params.custom_id, params.core_mask);
  }
  const size_t before = task->subtask_count;
  try {
    for (const SubTask& sub : subs) {
      SubTask& slot = task->add_subtask();
      slot.model = sub.model;
      slot.inputs.assign(sub.inputs.begin(), sub.inputs.end());
      slot.outputs.assign(sub.outputs.begin(), sub.outputs.end());
      slot.rois.assign(sub.rois.begin(), sub.rois.end());
    }
  } catch (...) {
    task->subtask_count = before;
    if (fresh) TaskPool::instance().give_back(task.get());
    throw;
  }
  model.live_tasks += static_cast<int>(subs.size());
  if (fresh) {
    task->live_handle = true;
    ++r.live_tasks;
  }
  *task_handle = task.get();
  return task;
}

std::span<const SubTask> roi_subtasks(Model& model, const hbDNNTensor* input, const hbDNNRoi* rois, int32_t roiCount,
                                      const hbDNNTensor* output) {
  const size_t resizers = model.resizer_inputs().size();
  if (resizers == 0) {
    fail(HB_DNN_INCOMPATIBLE_MODEL, "model '", model.name(), "' has no resizer input (input_source: resizer); use hbDNNInfer");
  }
  for (const TensorPort& port : model.inputs()) {
    if (port.properties.validShape.numDimensions < 1 || port.properties.validShape.dimensionSize[0] != 1) {
      fail(HB_DNN_INCOMPATIBLE_MODEL, "model '", model.name(), "': input '", port.name, "' has batch ",
           port.properties.validShape.dimensionSize[0], "; hbDNNRoiInfer runs models of batch 1, one per ROI batch");
    }
  }
  if (roiCount <= 0 || static_cast<size_t>(roiCount) % resizers != 0) {
    fail(HB_DNN_INVALID_ARGUMENT, "roiCount ", roiCount, " must be a positive multiple of the model's ", resizers,
         " resizer input(s) (one ROI per resizer input and batch)");
  }
  const size_t batches = static_cast<size_t>(roiCount) / resizers;
  if (batches > HB_DNN_MAX_SUB_TASK_NUM) {
    fail(HB_DNN_TASK_BATCH_SIZE_EXCEED_LIMIT, roiCount, " ROIs make ", batches, " batches; a task holds at most ",
         HB_DNN_MAX_SUB_TASK_NUM);
  }
  if (output == nullptr && !model.outputs().empty()) fail(HB_DNN_INVALID_ARGUMENT, "*output is NULL");
  // Output i holds every batch's result, batch b at b · alignedByteSize.
  for (size_t i = 0; i < model.outputs().size(); ++i) {
    const hbDNNTensor& t = output[i];
    const int64_t item = model.outputs()[i].properties.alignedByteSize;
    if (t.sysMem[0].memSize < item * static_cast<int64_t>(batches)) {
      fail(HB_DNN_INVALID_ARGUMENT, "output ", i, " ('", model.outputs()[i].name, "'): sysMem[0].memSize ", t.sysMem[0].memSize,
           " cannot hold ", batches, " batches of ", item, " bytes (alignedByteSize)");
    }
  }
  thread_local std::vector<SubTask> subs;  // staging, as hbDNNInfer's
  if (subs.size() < batches) subs.resize(batches);
  for (size_t b = 0; b < batches; ++b) {
    SubTask& sub = subs[b];
    sub.model = &model;
    sub.outputs.clear();
    const size_t n = model.inputs().size();
    sub.inputs.assign(input + b * n, input + (b + 1) * n);
    sub.rois.assign(rois + b * resizers, rois + (b + 1) * resizers);
    model.check_roi_inputs(sub.inputs.data(), sub.rois.data(), b);
    for (size_t i = 0; i < model.outputs().size(); ++i) {
      hbDNNTensor t = output[i];
      const int32_t item = model.outputs()[i].properties.alignedByteSize;
      if (t.properties.tensorType != model.outputs()[i].properties.tensorType) {
        fail(HB_DNN_INVALID_ARGUMENT, "output ", i, " ('", model.outputs()[i].name, "'): tensorType ", t.properties.tensorType,
             " differs from the model's ", model.outputs()[i].properties.tensorType);
      }
      t.properties = model.outputs()[i].properties;
      if (t.sysMem[0].virAddr != nullptr) t.sysMem[0].virAddr = static_cast<uint8_t*>(t.sysMem[0].virAddr) + b * static_cast<size_t>(item);
      t.sysMem[0].phyAddr += b * static_cast<uint64_t>(item);
      t.sysMem[0].memSize = static_cast<uint32_t>(item);
      sub.outputs.push_back(t);
    }
    model.check_outputs(sub.outputs.data());
  }
  return std::span<const SubTask>(subs.data(), batches);
}

void submit_task(const std::shared_ptr<Task>& task) {
  if (Profiler* profiler = task->subtask_count > 0 ? task->subtasks[0].model->profiler() : nullptr) {
    task->profiler = profiler;
    task->submitted = ProfilerClock::now();
    profiler->task_submitted(task->submitted);
  }
  {
    std::lock_guard<std::mutex> task_lock(task->mutex);
    task->state = Task::State::kQueued;
  }
  Scheduler::instance().submit(task);
}

void wait_task(void* task_handle, int32_t timeout) {
  std::shared_ptr<Task> task;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    task = task_of(r, task_handle);
  }
  std::unique_lock<std::mutex> lock(task->mutex);
  if (task->state == Task::State::kOpen) {
    fail(HB_DNN_API_USE_ERROR, "the task was not submitted yet (hbDNNInfer with more = 0, or hbUCPSubmitTask)");
  }
  auto done = [&] { return task->state == Task::State::kDone; };
  if (timeout > 0) {
    if (!task->finished.wait_for(lock, std::chrono::milliseconds(timeout), done)) {
      fail(HB_DNN_TIMEOUT, "the task did not finish within ", timeout, " ms");
    }
  } else {
    task->finished.wait(lock, done);
  }
  if (task->status != HB_DNN_SUCCESS) fail(task->status, task->message);
}

void release_task(void* task_handle) {
  std::shared_ptr<Task> task;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    task = task_of(r, task_handle);
    task->live_handle = false;
    --r.live_tasks;
  }
  task->cancelled = true;
  const bool withdrawn = Scheduler::instance().withdraw(task);
  // A task not running lets go of its models now, a running one when its worker finishes
  // (at its next segment boundary). The task goes back to the pool now if the scheduler is
  // done with it, else when its worker is (Scheduler::finish, or the worker skips it).
  bool reusable = false;
  {
    std::lock_guard<std::mutex> lock(task->mutex);
    task->released = true;
    if (withdrawn) task->state = Task::State::kDone;  // it will not run
    task->release_models_if_idle_locked();
    reusable = task->state == Task::State::kOpen || task->state == Task::State::kDone;
  }
  if (reusable) TaskPool::instance().give_back(task.get());
}

}  // namespace openbpu::dnn
