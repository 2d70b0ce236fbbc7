// The hbDNN C API (dnn/hb_dnn.h): argument and handle checks, then the library's objects.
// Every entry point catches everything (design invariant 4): ApiError becomes its code, a
// failed allocation HB_DNN_OUT_OF_MEMORY, anything else HB_DNN_RUN_TASK_FAILED.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "dnn/hb_dnn.h"
#include "dnn/openbpu_profiler.h"
#include "error.h"
#include "model.h"
#include "openbpu/format/model_file.h"
#include "platform.h"
#include "profiler.h"
#include "scheduler.h"

#ifndef OPENBPU_VERSION_STRING
#define OPENBPU_VERSION_STRING "unknown"
#endif

namespace openbpu::dnn {

namespace {

constexpr size_t kMaxModels = 512;  // models loaded at once (HB_DNN_MODEL_NUMBER_EXCEED_LIMIT)

struct LastError {
  int32_t code = 0;
  std::string detail;
  std::string text;  // what hbDNNGetErrorDesc returned last
};
thread_local LastError last_error;

// HB_DNN_LOG_LEVEL: 0 none, 1..3 (debug/info/warning) print errors too, 4 errors, 5 fatal only.
int log_level() {
  static const int level = [] {
    const char* v = std::getenv("HB_DNN_LOG_LEVEL");
    if (v == nullptr || *v == 0) return 3;
    return static_cast<int>(std::strtol(v, nullptr, 10));
  }();
  return level;
}

// A packed handle: the models of one hbDNNInitializeFrom* call and the files they came from.
struct Package {
  std::vector<format::ModelFile> files;
  std::vector<std::unique_ptr<Model>> models;
  std::vector<const char*> names;
};

struct Registry {
  std::mutex mutex;
  std::map<void*, std::unique_ptr<Package>> packages;
  std::set<void*> models;
  size_t live_tasks = 0;  // task handles the user holds (TaskPool, Task::live_handle)
  size_t model_count = 0;
};

Registry& registry() {
  static Registry& r = *new Registry;  // never destroyed: handles may outlive static teardown
  return r;
}

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

// Looks a packed handle up; the caller holds the registry lock.
Package& package_of(Registry& r, hbPackedDNNHandle_t handle) {
  auto it = r.packages.find(handle);
  if (handle == nullptr || it == r.packages.end()) {
    fail(HB_DNN_INVALID_PACKED_DNN_HANDLE, "packedDNNHandle is not a loaded packed handle (NULL, released, or never returned)");
  }
  return *it->second;
}

// Looks a model handle up; the caller holds the registry lock.
Model& model_of(Registry& r, hbDNNHandle_t handle) {
  if (handle == nullptr || r.models.count(handle) == 0) {
    fail(HB_DNN_INVALID_DNN_HANDLE, "dnnHandle is not a model handle of a loaded packed handle (NULL, released, or never returned)");
  }
  return *static_cast<Model*>(handle);
}

const Model& model_of(hbDNNHandle_t handle) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return model_of(r, handle);
}

template <typename T>
void require(const T* p, const char* what) {
  if (p == nullptr) fail(HB_DNN_INVALID_ARGUMENT, what, " is NULL");
}

void check_index(int32_t index, size_t count, const char* what) {
  if (index < 0 || static_cast<size_t>(index) >= count) {
    fail(HB_DNN_INVALID_ARGUMENT, what, " index ", index, " is out of range [0, ", count, ")");
  }
}

// Called with the registry locked.
std::shared_ptr<Task> task_of(Registry& /*r*/, hbDNNTaskHandle_t handle) {
  std::shared_ptr<Task> task = handle == nullptr ? nullptr : TaskPool::instance().find(handle);
  if (task == nullptr) {
    fail(HB_DNN_INVALID_TASK_HANDLE, "taskHandle is not a live task (NULL, released, or never returned by hbDNNInfer)");
  }
  return task;
}

}  // namespace

