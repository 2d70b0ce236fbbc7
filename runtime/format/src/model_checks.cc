// The semantic checks of verify_package(), run over a package that passed the flatbuffers
// Verifier. The list of rules, in order, is in model_file.h; each failure names the element
// (model, segment, op, tensor, field) and states the rule.

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "internal.h"
#include "openbpu/base/limits.h"
#include "openbpu/format/model_file.h"

namespace openbpu::format::internal {

namespace {

using flatbuffers::String;
using flatbuffers::Vector;

constexpr size_t kProgramAlignment = 16;
constexpr size_t kWeightsAlignment = 64;
constexpr size_t kConstantAlignment = 16;

std::string_view view_of(const String* s) {
  return s == nullptr ? std::string_view() : std::string_view(s->c_str(), s->size());
}

template <typename T>
uint32_t size_of(const Vector<T>* v) {
  return v == nullptr ? 0 : v->size();
}

template <typename T>
std::vector<T> values_of(const Vector<T>* v) {
  std::vector<T> out;
  if (v == nullptr) return out;
  out.reserve(v->size());
  for (uint32_t i = 0; i < v->size(); ++i) out.push_back(v->Get(i));
  return out;
}

std::string shape_string(const std::vector<int64_t>& dims) {
  std::string out = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(dims[i]);
  }
  return out + ")";
}

bool valid_tensor_type(TensorType t) {
  return t <= TensorType::MAX;
}
bool valid_layout(TensorLayout l) {
  return l == TensorLayout::NHWC || l == TensorLayout::NCHW || l == TensorLayout::NONE;
}
bool valid_quanti_type(QuantiType q) {
  return q <= QuantiType::MAX;
}
bool valid_ref_kind(TensorRefKind k) {
  return k <= TensorRefKind::MAX;
}

std::string type_name(TensorType t) {
  return valid_tensor_type(t) ? EnumNameTensorType(t) : str_cat("<", static_cast<int>(t), ">");
}
std::string kind_name(TensorRefKind k) {
  return valid_ref_kind(k) ? EnumNameTensorRefKind(k) : str_cat("<", static_cast<int>(k), ">");
}
std::string attribute_type_name(AttributeType t) {
  switch (t) {
    case AttributeType::UNDEFINED: return "UNDEFINED";
    case AttributeType::FLOAT: return "FLOAT";
    case AttributeType::INT: return "INT";
    case AttributeType::STRING: return "STRING";
    case AttributeType::TENSOR: return "TENSOR";
    case AttributeType::GRAPH: return "GRAPH";
    case AttributeType::FLOATS: return "FLOATS";
    case AttributeType::INTS: return "INTS";
    case AttributeType::STRINGS: return "STRINGS";
  }
  return str_cat("<", static_cast<int>(t), ">");
}

// ceil(product(dims) x bits / 8), false on overflow. Dimensions must be >= 0.
bool byte_size(const std::vector<int64_t>& dims, uint32_t bits, uint64_t* bytes) {
  uint64_t elements = 1;
  for (int64_t d : dims) {
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements)) return false;
  }
  uint64_t total_bits = 0;
  if (__builtin_mul_overflow(elements, static_cast<uint64_t>(bits), &total_bits)) return false;
  *bytes = total_bits / 8 + (total_bits % 8 != 0 ? 1 : 0);
  return true;
}

bool aligned_in_file(const uint8_t* data, std::span<const uint8_t> flatbuffer, size_t alignment) {
  return static_cast<size_t>(data - flatbuffer.data()) % alignment == 0;
}

// Checks one model. Returns false at the first violation, with status_ set.
class ModelChecker {
 public:
  ModelChecker(const Model& model, size_t model_index, std::span<const uint8_t> flatbuffer)
      : model_(model), flatbuffer_(flatbuffer) {
    where_ = str_cat("model[", model_index, "] ", quote(view_of(model.name())));
  }

  Status take_status() { return std::move(status_); }

  bool check() {
    if (view_of(model_.march()).empty()) {
      return fail(StatusCode::kMissingMarch, where_, ": march is empty (e.g. \"bayes-e\")");
    }
    if (size_of(model_.inputs()) == 0) {
      return fail(StatusCode::kNoModelInputs, where_, ": the model has no inputs");
    }
    if (size_of(model_.outputs()) == 0) {
      return fail(StatusCode::kNoModelOutputs, where_, ": the model has no outputs");
    }
    if (size_of(model_.segments()) == 0) {
      return fail(StatusCode::kNoSegments, where_, ": the model has no segments");
    }
    if (!check_tensors(model_.inputs(), "input") || !check_tensors(model_.outputs(), "output") ||
        !check_tensors(model_.tensors(), "intermediate tensor")) {
      return false;
    }
    if (!check_key_values(model_.compile_parameters(), "compile_parameters") ||
        !check_key_values(model_.deps_info(), "deps_info")) {
      return false;
    }
    if (!check_deleted_nodes()) return false;
    output_written_.assign(size_of(model_.outputs()), false);
    intermediate_written_.assign(size_of(model_.tensors()), false);
    if (!check_segments()) return false;
    for (uint32_t i = 0; i < output_written_.size(); ++i) {
      if (!output_written_[i]) {
        return fail(StatusCode::kModelOutputNotWritten, where_, ": output[", i, "] ",
                    quote(view_of(model_.outputs()->Get(i)->name())),
                    " is not written by any segment");
      }
    }
    return check_debug_map();
  }

