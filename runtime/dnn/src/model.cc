// Model loading and one inference (model.h).
#include "model.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>
#include <optional>
#include <span>
#include <system_error>

#include "error.h"
#include "layer_dump.h"
#include "memory.h"
#include "openbpu/base/file_name.h"
#include "openbpu/kernels/error.h"
#include "openbpu/kernels/image_resize.h"
#include "openbpu/kernels/registry.h"

namespace openbpu::dnn {

namespace {

using kernels::DataType;
using FbTensorType = format::TensorType;

std::string str(const flatbuffers::String* s) { return s == nullptr ? std::string() : s->str(); }

template <typename T>
std::vector<T> vec(const flatbuffers::Vector<T>* v) {
  return v == nullptr ? std::vector<T>() : std::vector<T>(v->begin(), v->end());
}

DataType dtype_of(FbTensorType t) {
  switch (t) {
    case FbTensorType::IMG_TYPE_Y:
    case FbTensorType::IMG_TYPE_NV12:
    case FbTensorType::IMG_TYPE_NV12_SEPARATE:
    case FbTensorType::IMG_TYPE_YUV444:
    case FbTensorType::IMG_TYPE_RGB:
    case FbTensorType::IMG_TYPE_BGR:
    case FbTensorType::TENSOR_TYPE_U8: return DataType::kUint8;
    case FbTensorType::TENSOR_TYPE_S8: return DataType::kInt8;
    case FbTensorType::TENSOR_TYPE_F16: return DataType::kFloat16;
    case FbTensorType::TENSOR_TYPE_S16: return DataType::kInt16;
    case FbTensorType::TENSOR_TYPE_U16: return DataType::kUint16;
    case FbTensorType::TENSOR_TYPE_F32: return DataType::kFloat32;
    case FbTensorType::TENSOR_TYPE_S32: return DataType::kInt32;
    case FbTensorType::TENSOR_TYPE_U32: return DataType::kUint32;
    case FbTensorType::TENSOR_TYPE_F64: return DataType::kFloat64;
    case FbTensorType::TENSOR_TYPE_S64: return DataType::kInt64;
    case FbTensorType::TENSOR_TYPE_U64: return DataType::kUint64;
    default: return DataType::kUndefined;  // 4-bit types: no kernel computes on them
  }
}

DataType dtype_of(BpuElementType t) {
  switch (t) {
    case BpuElementType::kInt8: return DataType::kInt8;
    case BpuElementType::kInt16: return DataType::kInt16;
    case BpuElementType::kInt32: return DataType::kInt32;
    case BpuElementType::kUint8: return DataType::kUint8;
  }
  return DataType::kUndefined;
}

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

std::string shape_text(const hbDNNTensorShape& s) {
  std::string out = "(";
  for (int i = 0; i < s.numDimensions && i < HB_DNN_TENSOR_MAX_DIMENSIONS; ++i) {
    out += (i ? "," : "") + std::to_string(s.dimensionSize[i]);
  }
  return out + ")";
}

TensorPort port_of(const format::TensorDesc& d, const std::string& model) {
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
  if (d.aligned_byte_size() > static_cast<uint64_t>(INT32_MAX)) {
    fail(HB_DNN_INCOMPATIBLE_MODEL, "model '", model, "', tensor '", p.name, "': ", d.aligned_byte_size(),
         " bytes do not fit the int32 alignedByteSize of the C API");
  }
  props.alignedByteSize = static_cast<int32_t>(d.aligned_byte_size());
  const std::vector<int64_t> stride = vec(d.stride());
  for (size_t i = 0; i < stride.size() && i < HB_DNN_TENSOR_MAX_DIMENSIONS; ++i) props.stride[i] = static_cast<int32_t>(stride[i]);
  p.shift = vec(d.shift());
  p.scale = vec(d.scale());
  for (int32_t z : vec(d.zero_point())) p.zero_point.push_back(static_cast<int8_t>(z));
  p.image = is_image(props.tensorType);
  p.dtype = dtype_of(d.tensor_type());
  if (p.dtype == DataType::kUndefined) {
    fail(HB_DNN_INCOMPATIBLE_MODEL, "model '", model, "', tensor '", p.name, "': 4-bit tensors are not supported by this runtime");
  }
  if (props.tensorType == HB_DNN_IMG_TYPE_NV12 || props.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE) {
    p.dense_shape = {static_cast<int64_t>(d.aligned_byte_size())};
  } else {
    p.dense_shape = valid;
  }
  p.dense_bytes = static_cast<size_t>(kernels::shape_element_count(p.dense_shape)) * kernels::dtype_size(p.dtype);
  return p;
}

// Points the C struct at the port's own parameter storage.
void link_parameters(TensorPort& p) {
  p.properties.shift = {static_cast<int32_t>(p.shift.size()), p.shift.empty() ? nullptr : p.shift.data()};
  p.properties.scale = {static_cast<int32_t>(p.scale.size()), p.scale.empty() ? nullptr : p.scale.data(),
                        static_cast<int32_t>(p.zero_point.size()), p.zero_point.empty() ? nullptr : p.zero_point.data()};
}

kernels::Tensor tensor_of(const format::ConstTensor& c, const std::string& where) {
  const DataType dtype = dtype_of(c.data_type());
  if (dtype == DataType::kUndefined) fail(HB_DNN_INCOMPATIBLE_MODEL, where, ": constant '", str(c.name()), "' has a type no kernel reads");
  kernels::Tensor t(dtype, vec(c.shape()));
  const size_t bytes = c.data() == nullptr ? 0 : c.data()->size();
  if (bytes != t.byte_size()) fail(HB_DNN_INVALID_MODEL, where, ": constant '", str(c.name()), "' holds ", bytes, " bytes, its shape needs ", t.byte_size());
  if (bytes) std::memcpy(t.raw_data(), c.data()->data(), bytes);
  return t;
}

kernels::AttributeMap attributes_of(const format::CpuOp& op, const std::string& where) {
  kernels::AttributeMap attrs;
  if (op.attributes() == nullptr) return attrs;
  for (const format::Attribute* a : *op.attributes()) {
    const std::string name = str(a->name());
    switch (a->type()) {
      case format::AttributeType::INT: attrs.set(name, a->i()); break;
      case format::AttributeType::FLOAT: attrs.set(name, a->f()); break;
      case format::AttributeType::STRING: attrs.set(name, str(a->s())); break;
      case format::AttributeType::TENSOR: attrs.set(name, tensor_of(*a->t(), where + ", attribute '" + name + "'")); break;
      case format::AttributeType::INTS: attrs.set(name, vec(a->ints())); break;
      case format::AttributeType::FLOATS: attrs.set(name, vec(a->floats())); break;
      case format::AttributeType::STRINGS: {
        std::vector<std::string> v;
        if (a->strings() != nullptr) {
          for (const flatbuffers::String* s : *a->strings()) v.push_back(str(s));
        }
        attrs.set(name, std::move(v));
        break;
      }
      default: fail(HB_DNN_INVALID_MODEL, where, ": attribute '", name, "' has no value type");
    }
  }
  return attrs;
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

// How one user tensor maps onto a port: dense (alignedShape == validShape) or laid out by the
// model's stride (alignedShape == the model's).
struct Layout {
  bool dense = true;
  int64_t bytes = 0;  // bytes the user memory must hold
};

// Names a tensor in errors, formatted only when one is thrown: "input 0 ('x')", or
// "input 0 ('x') batch item 1 (input tensor 1)".
struct TensorLabel {
  const char* what;  // "input" / "output"
  size_t index;
  const std::string& name;
  size_t item = 0, tensor = 0;
  bool batch_item = false;
};
std::ostream& operator<<(std::ostream& out, const TensorLabel& l) {
  out << l.what << ' ' << l.index << " ('" << l.name << "')";
  if (l.batch_item) out << " batch item " << l.item << " (input tensor " << l.tensor << ')';
  return out;
}

Layout layout_for(const TensorPort& port, const hbDNNTensor& t, const TensorLabel& label) {
  const hbDNNTensorProperties& model = port.properties;
  const hbDNNTensorProperties& user = t.properties;
  Layout l;
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

// Where an image port keeps H and W: (..., H, W) for NCHW, (..., H, W, C) for NHWC.
int height_axis(const TensorPort& port) { return port.properties.tensorLayout == HB_DNN_LAYOUT_NHWC ? 1 : 2; }

// A resizer input's source image as hbDNNRoiInfer takes it (hb_dnn.h): its size and the bytes
// between two rows, from validShape / alignedShape in the port's layout.
struct SourceImage {
  int64_t height = 0, width = 0, row_bytes = 0;
  bool nv12 = false;
};
SourceImage source_image(const TensorPort& port, const hbDNNTensor& t) {
  const int h = height_axis(port);
  SourceImage s;
  s.height = t.properties.validShape.dimensionSize[h];
  s.width = t.properties.validShape.dimensionSize[h + 1];
  s.row_bytes = t.properties.alignedShape.dimensionSize[h + 1];
  s.nv12 = port.properties.tensorType != HB_DNN_IMG_TYPE_Y;
  return s;
}

void check_input(const TensorPort& port, const hbDNNTensor& t, const TensorLabel& label);

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

}  // namespace

Model::Model(const format::Model& model, Platform& platform, const std::string& file)
    : name_(str(model.name())), platform_(platform) {
  const std::string where_model = "'" + file + "', model '" + name_ + "'";
  if (model.inputs() != nullptr) {
    for (const format::TensorDesc* d : *model.inputs()) {
      inputs_.push_back(port_of(*d, name_));
      inputs_.back().source = static_cast<int32_t>(d->input_source());
      if (d->input_source() == format::InputSource::RESIZER) resizer_inputs_.push_back(inputs_.size() - 1);
    }
  }
  if (model.outputs() != nullptr) {
    for (const format::TensorDesc* d : *model.outputs()) outputs_.push_back(port_of(*d, name_));
  }
  for (TensorPort& p : inputs_) link_parameters(p);
  for (TensorPort& p : outputs_) link_parameters(p);
  // Batch items (model.h, batch()): one item is the input with batch dimension 1.
  {
    int32_t n = 0;
    for (const TensorPort& p : inputs_) {
      const hbDNNTensorShape& v = p.properties.validShape;
      const bool nv12 = p.properties.tensorType == HB_DNN_IMG_TYPE_NV12 || p.properties.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE;
      const int32_t b = v.numDimensions >= 1 && !nv12 ? v.dimensionSize[0] : 0;
      n = (n == 0 || n == b) ? b : -1;
    }
    if (n > 1) {
      batch_ = n;
      for (const TensorPort& p : inputs_) {
        TensorPort item = p;
        item.properties.validShape.dimensionSize[0] = 1;
        item.properties.alignedShape.dimensionSize[0] = 1;
        item.properties.alignedByteSize = p.properties.alignedByteSize / n;
        item.dense_shape[0] = 1;
        item.dense_bytes = p.dense_bytes / static_cast<size_t>(n);
        link_parameters(item);
        batch_items_.push_back(std::move(item));
      }
    }
  }
  const uint32_t I = static_cast<uint32_t>(inputs_.size()), O = static_cast<uint32_t>(outputs_.size());
  table_size_ = I + O + (model.tensors() == nullptr ? 0 : model.tensors()->size());
  slot_names_.reserve(table_size_);
  for (const TensorPort& p : inputs_) slot_names_.push_back(p.name);
  for (const TensorPort& p : outputs_) slot_names_.push_back(p.name);
  if (model.tensors() != nullptr) {
    for (const format::TensorDesc* d : *model.tensors()) slot_names_.push_back(str(d->name()));
  }
  if (const char* dir = std::getenv("HB_DNN_DUMP_PATH"); dir != nullptr && *dir != '\0') {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (!std::filesystem::is_directory(dir)) {
      fail(HB_DNN_INVALID_ARGUMENT, "HB_DNN_DUMP_PATH '", dir, "' is not a directory and cannot be created",
           ec ? ": " + ec.message() : std::string());
    }
    dump_dir_ = dir;
    const char* format_env = std::getenv("HB_DNN_DUMP_FORMAT");
    const std::optional<LayerDumpFormat> dump_format = parse_layer_dump_format(format_env);
    if (!dump_format) {
      fail(HB_DNN_INVALID_ARGUMENT, "HB_DNN_DUMP_FORMAT '", format_env,
           "' is not one of bin, txt, bin,txt");
    }
    dump_txt_ = dump_format->txt;
  }
  auto table_index = [&](const format::TensorRef& r) -> uint32_t {
    switch (r.kind()) {
      case format::TensorRefKind::MODEL_INPUT: return r.index();
      case format::TensorRefKind::MODEL_OUTPUT: return I + r.index();
      case format::TensorRefKind::INTERMEDIATE: return I + O + r.index();
      default: fail(HB_DNN_INVALID_MODEL, where_model, ": a segment refers to a constant or absent tensor");
    }
  };

  segments_.reserve(model.segments()->size());  // push_back below cannot throw
  try {
    for (const format::Segment* s : *model.segments()) {
      Segment seg;
      seg.name = str(s->name());
      const std::string where = where_model + ", segment '" + seg.name + "'";
      if (const format::CpuSegment* cpu = s->body_as_CpuSegment()) {
        CpuSegment body;
        for (const format::CpuOp* op : *cpu->ops()) {
          CpuOperator o;
          o.name = str(op->name());
          o.op_type = str(op->op_type());
          const std::string domain = str(op->domain());
          const std::string where_op = where + ", operator '" + o.name + "' (" + (domain.empty() ? "" : domain + ".") + o.op_type + ")";
          if (op->constants() != nullptr) {
            for (const format::ConstTensor* c : *op->constants()) o.constants.push_back(tensor_of(*c, where_op));
          }
          const uint32_t input_count = op->inputs() == nullptr ? 0 : op->inputs()->size();
          for (uint32_t i = 0; i < input_count; ++i) {
            const format::TensorRef& r = *op->inputs()->Get(i);
            Slot slot;
            if (r.kind() == format::TensorRefKind::OP_CONSTANT) {
              slot = {Slot::kConstant, r.index()};
            } else if (r.kind() == format::TensorRefKind::ABSENT) {
              slot = {Slot::kAbsent, 0};
            } else {
              slot = {Slot::kTable, table_index(r)};
            }
            o.inputs.push_back(slot);
          }
          for (const format::TensorRef* r : *op->outputs()) o.outputs.push_back(table_index(*r));
          const kernels::AttributeMap attrs = attributes_of(*op, where_op);
          if (kernels::find_kernel(domain, o.op_type) == nullptr) {
            fail(HB_DNN_INCOMPATIBLE_MODEL, where_op, ": this runtime has no CPU kernel for the operator");
          }
          if (op->opset() == 0) {
            fail(HB_DNN_INCOMPATIBLE_MODEL, where_op, ": the file (format 1.0) does not record the operator's opset; ",
                 "convert the model again with this toolchain");
          }
          const kernels::NodeInfo info{o.name, o.op_type, domain, static_cast<int>(op->opset()), attrs,
                                       static_cast<int>(input_count), static_cast<int>(o.outputs.size())};
          try {
            o.kernel = kernels::create_kernel(info);
          } catch (const kernels::KernelError& e) {
            fail(HB_DNN_INVALID_MODEL, where_op, ": ", e.what());
          }
          o.input_offset = op_input_count_;
          op_input_count_ += o.inputs.size();
          for (size_t k = 0; k < o.outputs.size(); ++k) {
            if (o.outputs[k] != o.outputs[0] + k) o.adjacent_outputs = false;
            cpu_output_slots_.push_back(o.outputs[k]);
          }
          if (!o.adjacent_outputs) {
            o.staging_offset = op_staging_count_;
            op_staging_count_ += o.outputs.size();
          }
          body.ops.push_back(std::move(o));
        }
        seg.body = std::move(body);
      } else if (const format::BpuSegment* bpu = s->body_as_BpuSegment()) {
        if (bpu->isa_version() > platform_.chip().isa_version) {
          fail(HB_DNN_INCOMPATIBLE_MODEL, where, ": the program uses BPU ISA v", bpu->isa_version(), "; this runtime runs up to v",
               platform_.chip().isa_version);
        }
        BpuSegment body;
        const std::span<const uint8_t> program(bpu->program()->data(), bpu->program()->size());
        const std::span<const uint8_t> weights = bpu->weights() == nullptr
                                                     ? std::span<const uint8_t>()
                                                     : std::span<const uint8_t>(bpu->weights()->data(), bpu->weights()->size());
        try {
          for (int c = 0; c < platform_.cores(); ++c) {
            const BpuResult r = platform_.core(c).load(program, weights);
            if (r.status == BpuStatus::kOutOfMemory) fail(HB_DNN_OUT_OF_MEMORY, where, ": ", r.message);
            if (!r.ok()) fail(HB_DNN_INVALID_MODEL, where, ": ", r.message);
            body.programs.push_back(r.id);
          }
          const BpuProgramInfo& decoded = *platform_.core(0).program_info(body.programs.front());
          if (bpu->inputs()->size() != decoded.inputs.size() || bpu->outputs()->size() != decoded.outputs.size()) {
            fail(HB_DNN_INVALID_MODEL, where, ": the segment lists ", bpu->inputs()->size(), " inputs / ", bpu->outputs()->size(),
                 " outputs, its program binds ", decoded.inputs.size(), " / ", decoded.outputs.size());
          }
          for (uint32_t i = 0; i < bpu->inputs()->size(); ++i) {
            const uint32_t slot = table_index(*bpu->inputs()->Get(i));
            const size_t bytes = decoded.inputs[i].bytes;
            if (slot < I && inputs_[slot].dense_bytes != bytes) {
              fail(HB_DNN_INVALID_MODEL, where, ": model input '", inputs_[slot].name, "' holds ", inputs_[slot].dense_bytes,
                   " bytes, the program reads ", bytes);
            }
            body.inputs.push_back(slot);
            body.input_bytes.push_back(bytes);
          }
          for (uint32_t i = 0; i < bpu->outputs()->size(); ++i) {
            body.outputs.push_back(table_index(*bpu->outputs()->Get(i)));
            const BpuBinding& d = decoded.outputs[i];
            body.output_types.push_back(dtype_of(d.type));
            body.output_shapes.push_back(d.dims);
          }
          body.span_offset_in = bpu_span_in_;
          body.span_offset_out = bpu_span_out_;
          bpu_span_in_ += body.inputs.size();
          bpu_span_out_ += body.outputs.size();
        } catch (...) {
          for (size_t c = 0; c < body.programs.size(); ++c) (void)platform_.core(static_cast<int>(c)).unload(body.programs[c]);
          throw;
        }
        seg.body = std::move(body);
      } else {
        fail(HB_DNN_INCOMPATIBLE_MODEL, where, ": a segment kind this runtime does not know");
      }
      segments_.push_back(std::move(seg));
    }
    if (Profiler* profiler = Profiler::active()) {
      // The keys in the order advance() reports the layers.
      std::vector<std::string> keys{name_ + "_subgraph_0_input_layout_convert"};
      for (const Segment& seg : segments_) {
        if (const auto* cpu = std::get_if<CpuSegment>(&seg.body)) {
          for (const CpuOperator& op : cpu->ops) keys.push_back(op.name.empty() ? op.op_type : op.name + "_" + op.op_type);
        } else {
          keys.push_back(seg.name);
        }
      }
      keys.push_back(name_ + "_subgraph_0_output_layout_convert");
      layer_count_ = keys.size();
      profile_record_ = profiler->register_model(name_, std::move(keys));
      profiler_ = profiler;
    }
  } catch (...) {
    for (Segment& s : segments_) {
      if (auto* b = std::get_if<BpuSegment>(&s.body)) {
        for (size_t c = 0; c < b->programs.size(); ++c) (void)platform_.core(static_cast<int>(c)).unload(b->programs[c]);
      }
    }
    throw;
  }
}

Model::~Model() {
  for (Segment& s : segments_) {
    if (auto* b = std::get_if<BpuSegment>(&s.body)) {
      for (size_t c = 0; c < b->programs.size(); ++c) (void)platform_.core(static_cast<int>(c)).unload(b->programs[c]);
    }
  }
}

size_t Model::input_tensor_count(const hbDNNTensor* inputs) const {
  if (batch_ > 1 && !inputs_.empty()) {
    const hbDNNTensorShape& v = inputs[0].properties.validShape;
    if (v.numDimensions >= 1 && v.dimensionSize[0] == 1) return inputs_.size() * static_cast<size_t>(batch_);
  }
  return inputs_.size();
}

void Model::check_tensors(const hbDNNTensor* inputs, const hbDNNTensor* outputs) const {
  check_inputs(inputs);
  check_outputs(outputs);
}

void Model::check_inputs(const hbDNNTensor* inputs) const {
  const bool items = input_tensor_count(inputs) != inputs_.size();
  const size_t per_input = items ? static_cast<size_t>(batch_) : 1;
  for (size_t k = 0; k < inputs_.size() * per_input; ++k) {
    const size_t i = k / per_input;
    const TensorPort& port = items ? batch_items_[i] : inputs_[i];
    check_input(port, inputs[k], TensorLabel{"input", i, port.name, k % per_input, k, items});
  }
}

namespace {
void check_input(const TensorPort& port, const hbDNNTensor& t, const TensorLabel& label) {
  {
    const int32_t type = t.properties.tensorType;
    const int32_t model_type = port.properties.tensorType;
    const bool nv12 = model_type == HB_DNN_IMG_TYPE_NV12 || model_type == HB_DNN_IMG_TYPE_NV12_SEPARATE;
    const bool type_ok = type == model_type || (nv12 && (type == HB_DNN_IMG_TYPE_NV12 || type == HB_DNN_IMG_TYPE_NV12_SEPARATE));
    if (!type_ok) {
      fail(HB_DNN_INVALID_ARGUMENT, label, ": tensorType ", type, " differs from the model's ", model_type,
           nv12 ? " (an NV12 input takes HB_DNN_IMG_TYPE_NV12 or HB_DNN_IMG_TYPE_NV12_SEPARATE)" : "");
    }
    if (type == HB_DNN_IMG_TYPE_NV12_SEPARATE) {
      const int64_t y = static_cast<int64_t>(port.dense_bytes) * 2 / 3;
      check_memory(t.sysMem[0], y, label, 0);
      check_memory(t.sysMem[1], static_cast<int64_t>(port.dense_bytes) - y, label, 1);
      return;
    }
    const Layout l = layout_for(port, t, label);
    check_memory(t.sysMem[0], l.bytes, label, 0);
  }
}
}  // namespace

void Model::check_roi_inputs(const hbDNNTensor* inputs, const hbDNNRoi* rois, size_t batch) const {
  const BpuChipInfo& chip = platform_.chip();
  size_t r = 0;  // the next resizer input's ROI
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const TensorPort& port = inputs_[i];
    const hbDNNTensor& t = inputs[i];
    if (port.source != HB_DNN_INPUT_FROM_RESIZER) {
      check_input(port, t, TensorLabel{"input", i, port.name});
      continue;
    }
    const hbDNNRoi& roi = rois[r];
    const size_t roi_index = batch * resizer_inputs_.size() + r;
    ++r;
    auto where = [&](auto&&... parts) {
      fail(HB_DNN_INVALID_ARGUMENT, "batch ", batch, " input ", i, " ('", port.name, "', resizer, input tensor ",
           batch * inputs_.size() + i, "): ", parts...);
    };
    const int32_t model_type = port.properties.tensorType;
    const int32_t type = t.properties.tensorType;
    const bool type_ok = model_type == HB_DNN_IMG_TYPE_Y ? type == HB_DNN_IMG_TYPE_Y
                                                         : type == HB_DNN_IMG_TYPE_NV12 || type == HB_DNN_IMG_TYPE_NV12_SEPARATE;
    if (!type_ok) {
      where("tensorType ", type, " is not the model's image type ", model_type,
            model_type == HB_DNN_IMG_TYPE_Y ? "" : " (an NV12 input takes HB_DNN_IMG_TYPE_NV12 or HB_DNN_IMG_TYPE_NV12_SEPARATE)");
    }
    const hbDNNTensorShape& valid = t.properties.validShape;
    const hbDNNTensorShape& aligned = t.properties.alignedShape;
    const int h_axis = height_axis(port);
    if (valid.numDimensions != port.properties.validShape.numDimensions || aligned.numDimensions != valid.numDimensions ||
        valid.dimensionSize[0] != 1) {
      where("the source image's validShape / alignedShape must have rank ", port.properties.validShape.numDimensions,
            " and batch 1, as the model's ", shape_text(port.properties.validShape), " with H and W of the image");
    }
    const SourceImage img = source_image(port, t);
    const int64_t max = chip.resizer_image_max;
    if (img.height < 1 || img.width < 1 || img.height > max || img.width > max) {
      where("the source image is ", img.width, "x", img.height, "; the resizer of ", chip.march, " reads images of 1..", max,
            " pixels per side");
    }
    if (img.nv12 && (img.height % 2 != 0 || img.width % 2 != 0)) {
      where("an NV12 image has even width and height; validShape gives ", img.width, "x", img.height);
    }
    if (img.row_bytes < img.width) {
      where("alignedShape[", h_axis + 1, "] = ", img.row_bytes, " (the bytes between two rows) is less than the width ", img.width);
    }
    const TensorLabel label{"input", i, port.name};
    const int64_t y_bytes = img.row_bytes * img.height;
    if (type == HB_DNN_IMG_TYPE_NV12_SEPARATE) {
      check_memory(t.sysMem[0], y_bytes, label, 0);
      check_memory(t.sysMem[1], y_bytes / 2, label, 1);
    } else {
      check_memory(t.sysMem[0], img.nv12 ? y_bytes + y_bytes / 2 : y_bytes, label, 0);
    }
    auto bad_roi = [&](auto&&... parts) {
      where("rois[", roi_index, "] (", roi.left, ",", roi.top, ",", roi.right, ",", roi.bottom, ") ", parts...);
    };
    if (roi.left < 0 || roi.top < 0 || roi.right >= img.width || roi.bottom >= img.height || roi.left > roi.right ||
        roi.top > roi.bottom) {
      bad_roi("is not a box inside the ", img.width, "x", img.height, " image (inclusive left <= right < width, top <= bottom < height)");
    }
    if (roi.left % 2 != 0 || roi.top % 2 != 0 || roi.right % 2 != 1 || roi.bottom % 2 != 1) {
      bad_roi("must have even left and top, odd right and bottom");
    }
    const int64_t roi_w = int64_t{roi.right} - roi.left + 1, roi_h = int64_t{roi.bottom} - roi.top + 1;
    if (roi_w < chip.resizer_roi_min || roi_h < chip.resizer_roi_min || roi_w > chip.resizer_roi_max ||
        roi_h > chip.resizer_roi_max) {
      bad_roi("is ", roi_w, "x", roi_h, "; the resizer of ", chip.march, " takes ROIs of ", chip.resizer_roi_min, "..",
              chip.resizer_roi_max, " pixels per side");
    }
    const int64_t in_h = port.properties.validShape.dimensionSize[h_axis];
    const int64_t in_w = port.properties.validShape.dimensionSize[h_axis + 1];
    const double sw = static_cast<double>(roi_w) / static_cast<double>(in_w);
    const double sh = static_cast<double>(roi_h) / static_cast<double>(in_h);
    if (!(sw > chip.resizer_scale_min && sw <= chip.resizer_scale_max && sh > chip.resizer_scale_min &&
          sh <= chip.resizer_scale_max)) {
      bad_roi("is ", roi_w, "x", roi_h, " for a ", in_w, "x", in_h, " input: ROI side / input side must be in (",
              chip.resizer_scale_min, ", ", chip.resizer_scale_max, "] on ", chip.march);
    }
  }
}

void Model::check_outputs(const hbDNNTensor* outputs) const {
  for (size_t i = 0; i < outputs_.size(); ++i) {
    const TensorPort& port = outputs_[i];
    const hbDNNTensor& t = outputs[i];
    if (t.properties.tensorType != port.properties.tensorType) {
      fail(HB_DNN_INVALID_ARGUMENT, "output ", i, " ('", port.name, "'): tensorType ", t.properties.tensorType, " differs from the model's ",
           port.properties.tensorType);
    }
    const TensorLabel label{"output", i, port.name};
    const Layout l = layout_for(port, t, label);
    check_memory(t.sysMem[0], l.bytes, label, 0);
  }
}

void Model::dump_layer(size_t layer, const char* kind, const std::string& layer_name, uint32_t slot,
                       const kernels::Tensor& t) const {
  using base::file_name_part;
  char index[16];
  std::snprintf(index, sizeof index, "%03zu", layer);
  const std::string stem = dump_dir_ + "/" + file_name_part(name_) + "_" + index + "_" + kind + "_" +
                           file_name_part(layer_name) + "_" + file_name_part(slot_names_[slot]);
  format::Status status = format::write_file_atomically(
      stem + ".bin",
      std::span<const uint8_t>(static_cast<const uint8_t*>(t.raw_data()), t.byte_size()),
      "layer dump (HB_DNN_DUMP_PATH)");
  if (status.ok() && dump_txt_) {
    const std::string text = layer_dump_text(t);
    status = format::write_file_atomically(
        stem + ".txt",
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()),
        "layer dump (HB_DNN_DUMP_FORMAT txt)");
  }
  if (!status.ok()) fail(HB_DNN_RUN_TASK_FAILED, "model '", name_, "': ", status.message);
}

void Inference::reset(const hbDNNTensor* in, hbDNNTensor* out, const hbDNNRoi* roi_list) {
  inputs = in;
  outputs = out;
  rois = roi_list;
  started = false;
  segment = 0;
  layer = 0;
  if (context != nullptr) model->release_context(context);
  context = nullptr;
  model = nullptr;
  core = -1;
  bpu_failure = nullptr;
  bpu_ms = cpu_ms = 0;
}

std::unique_ptr<ExecutionContext> Model::make_context() const {
  auto c = std::make_unique<ExecutionContext>();
  c->table.resize(table_size_);
  for (size_t i = 0; i < inputs_.size(); ++i) c->table[i] = kernels::Tensor(inputs_[i].dtype, inputs_[i].dense_shape);
  c->op_inputs.reserve(op_input_count_);
  for (const Segment& seg : segments_) {
    if (const auto* cpu = std::get_if<CpuSegment>(&seg.body)) {
      for (const CpuOperator& op : cpu->ops) {
        for (const Slot& s : op.inputs) {
          c->op_inputs.push_back(s.kind == Slot::kTable      ? &c->table[s.index]
                                 : s.kind == Slot::kConstant ? &op.constants[s.index]
                                                             : nullptr);
        }
      }
    } else {
      const BpuSegment& bpu = std::get<BpuSegment>(seg.body);
      for (size_t k = 0; k < bpu.outputs.size(); ++k) {
        c->table[bpu.outputs[k]] = kernels::Tensor(bpu.output_types[k], bpu.output_shapes[k]);
      }
    }
  }
  c->op_staging.resize(op_staging_count_);
  c->bpu_inputs.resize(bpu_span_in_);
  c->bpu_outputs.resize(bpu_span_out_);
  c->released.reserve(cpu_output_slots_.size() + op_staging_count_);
  c->allocator.reserve(cpu_output_slots_.size() + op_staging_count_);
  c->layer_ms.reserve(layer_count_);
  return c;
}

ExecutionContext* Model::acquire_context() const {
  {
    std::lock_guard<std::mutex> lock(contexts_mutex_);
    if (!free_contexts_.empty()) {
      ExecutionContext* c = free_contexts_.back();
      free_contexts_.pop_back();
      return c;
    }
  }
  std::unique_ptr<ExecutionContext> c = make_context();
  std::lock_guard<std::mutex> lock(contexts_mutex_);
  free_contexts_.reserve(contexts_.size() + 1);  // release_context never allocates
  contexts_.push_back(std::move(c));
  return contexts_.back().get();
}

void Model::release_context(ExecutionContext* context) const noexcept {
  std::lock_guard<std::mutex> lock(contexts_mutex_);
  free_contexts_.push_back(context);
}

Progress Model::advance(Inference& inf, const RunControl& control, BpuJobDone done) const {
  // Profiling (off: profiler_ is null and nothing below is measured): one latency per key, in
  // the order of the constructor's keys; inf.t0 is the current layer's start.
  auto layer_done = [&](bool on_bpu, ProfilerClock::time_point end = ProfilerClock::now()) {
    const double ms = ms_between(inf.t0, end);
    inf.context->layer_ms.push_back(ms);
    (on_bpu ? inf.bpu_ms : inf.cpu_ms) += ms;
  };
  if (!inf.started) {
    if (profiler_ != nullptr) inf.t0 = ProfilerClock::now();
    if (inf.context == nullptr) {
      inf.context = acquire_context();
      inf.model = this;
    }
    ExecutionContext& c = *inf.context;
    c.layer_ms.clear();
    // The CPU operators' buffers of the previous inference are free again.
    c.recycle_outputs(cpu_output_slots_);
    const bool items = input_tensor_count(inf.inputs) != inputs_.size();
    const size_t per_input = items ? static_cast<size_t>(batch_) : 1;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      kernels::Tensor& dense = c.table[i];  // allocated with the context
      // The whole tensor, or batch item b at b · (one item's bytes).
      const TensorPort& port = items ? batch_items_[i] : inputs_[i];
      for (size_t b = 0; b < per_input; ++b) {
        const hbDNNTensor& t = inf.inputs[i * per_input + b];
        uint8_t* dst = static_cast<uint8_t*>(dense.raw_data()) + b * port.dense_bytes;
        if (inf.rois != nullptr && port.source == HB_DNN_INPUT_FROM_RESIZER) {
          // The ROI of the source image, resized to the input (checked by check_roi_inputs).
          const hbDNNRoi& roi = inf.rois[static_cast<size_t>(
              std::find(resizer_inputs_.begin(), resizer_inputs_.end(), i) - resizer_inputs_.begin())];
          const SourceImage img = source_image(port, t);
          const auto* y = static_cast<const uint8_t*>(t.sysMem[0].virAddr);
          const uint8_t* uv = !img.nv12 ? nullptr
                              : t.properties.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE
                                  ? static_cast<const uint8_t*>(t.sysMem[1].virAddr)
                                  : y + img.row_bytes * img.height;
          const int h_axis = height_axis(port);
          kernels::resize_image_roi({y, img.row_bytes}, {uv, img.row_bytes}, {roi.left, roi.top, roi.right, roi.bottom},
                                    port.properties.validShape.dimensionSize[h_axis + 1],
                                    port.properties.validShape.dimensionSize[h_axis], dst);
        } else if (t.properties.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE) {
          const size_t y = port.dense_bytes * 2 / 3;
          std::memcpy(dst, t.sysMem[0].virAddr, y);
          std::memcpy(dst + y, t.sysMem[1].virAddr, port.dense_bytes - y);
        } else {
          const Layout l = layout_for(port, t, {"input", i, port.name});  // checked: no error here
          if (l.dense) {
            std::memcpy(dst, t.sysMem[0].virAddr, port.dense_bytes);
          } else {
            strided_copy(static_cast<const uint8_t*>(t.sysMem[0].virAddr), dst, port.properties.validShape, port.properties.stride,
                         kernels::dtype_size(port.dtype), false);
          }
        }
      }
      if (!dump_dir_.empty()) dump_layer(0, "input", "input", static_cast<uint32_t>(i), dense);
    }
    if (profiler_ != nullptr) layer_done(false);
    inf.started = true;
  }
  ExecutionContext& c = *inf.context;

