// A loaded model as the UCP-generation API describes it (hobot/dnn/hb_dnn.h): its inputs and
// outputs in that generation's types (an NV12 input as its Y and UV planes), its JSON build
// description, and the conversion of that generation's tensors to the classic ones the one
// runtime underneath runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dnn/hb_dnn.h"
#include "openbpu/format/model_file.h"
#include "ucp_types.h"

namespace openbpu::dnn {

class Model;
struct TensorPort;

struct UcpPort {
  enum class Plane { kWhole, kY, kUv };
  std::string name;
  ucp::TensorProperties properties{};
  std::vector<float> scale;
  std::vector<int32_t> zero_point;
  size_t port = 0;  // index of the classic port (Model::inputs() / outputs())
  Plane plane = Plane::kWhole;
  std::string description;  // inputs: that input's build parameters as JSON ("" for none)
};

struct UcpPorts {
  std::vector<UcpPort> inputs, outputs;
  std::string description;  // the model's JSON build description
  int32_t core_num = 1;     // compiler_parameters.core_num
};

// Made at load time from the model file and the classic ports.
UcpPorts make_ucp_ports(const format::Model& model, const std::vector<TensorPort>& inputs,
                        const std::vector<TensorPort>& outputs);

// The classic tensors of one inference given in the UCP generation's form: `inputs` holds
// ports.inputs.size() tensors (appended to *out as Model::inputs().size() classic ones; with
// `roi`, a resizer input's planes are a source image of any size, as hbDNNRoiInferV2 takes),
// `outputs` ports.outputs.size(). Throws ApiError HB_DNN_INVALID_ARGUMENT naming the tensor and
// the rule (type, shape, stride, memory size).
void classic_inputs(const Model& model, const ucp::Tensor* inputs, bool roi, std::vector<hbDNNTensor>* out);
void classic_outputs(const Model& model, const ucp::Tensor* outputs, std::vector<hbDNNTensor>* out);

// The JSON description of a model file (hbDNNGetHBMDesc).
std::string package_description(const format::Package& package);

}  // namespace openbpu::dnn
