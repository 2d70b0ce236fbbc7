// The UCP-generation C API (hobot/hb_ucp.h, hobot/hb_ucp_sys.h, hobot/dnn/hb_dnn.h) on the one
// runtime: the same handles, scheduler and models as the classic API (handles.h), its tensors
// converted to the classic ones at the boundary (ucp_ports.h), its status codes in the UCP
// space (guarded_ucp). Functions whose names the classic API has too are defined here as
// <name>_ucp, the symbols the public header binds them to.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "error.h"
#include "handles.h"
#include "memory.h"
#include "ucp_types.h"

#ifndef OPENBPU_VERSION_STRING
#define OPENBPU_VERSION_STRING "unknown"
#endif

namespace openbpu::dnn {

int32_t ucp_status(int32_t classic) noexcept {
  switch (classic) {
    case HB_DNN_SUCCESS: return ucp::kSuccess;
    case HB_DNN_INVALID_ARGUMENT:
    case HB_DNN_INVALID_PACKED_DNN_HANDLE:
    case HB_DNN_INVALID_DNN_HANDLE:
    case HB_SYS_INVALID_ARGUMENT: return ucp::kInvalidArgument;
    case HB_DNN_INVALID_MODEL: return ucp::kModelInvalid;
    case HB_DNN_MODEL_NUMBER_EXCEED_LIMIT: return ucp::kModelNumberExceedLimit;
    case HB_DNN_CAN_NOT_OPEN_FILE: return ucp::kFileOpenFailed;
    case HB_DNN_OUT_OF_MEMORY:
    case HB_SYS_OUT_OF_MEMORY: return ucp::kMemAllocFail;
    case HB_DNN_TIMEOUT: return ucp::kTaskTimeout;
    case HB_DNN_TASK_NUM_EXCEED_LIMIT:
    case HB_DNN_TASK_BATCH_SIZE_EXCEED_LIMIT: return ucp::kTaskNumberExceedLimit;
    case HB_DNN_INVALID_TASK_HANDLE: return ucp::kTaskHandleInvalid;
    case HB_DNN_RUN_TASK_FAILED: return ucp::kTaskRunFailed;
    case HB_DNN_MODEL_IS_RUNNING: return ucp::kModelIsInUse;
    case HB_DNN_INCOMPATIBLE_MODEL: return ucp::kModelIncompatible;
    case HB_DNN_API_USE_ERROR:
    case HB_DNN_MULTI_PROGRESS_USE_ERROR: return ucp::kApiUseError;
    default: return classic > -1000000 ? classic : ucp::kUnknownError;  // already a UCP code
  }
}

const char* ucp_status_text(int32_t code) noexcept {
  switch (code) {
    case ucp::kSuccess: return "success";
    case ucp::kInvalidArgument: return "invalid argument";
    case ucp::kApiUseError: return "API use error";
    case ucp::kUnknownError: return "unknown error";
    case ucp::kTaskNumberExceedLimit: return "task number exceeds the limit";
    case ucp::kTaskTimeout: return "task timeout";
    case ucp::kTaskRunFailed: return "task run failed";
    case ucp::kTaskHandleInvalid: return "invalid task handle";
    case ucp::kOpCmdUnavailable: return "backend unavailable";
    case ucp::kMemAllocFail: return "memory allocation failed";
    case ucp::kMemIsInvalid: return "invalid memory";
    case ucp::kFileOpenFailed: return "file open failed";
    case ucp::kModelNumberExceedLimit: return "model number exceeds the limit";
    case ucp::kModelInvalid: return "invalid model";
    case ucp::kModelIsInUse: return "model is in use";
    case ucp::kModelIncompatible: return "incompatible model";
    default: return nullptr;
  }
}

namespace {

std::string hex(uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
  return text;
}

// OPENBPU_UCP_CHECK_FLUSH (hobot/hb_ucp_sys.h), read at each submission.
bool check_flush() {
  const char* v = std::getenv("OPENBPU_UCP_CHECK_FLUSH");
  return v != nullptr && *v != 0 && std::strcmp(v, "0") != 0;
}

void set_desc(const std::string& text, const char** desc, uint32_t* size, int32_t* type) {
  require(desc, "desc");
  require(size, "size");
  require(type, "type");
  *desc = text.c_str();
  *size = static_cast<uint32_t>(text.size());
  *type = text.empty() ? ucp::kDescUnknown : ucp::kDescString;
}

// The BPU core mask of a backend for `model`'s platform (0: any core).
int32_t core_mask(uint64_t backend, const Model& model) {
  if ((backend & ~(ucp::kBpuCoreBits | ucp::kBpuCoreAny)) != 0) {
    fail(ucp::kOpCmdUnavailable, "schedParam->backend ", hex(backend),
         " names a backend other than the BPU (DSP, GDC, codec, pyramid, ISP ...); this runtime has BPU cores only");
  }
  const int32_t mask = static_cast<int32_t>(backend & ucp::kBpuCoreBits);
  const int32_t all = all_cores_mask(model.platform().cores());
  if ((mask & ~all) != 0) {
    fail(HB_DNN_INVALID_ARGUMENT, "schedParam->backend ", hex(backend), " names a BPU core this BPU (",
         model.platform().chip().march, ", ", model.platform().cores(), " core(s)) does not have");
  }
  return mask;
}

// Refuses a task whose cached inputs the CPU wrote after their last CLEAN (the flush check).
void check_inputs_cleaned(const Task& task) {
  for (size_t i = 0; i < task.subtask_count; ++i) {
    const SubTask& s = task.subtasks[i];
    for (size_t k = 0; k < s.inputs.size(); ++k) {
      for (int plane = 0; plane < 2; ++plane) {
        const void* p = s.inputs[k].sysMem[plane].virAddr;
        if (p != nullptr && MemoryRegistry::instance().written_since_clean(p)) {
          fail(HB_DNN_API_USE_ERROR, "sub-task ", i, " (model '", s.model->name(), "') input '", s.model->inputs()[k].name,
               "': its cached memory was written after its last hbUCPMemFlush(HB_SYS_MEM_CACHE_CLEAN) (or never cleaned); ",
               "on a board the BPU would read stale data (OPENBPU_UCP_CHECK_FLUSH)");
        }
      }
    }
  }
}

void submit(void* task_handle, const ucp::SchedParam* param) {
  ucp::SchedParam p{0, 0, 0, 0};
  if (param != nullptr) p = *param;
  if (p.priority < 0 || p.priority > 255) fail(HB_DNN_INVALID_ARGUMENT, "schedParam->priority ", p.priority, " is outside [0, 255]");
  if (p.deviceId != 0) fail(HB_DNN_INVALID_ARGUMENT, "schedParam->deviceId ", p.deviceId, " is not 0 (this platform has one device)");
  std::shared_ptr<Task> task;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    task = task_of(r, task_handle);
  }
  {
    std::lock_guard<std::mutex> lock(task->mutex);
    if (task->state != Task::State::kOpen) fail(HB_DNN_API_USE_ERROR, "the task was already submitted");
  }
  int32_t mask = 0;
  for (size_t i = 0; i < task->subtask_count; ++i) mask = core_mask(p.backend, *task->subtasks[i].model);
  task->check_flush = check_flush();
  if (task->check_flush) check_inputs_cleaned(*task);
  task->priority = p.priority;
  task->custom_id = p.customId;
  task->core_mask = mask;
  submit_task(task);
}

// The end of hbDNNInferV2 / hbDNNRoiInferV2: without a task handle, runs the task the
// sub-tasks were appended to synchronously and releases it.
void run_if_synchronous(void** task_handle, void* task) {
  if (task_handle != nullptr) return;
  try {
    submit(task, nullptr);
    wait_task(task, 0);
  } catch (...) {
    release_task(task);
    throw;
  }
  release_task(task);
}

// hb_dnn_v1.h's hbDNNInfer / hbDNNRoiInfer: the classic call's arguments checked (before the V2
// call, which would run synchronously for a NULL task handle), then `infer` (the V2 call), then
// the task submitted unless `more`. A task this call made is released again when its submission
// fails: on failure the caller gets no task.
template <typename Infer>
int32_t classic_call(const char* fn, void** task_handle, ucp::Tensor** output, const ucp::InferCtrlParam* p, Infer infer) {
  const int32_t checked = guarded_ucp(fn, [&] {
    require(task_handle, "taskHandle");
    require(output, "output");
    require(p, "inferCtrlParam");
    if (p->bpuCoreId < 0 || (static_cast<uint64_t>(p->bpuCoreId) & ~ucp::kBpuCoreBits) != 0) {
      fail(HB_DNN_INVALID_ARGUMENT, "inferCtrlParam->bpuCoreId ", p->bpuCoreId, " is not a mask of BPU cores 0..3");
    }
  });
  if (checked != 0) return checked;
  const bool fresh = *task_handle == nullptr;
  const int32_t rc = infer();
  if (rc != 0 || p->more != 0) return rc;
  const ucp::SchedParam sched{p->priority, p->customId, p->bpuCoreId == 0 ? ucp::kBpuCoreAny : static_cast<uint64_t>(p->bpuCoreId), 0};
  const int32_t submitted = guarded_ucp(fn, [&] { submit(*task_handle, &sched); });
  if (submitted != 0 && fresh) {
    (void)guarded_ucp(fn, [&] { release_task(*task_handle); });
    *task_handle = nullptr;
  }
  return submitted;
}

// The sub-task of one hbDNNInferV2 (staging kept per thread, as hbDNNInfer's).
SubTask& infer_subtask(Model& model, const ucp::Tensor* output, const ucp::Tensor* input) {
  thread_local SubTask sub;
  sub.model = &model;
  sub.inputs.clear();
  classic_inputs(model, input, false, &sub.inputs);
  classic_outputs(model, output, &sub.outputs);
  sub.rois.clear();
  model.check_tensors(sub.inputs.data(), sub.outputs.data());
  return sub;
}

}  // namespace

}  // namespace openbpu::dnn