  if (inf.core >= 0) {
    // The BPU job of segment inf.segment has ended: collect it.
    const Segment& seg = segments_[inf.segment];
    const BpuSegment& bpu = std::get<BpuSegment>(seg.body);
    const int core = inf.core;
    inf.core = -1;
    platform_.job_finished(core);
    if (inf.bpu_failure != nullptr) {
      const bool memory = std::strncmp(inf.bpu_failure, "out of memory", 13) == 0;
      fail(memory ? HB_DNN_OUT_OF_MEMORY : HB_DNN_RUN_TASK_FAILED, "model '", name_, "', segment '", seg.name, "' on BPU core ", core,
           ": ", inf.bpu_failure);
    }
    if (profiler_ != nullptr) layer_done(true, inf.bpu_end);
    ++inf.layer;
    if (!dump_dir_.empty()) {
      for (uint32_t slot : bpu.outputs) dump_layer(inf.layer, "BPU", seg.name, slot, c.table[slot]);
    }
    ++inf.segment;
  }

  for (; inf.segment < segments_.size(); ++inf.segment) {
    if (control.cancel != nullptr && control.cancel->load()) return Progress::kCancelled;
    const Segment& seg = segments_[inf.segment];
    if (const auto* cpu = std::get_if<CpuSegment>(&seg.body)) {
      for (const CpuOperator& op : cpu->ops) {
        const std::span<const kernels::Tensor* const> ins(c.op_inputs.data() + op.input_offset, op.inputs.size());
        // The kernel writes into the table, or into staging tensors swapped in afterwards.
        const std::span<kernels::Tensor> outs =
            op.outputs.empty()     ? std::span<kernels::Tensor>()
            : op.adjacent_outputs ? std::span<kernels::Tensor>(&c.table[op.outputs[0]], op.outputs.size())
                                  : std::span<kernels::Tensor>(c.op_staging.data() + op.staging_offset, op.outputs.size());
        if (profiler_ != nullptr) inf.t0 = ProfilerClock::now();
        try {
          kernels::KernelContext ctx(ins, outs, c.allocator, nullptr);
          op.kernel->run(ctx);
        } catch (const std::bad_alloc&) {
          fail(HB_DNN_OUT_OF_MEMORY, "model '", name_, "', segment '", seg.name, "', operator '", op.name, "': out of memory");
        } catch (const std::exception& e) {
          fail(HB_DNN_RUN_TASK_FAILED, "model '", name_, "', segment '", seg.name, "', operator '", op.name, "' (", op.op_type, "): ", e.what());
        }
        if (profiler_ != nullptr) layer_done(false);
        ++inf.layer;
        for (size_t k = 0; k < outs.size(); ++k) {
          if (!op.adjacent_outputs) std::swap(c.table[op.outputs[k]], outs[k]);
          if (!dump_dir_.empty()) dump_layer(inf.layer, "CPU", op.name, op.outputs[k], c.table[op.outputs[k]]);
        }
      }
      continue;
    }
    const BpuSegment& bpu = std::get<BpuSegment>(seg.body);
    // The job reads the table's tensors and writes the segment's outputs in place (allocated
    // with the context).
    const std::span<std::span<const uint8_t>> in(c.bpu_inputs.data() + bpu.span_offset_in, bpu.inputs.size());
    for (size_t k = 0; k < bpu.inputs.size(); ++k) {
      const kernels::Tensor& t = c.table[bpu.inputs[k]];
      if (t.byte_size() != bpu.input_bytes[k]) {
        fail(HB_DNN_RUN_TASK_FAILED, "model '", name_, "', segment '", seg.name, "': input ", k, " holds ", t.byte_size(),
             " bytes, the program reads ", bpu.input_bytes[k]);
      }
      in[k] = {static_cast<const uint8_t*>(t.raw_data()), t.byte_size()};
    }
    const std::span<std::span<uint8_t>> out(c.bpu_outputs.data() + bpu.span_offset_out, bpu.outputs.size());
    for (size_t k = 0; k < bpu.outputs.size(); ++k) {
      kernels::Tensor& t = c.table[bpu.outputs[k]];
      out[k] = {static_cast<uint8_t*>(t.raw_data()), t.byte_size()};
    }
    const int core = platform_.pick_core(control.core_mask);
    if (profiler_ != nullptr) inf.t0 = ProfilerClock::now();
    inf.core = core;
    inf.bpu_failure = nullptr;
    platform_.job_started(core);
    const BpuResult r = platform_.core(core).submit(bpu.programs[static_cast<size_t>(core)], in, out, control.priority, done);
    if (!r.ok()) {
      // Not queued: no completion will come.
      inf.core = -1;
      platform_.job_finished(core);
      fail(r.status == BpuStatus::kOutOfMemory ? HB_DNN_OUT_OF_MEMORY : HB_DNN_RUN_TASK_FAILED, "model '", name_,
           "', segment '", seg.name, "' on BPU core ", core, ": ", r.message);
    }
    // From here on the job's completion may already be running advance() on another thread.
    return Progress::kWaitingForBpu;
  }