const char* status_text(int32_t code) noexcept {
  switch (code) {
    case HB_DNN_SUCCESS: return "success";
    case HB_DNN_INVALID_ARGUMENT: return "invalid argument";
    case HB_DNN_INVALID_MODEL: return "invalid model";
    case HB_DNN_MODEL_NUMBER_EXCEED_LIMIT: return "model number exceeds the limit";
    case HB_DNN_INVALID_PACKED_DNN_HANDLE: return "invalid packed DNN handle";
    case HB_DNN_INVALID_DNN_HANDLE: return "invalid DNN handle";
    case HB_DNN_CAN_NOT_OPEN_FILE: return "can not open file";
    case HB_DNN_OUT_OF_MEMORY: return "out of memory";
    case HB_DNN_TIMEOUT: return "timeout";
    case HB_DNN_TASK_NUM_EXCEED_LIMIT: return "task number exceeds the limit";
    case HB_DNN_TASK_BATCH_SIZE_EXCEED_LIMIT: return "task batch size exceeds the limit";
    case HB_DNN_INVALID_TASK_HANDLE: return "invalid task handle";
    case HB_DNN_RUN_TASK_FAILED: return "run task failed";
    case HB_DNN_MODEL_IS_RUNNING: return "model is running";
    case HB_DNN_INCOMPATIBLE_MODEL: return "incompatible model";
    case HB_DNN_API_USE_ERROR: return "API use error";
    case HB_DNN_MULTI_PROGRESS_USE_ERROR: return "multi-process use error";
    case HB_SYS_INVALID_ARGUMENT: return "hbSys: invalid argument";
    case HB_SYS_OUT_OF_MEMORY: return "hbSys: out of memory";
    case HB_SYS_REGISTER_MEM_FAILED: return "hbSys: register memory failed";
    default: return nullptr;
  }
}

int32_t report(const char* fn, int32_t code, std::string_view detail, std::string_view prefix) noexcept {
  last_error.code = code;
  try {
    last_error.detail = base::str_cat(fn, ": ", prefix, detail);
  } catch (...) {
    last_error.detail.clear();
  }
  if (log_level() > 0 && log_level() <= 4) {
    std::fprintf(stderr, "[E][DNN][%s] %.*s%.*s\n", fn, static_cast<int>(prefix.size()), prefix.data(),
                 static_cast<int>(detail.size()), detail.data());
  }
  return code;
}

}  // namespace openbpu::dnn

using namespace openbpu::dnn;  // NOLINT: the C entry points below are thin wrappers