 private:
  template <typename... Args>
  bool fail(StatusCode code, Args&&... args) {
    status_ = make_error(code, std::forward<Args>(args)...);
    return false;
  }

  // ---- tensors -------------------------------------------------------------------------

  bool check_tensors(const Vector<flatbuffers::Offset<TensorDesc>>* tensors, const char* role) {
    for (uint32_t i = 0; i < size_of(tensors); ++i) {
      const TensorDesc& t = *tensors->Get(i);
      const std::string where = str_cat(where_, ": ", role, "[", i, "] ", quote(view_of(t.name())));
      if (view_of(t.name()).empty()) {
        return fail(StatusCode::kMissingName, where, ": tensor name is empty");
      }
      if (view_of(t.name()).find('\0') != std::string_view::npos) {
        return fail(StatusCode::kMissingName, where, ": tensor name holds a NUL byte (the hbDNN API hands names out as C strings)");
      }
      if (!tensor_names_.insert(view_of(t.name())).second) {
        return fail(StatusCode::kDuplicateTensorName, where,
                    ": another input, output or intermediate tensor of the model has this name");
      }
      if (!check_tensor(t, where) || !check_input_source(t, where, role)) return false;
    }
    return true;
  }

  bool check_input_source(const TensorDesc& t, const std::string& where, const char* role) {
    const InputSource source = t.input_source();
    if (source == InputSource::DDR) return true;
    if (source != InputSource::RESIZER && source != InputSource::PYRAMID) {
      return fail(StatusCode::kBadEnumValue, where, ": input_source ", static_cast<int>(source),
                  " is not DDR (0), RESIZER (1) or PYRAMID (2)");
    }
    if (std::string_view(role) != "input") {
      return fail(StatusCode::kBadEnumValue, where, ": input_source ", EnumNameInputSource(source),
                  " on a tensor that is not a model input (only inputs have a source)");
    }
    const TensorType type = t.tensor_type();
    if (type != TensorType::IMG_TYPE_NV12 && type != TensorType::IMG_TYPE_NV12_SEPARATE &&
        type != TensorType::IMG_TYPE_Y) {
      return fail(StatusCode::kBadEnumValue, where, ": input_source ", EnumNameInputSource(source),
                  " delivers NV12 or Y images, but tensor_type is ", type_name(type));
    }
    return true;
  }

  bool check_tensor(const TensorDesc& t, const std::string& where) {
    if (!valid_layout(t.layout())) {
      return fail(StatusCode::kBadEnumValue, where, ": layout ", static_cast<int>(t.layout()),
                  " is not NHWC (0), NCHW (2) or NONE (255)");
    }
    if (!valid_tensor_type(t.tensor_type())) {
      return fail(StatusCode::kBadEnumValue, where, ": tensor_type ",
                  static_cast<int>(t.tensor_type()), " is not a known hbDNNDataType (0..",
                  static_cast<int>(TensorType::MAX), ")");
    }
    if (!valid_quanti_type(t.quanti_type())) {
      return fail(StatusCode::kBadEnumValue, where, ": quanti_type ",
                  static_cast<int>(t.quanti_type()), " is not NONE (0), SHIFT (1) or SCALE (2)");
    }
    const std::vector<int64_t> valid = values_of(t.valid_shape());
    const std::vector<int64_t> aligned = values_of(t.aligned_shape());
    if (valid.size() != aligned.size()) {
      return fail(StatusCode::kRankMismatch, where, ": valid_shape ", shape_string(valid),
                  " has rank ", valid.size(), " but aligned_shape ", shape_string(aligned),
                  " has rank ", aligned.size(), " (the ranks must be equal)");
    }
    if (valid.size() > kMaxTensorRank) {
      return fail(StatusCode::kRankTooLarge, where, ": rank ", valid.size(),
                  " exceeds the maximum of ", kMaxTensorRank);
    }
    for (size_t d = 0; d < valid.size(); ++d) {
      if (valid[d] < 0 || aligned[d] < 0) {
        return fail(StatusCode::kNegativeDimension, where, ": dimension ", d,
                    " is negative (valid_shape ", shape_string(valid), ", aligned_shape ",
                    shape_string(aligned), ")");
      }
      if (valid[d] > aligned[d]) {
        return fail(StatusCode::kValidExceedsAligned, where, ": valid_shape[", d, "] = ", valid[d],
                    " exceeds aligned_shape[", d, "] = ", aligned[d],
                    " (each valid dimension must be <= its aligned dimension)");
      }
    }
    const uint32_t bits = element_bits(t.tensor_type());
    uint64_t expected = 0;
    if (!byte_size(aligned, bits, &expected)) {
      return fail(StatusCode::kAlignedByteSizeMismatch, where, ": aligned_shape ",
                  shape_string(aligned), " of ", type_name(t.tensor_type()),
                  " overflows a 64-bit byte count");
    }
    if (t.aligned_byte_size() != expected) {
      return fail(StatusCode::kAlignedByteSizeMismatch, where, ": aligned_byte_size is ",
                  t.aligned_byte_size(), " but aligned_shape ", shape_string(aligned), " of ",
                  type_name(t.tensor_type()), " (", bits, " bits per element) takes ", expected,
                  " bytes");
    }
    if (t.aligned_byte_size() > base::kMaxTensorBytes) {
      return fail(StatusCode::kTensorTooLarge, where, ": aligned_byte_size ", t.aligned_byte_size(),
                  " exceeds the ", base::kMaxTensorBytes,
                  " bytes (2 GiB) a tensor may hold (the C API's int32 alignedByteSize)");
    }
    return check_stride(t, where, valid, bits) && check_quantization(t, where, valid);
  }

