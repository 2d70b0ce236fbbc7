// The two host-side runs hb_model_verifier compares with the board: the .bin model through the
// hbDNN runtime on the x86 simulator, and the quantized ONNX model through the float executor,
// fed the very bytes the .bin model gets (images converted as the BPU's input stage sees them).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dnn/hb_dnn.h"
#include "openbpu/tensor_io/tensor_io.h"
#include "openbpu/kernels/tensor.h"

namespace openbpu::verifier {

struct TensorInfo {
  std::string name;
  hbDNNTensorProperties properties;
};

// A .bin model file loaded with the hbDNN API on this host (the x86 simulator).
class BinModel {
 public:
  // A packed file (several models) is refused. A .hbm file runs through the UCP generation's API
  // (tensor_io/ucp_infer.h), as the S100 / J6 tools run it; a .bin file through the classic one.
  explicit BinModel(const std::string& path);
  ~BinModel();
  BinModel(const BinModel&) = delete;
  BinModel& operator=(const BinModel&) = delete;

  const std::string& model_name() const { return name_; }
  const std::vector<TensorInfo>& inputs() const { return inputs_; }
  const std::vector<TensorInfo>& outputs() const { return outputs_; }

  // One inference; every output's valid elements, dense (as hrt_model_exec dumps them).
  std::vector<std::vector<uint8_t>> infer(const std::vector<tensor_io::InputData>& inputs);

 private:
  hbPackedDNNHandle_t packed_ = nullptr;
  hbDNNHandle_t handle_ = nullptr;
  bool ucp_ = false;
  std::string name_;
  std::vector<TensorInfo> inputs_, outputs_;
};

// The quantized ONNX model's feed for one input of the .bin model: featuremaps as they are; an
// image (Y, NV12, YUV444, RGB, BGR in NHWC or NCHW) as its colour planes, NV12's chroma
// repeated over each 2x2 block, in the layout of `shape`, minus 128 when `dtype` is int8.
kernels::Tensor quantized_model_feed(const tensor_io::InputData& data, const hbDNNTensorProperties& p,
                                     kernels::DataType dtype, const kernels::Shape& shape);

// Every element as a double; integer outputs of the quantized model that stand for a quantized
// .bin output (same integer type) are dequantized with that output's scales.
std::vector<double> tensor_values(const kernels::Tensor& t, const hbDNNTensorProperties& bin_output);

}  // namespace openbpu::verifier