  if (profiler_ != nullptr) inf.t0 = ProfilerClock::now();
  const size_t I = inputs_.size();
  for (size_t i = 0; i < outputs_.size(); ++i) {
    const TensorPort& port = outputs_[i];
    const kernels::Tensor& t = c.table[I + i];
    if (t.dtype() != port.dtype || t.byte_size() != port.dense_bytes) {
      fail(HB_DNN_RUN_TASK_FAILED, "model '", name_, "': output ", i, " ('", port.name, "') was computed as ", t.describe(),
           ", the model declares ", kernels::dtype_name(port.dtype), " of ", port.dense_bytes, " bytes");
    }
    const Layout l = layout_for(port, inf.outputs[i], {"output", i, port.name});  // checked: no error here
    if (l.dense) {
      std::memcpy(inf.outputs[i].sysMem[0].virAddr, t.raw_data(), port.dense_bytes);
    } else {
      strided_copy(static_cast<const uint8_t*>(t.raw_data()), static_cast<uint8_t*>(inf.outputs[i].sysMem[0].virAddr),
                   port.properties.validShape, port.properties.stride, kernels::dtype_size(port.dtype), true);
    }
  }
  if (profiler_ != nullptr) {
    layer_done(false);
    profiler_->add_inference(profile_record_, c.layer_ms, inf.bpu_ms, inf.cpu_ms);
  }
  return Progress::kDone;
}

}  // namespace openbpu::dnn