  bool check_stride(const TensorDesc& t, const std::string& where,
                    const std::vector<int64_t>& valid, uint32_t bits) {
    const std::vector<int64_t> stride = values_of(t.stride());
    if (stride.empty()) return true;
    if (stride.size() != valid.size()) {
      return fail(StatusCode::kStrideRankMismatch, where, ": stride ", shape_string(stride),
                  " has ", stride.size(), " entries but valid_shape ", shape_string(valid),
                  " has rank ", valid.size(), " (stride is empty or one per dimension)");
    }
    bool any_nonzero = false;
    for (size_t d = 0; d < stride.size(); ++d) {
      if (stride[d] < 0) {
        return fail(StatusCode::kStrideOutOfBounds, where, ": stride[", d, "] = ", stride[d],
                    " is negative");
      }
      any_nonzero = any_nonzero || stride[d] != 0;
    }
    // All-zero strides mean "not applicable" (image inputs); the extent check needs whole-byte
    // elements and a non-empty tensor.
    if (!any_nonzero || bits % 8 != 0) return true;
    for (int64_t d : valid) {
      if (d == 0) return true;
    }
    uint64_t last = bits / 8;  // one past the last byte addressed
    bool overflow = false;
    for (size_t d = 0; d < valid.size(); ++d) {
      uint64_t step = 0;
      overflow = overflow ||
                 __builtin_mul_overflow(static_cast<uint64_t>(valid[d] - 1),
                                        static_cast<uint64_t>(stride[d]), &step) ||
                 __builtin_add_overflow(last, step, &last);
    }
    if (overflow || last > t.aligned_byte_size()) {
      return fail(StatusCode::kStrideOutOfBounds, where, ": stride ", shape_string(stride),
                  " over valid_shape ", shape_string(valid), " addresses ",
                  overflow ? std::string("more than 2^64") : std::to_string(last),
                  " bytes, more than aligned_byte_size ", t.aligned_byte_size());
    }
    return true;
  }

  bool check_quantization(const TensorDesc& t, const std::string& where,
                          const std::vector<int64_t>& valid) {
    const uint32_t n_shift = size_of(t.shift());
    const uint32_t n_scale = size_of(t.scale());
    const uint32_t n_zero = size_of(t.zero_point());
    const char* name = EnumNameQuantiType(t.quanti_type());
    switch (t.quanti_type()) {
      case QuantiType::NONE:
        if (n_shift != 0 || n_scale != 0 || n_zero != 0) {
          return fail(StatusCode::kQuantiTypeMismatch, where,
                      ": quanti_type is NONE but shift/scale/zero_point hold ", n_shift, "/",
                      n_scale, "/", n_zero, " values (NONE takes no parameters)");
        }
        return true;
      case QuantiType::SHIFT:
        if (n_shift == 0 || n_scale != 0 || n_zero != 0) {
          return fail(StatusCode::kQuantiTypeMismatch, where,
                      ": quanti_type is SHIFT but shift/scale/zero_point hold ", n_shift, "/",
                      n_scale, "/", n_zero, " values (SHIFT takes shift only)");
        }
        break;
      case QuantiType::SCALE:
        if (n_scale == 0 || n_shift != 0) {
          return fail(StatusCode::kQuantiTypeMismatch, where,
                      ": quanti_type is SCALE but shift/scale hold ", n_shift, "/", n_scale,
                      " values (SCALE takes scale and optional zero_point, no shift)");
        }
        if (n_zero != 0 && n_zero != n_scale) {
          return fail(StatusCode::kQuantParamLength, where, ": zero_point has ", n_zero,
                      " values but scale has ", n_scale, " (zero_point is empty or one per scale)");
        }
        break;
    }
    const uint32_t count = t.quanti_type() == QuantiType::SHIFT ? n_shift : n_scale;
    const char* field = t.quanti_type() == QuantiType::SHIFT ? "shift" : "scale";
    if (count > 1) {
      const int32_t axis = t.quantize_axis();
      if (axis < 0 || static_cast<size_t>(axis) >= valid.size()) {
        return fail(StatusCode::kQuantizeAxisOutOfRange, where, ": ", count, " ", name,
                    " parameters are per axis but quantize_axis ", axis,
                    " is not a dimension of valid_shape ", shape_string(valid));
      }
      if (static_cast<uint64_t>(valid[static_cast<size_t>(axis)]) != count) {
        return fail(StatusCode::kQuantParamLength, where, ": ", field, " has ", count,
                    " values but valid_shape ", shape_string(valid), " has ",
                    valid[static_cast<size_t>(axis)], " along quantize_axis ", axis,
                    " (1 value, or one per index along quantize_axis)");
      }
    }
    for (uint32_t i = 0; i < n_scale; ++i) {
      const float s = t.scale()->Get(i);
      if (!std::isfinite(s) || !(s > 0.0f)) {
        return fail(StatusCode::kBadScale, where, ": scale[", i, "] = ", s,
                    " (scales must be finite and > 0)");
      }
    }
    return true;
  }

