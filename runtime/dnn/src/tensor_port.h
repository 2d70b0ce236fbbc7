// A model input or output as the C API describes it (TensorPort), and how one user tensor maps
// onto it: the layout rule (dense data, or laid out by the model's stride), the checks of the
// user's memory, and the copies between that memory and the dense tensors an inference keeps.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "dnn/hb_dnn.h"
#include "openbpu/format/model_file.h"
#include "openbpu/kernels/tensor.h"

namespace openbpu::dnn {

// Properties of a model input or output, with the storage the C struct points into.
struct TensorPort {
  std::string name;
  hbDNNTensorProperties properties{};
  std::vector<uint8_t> shift;
  std::vector<float> scale;
  std::vector<int8_t> zero_point;
  kernels::DataType dtype = kernels::DataType::kUndefined;  // element type of the dense tensor
  std::vector<int64_t> dense_shape;  // the dense tensor the segments exchange
  size_t dense_bytes = 0;
  bool image = false;      // an image input bound as bytes (NV12 / Y / RGB / BGR / YUV444)
  int32_t source = HB_DNN_INPUT_FROM_DDR;  // inputs: hbDNNInputSource
};

// The port of a tensor of the file. Throws ApiError (HB_DNN_INCOMPATIBLE_MODEL) for what the C
// API cannot describe, naming `where` ("'<file>', model '<name>'") and the tensor.
TensorPort port_of(const format::TensorDesc& d, const std::string& where);
// One batch item of a port whose batch (validShape[0]) is `batch`: batch dimension 1.
TensorPort batch_item_of(const TensorPort& p, int32_t batch);
// Points the C struct at the port's own parameter storage (after every copy of the port).
void link_parameters(TensorPort& p);

// The kernel element type of a file tensor type (kUndefined: the 4-bit types).
kernels::DataType dtype_of(format::TensorType t);
// "(1,3,224,224)"
std::string shape_text(const hbDNNTensorShape& s);

// Names a tensor in errors, formatted only when one is thrown: "input 0 ('x')", or
// "input 0 ('x') batch item 1 (input tensor 1)".
struct TensorLabel {
  const char* what;  // "input" / "output"
  size_t index;
  const std::string& name;
  size_t item = 0, tensor = 0;
  bool batch_item = false;
};
std::ostream& operator<<(std::ostream& out, const TensorLabel& l);

// How one user tensor maps onto a port: dense (alignedShape == validShape) or laid out by the
// model's stride (alignedShape == the model's).
struct UserLayout {
  bool dense = true;
  int64_t bytes = 0;  // bytes the user memory must hold
};
// Throws ApiError HB_DNN_INVALID_ARGUMENT when `t`'s alignedShape is neither.
UserLayout layout_for(const TensorPort& port, const hbDNNTensor& t, const TensorLabel& label);

// Where an image port keeps H and W: (..., H, W) for NCHW, (..., H, W, C) for NHWC.
int height_axis(const TensorPort& port);
// A resizer input's source image as hbDNNRoiInfer takes it (hb_dnn.h): its size and the bytes
// between two rows, from validShape / alignedShape in the port's layout.
struct SourceImage {
  int64_t height = 0, width = 0, row_bytes = 0;
  bool nv12 = false;
};
SourceImage source_image(const TensorPort& port, const hbDNNTensor& t);

// An image input fed from memory (NV12, NV12_SEPARATE or Y, not through the resizer): its rows
// are the port's size, their distance alignedShape's W when the user's is wider (padded rows;
// the UCP generation's row stride), else the width.
bool pyramid_image(int32_t type);
struct PyramidRows {
  int64_t height = 0, width = 0, row_bytes = 0;
  bool nv12 = false;
};
PyramidRows pyramid_rows(const TensorPort& port, const hbDNNTensor& t);

// Plane `plane` of a user tensor: live hbSys memory holding at least `bytes`. Throws ApiError
// HB_DNN_INVALID_ARGUMENT naming the tensor and the plane.
void check_memory(const hbSysMem& mem, int64_t bytes, const TensorLabel& label, int plane);
// A user tensor against an input port (type, shapes, memory), a source image aside.
void check_input(const TensorPort& port, const hbDNNTensor& t, const TensorLabel& label);
// A user tensor against an output port.
void check_output(const TensorPort& port, const hbDNNTensor& t, const TensorLabel& label);

// Copies a checked user input into `dense` (port.dense_bytes): NV12 planes, dense data or the
// model's stride.
void gather_input(const TensorPort& port, const hbDNNTensor& t, uint8_t* dense);
// Resizes the ROI of a checked source image (a resizer input) into `dense`.
void gather_roi_input(const TensorPort& port, const hbDNNTensor& t, const hbDNNRoi& roi, uint8_t* dense);
// Copies a dense tensor of port's size into a checked user output.
void scatter_output(const TensorPort& port, const kernels::Tensor& t, hbDNNTensor& user);

}  // namespace openbpu::dnn
