// The hbDNN C API (dnn/hb_dnn.h): argument and handle checks, then the library's objects
// (handles.h, shared with the UCP generation's entry points in api_ucp.cc).
// Every entry point catches everything (design invariant 4): ApiError becomes its code, a
// failed allocation HB_DNN_OUT_OF_MEMORY, anything else HB_DNN_RUN_TASK_FAILED.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "dnn/hb_dnn.h"
#include "dnn/openbpu_profiler.h"
#include "error.h"
#include "handles.h"
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

void relabel_last_error(int32_t from, int32_t to) noexcept {
  if (last_error.code == from) last_error.code = to;
}

const char* describe_status(int32_t code, const char* text) noexcept {
  try {
    std::string out = text != nullptr ? text : "unknown status " + std::to_string(code);
    if (code != 0 && last_error.code == code && !last_error.detail.empty()) out += ": " + last_error.detail;
    last_error.text = std::move(out);
    return last_error.text.c_str();
  } catch (...) {
    return "out of memory while describing the status";
  }
}

}  // namespace openbpu::dnn

using namespace openbpu::dnn;  // NOLINT: the C entry points below are thin wrappers

extern "C" {

const char* hbDNNGetVersion(void) {
  static const std::string version = std::to_string(HB_DNN_VERSION_MAJOR) + "." + std::to_string(HB_DNN_VERSION_MINOR) + "." +
                                     std::to_string(HB_DNN_VERSION_PATCH) + "_(OpenBPU " OPENBPU_VERSION_STRING ")";
  return version.c_str();
}

const char* hbDNNGetErrorDesc(int32_t errorCode) { return describe_status(errorCode, status_text(errorCode)); }

int32_t hbDNNInitializeFromFiles(hbPackedDNNHandle_t* packedDNNHandle, const char** modelFileNames, int32_t modelFileCount) {
  return guarded("hbDNNInitializeFromFiles", [&] {
    require(packedDNNHandle, "packedDNNHandle");
    *packedDNNHandle = load_files(modelFileNames, modelFileCount);
  });
}

int32_t hbDNNInitializeFromDDR(hbPackedDNNHandle_t* packedDNNHandle, const void** modelData, int32_t* modelDataLengths,
                               int32_t modelDataCount) {
  return guarded("hbDNNInitializeFromDDR", [&] {
    require(packedDNNHandle, "packedDNNHandle");
    *packedDNNHandle = load_buffers(modelData, modelDataLengths, modelDataCount);
  });
}

int32_t hbDNNRelease(hbPackedDNNHandle_t packedDNNHandle) {
  return guarded("hbDNNRelease", [&] { release_package(packedDNNHandle); });
}

int32_t hbDNNGetModelNameList(const char*** modelNameList, int32_t* modelNameCount, hbPackedDNNHandle_t packedDNNHandle) {
  return guarded("hbDNNGetModelNameList", [&] { model_name_list(packedDNNHandle, modelNameList, modelNameCount); });
}

int32_t hbDNNGetModelHandle(hbDNNHandle_t* dnnHandle, hbPackedDNNHandle_t packedDNNHandle, const char* modelName) {
  return guarded("hbDNNGetModelHandle", [&] {
    require(dnnHandle, "dnnHandle");
    *dnnHandle = model_handle(packedDNNHandle, modelName);
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

// Appends sub-tasks to *taskHandle (or a new task) and submits the task unless p.more.
void add_and_submit(Registry& r, hbDNNTaskHandle_t* taskHandle, const hbDNNInferCtrlParam& p, Model& model,
                    std::span<const SubTask> subs) {
  const std::shared_ptr<Task> task = add_subtasks(r, taskHandle, TaskParams{p.priority, p.customId, p.bpuCoreId}, model, subs);
  if (p.more == 0) submit_task(task);
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
    add_and_submit(r, taskHandle, p, model, std::span<const SubTask>(&sub, 1));
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
    const std::span<const SubTask> subs = roi_subtasks(model, input, rois, roiCount, *output);
    add_and_submit(r, taskHandle, p, model, subs);
  });
}

int32_t hbDNNWaitTaskDone(hbDNNTaskHandle_t taskHandle, int32_t timeout) {
  return guarded("hbDNNWaitTaskDone", [&] { wait_task(taskHandle, timeout); });
}

int32_t hbDNNReleaseTask(hbDNNTaskHandle_t taskHandle) {
  return guarded("hbDNNReleaseTask", [&] { release_task(taskHandle); });
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