  bool check_key_values(const Vector<flatbuffers::Offset<KeyValue>>* kv, const char* field) {
    for (uint32_t i = 0; i < size_of(kv); ++i) {
      if (view_of(kv->Get(i)->key()).empty()) {
        return fail(StatusCode::kMissingName, where_, ": ", field, "[", i, "] has an empty key");
      }
    }
    return true;
  }

  bool check_deleted_nodes() {
    for (uint32_t i = 0; i < size_of(model_.deleted_nodes()); ++i) {
      const DeletedNode& d = *model_.deleted_nodes()->Get(i);
      if (view_of(d.name()).empty()) {
        return fail(StatusCode::kMissingName, where_, ": deleted_nodes[", i, "] has an empty name");
      }
      if (!check_attributes(d.attributes(), nullptr,
                            str_cat(where_, ", deleted node ", quote(view_of(d.name()))), 0)) {
        return false;
      }
    }
    return true;
  }

  // ---- segments and data flow ----------------------------------------------------------

  bool check_segments() {
    std::set<std::string_view> names;
    const auto* segments = model_.segments();
    for (uint32_t i = 0; i < segments->size(); ++i) {
      const Segment& segment = *segments->Get(i);
      const std::string where =
          str_cat(where_, ": segment[", i, "] ", quote(view_of(segment.name())));
      if (view_of(segment.name()).empty()) {
        return fail(StatusCode::kMissingName, where, ": segment name is empty");
      }
      if (!names.insert(view_of(segment.name())).second) {
        return fail(StatusCode::kDuplicateSegmentName, where,
                    ": another segment of the model has this name");
      }
      switch (segment.body_type()) {
        case SegmentBody::NONE:
          return fail(StatusCode::kMissingSegmentBody, where,
                      ": segment has no body (neither BPU nor CPU)");
        case SegmentBody::BpuSegment:
          if (segment.body_as_BpuSegment() == nullptr) {
            return fail(StatusCode::kMissingSegmentBody, where, ": BPU segment body is missing");
          }
          if (!check_bpu_segment(*segment.body_as_BpuSegment(), where)) return false;
          break;
        case SegmentBody::CpuSegment:
          if (segment.body_as_CpuSegment() == nullptr) {
            return fail(StatusCode::kMissingSegmentBody, where, ": CPU segment body is missing");
          }
          if (!check_cpu_segment(*segment.body_as_CpuSegment(), where)) return false;
          break;
        default:
          return fail(StatusCode::kUnknownSegmentKind, where, ": segment kind ",
                      static_cast<int>(segment.body_type()),
                      " is unknown to this runtime (it runs BPU (1) and CPU (2) segments; "
                      "this runtime reads format up to ",
                      format_version_string(kFormatVersion), ")");
      }
    }
    return true;
  }

  bool check_bpu_segment(const BpuSegment& bpu, const std::string& where) {
    if (size_of(bpu.program()) == 0) {
      return fail(StatusCode::kEmptyBpuProgram, where, ": BPU program is empty");
    }
    if (!aligned_in_file(bpu.program()->data(), flatbuffer_, kProgramAlignment)) {
      return fail(StatusCode::kMisalignedData, where, ": BPU program is not ", kProgramAlignment,
                  "-byte aligned in the file");
    }
    if (size_of(bpu.weights()) != 0 &&
        !aligned_in_file(bpu.weights()->data(), flatbuffer_, kWeightsAlignment)) {
      return fail(StatusCode::kMisalignedData, where, ": BPU weights are not ", kWeightsAlignment,
                  "-byte aligned in the file");
    }
    if (size_of(bpu.outputs()) == 0) {
      return fail(StatusCode::kNoOutputs, where, ": BPU segment has no outputs");
    }
    for (uint32_t i = 0; i < size_of(bpu.inputs()); ++i) {
      if (!check_read(*bpu.inputs()->Get(i), str_cat(where, ": input[", i, "]"), nullptr)) {
        return false;
      }
    }
    for (uint32_t i = 0; i < size_of(bpu.outputs()); ++i) {
      if (!check_write(*bpu.outputs()->Get(i), str_cat(where, ": output[", i, "]"))) {
        return false;
      }
    }
    return true;
  }

