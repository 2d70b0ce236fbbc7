// Inference through the UCP generation's API (openbpu/tensor_io/ucp_infer.h).
#include "openbpu/tensor_io/ucp_infer.h"

#include <chrono>
#include <cstring>
#include <stdexcept>

#include "hobot/dnn/hb_dnn.h"
#include "hobot/hb_ucp.h"

namespace openbpu::tensor_io {

namespace {

void check(int32_t rc, const char* what) {
  if (rc != 0) throw std::runtime_error(std::string(what) + " failed: " + hbUCPGetErrorDesc(rc));
}

hbUCPSysMem mem_of(const UcpBlock& b) { return hbUCPSysMem{b.phy, b.data, b.bytes}; }

void dense_strides(hbDNNTensorProperties& p, int64_t element) {
  for (int i = p.validShape.numDimensions - 1; i >= 0; --i) {
    p.stride[i] = element;
    element *= p.validShape.dimensionSize[i];
  }
}

// Staging for image planes whose rows must be padded; freed with the object.
struct Staging {
  std::vector<hbUCPSysMem> blocks;
  ~Staging() {
    for (hbUCPSysMem& m : blocks) (void)hbUCPFree(&m);
  }
  // `rows` rows of `row` bytes from `src`, in rows of `stride` bytes.
  hbUCPSysMem padded(const uint8_t* src, int64_t rows, int64_t row, int64_t stride) {
    hbUCPSysMem m{};
    check(hbUCPMallocCached(&m, static_cast<uint64_t>(rows * stride), 0), "hbUCPMallocCached");
    blocks.push_back(m);
    for (int64_t r = 0; r < rows; ++r) std::memcpy(static_cast<uint8_t*>(m.virAddr) + r * stride, src + r * row, static_cast<size_t>(row));
    check(hbUCPMemFlush(&m, HB_SYS_MEM_CACHE_CLEAN), "hbUCPMemFlush");
    return m;
  }
};

// The model's UCP inputs for the classic inputs `blocks` (an NV12 input is its Y and UV planes).
std::vector<hbDNNTensor> input_tensors(hbDNNHandle_t model, const std::vector<UcpBlock>& blocks, Staging& staging) {
  int32_t count = 0;
  check(hbDNNGetInputCount(&count, model), "hbDNNGetInputCount");
  std::vector<hbDNNTensor> tensors(static_cast<size_t>(count));
  size_t block = 0;
  for (int32_t k = 0; k < count; ++k, ++block) {
    if (block >= blocks.size()) throw std::runtime_error("the UCP inputs outnumber the model's classic inputs");
    hbDNNTensor& t = tensors[static_cast<size_t>(k)];
    check(hbDNNGetInputTensorProperties(&t.properties, model, k), "hbDNNGetInputTensorProperties");
    const UcpBlock& b = blocks[block];
    if (t.properties.stride[1] != -1) {  // a whole tensor
      t.sysMem = mem_of(b);
      // The model's innermost stride is the element's size (padding only ever widens outer ones).
      const int rank = t.properties.validShape.numDimensions;
      if (b.dense && rank > 0) dense_strides(t.properties, t.properties.stride[rank - 1]);
      continue;
    }
    // A Y plane (1,H,W,1), and the UV plane (1,H/2,W/2,2) after it for NV12.
    const int64_t h = t.properties.validShape.dimensionSize[1], w = t.properties.validShape.dimensionSize[2];
    const int64_t row = (w + 31) / 32 * 32;
    const bool nv12 = k + 1 < count && [&] {
      hbDNNTensorProperties next{};
      check(hbDNNGetInputTensorProperties(&next, model, k + 1), "hbDNNGetInputTensorProperties");
      return next.stride[1] == -1 && next.validShape.dimensionSize[3] == 2;
    }();
    const auto* src = static_cast<const uint8_t*>(b.data);
    auto set_plane = [&](hbDNNTensor& plane, const uint8_t* data, int64_t rows) {
      plane.properties.stride[1] = row;
      plane.properties.stride[0] = row * rows;
      if (row == w) {
        plane.sysMem = hbUCPSysMem{b.phy + static_cast<uint64_t>(data - src), const_cast<uint8_t*>(data), static_cast<uint64_t>(w * rows)};
      } else {
        plane.sysMem = staging.padded(data, rows, w, row);
      }
    };
    set_plane(t, src, h);
    if (nv12) {
      hbDNNTensor& uv = tensors[static_cast<size_t>(++k)];
      check(hbDNNGetInputTensorProperties(&uv.properties, model, k), "hbDNNGetInputTensorProperties");
      set_plane(uv, src + h * w, h / 2);
    }
  }
  return tensors;
}

}  // namespace

double ucp_infer_once(void* model, const std::vector<UcpBlock>& inputs, const std::vector<UcpBlock>& outputs, int core_id) {
  Staging staging;
  std::vector<hbDNNTensor> in = input_tensors(model, inputs, staging);
  std::vector<hbDNNTensor> out(outputs.size());
  for (size_t o = 0; o < outputs.size(); ++o) {
    check(hbDNNGetOutputTensorProperties(&out[o].properties, model, static_cast<int32_t>(o)), "hbDNNGetOutputTensorProperties");
    out[o].sysMem = mem_of(outputs[o]);
  }
  hbUCPSchedParam sched;
  HB_UCP_INITIALIZE_SCHED_PARAM(&sched);
  sched.backend = core_id == 0 ? HB_UCP_BPU_CORE_ANY : core_id == 1 ? HB_UCP_BPU_CORE_0 : HB_UCP_BPU_CORE_1;
  hbUCPTaskHandle_t task = nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  int32_t rc = hbDNNInferV2(&task, out.data(), in.data(), model);
  const char* what = "hbDNNInferV2";
  if (rc == 0) {
    rc = hbUCPSubmitTask(task, &sched);
    what = "hbUCPSubmitTask";
  }
  if (rc == 0) {
    rc = hbUCPWaitTaskDone(task, 0);
    what = "hbUCPWaitTaskDone";
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const std::string failure = rc != 0 ? hbUCPGetErrorDesc(rc) : "";
  if (task != nullptr) check(hbUCPReleaseTask(task), "hbUCPReleaseTask");
  if (rc != 0) throw std::runtime_error(std::string(what) + " failed: " + failure);
  return ms;
}

std::string ucp_model_description(void* model) {
  const char* desc = nullptr;
  uint32_t size = 0;
  int32_t type = HB_DNN_DESC_TYPE_UNKNOWN;
  check(hbDNNGetModelDesc(&desc, &size, &type, model), "hbDNNGetModelDesc");
  return type == HB_DNN_DESC_TYPE_STRING ? std::string(desc, size) : std::string();
}

}  // namespace openbpu::tensor_io