extern "C" {

const char* hbDNNGetVersion(void) {
  static const std::string version = std::to_string(HB_DNN_VERSION_MAJOR) + "." + std::to_string(HB_DNN_VERSION_MINOR) + "." +
                                     std::to_string(HB_DNN_VERSION_PATCH) + "_(OpenBPU " OPENBPU_VERSION_STRING ")";
  return version.c_str();
}

const char* hbDNNGetErrorDesc(int32_t errorCode) {
  try {
    const char* text = status_text(errorCode);
    std::string out = text != nullptr ? text : "unknown status " + std::to_string(errorCode);
    if (errorCode != 0 && last_error.code == errorCode && !last_error.detail.empty()) out += ": " + last_error.detail;
    last_error.text = std::move(out);
    return last_error.text.c_str();
  } catch (...) {
    return "out of memory while describing the status";
  }
}

int32_t hbDNNInitializeFromFiles(hbPackedDNNHandle_t* packedDNNHandle, const char** modelFileNames, int32_t modelFileCount) {
  return guarded("hbDNNInitializeFromFiles", [&] {
    require(packedDNNHandle, "packedDNNHandle");
    require(modelFileNames, "modelFileNames");
    if (modelFileCount <= 0) fail(HB_DNN_INVALID_ARGUMENT, "modelFileCount ", modelFileCount, " must be > 0");
    std::vector<openbpu::format::ModelFile> files(static_cast<size_t>(modelFileCount));
    std::vector<std::string> sources;
    for (int32_t i = 0; i < modelFileCount; ++i) {
      if (modelFileNames[i] == nullptr) fail(HB_DNN_INVALID_ARGUMENT, "modelFileNames[", i, "] is NULL");
      sources.emplace_back(modelFileNames[i]);
      const openbpu::format::Status st = openbpu::format::ModelFile::load(sources.back(), &files[static_cast<size_t>(i)]);
      if (!st.ok()) fail(format_status_code(st), st.message);
    }
    *packedDNNHandle = load_package(std::move(files), sources);
  });
}

int32_t hbDNNInitializeFromDDR(hbPackedDNNHandle_t* packedDNNHandle, const void** modelData, int32_t* modelDataLengths,
                               int32_t modelDataCount) {
  return guarded("hbDNNInitializeFromDDR", [&] {
    require(packedDNNHandle, "packedDNNHandle");
    require(modelData, "modelData");
    require(modelDataLengths, "modelDataLengths");
    if (modelDataCount <= 0) fail(HB_DNN_INVALID_ARGUMENT, "modelDataCount ", modelDataCount, " must be > 0");
    std::vector<openbpu::format::ModelFile> files(static_cast<size_t>(modelDataCount));
    std::vector<std::string> sources;
    for (int32_t i = 0; i < modelDataCount; ++i) {
      if (modelData[i] == nullptr) fail(HB_DNN_INVALID_ARGUMENT, "modelData[", i, "] is NULL");
      if (modelDataLengths[i] <= 0) fail(HB_DNN_INVALID_ARGUMENT, "modelDataLengths[", i, "] ", modelDataLengths[i], " must be > 0");
      sources.push_back("modelData[" + std::to_string(i) + "]");
      const std::span<const uint8_t> bytes(static_cast<const uint8_t*>(modelData[i]), static_cast<size_t>(modelDataLengths[i]));
      const openbpu::format::Status st = openbpu::format::ModelFile::from_bytes(bytes, &files[static_cast<size_t>(i)]);
      if (!st.ok()) fail(format_status_code(st), sources.back(), ": ", st.message);
    }
    *packedDNNHandle = load_package(std::move(files), sources);
  });
}

int32_t hbDNNRelease(hbPackedDNNHandle_t packedDNNHandle) {
  return guarded("hbDNNRelease", [&] {
    std::unique_ptr<Package> package;
    bool last = false;
    {
      Registry& r = registry();
      std::lock_guard<std::mutex> lock(r.mutex);
      auto it = r.packages.find(packedDNNHandle);
      if (packedDNNHandle == nullptr || it == r.packages.end()) {
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
  });
}

int32_t hbDNNGetModelNameList(const char*** modelNameList, int32_t* modelNameCount, hbPackedDNNHandle_t packedDNNHandle) {
  return guarded("hbDNNGetModelNameList", [&] {
    require(modelNameList, "modelNameList");
    require(modelNameCount, "modelNameCount");
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    Package& package = package_of(r, packedDNNHandle);
    *modelNameList = package.names.data();
    *modelNameCount = static_cast<int32_t>(package.names.size());
  });
}

int32_t hbDNNGetModelHandle(hbDNNHandle_t* dnnHandle, hbPackedDNNHandle_t packedDNNHandle, const char* modelName) {
  return guarded("hbDNNGetModelHandle", [&] {
    require(dnnHandle, "dnnHandle");
    require(modelName, "modelName");
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    const Package& package = package_of(r, packedDNNHandle);
    for (const auto& m : package.models) {
      if (m->name() == modelName) {
        *dnnHandle = m.get();
        return;
      }
    }
    std::string known;
    for (const char* n : package.names) known += (known.empty() ? "" : ", ") + std::string(n);
    fail(HB_DNN_INVALID_ARGUMENT, "no model named '", modelName, "' in the packed handle (models: ", known, ")");
  });
}

int32_t hbDNNGetInputCount(int32_t* inputCount, hbDNNHandle_t dnnHandle) {
  return guarded("hbDNNGetInputCount", [&] {
    require(inputCount, "inputCount");
    *inputCount = static_cast<int32_t>(model_of(dnnHandle).inputs().size());
  });
}

int32_t hbDNNGetOutputCount(int32_t* outputCount, hbDNNHandle_t dnnHandle) {
  return guarded("hbDNNGetOutputCount", [&] {
    require(outputCount, "outputCount");
    *outputCount = static_cast<int32_t>(model_of(dnnHandle).outputs().size());
  });
}

int32_t hbDNNGetInputName(const char** name, hbDNNHandle_t dnnHandle, int32_t inputIndex) {
  return guarded("hbDNNGetInputName", [&] {
    require(name, "name");
    const Model& m = model_of(dnnHandle);
    check_index(inputIndex, m.inputs().size(), "input");
    *name = m.inputs()[static_cast<size_t>(inputIndex)].name.c_str();
  });
}

int32_t hbDNNGetInputSource(int32_t* inputSource, hbDNNHandle_t dnnHandle, int32_t inputIndex) {
  return guarded("hbDNNGetInputSource", [&] {
    require(inputSource, "inputSource");
    const Model& m = model_of(dnnHandle);
    check_index(inputIndex, m.inputs().size(), "input");
    *inputSource = m.inputs()[static_cast<size_t>(inputIndex)].source;
  });
}

int32_t hbDNNGetOutputName(const char** name, hbDNNHandle_t dnnHandle, int32_t outputIndex) {
  return guarded("hbDNNGetOutputName", [&] {
    require(name, "name");
    const Model& m = model_of(dnnHandle);
    check_index(outputIndex, m.outputs().size(), "output");
    *name = m.outputs()[static_cast<size_t>(outputIndex)].name.c_str();
  });
}

int32_t hbDNNGetInputTensorProperties(hbDNNTensorProperties* properties, hbDNNHandle_t dnnHandle, int32_t inputIndex) {
  return guarded("hbDNNGetInputTensorProperties", [&] {
    require(properties, "properties");
    const Model& m = model_of(dnnHandle);
    check_index(inputIndex, m.inputs().size(), "input");
    *properties = m.inputs()[static_cast<size_t>(inputIndex)].properties;
  });
}

int32_t hbDNNGetOutputTensorProperties(hbDNNTensorProperties* properties, hbDNNHandle_t dnnHandle, int32_t outputIndex) {
  return guarded("hbDNNGetOutputTensorProperties", [&] {
    require(properties, "properties");
    const Model& m = model_of(dnnHandle);
    check_index(outputIndex, m.outputs().size(), "output");
    *properties = m.outputs()[static_cast<size_t>(outputIndex)].properties;
  });
}

namespace {

// Checks the control parameters of hbDNNInfer / hbDNNRoiInfer against `model`'s platform.
void check_ctrl(const hbDNNInferCtrlParam& p, const Model& model) {
  if (p.priority < HB_DNN_PRIORITY_LOWEST || p.priority > HB_DNN_PRIORITY_HIGHEST) {
    fail(HB_DNN_INVALID_ARGUMENT, "inferCtrlParam->priority ", p.priority, " is outside [0, 255]");
  }
  const int32_t all = all_cores_mask(model.platform().cores());
  if ((p.bpuCoreId & ~all) != 0) {
    fail(HB_DNN_INVALID_ARGUMENT, "inferCtrlParam->bpuCoreId ", p.bpuCoreId, " names a core this BPU (", model.platform().chip().march,
         ", ", model.platform().cores(), " core(s)) does not have");
  }
}

// Appends checked sub-tasks to the open task *taskHandle, or to a new task (from the pool);
// submits the task unless p.more. The sub-tasks are copied into the task's reused storage.
// Called with the registry locked.
void add_subtasks(Registry& r, hbDNNTaskHandle_t* taskHandle, const hbDNNInferCtrlParam& p, Model& model,
                  std::span<const SubTask> subs) {
  std::shared_ptr<Task> task;
  const bool fresh = *taskHandle == nullptr;
  if (!fresh) {
    task = task_of(r, *taskHandle);
    std::lock_guard<std::mutex> task_lock(task->mutex);
    if (task->state != Task::State::kOpen) {
      fail(HB_DNN_INVALID_TASK_HANDLE, "*taskHandle was already submitted (only a task created with more = 1 takes more sub-tasks); ",
           "set *taskHandle to NULL for a new task");
    }
    if (task->subtask_count + subs.size() > HB_DNN_MAX_SUB_TASK_NUM) {
      fail(HB_DNN_TASK_BATCH_SIZE_EXCEED_LIMIT, "a task holds at most ", HB_DNN_MAX_SUB_TASK_NUM, " sub-tasks");
    }
  } else {
    if (r.live_tasks >= HB_DNN_MAX_TASK_NUM) {
      fail(HB_DNN_TASK_NUM_EXCEED_LIMIT, HB_DNN_MAX_TASK_NUM, " tasks exist; release finished tasks with hbDNNReleaseTask first");
    }
    task = TaskPool::instance().acquire(p.priority, p.customId, p.bpuCoreId);
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
  *taskHandle = task.get();
  if (p.more == 0) {
    if (Profiler* profiler = model.profiler()) {
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
}

}  // namespace

int32_t hbDNNInfer(hbDNNTaskHandle_t* taskHandle, hbDNNTensor** output, const hbDNNTensor* input, hbDNNHandle_t dnnHandle,
                   hbDNNInferCtrlParam* inferCtrlParam) {
  return guarded("hbDNNInfer", [&] {
    require(taskHandle, "taskHandle");
    require(output, "output");
    require(input, "input");
    require(inferCtrlParam, "inferCtrlParam");
    const hbDNNInferCtrlParam& p = *inferCtrlParam;
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    Model& model = model_of(r, dnnHandle);
    check_ctrl(p, model);
    if (*output == nullptr && !model.outputs().empty()) fail(HB_DNN_INVALID_ARGUMENT, "*output is NULL");
    model.check_tensors(input, *output);
    // Staging kept per thread: its lists keep their storage from one call to the next.
    thread_local SubTask sub;
    sub.model = &model;
    sub.inputs.assign(input, input + model.input_tensor_count(input));
    sub.outputs.clear();
    if (!model.outputs().empty()) sub.outputs.assign(*output, *output + model.outputs().size());
    sub.rois.clear();
    add_subtasks(r, taskHandle, p, model, std::span<const SubTask>(&sub, 1));
  });
}

int32_t hbDNNRoiInfer(hbDNNTaskHandle_t* taskHandle, hbDNNTensor** output, const hbDNNTensor* input, hbDNNRoi* rois,
                      int32_t roiCount, hbDNNHandle_t dnnHandle, hbDNNInferCtrlParam* inferCtrlParam) {
  return guarded("hbDNNRoiInfer", [&] {
    require(taskHandle, "taskHandle");
    require(output, "output");
    require(input, "input");
    require(rois, "rois");
    require(inferCtrlParam, "inferCtrlParam");
    const hbDNNInferCtrlParam& p = *inferCtrlParam;
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    Model& model = model_of(r, dnnHandle);
    check_ctrl(p, model);
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
    if (*output == nullptr && !model.outputs().empty()) fail(HB_DNN_INVALID_ARGUMENT, "*output is NULL");
    // Output i holds every batch's result, batch b at b · alignedByteSize.
    for (size_t i = 0; i < model.outputs().size(); ++i) {
      const hbDNNTensor& t = (*output)[i];
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
        hbDNNTensor t = (*output)[i];
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
    add_subtasks(r, taskHandle, p, model, std::span<const SubTask>(subs.data(), batches));
  });
}

int32_t hbDNNWaitTaskDone(hbDNNTaskHandle_t taskHandle, int32_t timeout) {
  return guarded("hbDNNWaitTaskDone", [&] {
    std::shared_ptr<Task> task;
    {
      Registry& r = registry();
      std::lock_guard<std::mutex> lock(r.mutex);
      task = task_of(r, taskHandle);
    }
    std::unique_lock<std::mutex> lock(task->mutex);
    if (task->state == Task::State::kOpen) {
      fail(HB_DNN_API_USE_ERROR, "the task is still open for sub-tasks (the last hbDNNInfer had more = 1); submit with more = 0 first");
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
  });
}

int32_t hbDNNReleaseTask(hbDNNTaskHandle_t taskHandle) {
  return guarded("hbDNNReleaseTask", [&] {
    std::shared_ptr<Task> task;
    {
      Registry& r = registry();
      std::lock_guard<std::mutex> lock(r.mutex);
      task = task_of(r, taskHandle);
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
  });
}

int32_t openbpuDNNProfilerSetRunningCondition(const char* modelName, int32_t coreId, int64_t frameCount, double runTimeMs,
                                              int32_t threadNum, double averageLatencyMs, double fps) {
  return guarded("openbpuDNNProfilerSetRunningCondition", [&] {
    require(modelName, "modelName");
    Profiler* profiler = Profiler::active();
    if (profiler == nullptr) return;
    RunningCondition rc;
    rc.model_name = modelName;
    rc.core_id = coreId;
    rc.frame_count = frameCount;
    rc.run_time_ms = runTimeMs;
    rc.thread_num = threadNum;
    rc.average_latency_ms = averageLatencyMs;
    rc.fps = fps;
    profiler->set_running_condition(std::move(rc));
  });
}

int32_t openbpuDNNProfilerFlush(void) {
  return guarded("openbpuDNNProfilerFlush", [&] {
    Profiler* profiler = Profiler::active();
    if (profiler == nullptr) {
      fail(HB_DNN_API_USE_ERROR, "the profiler is off (HB_DNN_PROFILER_LOG_PATH was not set when the first model was loaded)");
    }
    const openbpu::format::Status st = profiler->write();
    if (!st.ok()) fail(HB_DNN_CAN_NOT_OPEN_FILE, st.message);
  });
}

}  // extern "C"