  // A CPU graph attribute's own tensor table (see CpuGraph in the schema); null: the model's.
  struct LocalTable {
    uint32_t size = 0;
    std::vector<bool> written;
    int depth = 0;
  };

  bool check_cpu_segment(const CpuSegment& cpu, const std::string& segment_where) {
    if (size_of(cpu.ops()) == 0) {
      return fail(StatusCode::kEmptyCpuSegment, segment_where, ": CPU segment has no ops");
    }
    return check_cpu_ops(cpu.ops(), segment_where, nullptr);
  }

  bool check_cpu_ops(const Vector<flatbuffers::Offset<CpuOp>>* ops, const std::string& scope_where, LocalTable* local) {
    for (uint32_t o = 0; o < size_of(ops); ++o) {
      const CpuOp& op = *ops->Get(o);
      const std::string where = str_cat(scope_where, ": op[", o, "] ", quote(view_of(op.name())));
      if (view_of(op.name()).empty()) {
        return fail(StatusCode::kMissingName, where, ": op name is empty");
      }
      if (view_of(op.op_type()).empty()) {
        return fail(StatusCode::kMissingName, where, ": op_type is empty");
      }
      if (size_of(op.outputs()) == 0) {
        return fail(StatusCode::kNoOutputs, where, ": op has no outputs");
      }
      if (op.implicit_inputs() > size_of(op.inputs())) {
        return fail(StatusCode::kTensorRefOutOfRange, where, ": ", op.implicit_inputs(), " implicit inputs of ",
                    size_of(op.inputs()), " inputs");
      }
      for (uint32_t c = 0; c < size_of(op.constants()); ++c) {
        const ConstTensor& constant = *op.constants()->Get(c);
        if (!check_constant(constant, str_cat(where, ": constant[", c, "] ",
                                              quote(view_of(constant.name()))))) {
          return false;
        }
      }
      if (!check_attributes(op.attributes(), &op, where, local == nullptr ? 0 : local->depth))
        return false;
      for (uint32_t i = 0; i < size_of(op.inputs()); ++i) {
        if (!check_read(*op.inputs()->Get(i), str_cat(where, ": input[", i, "]"), &op, local)) {
          return false;
        }
      }
      for (uint32_t i = 0; i < size_of(op.outputs()); ++i) {
        if (!check_write(*op.outputs()->Get(i), str_cat(where, ": output[", i, "]"), local)) {
          return false;
        }
      }
    }
    return true;
  }

  // A graph attribute of `op`: its table, its ops (each tensor written once, after its inputs
  // and outer values), its outputs.
  bool check_cpu_graph(const CpuGraph& g, const CpuOp& op, const std::string& where, int depth) {
    if (depth > kMaxGraphDepth) {
      return fail(StatusCode::kGraphTooDeep, where, ": graph attributes nest deeper than ", kMaxGraphDepth);
    }
    if (g.outer_count() != op.implicit_inputs()) {
      return fail(StatusCode::kAttributeMismatch, where, ": the graph reads ", g.outer_count(),
                  " outer values, the op gives ", op.implicit_inputs());
    }
    if (uint64_t{g.input_count()} + g.outer_count() > g.tensor_count()) {
      return fail(StatusCode::kTensorRefOutOfRange, where, ": ", g.input_count(), " inputs and ", g.outer_count(),
                  " outer values do not fit a table of ", g.tensor_count(), " tensors");
    }
    if (size_of(g.outputs()) == 0) return fail(StatusCode::kNoOutputs, where, ": the graph has no outputs");
    LocalTable local{g.tensor_count(), std::vector<bool>(g.tensor_count(), false), depth};
    for (uint32_t t = 0; t < g.input_count() + g.outer_count(); ++t) local.written[t] = true;
    if (!check_cpu_ops(g.ops(), where, &local)) return false;
    for (uint32_t i = 0; i < size_of(g.outputs()); ++i) {
      const TensorRef& r = *g.outputs()->Get(i);
      if (r.kind() != TensorRefKind::INTERMEDIATE) {
        return fail(StatusCode::kTensorRefKindNotAllowed, where, ": output[", i, "] is not one of the graph's tensors");
      }
      if (!check_read(r, str_cat(where, ": output[", i, "]"), nullptr, &local)) return false;
    }
    return true;
  }