using namespace openbpu::dnn;  // NOLINT: the C entry points below are thin wrappers
namespace ucp = openbpu::dnn::ucp;

extern "C" {

const char* hbUCPGetVersion(void) {
  static const std::string version = "3.13.6_(OpenBPU " OPENBPU_VERSION_STRING ")";
  return version.c_str();
}

const char* hbUCPGetSocName(void) { return "openbpu-sim"; }

const char* hbUCPGetErrorDesc(int32_t errorCode) { return describe_status(errorCode, ucp_status_text(errorCode)); }
const char* hbDNNGetErrorDesc_ucp(int32_t errorCode) { return hbUCPGetErrorDesc(errorCode); }

int32_t hbDNNInitializeFromFiles_ucp(void** dnnPackedHandle, const char** modelFileNames, int32_t modelFileCount) {
  return guarded_ucp("hbDNNInitializeFromFiles", [&] {
    require(dnnPackedHandle, "dnnPackedHandle");
    *dnnPackedHandle = load_files(modelFileNames, modelFileCount);
  });
}

int32_t hbDNNInitializeFromDDR_ucp(void** dnnPackedHandle, const void** modelData, int32_t* modelDataLengths,
                                   int32_t modelDataCount) {
  return guarded_ucp("hbDNNInitializeFromDDR", [&] {
    require(dnnPackedHandle, "dnnPackedHandle");
    *dnnPackedHandle = load_buffers(modelData, modelDataLengths, modelDataCount);
  });
}

int32_t hbDNNRelease_ucp(void* dnnPackedHandle) {
  return guarded_ucp("hbDNNRelease", [&] { release_package(dnnPackedHandle); });
}

int32_t hbDNNGetModelNameList_ucp(const char*** modelNameList, int32_t* modelNameCount, void* dnnPackedHandle) {
  return guarded_ucp("hbDNNGetModelNameList", [&] { model_name_list(dnnPackedHandle, modelNameList, modelNameCount); });
}

int32_t hbDNNGetModelHandle_ucp(void** dnnHandle, void* dnnPackedHandle, const char* modelName) {
  return guarded_ucp("hbDNNGetModelHandle", [&] {
    require(dnnHandle, "dnnHandle");
    *dnnHandle = model_handle(dnnPackedHandle, modelName);
  });
}

int32_t hbDNNGetInputCount_ucp(int32_t* inputCount, void* dnnHandle) {
  return guarded_ucp("hbDNNGetInputCount", [&] {
    require(inputCount, "inputCount");
    *inputCount = static_cast<int32_t>(model_of(dnnHandle).ucp().inputs.size());
  });
}

int32_t hbDNNGetOutputCount_ucp(int32_t* outputCount, void* dnnHandle) {
  return guarded_ucp("hbDNNGetOutputCount", [&] {
    require(outputCount, "outputCount");
    *outputCount = static_cast<int32_t>(model_of(dnnHandle).ucp().outputs.size());
  });
}

int32_t hbDNNGetInputName_ucp(const char** name, void* dnnHandle, int32_t inputIndex) {
  return guarded_ucp("hbDNNGetInputName", [&] {
    require(name, "name");
    const auto& ports = model_of(dnnHandle).ucp().inputs;
    check_index(inputIndex, ports.size(), "input");
    *name = ports[static_cast<size_t>(inputIndex)].name.c_str();
  });
}

int32_t hbDNNGetOutputName_ucp(const char** name, void* dnnHandle, int32_t outputIndex) {
  return guarded_ucp("hbDNNGetOutputName", [&] {
    require(name, "name");
    const auto& ports = model_of(dnnHandle).ucp().outputs;
    check_index(outputIndex, ports.size(), "output");
    *name = ports[static_cast<size_t>(outputIndex)].name.c_str();
  });
}

int32_t hbDNNGetInputTensorProperties_ucp(ucp::TensorProperties* properties, void* dnnHandle, int32_t inputIndex) {
  return guarded_ucp("hbDNNGetInputTensorProperties", [&] {
    require(properties, "properties");
    const auto& ports = model_of(dnnHandle).ucp().inputs;
    check_index(inputIndex, ports.size(), "input");
    *properties = ports[static_cast<size_t>(inputIndex)].properties;
  });
}

int32_t hbDNNGetOutputTensorProperties_ucp(ucp::TensorProperties* properties, void* dnnHandle, int32_t outputIndex) {
  return guarded_ucp("hbDNNGetOutputTensorProperties", [&] {
    require(properties, "properties");
    const auto& ports = model_of(dnnHandle).ucp().outputs;
    check_index(outputIndex, ports.size(), "output");
    *properties = ports[static_cast<size_t>(outputIndex)].properties;
  });
}

int32_t hbDNNGetModelDesc(const char** desc, uint32_t* size, int32_t* type, void* dnnHandle) {
  return guarded_ucp("hbDNNGetModelDesc", [&] { set_desc(model_of(dnnHandle).ucp().description, desc, size, type); });
}

int32_t hbDNNGetInputDesc(const char** desc, uint32_t* size, int32_t* type, void* dnnHandle, int32_t inputIndex) {
  return guarded_ucp("hbDNNGetInputDesc", [&] {
    const auto& ports = model_of(dnnHandle).ucp().inputs;
    check_index(inputIndex, ports.size(), "input");
    set_desc(ports[static_cast<size_t>(inputIndex)].description, desc, size, type);
  });
}

int32_t hbDNNGetOutputDesc(const char** desc, uint32_t* size, int32_t* type, void* dnnHandle, int32_t outputIndex) {
  return guarded_ucp("hbDNNGetOutputDesc", [&] {
    const auto& ports = model_of(dnnHandle).ucp().outputs;
    check_index(outputIndex, ports.size(), "output");
    set_desc(ports[static_cast<size_t>(outputIndex)].description, desc, size, type);
  });
}

int32_t hbDNNGetHBMDesc(const char** desc, uint32_t* size, int32_t* type, void* dnnPackedHandle, int32_t index) {
  return guarded_ucp("hbDNNGetHBMDesc", [&] {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    Package& package = package_of(r, dnnPackedHandle);
    check_index(index, package.files.size(), "model file");
    set_desc(package.descriptions.at(static_cast<size_t>(index)), desc, size, type);
  });
}

int32_t hbDNNGetCompileBpuCoreNum(int32_t* bpuCoreNum, void* dnnHandle) {
  return guarded_ucp("hbDNNGetCompileBpuCoreNum", [&] {
    require(bpuCoreNum, "bpuCoreNum");
    *bpuCoreNum = model_of(dnnHandle).ucp().core_num;
  });
}

int32_t hbDNNInferV2(void** taskHandle, ucp::Tensor* output, const ucp::Tensor* input, void* dnnHandle) {
  return guarded_ucp("hbDNNInferV2", [&] {
    require(input, "input");
    void* task = taskHandle != nullptr ? *taskHandle : nullptr;
    {
      Registry& r = registry();
      std::lock_guard<std::mutex> lock(r.mutex);
      Model& model = model_of(r, dnnHandle);
      if (output == nullptr && !model.outputs().empty()) fail(HB_DNN_INVALID_ARGUMENT, "output is NULL");
      const SubTask& sub = infer_subtask(model, output, input);
      add_subtasks(r, &task, TaskParams{}, model, std::span<const SubTask>(&sub, 1));
    }
    if (taskHandle != nullptr) *taskHandle = task;
    run_if_synchronous(taskHandle, task);
  });
}

int32_t hbDNNRoiInferV2(void** taskHandle, ucp::Tensor* output, const ucp::Tensor* input, ucp::Roi* rois, int32_t roiCount,
                        void* dnnHandle) {
  static_assert(sizeof(ucp::Roi) == sizeof(hbDNNRoi));  // both {left, top, right, bottom} of int32_t
  return guarded_ucp("hbDNNRoiInferV2", [&] {
    require(input, "input");
    require(rois, "rois");
    void* task = taskHandle != nullptr ? *taskHandle : nullptr;
    {
      Registry& r = registry();
      std::lock_guard<std::mutex> lock(r.mutex);
      Model& model = model_of(r, dnnHandle);
      if (output == nullptr && !model.outputs().empty()) fail(HB_DNN_INVALID_ARGUMENT, "output is NULL");
      const size_t resizers = model.resizer_inputs().size();
      if (resizers == 0) fail(HB_DNN_INCOMPATIBLE_MODEL, "model '", model.name(), "' has no resizer input; use hbDNNInferV2");
      if (roiCount <= 0 || static_cast<size_t>(roiCount) % resizers != 0 ||
          static_cast<size_t>(roiCount) / resizers > HB_DNN_MAX_SUB_TASK_NUM) {
        fail(HB_DNN_INVALID_ARGUMENT, "roiCount ", roiCount, " must be a positive multiple of the model's ", resizers,
             " resizer input(s), at most ", HB_DNN_MAX_SUB_TASK_NUM, " batches");
      }
      const size_t batches = static_cast<size_t>(roiCount) / resizers, per_batch = model.ucp().inputs.size();
      thread_local std::vector<hbDNNTensor> inputs, outputs;  // staging, as hbDNNInferV2's
      inputs.clear();
      for (size_t b = 0; b < batches; ++b) classic_inputs(model, input + b * per_batch, true, &inputs);
      classic_outputs(model, output, &outputs);
      const std::span<const SubTask> subs =
          roi_subtasks(model, inputs.data(), reinterpret_cast<const hbDNNRoi*>(rois), roiCount, outputs.data());
      add_subtasks(r, &task, TaskParams{}, model, subs);
    }
    if (taskHandle != nullptr) *taskHandle = task;
    run_if_synchronous(taskHandle, task);
  });
}

int32_t hbDNNGetTaskOutputTensorProperties(ucp::TensorProperties* properties, void* taskHandle, int32_t subTaskIndex,
                                           int32_t outputIndex) {
  return guarded_ucp("hbDNNGetTaskOutputTensorProperties", [&] {
    require(properties, "properties");
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    const std::shared_ptr<Task> task = task_of(r, taskHandle);
    check_index(subTaskIndex, task->subtask_count, "sub-task");
    const auto& ports = task->subtasks[static_cast<size_t>(subTaskIndex)].model->ucp().outputs;
    check_index(outputIndex, ports.size(), "output");
    *properties = ports[static_cast<size_t>(outputIndex)].properties;
  });
}

// hobot/dnn/hb_dnn_v1.h: the classic calls on this generation's tasks.
int32_t hbDNNInfer_ucp(void** taskHandle, ucp::Tensor** output, const ucp::Tensor* input, void* dnnHandle,
                       ucp::InferCtrlParam* inferCtrlParam) {
  return classic_call("hbDNNInfer", taskHandle, output, inferCtrlParam,
                      [&] { return hbDNNInferV2(taskHandle, *output, input, dnnHandle); });
}

int32_t hbDNNRoiInfer_ucp(void** taskHandle, ucp::Tensor** output, const ucp::Tensor* input, ucp::Roi* rois, int32_t roiCount,
                          void* dnnHandle, ucp::InferCtrlParam* inferCtrlParam) {
  return classic_call("hbDNNRoiInfer", taskHandle, output, inferCtrlParam,
                      [&] { return hbDNNRoiInferV2(taskHandle, *output, input, rois, roiCount, dnnHandle); });
}

int32_t hbDNNWaitTaskDone_ucp(void* taskHandle, int32_t timeout) {
  return guarded_ucp("hbDNNWaitTaskDone", [&] { wait_task(taskHandle, timeout); });
}

int32_t hbDNNReleaseTask_ucp(void* taskHandle) {
  return guarded_ucp("hbDNNReleaseTask", [&] { release_task(taskHandle); });
}

int32_t hbUCPSubmitTask(void* taskHandle, ucp::SchedParam* schedParam) {
  return guarded_ucp("hbUCPSubmitTask", [&] { submit(taskHandle, schedParam); });
}

int32_t hbUCPWaitTaskDone(void* taskHandle, int32_t timeout) {
  return guarded_ucp("hbUCPWaitTaskDone", [&] { wait_task(taskHandle, timeout); });
}

int32_t hbUCPSetTaskDoneCb(void* taskHandle, ucp::TaskDoneCb taskDoneCb, void* userdata) {
  return guarded_ucp("hbUCPSetTaskDoneCb", [&] {
    require(reinterpret_cast<const void*>(taskDoneCb), "taskDoneCb");
    std::shared_ptr<Task> task;
    {
      Registry& r = registry();
      std::lock_guard<std::mutex> lock(r.mutex);
      task = task_of(r, taskHandle);
    }
    std::lock_guard<std::mutex> lock(task->mutex);
    if (task->state != Task::State::kOpen) fail(HB_DNN_API_USE_ERROR, "the task was already submitted; set its callback before");
    task->done_callback = taskDoneCb;
    task->done_userdata = userdata;
  });
}

int32_t hbUCPReleaseTask(void* taskHandle) {
  return guarded_ucp("hbUCPReleaseTask", [&] { release_task(taskHandle); });
}

}  // extern "C"
