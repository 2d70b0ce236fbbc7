// Inference through the UCP generation's API (hobot/hb_ucp.h, hobot/dnn/hb_dnn.h), as the S100 /
// J6 board tools do for .hbm model files: hrt_model_exec and hb_model_verifier. Its own
// translation unit (ucp_infer.cc): the two API generations' headers cannot meet in one, so this
// interface uses neither's types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace openbpu::tensor_io {

// A block of BPU memory (hbSysAlloc*Mem and hbUCPMalloc* share one registry).
struct UcpBlock {
  void* data = nullptr;
  uint64_t phy = 0;
  uint64_t bytes = 0;
  bool dense = true;  // inputs: laid out densely by validShape (else in the model's layout)
};

// One inference of `model` (an hbDNNHandle_t) through hbDNNInferV2, hbUCPSubmitTask and
// hbUCPWaitTaskDone: inputs[i] holds the model's input i as the classic API describes it (an
// NV12 input: its Y rows then its UV rows, of its width; copied to rows padded to 32 bytes when
// the width needs it), outputs[i] receives output i in the model's layout. core_id as
// hrt_model_exec's --core_id (0 any, 1 core 0, 2 core 1). Returns the latency in ms (from hbDNNInferV2 to done). Throws std::runtime_error
// naming the call and its hbUCPGetErrorDesc.
double ucp_infer_once(void* model, const std::vector<UcpBlock>& inputs, const std::vector<UcpBlock>& outputs, int core_id);

// The model's JSON build description (hbDNNGetModelDesc), or "" when it has none.
std::string ucp_model_description(void* model);

}  // namespace openbpu::tensor_io