  // The attributes of `op`, or of a deleted node (op == nullptr: no GRAPH attributes).
  bool check_attributes(const flatbuffers::Vector<flatbuffers::Offset<Attribute>>* attributes,
                        const CpuOp* op, const std::string& op_where, int depth) {
    std::set<std::string_view> names;
    for (uint32_t i = 0; i < size_of(attributes); ++i) {
      const Attribute& a = *attributes->Get(i);
      const std::string where =
          str_cat(op_where, ": attribute[", i, "] ", quote(view_of(a.name())));
      if (view_of(a.name()).empty()) {
        return fail(StatusCode::kMissingName, where, ": attribute name is empty");
      }
      if (!names.insert(view_of(a.name())).second) {
        return fail(StatusCode::kDuplicateAttributeName, where,
                    ": the op has another attribute of this name");
      }
      const AttributeType type = a.type();
      switch (type) {
        case AttributeType::FLOAT:
        case AttributeType::INT:
        case AttributeType::STRING:
        case AttributeType::TENSOR:
        case AttributeType::FLOATS:
        case AttributeType::INTS:
        case AttributeType::STRINGS:
        case AttributeType::GRAPH: break;
        case AttributeType::UNDEFINED:
          return fail(StatusCode::kAttributeMismatch, where, ": attribute type is UNDEFINED");
        default:
          return fail(StatusCode::kBadEnumValue, where, ": attribute type ", static_cast<int>(type),
                      " is not an AttributeType");
      }
      // Which value fields are set, and which one the type allows.
      struct Field {
        const char* name;
        bool set;
        AttributeType owner;
      };
      const Field fields[] = {
          {"i", a.i() != 0, AttributeType::INT},
          {"f", a.f() != 0.0f || std::isnan(a.f()), AttributeType::FLOAT},
          {"s", a.s() != nullptr, AttributeType::STRING},
          {"ints", a.ints() != nullptr, AttributeType::INTS},
          {"floats", a.floats() != nullptr, AttributeType::FLOATS},
          {"strings", a.strings() != nullptr, AttributeType::STRINGS},
          {"t", a.t() != nullptr, AttributeType::TENSOR},
          {"g", a.g() != nullptr, AttributeType::GRAPH},
      };
      for (const Field& f : fields) {
        if (f.set && f.owner != type) {
          return fail(StatusCode::kAttributeMismatch, where, ": a ", attribute_type_name(type),
                      " attribute has field '", f.name,
                      "' set (only the field of its type may be)");
        }
      }
      if (type == AttributeType::TENSOR) {
        if (a.t() == nullptr) {
          return fail(StatusCode::kAttributeMismatch, where,
                      ": a TENSOR attribute has no tensor 't'");
        }
        if (!check_constant(*a.t(), str_cat(where, ": tensor"))) return false;
      }
      if (type == AttributeType::GRAPH) {
        if (a.g() == nullptr) return fail(StatusCode::kAttributeMismatch, where, ": a GRAPH attribute has no graph 'g'");
        if (op == nullptr)
          return fail(StatusCode::kAttributeMismatch, where,
                      ": a deleted node has no GRAPH attributes");
        if (!check_cpu_graph(*a.g(), *op, str_cat(where, ": graph"), depth + 1)) return false;
      }
    }
    return true;
  }

