// Ports: a model input or output as the C API describes it (tensor_port.h).
#include "tensor_port.h"

#include <algorithm>

#include <climits>
#include <cstring>

#include "error.h"
#include "flatbuffer_read.h"
#include "memory.h"
#include "openbpu/kernels/image_resize.h"

namespace openbpu::dnn {

kernels::DataType dtype_of(format::TensorType t) {
  switch (t) {
    case format::TensorType::IMG_TYPE_Y:
    case format::TensorType::IMG_TYPE_NV12:
    case format::TensorType::IMG_TYPE_NV12_SEPARATE:
    case format::TensorType::IMG_TYPE_YUV444:
    case format::TensorType::IMG_TYPE_RGB:
    case format::TensorType::IMG_TYPE_BGR:
    case format::TensorType::TENSOR_TYPE_U8: return kernels::DataType::kUint8;
    case format::TensorType::TENSOR_TYPE_S8: return kernels::DataType::kInt8;
    case format::TensorType::TENSOR_TYPE_F16: return kernels::DataType::kFloat16;
    case format::TensorType::TENSOR_TYPE_S16: return kernels::DataType::kInt16;
    case format::TensorType::TENSOR_TYPE_U16: return kernels::DataType::kUint16;
    case format::TensorType::TENSOR_TYPE_F32: return kernels::DataType::kFloat32;
    case format::TensorType::TENSOR_TYPE_S32: return kernels::DataType::kInt32;
    case format::TensorType::TENSOR_TYPE_U32: return kernels::DataType::kUint32;
    case format::TensorType::TENSOR_TYPE_F64: return kernels::DataType::kFloat64;
    case format::TensorType::TENSOR_TYPE_S64: return kernels::DataType::kInt64;
    case format::TensorType::TENSOR_TYPE_U64: return kernels::DataType::kUint64;
    default: return kernels::DataType::kUndefined;  // 4-bit types: no kernel computes on them
  }
}

namespace {

bool is_image(int32_t type) { return type >= HB_DNN_IMG_TYPE_Y && type <= HB_DNN_IMG_TYPE_BGR; }

hbDNNTensorShape shape_of(const std::vector<int64_t>& dims) {
  hbDNNTensorShape s{};
  s.numDimensions = static_cast<int32_t>(dims.size());
  for (size_t i = 0; i < dims.size() && i < HB_DNN_TENSOR_MAX_DIMENSIONS; ++i) s.dimensionSize[i] = static_cast<int32_t>(dims[i]);
  return s;
}

bool same_shape(const hbDNNTensorShape& a, const hbDNNTensorShape& b) {
  if (a.numDimensions != b.numDimensions) return false;
  for (int i = 0; i < a.numDimensions && i < HB_DNN_TENSOR_MAX_DIMENSIONS; ++i) {
    if (a.dimensionSize[i] != b.dimensionSize[i]) return false;
  }
  return true;
}

// Copies between a dense row-major buffer and a strided one (rank <= 8, byte strides).
void strided_copy(const uint8_t* src, uint8_t* dst, const hbDNNTensorShape& shape, const int32_t* strides, size_t element,
                  bool to_strided) {
  const int rank = shape.numDimensions;
  if (rank == 0) {
    std::memcpy(dst, src, element);
    return;
  }
  int64_t count = 1;
  for (int i = 0; i < rank; ++i) count *= shape.dimensionSize[i];
  if (count == 0) return;
  const int64_t row = shape.dimensionSize[rank - 1];
  const bool contiguous_rows = strides[rank - 1] == static_cast<int32_t>(element);
  int64_t index[HB_DNN_TENSOR_MAX_DIMENSIONS] = {};
  size_t dense = 0;
  for (int64_t done = 0; done < count; done += row) {
    int64_t offset = 0;
    for (int i = 0; i < rank - 1; ++i) offset += index[i] * strides[i];
    if (contiguous_rows) {
      if (to_strided) {
        std::memcpy(dst + offset, src + dense, static_cast<size_t>(row) * element);
      } else {
        std::memcpy(dst + dense, src + offset, static_cast<size_t>(row) * element);
      }
      dense += static_cast<size_t>(row) * element;
    } else {
      for (int64_t x = 0; x < row; ++x, dense += element) {
        const int64_t o = offset + x * strides[rank - 1];
        if (to_strided) {
          std::memcpy(dst + o, src + dense, element);
        } else {
          std::memcpy(dst + dense, src + o, element);
        }
      }
    }
    for (int i = rank - 2; i >= 0; --i) {
      if (++index[i] < shape.dimensionSize[i]) break;
      index[i] = 0;
    }
  }
}

// Bytes a strided tensor spans (its last addressed byte + 1).
int64_t strided_extent(const hbDNNTensorShape& shape, const int32_t* strides, size_t element) {
  int64_t last = 0;
  for (int i = 0; i < shape.numDimensions; ++i) {
    if (shape.dimensionSize[i] == 0) return 0;
    last += static_cast<int64_t>(shape.dimensionSize[i] - 1) * strides[i];
  }
  return last + static_cast<int64_t>(element);
}

bool all_zero(const int32_t* strides, int rank) {
  for (int i = 0; i < rank; ++i) {
    if (strides[i] != 0) return false;
  }
  return true;
}

}  // namespace

std::string shape_text(const hbDNNTensorShape& s) {
  std::string out = "(";
  for (int i = 0; i < s.numDimensions && i < HB_DNN_TENSOR_MAX_DIMENSIONS; ++i) {
    out += (i ? "," : "") + std::to_string(s.dimensionSize[i]);
  }
  return out + ")";
}

TensorPort port_of(const format::TensorDesc& d, const std::string& where) {
  TensorPort p;
  p.name = str(d.name());
  const std::vector<int64_t> valid = vec(d.valid_shape()), aligned = vec(d.aligned_shape());
  hbDNNTensorProperties& props = p.properties;
  props.validShape = shape_of(valid);
  props.alignedShape = shape_of(aligned);
  props.tensorLayout = static_cast<int32_t>(d.layout());
  props.tensorType = static_cast<int32_t>(d.tensor_type());
  props.quantiType = static_cast<hbDNNQuantiType>(d.quanti_type());
  props.quantizeAxis = d.quantize_axis();
  // At most base::kMaxTensorBytes: the model-file verifier refuses larger tensors.
  props.alignedByteSize = static_cast<int32_t>(d.aligned_byte_size());
  const std::vector<int64_t> stride = vec(d.stride());
  for (size_t i = 0; i < stride.size() && i < HB_DNN_TENSOR_MAX_DIMENSIONS; ++i) props.stride[i] = static_cast<int32_t>(stride[i]);
  p.shift = vec(d.shift());
  p.scale = vec(d.scale());
  for (int32_t z : vec(d.zero_point())) p.zero_point.push_back(static_cast<int8_t>(z));
  p.image = is_image(props.tensorType);
  p.dtype = dtype_of(d.tensor_type());
  if (p.dtype == kernels::DataType::kUndefined) {
    fail(HB_DNN_INCOMPATIBLE_MODEL, where, ", tensor '", p.name, "': 4-bit tensors are not supported by this runtime");
  }
  if (props.tensorType == HB_DNN_IMG_TYPE_NV12 || props.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE) {
    p.dense_shape = {static_cast<int64_t>(d.aligned_byte_size())};
  } else {
    p.dense_shape = valid;
  }
  p.dense_bytes = static_cast<size_t>(kernels::shape_element_count(p.dense_shape)) * kernels::dtype_size(p.dtype);
  return p;
}

void link_parameters(TensorPort& p) {
  p.properties.shift = {static_cast<int32_t>(p.shift.size()), p.shift.empty() ? nullptr : p.shift.data()};
  p.properties.scale = {static_cast<int32_t>(p.scale.size()), p.scale.empty() ? nullptr : p.scale.data(),
                        static_cast<int32_t>(p.zero_point.size()), p.zero_point.empty() ? nullptr : p.zero_point.data()};
}

TensorPort batch_item_of(const TensorPort& p, int32_t batch) {
  TensorPort item = p;
  item.properties.validShape.dimensionSize[0] = 1;
  item.properties.alignedShape.dimensionSize[0] = 1;
  item.properties.alignedByteSize = p.properties.alignedByteSize / batch;
  item.dense_shape[0] = 1;
  item.dense_bytes = p.dense_bytes / static_cast<size_t>(batch);
  link_parameters(item);
  return item;
}

std::ostream& operator<<(std::ostream& out, const TensorLabel& l) {
  out << l.what << ' ' << l.index << " ('" << l.name << "')";
  if (l.batch_item) out << " batch item " << l.item << " (input tensor " << l.tensor << ')';
  return out;
}

UserLayout layout_for(const TensorPort& port, const hbDNNTensor& t, const TensorLabel& label) {
  const hbDNNTensorProperties& model = port.properties;
  const hbDNNTensorProperties& user = t.properties;
  UserLayout l;
  const size_t element = kernels::dtype_size(port.dtype);
  if (port.image) {
    l.bytes = static_cast<int64_t>(port.dense_bytes);
    return l;
  }
  if (same_shape(user.alignedShape, model.validShape)) {
    l.bytes = static_cast<int64_t>(port.dense_bytes);
  } else if (same_shape(user.alignedShape, model.alignedShape)) {
    l.dense = all_zero(model.stride, model.validShape.numDimensions);
    l.bytes = l.dense ? static_cast<int64_t>(port.dense_bytes) : strided_extent(model.validShape, model.stride, element);
  } else {
    fail(HB_DNN_INVALID_ARGUMENT, label, ": alignedShape ", shape_text(user.alignedShape),
         " is neither the model's alignedShape ", shape_text(model.alignedShape), " nor its validShape ",
         shape_text(model.validShape), " (dense data)");
  }
  return l;
}

int height_axis(const TensorPort& port) { return port.properties.tensorLayout == HB_DNN_LAYOUT_NHWC ? 1 : 2; }

SourceImage source_image(const TensorPort& port, const hbDNNTensor& t) {
  const int h = height_axis(port);
  SourceImage s;
  s.height = t.properties.validShape.dimensionSize[h];
  s.width = t.properties.validShape.dimensionSize[h + 1];
  s.row_bytes = t.properties.alignedShape.dimensionSize[h + 1];
  s.nv12 = port.properties.tensorType != HB_DNN_IMG_TYPE_Y;
  return s;
}

bool pyramid_image(int32_t type) {
  return type == HB_DNN_IMG_TYPE_NV12 || type == HB_DNN_IMG_TYPE_NV12_SEPARATE || type == HB_DNN_IMG_TYPE_Y;
}

PyramidRows pyramid_rows(const TensorPort& port, const hbDNNTensor& t) {
  const int h_axis = height_axis(port);
  const hbDNNTensorShape& valid = port.properties.validShape;
  PyramidRows r;
  r.height = valid.dimensionSize[h_axis];
  r.width = valid.dimensionSize[h_axis + 1];
  r.row_bytes = r.width;
  if (t.properties.alignedShape.numDimensions == valid.numDimensions) {
    r.row_bytes = std::max<int64_t>(r.width, t.properties.alignedShape.dimensionSize[h_axis + 1]);
  }
  r.nv12 = port.properties.tensorType != HB_DNN_IMG_TYPE_Y;
  return r;
}

void check_memory(const hbSysMem& mem, int64_t bytes, const TensorLabel& label, int plane) {
  if (mem.virAddr == nullptr) fail(HB_DNN_INVALID_ARGUMENT, label, ": sysMem[", plane, "].virAddr is NULL");
  if (static_cast<int64_t>(mem.memSize) < bytes) {
    fail(HB_DNN_INVALID_ARGUMENT, label, ": sysMem[", plane, "].memSize ", mem.memSize, " is smaller than the ",
         bytes, " bytes the tensor needs");
  }
  if (!MemoryRegistry::instance().contains(mem.virAddr, static_cast<size_t>(bytes))) {
    fail(HB_DNN_INVALID_ARGUMENT, label, ": sysMem[", plane, "] is not live memory from hbSysAllocMem / ",
         "hbSysAllocCachedMem / hbSysRegisterMem holding ", bytes, " bytes (freed, or never allocated)");
  }
}

void check_input(const TensorPort& port, const hbDNNTensor& t, const TensorLabel& label) {
  const int32_t type = t.properties.tensorType;
  const int32_t model_type = port.properties.tensorType;
  const bool nv12 = model_type == HB_DNN_IMG_TYPE_NV12 || model_type == HB_DNN_IMG_TYPE_NV12_SEPARATE;
  const bool type_ok = type == model_type || (nv12 && (type == HB_DNN_IMG_TYPE_NV12 || type == HB_DNN_IMG_TYPE_NV12_SEPARATE));
  if (!type_ok) {
    fail(HB_DNN_INVALID_ARGUMENT, label, ": tensorType ", type, " differs from the model's ", model_type,
         nv12 ? " (an NV12 input takes HB_DNN_IMG_TYPE_NV12 or HB_DNN_IMG_TYPE_NV12_SEPARATE)" : "");
  }
  if (pyramid_image(type)) {
    const PyramidRows rows = pyramid_rows(port, t);
    if (type == HB_DNN_IMG_TYPE_NV12_SEPARATE) {
      check_memory(t.sysMem[0], rows.row_bytes * rows.height, label, 0);
      check_memory(t.sysMem[1], rows.row_bytes * (rows.height / 2), label, 1);
    } else {
      check_memory(t.sysMem[0], rows.row_bytes * (rows.height + (rows.nv12 ? rows.height / 2 : 0)), label, 0);
    }
    return;
  }
  const UserLayout l = layout_for(port, t, label);
  check_memory(t.sysMem[0], l.bytes, label, 0);
}

void check_output(const TensorPort& port, const hbDNNTensor& t, const TensorLabel& label) {
  if (t.properties.tensorType != port.properties.tensorType) {
    fail(HB_DNN_INVALID_ARGUMENT, label, ": tensorType ", t.properties.tensorType, " differs from the model's ",
         port.properties.tensorType);
  }
  const UserLayout l = layout_for(port, t, label);
  check_memory(t.sysMem[0], l.bytes, label, 0);
}

void gather_input(const TensorPort& port, const hbDNNTensor& t, uint8_t* dense) {
  if (pyramid_image(t.properties.tensorType)) {
    const PyramidRows rows = pyramid_rows(port, t);
    const auto* y = static_cast<const uint8_t*>(t.sysMem[0].virAddr);
    const uint8_t* uv = t.properties.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE ? static_cast<const uint8_t*>(t.sysMem[1].virAddr)
                                                                                 : y + rows.row_bytes * rows.height;
    const int64_t plane_rows = rows.height + (rows.nv12 ? rows.height / 2 : 0);
    for (int64_t r = 0; r < plane_rows; ++r) {
      const uint8_t* src = r < rows.height ? y + r * rows.row_bytes : uv + (r - rows.height) * rows.row_bytes;
      std::memcpy(dense + r * rows.width, src, static_cast<size_t>(rows.width));
    }
    return;
  }
  static const std::string unused;
  const UserLayout l = layout_for(port, t, {"input", 0, unused});  // checked: no error here
  if (l.dense) {
    std::memcpy(dense, t.sysMem[0].virAddr, port.dense_bytes);
  } else {
    strided_copy(static_cast<const uint8_t*>(t.sysMem[0].virAddr), dense, port.properties.validShape,
                 port.properties.stride, kernels::dtype_size(port.dtype), false);
  }
}

void gather_roi_input(const TensorPort& port, const hbDNNTensor& t, const hbDNNRoi& roi, uint8_t* dense) {
  const SourceImage img = source_image(port, t);
  const auto* y = static_cast<const uint8_t*>(t.sysMem[0].virAddr);
  const uint8_t* uv = !img.nv12 ? nullptr
                      : t.properties.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE
                          ? static_cast<const uint8_t*>(t.sysMem[1].virAddr)
                          : y + img.row_bytes * img.height;
  const int h_axis = height_axis(port);
  kernels::resize_image_roi({y, img.row_bytes}, {uv, img.row_bytes}, {roi.left, roi.top, roi.right, roi.bottom},
                            port.properties.validShape.dimensionSize[h_axis + 1],
                            port.properties.validShape.dimensionSize[h_axis], dense);
}

void scatter_output(const TensorPort& port, const kernels::Tensor& t, hbDNNTensor& user) {
  static const std::string unused;
  const UserLayout l = layout_for(port, user, {"output", 0, unused});  // checked: no error here
  if (l.dense) {
    std::memcpy(user.sysMem[0].virAddr, t.raw_data(), port.dense_bytes);
  } else {
    strided_copy(static_cast<const uint8_t*>(t.raw_data()), static_cast<uint8_t*>(user.sysMem[0].virAddr),
                 port.properties.validShape, port.properties.stride, kernels::dtype_size(port.dtype), true);
  }
}

}  // namespace openbpu::dnn