  bool check_constant(const ConstTensor& c, const std::string& where) {
    if (!valid_tensor_type(c.data_type())) {
      return fail(StatusCode::kBadEnumValue, where, ": data_type ", static_cast<int>(c.data_type()),
                  " is not a known hbDNNDataType");
    }
    if (c.data_type() < TensorType::TENSOR_TYPE_S4) {
      return fail(StatusCode::kBadConstantType, where, ": data_type ", type_name(c.data_type()),
                  " is an image type; constants hold TENSOR_TYPE_* values");
    }
    const std::vector<int64_t> shape = values_of(c.shape());
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] < 0) {
        return fail(StatusCode::kNegativeDimension, where, ": shape ", shape_string(shape),
                    " has a negative dimension ", d);
      }
    }
    uint64_t expected = 0;
    const uint32_t bits = element_bits(c.data_type());
    const uint64_t actual = size_of(c.data());
    if (!byte_size(shape, bits, &expected) || expected != actual) {
      return fail(
          StatusCode::kConstantSizeMismatch, where, ": data holds ", actual, " bytes but shape ",
          shape_string(shape), " of ", type_name(c.data_type()), " needs ",
          byte_size(shape, bits, &expected) ? std::to_string(expected) : std::string("over 2^64"));
    }
    if (actual != 0 && !aligned_in_file(c.data()->data(), flatbuffer_, kConstantAlignment)) {
      return fail(StatusCode::kMisalignedData, where, ": constant data is not ", kConstantAlignment,
                  "-byte aligned in the file");
    }
    return true;
  }

  // A tensor read by a segment or op: must exist and be written earlier (model inputs always
  // are). `op` is the reading op for OP_CONSTANT / ABSENT references, nullptr for a BPU segment.
  bool check_read(const TensorRef& ref, const std::string& where, const CpuOp* op, LocalTable* local = nullptr) {
    const TensorRefKind kind = ref.kind();
    const uint32_t index = ref.index();
    if (!valid_ref_kind(kind)) {
      return fail(StatusCode::kBadEnumValue, where, ": tensor reference kind ",
                  static_cast<int>(kind), " is not a TensorRefKind");
    }
    if (local != nullptr && kind == TensorRefKind::INTERMEDIATE) {
      if (!check_index(where, kind, index, local->size)) return false;
      if (!local->written[index]) {
        return fail(StatusCode::kTensorReadBeforeWritten, where, ": reads the graph's tensor ", index,
                    " before an op writes it");
      }
      return true;
    }
    if (local != nullptr && (kind == TensorRefKind::MODEL_INPUT || kind == TensorRefKind::MODEL_OUTPUT)) {
      return fail(StatusCode::kTensorRefKindNotAllowed, where, ": an op in a graph attribute reads ", kind_name(kind),
                  " (outer values come through the op's implicit inputs)");
    }
    switch (kind) {
      case TensorRefKind::MODEL_INPUT:
        return check_index(where, kind, index, size_of(model_.inputs()));
      case TensorRefKind::MODEL_OUTPUT:
        if (!check_index(where, kind, index, size_of(model_.outputs()))) return false;
        if (!output_written_[index]) {
          return fail(StatusCode::kTensorReadBeforeWritten, where, ": reads model output[", index,
                      "] ", quote(view_of(model_.outputs()->Get(index)->name())),
                      " before any segment or op writes it");
        }
        return true;
      case TensorRefKind::INTERMEDIATE:
        if (!check_index(where, kind, index, size_of(model_.tensors()))) return false;
        if (!intermediate_written_[index]) {
          return fail(StatusCode::kTensorReadBeforeWritten, where, ": reads intermediate tensor[",
                      index, "] ", quote(view_of(model_.tensors()->Get(index)->name())),
                      " before any segment or op writes it");
        }
        return true;
      case TensorRefKind::OP_CONSTANT:
        if (op == nullptr) {
          return fail(StatusCode::kTensorRefKindNotAllowed, where,
                      ": a BPU segment cannot read an OP_CONSTANT (only CPU op inputs can)");
        }
        return check_index(where, kind, index, size_of(op->constants()));
      case TensorRefKind::ABSENT:
        if (op == nullptr) {
          return fail(StatusCode::kTensorRefKindNotAllowed, where,
                      ": a BPU segment input cannot be ABSENT (only CPU op inputs can)");
        }
        if (index != 0) {
          return fail(StatusCode::kTensorRefOutOfRange, where, ": an ABSENT reference has index ",
                      index, " (must be 0)");
        }
        return true;
    }
    return true;
  }

  // A tensor written by a segment or op: an intermediate or a model output, written once.
  bool check_write(const TensorRef& ref, const std::string& where, LocalTable* local = nullptr) {
    const TensorRefKind kind = ref.kind();
    const uint32_t index = ref.index();
    if (!valid_ref_kind(kind)) {
      return fail(StatusCode::kBadEnumValue, where, ": tensor reference kind ",
                  static_cast<int>(kind), " is not a TensorRefKind");
    }
    if (local != nullptr) {
      if (kind != TensorRefKind::INTERMEDIATE) {
        return fail(StatusCode::kTensorRefKindNotAllowed, where, ": an op in a graph attribute writes ",
                    kind_name(kind), " (only the graph's own tensors)");
      }
      if (!check_index(where, kind, index, local->size)) return false;
      if (local->written[index]) {
        return fail(StatusCode::kTensorWrittenTwice, where, ": the graph's tensor ", index,
                    " is already written (each tensor has one writer)");
      }
      local->written[index] = true;
      return true;
    }
    std::vector<bool>* written = nullptr;
    const Vector<flatbuffers::Offset<TensorDesc>>* table = nullptr;
    if (kind == TensorRefKind::MODEL_OUTPUT) {
      written = &output_written_;
      table = model_.outputs();
    } else if (kind == TensorRefKind::INTERMEDIATE) {
      written = &intermediate_written_;
      table = model_.tensors();
    } else {
      return fail(StatusCode::kTensorRefKindNotAllowed, where, ": an output cannot be ",
                  kind_name(kind), " (outputs are MODEL_OUTPUT or INTERMEDIATE tensors)");
    }
    if (!check_index(where, kind, index, size_of(table))) return false;
    if ((*written)[index]) {
      return fail(StatusCode::kTensorWrittenTwice, where, ": ", kind_name(kind), " ", index, " ",
                  quote(view_of(table->Get(index)->name())),
                  " is already written by an earlier segment or op (each tensor has one writer)");
    }
    (*written)[index] = true;
    return true;
  }

  bool check_index(const std::string& where, TensorRefKind kind, uint32_t index, uint32_t size) {
    if (index >= size) {
      return fail(StatusCode::kTensorRefOutOfRange, where, ": ", kind_name(kind), " index ", index,
                  " is out of range (", size, " available)");
    }
    return true;
  }

  bool check_debug_map() {
    const auto* segments = model_.segments();
    for (uint32_t i = 0; i < size_of(model_.debug_map()); ++i) {
      const DebugEntry& e = *model_.debug_map()->Get(i);
      if (e.segment_index() >= segments->size()) {
        return fail(StatusCode::kDebugEntryOutOfRange, where_, ": debug_map[", i,
                    "] names segment ", e.segment_index(), " but the model has ", segments->size(),
                    " segments");
      }
      if (segments->Get(e.segment_index())->body_type() != SegmentBody::BpuSegment) {
        return fail(StatusCode::kDebugEntryOutOfRange, where_, ": debug_map[", i,
                    "] names segment ", e.segment_index(), " ",
                    quote(view_of(segments->Get(e.segment_index())->name())),
                    ", which is not a BPU segment");
      }
    }
    return true;
  }

  const Model& model_;
  std::span<const uint8_t> flatbuffer_;
  std::string where_;
  Status status_;
  std::set<std::string_view> tensor_names_;
  std::vector<bool> output_written_;
  std::vector<bool> intermediate_written_;
};

// flatbuffers 2.0.8's Verifier checks a vector's length prefix for 4-byte alignment but not
// its elements, so a crafted buffer can hold a vector of 8-byte scalars at an address
// 4 mod 8, and reading it (through the generated accessors, here or in the runtime) would be a
// misaligned load. Every vector of 8-byte elements in the schema is checked before any is read.
class WideVectorAlignmentChecker {
 public:
  Status check(const Package& package) {
    for (uint32_t m = 0; m < size_of(package.models()); ++m) {
      const Model& model = *package.models()->Get(m);
      where_ = str_cat("model[", m, "]");
      if (!tensors(model.inputs(), "input") || !tensors(model.outputs(), "output") ||
          !tensors(model.tensors(), "intermediate tensor")) {
        return std::move(status_);
      }
      for (uint32_t s = 0; s < size_of(model.segments()); ++s) {
        const CpuSegment* cpu = model.segments()->Get(s)->body_as_CpuSegment();
        if (cpu == nullptr) continue;
        for (uint32_t o = 0; o < size_of(cpu->ops()); ++o) {
          const CpuOp& op = *cpu->ops()->Get(o);
          const std::string at = str_cat(where_, ": segment[", s, "]: op[", o, "]");
          for (uint32_t c = 0; c < size_of(op.constants()); ++c) {
            if (!vector(op.constants()->Get(c)->shape(),
                        str_cat(at, ": constant[", c, "] shape"))) {
              return std::move(status_);
            }
          }
          for (uint32_t a = 0; a < size_of(op.attributes()); ++a) {
            const Attribute& attribute = *op.attributes()->Get(a);
            const std::string attr_at = str_cat(at, ": attribute[", a, "]");
            if (!vector(attribute.ints(), attr_at + " ints") ||
                (attribute.t() != nullptr &&
                 !vector(attribute.t()->shape(), attr_at + " tensor shape"))) {
              return std::move(status_);
            }
          }
        }
      }
    }
    return {};
  }

 private:
  bool tensors(const Vector<flatbuffers::Offset<TensorDesc>>* v, const char* role) {
    for (uint32_t i = 0; i < size_of(v); ++i) {
      const TensorDesc& t = *v->Get(i);
      const std::string at = str_cat(where_, ": ", role, "[", i, "]");
      if (!vector(t.valid_shape(), at + " valid_shape") ||
          !vector(t.aligned_shape(), at + " aligned_shape") ||
          !vector(t.stride(), at + " stride")) {
        return false;
      }
    }
    return true;
  }

  bool vector(const Vector<int64_t>* v, const std::string& what) {
    if (v == nullptr || reinterpret_cast<uintptr_t>(v->data()) % alignof(int64_t) == 0) return true;
    status_ =
        make_error(StatusCode::kInvalidFlatbuffer, "model file flatbuffer is malformed: ", what,
                   " (64-bit integers) is not 8-byte aligned");
    return false;
  }

  std::string where_;
  Status status_;
};

}  // namespace

Status check_package(const Package& package, std::span<const uint8_t> flatbuffer) {
  if (Status s = WideVectorAlignmentChecker().check(package); !s.ok()) return s;
  const auto* models = package.models();
  if (size_of(models) == 0) {
    return make_error(StatusCode::kNoModels, "the package holds no models");
  }
  std::set<std::string_view> names;
  for (uint32_t m = 0; m < models->size(); ++m) {
    const Model& model = *models->Get(m);
    const std::string_view name = view_of(model.name());
    if (name.empty()) {
      return make_error(StatusCode::kMissingName, "model[", m, "]: model name is empty");
    }
    if (name.find('\0') != std::string_view::npos) {  // found by tests/fuzz model_file
      return make_error(StatusCode::kMissingName, "model[", m,
                        "]: model name holds a NUL byte (the hbDNN API hands names out as C strings)");
    }
    if (!names.insert(name).second) {
      return make_error(StatusCode::kDuplicateModelName, "model[", m, "] ", quote(name),
                        ": another model of the package has this name");
    }
    ModelChecker checker(model, m, flatbuffer);
    if (!checker.check()) return checker.take_status();
  }
  return {};
}

}  // namespace openbpu::format::internal
