// PackageInfo -> flatbuffer -> model file bytes (flatbuffer + footer).
//
// Determinism: every child object is created into a named local, in a fixed order, before
// the table that refers to it (never inside a function-call argument list, whose evaluation
// order is unspecified); strings are never shared; default values are not stored.

#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "internal.h"
#include "openbpu/format/crc32c.h"
#include "openbpu/format/model_file.h"

namespace openbpu::format {

namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;
using flatbuffers::String;
using flatbuffers::Vector;
using internal::make_error;

constexpr size_t kProgramAlignment = 16;
constexpr size_t kWeightsAlignment = 64;
constexpr size_t kConstantAlignment = 16;

// ---- upper bound of the serialized size (to refuse > 2 GiB before flatbuffers asserts) -----

constexpr uint64_t kTableBound = 256;  // vtable + table + padding of any table in the schema

uint64_t string_bound(const std::string& s) {
  return s.size() + 16;
}
template <typename T>
uint64_t vector_bound(const std::vector<T>& v, uint64_t alignment = 8) {
  return v.size() * sizeof(T) + 8 + alignment;
}
uint64_t strings_bound(const std::vector<std::string>& v) {
  uint64_t n = 8 + 4 * v.size();
  for (const auto& s : v) n += string_bound(s);
  return n;
}
uint64_t key_values_bound(const KeyValueList& kv) {
  uint64_t n = 8 + 4 * kv.size();
  for (const auto& [k, v] : kv) n += kTableBound + string_bound(k) + string_bound(v);
  return n;
}
uint64_t tensor_bound(const TensorInfo& t) {
  return kTableBound + string_bound(t.name) + vector_bound(t.valid_shape) +
         vector_bound(t.aligned_shape) + vector_bound(t.shift) + vector_bound(t.scale) +
         vector_bound(t.zero_point) + vector_bound(t.stride);
}
uint64_t tensors_bound(const std::vector<TensorInfo>& v) {
  uint64_t n = 8 + 4 * v.size();
  for (const auto& t : v) n += tensor_bound(t);
  return n;
}
uint64_t constant_bound(const ConstTensorInfo& c) {
  return kTableBound + string_bound(c.name) + vector_bound(c.shape) +
         vector_bound(c.data, kConstantAlignment);
}
uint64_t attributes_bound(const std::vector<AttributeInfo>& attributes) {
  uint64_t n = 0;
  for (const auto& a : attributes) {
    n += kTableBound + string_bound(a.name) + string_bound(a.s) + vector_bound(a.ints) +
         vector_bound(a.floats) + strings_bound(a.strings) + (a.t ? constant_bound(*a.t) : 0);
  }
  return n;
}
uint64_t op_bound(const CpuOpInfo& op) {
  uint64_t n = kTableBound + string_bound(op.name) + string_bound(op.op_type) +
               string_bound(op.domain) + vector_bound(op.inputs) + vector_bound(op.outputs) + 8 +
               4 * op.attributes.size() + 8 + 4 * op.constants.size();
  n += attributes_bound(op.attributes);
  for (const auto& c : op.constants) n += constant_bound(c);
  return n;
}
uint64_t package_bound(const PackageInfo& p) {
  uint64_t n = 2 * kTableBound + string_bound(p.toolchain_name) +
               string_bound(p.toolchain_version) + 8 + 4 * p.models.size();
  for (const auto& m : p.models) {
    n += kTableBound + string_bound(m.name) + string_bound(m.march) + tensors_bound(m.inputs) +
         tensors_bound(m.outputs) + tensors_bound(m.tensors) +
         key_values_bound(m.compile_parameters) + key_values_bound(m.deps_info) + 8 +
         4 * m.segments.size() + 8 + 4 * m.deleted_nodes.size() + 8 + 4 * m.debug_map.size();
    for (const auto& s : m.segments) {
      n += 2 * kTableBound + string_bound(s.name);
      if (const auto* bpu = std::get_if<BpuSegmentInfo>(&s.body)) {
        n += vector_bound(bpu->program, kProgramAlignment) +
             vector_bound(bpu->weights, kWeightsAlignment) + vector_bound(bpu->inputs) +
             vector_bound(bpu->outputs);
      } else {
        const auto& cpu = std::get<CpuSegmentInfo>(s.body);
        n += 8 + 4 * cpu.ops.size();
        for (const auto& op : cpu.ops) n += op_bound(op);
      }
    }
    for (const auto& d : m.deleted_nodes) {
      n += kTableBound + string_bound(d.name) + string_bound(d.op_type) + strings_bound(d.inputs) +
           strings_bound(d.outputs) + 8 + 4 * d.attributes.size() + attributes_bound(d.attributes);
    }
    for (const auto& e : m.debug_map) n += kTableBound + string_bound(e.onnx_node);
  }
  return n + 64;  // final alignment padding
}

// ---- writer --------------------------------------------------------------------------------

class PackageWriter {
 public:
  explicit PackageWriter(FlatBufferBuilder& fbb) : fbb_(fbb) {}

  Offset<Package> package(const PackageInfo& p) {
    const auto toolchain_name = string(p.toolchain_name);
    const auto toolchain_version = string(p.toolchain_version);
    std::vector<Offset<Model>> models;
    models.reserve(p.models.size());
    for (const auto& m : p.models) models.push_back(model(m));
    const auto models_vec = tables(models);
    return CreatePackage(fbb_, kFormatVersion, toolchain_name, toolchain_version, models_vec);
  }

 private:
  Offset<String> string(const std::string& s) {
    return s.empty() ? Offset<String>() : fbb_.CreateString(s.data(), s.size());
  }

  template <typename T>
  Offset<Vector<T>> scalars(const std::vector<T>& v) {
    return v.empty() ? Offset<Vector<T>>() : fbb_.CreateVector(v.data(), v.size());
  }

  // A byte vector whose first element lands on a multiple of `alignment` from the start of
  // the finished buffer. PreAlign is what ForceVectorAlignment (the schema's force_align) does,
  // without its assertion that alignment <= FLATBUFFERS_MAX_ALIGNMENT (32): the weights need 64.
  // It also raises the buffer's minimum alignment, so Finish() pads the whole buffer to it.
  Offset<Vector<uint8_t>> aligned_bytes(const std::vector<uint8_t>& v, size_t alignment) {
    if (v.empty()) return {};
    fbb_.PreAlign(v.size(), alignment);
    return fbb_.CreateVector(v.data(), v.size());
  }

  template <typename T>
  Offset<Vector<Offset<T>>> tables(const std::vector<Offset<T>>& v) {
    return v.empty() ? Offset<Vector<Offset<T>>>() : fbb_.CreateVector(v);
  }

  Offset<Vector<Offset<String>>> strings(const std::vector<std::string>& v) {
    if (v.empty()) return {};
    std::vector<Offset<String>> offsets;
    offsets.reserve(v.size());
    // Empty strings are stored (not omitted) inside a vector: its elements cannot be null.
    for (const auto& s : v) offsets.push_back(fbb_.CreateString(s.data(), s.size()));
    return fbb_.CreateVector(offsets);
  }

  Offset<Vector<const TensorRef*>> refs(const std::vector<TensorRefInfo>& v) {
    if (v.empty()) return {};
    std::vector<TensorRef> structs;
    structs.reserve(v.size());
    for (const auto& r : v) structs.emplace_back(r.kind, r.index);
    return fbb_.CreateVectorOfStructs(structs.data(), structs.size());
  }

  Offset<Vector<Offset<KeyValue>>> key_values(const KeyValueList& kv) {
    std::vector<Offset<KeyValue>> offsets;
    offsets.reserve(kv.size());
    for (const auto& [k, v] : kv) {
      const auto key = string(k);
      const auto value = string(v);
      offsets.push_back(CreateKeyValue(fbb_, key, value));
    }
    return tables(offsets);
  }

  Offset<TensorDesc> tensor(const TensorInfo& t) {
    const auto name = string(t.name);
    const auto valid_shape = scalars(t.valid_shape);
    const auto aligned_shape = scalars(t.aligned_shape);
    const auto shift = scalars(t.shift);
    const auto scale = scalars(t.scale);
    const auto zero_point = scalars(t.zero_point);
    const auto stride = scalars(t.stride);
    return CreateTensorDesc(fbb_, name, valid_shape, aligned_shape, t.layout, t.tensor_type,
                            t.quanti_type, shift, scale, zero_point, t.quantize_axis,
                            t.aligned_byte_size, stride, t.input_source);
  }

  Offset<Vector<Offset<TensorDesc>>> tensors(const std::vector<TensorInfo>& v) {
    std::vector<Offset<TensorDesc>> offsets;
    offsets.reserve(v.size());
    for (const auto& t : v) offsets.push_back(tensor(t));
    return tables(offsets);
  }

  Offset<ConstTensor> constant(const ConstTensorInfo& c) {
    const auto name = string(c.name);
    const auto shape = scalars(c.shape);
    const auto data = aligned_bytes(c.data, kConstantAlignment);
    return CreateConstTensor(fbb_, name, c.data_type, shape, data);
  }

  Offset<Attribute> attribute(const AttributeInfo& a) {
    const auto name = string(a.name);
    const auto s = string(a.s);
    const auto ints = scalars(a.ints);
    const auto floats = scalars(a.floats);
    const auto strs = strings(a.strings);
    const auto t = a.t ? constant(*a.t) : Offset<ConstTensor>();
    const auto g = a.g.empty() ? Offset<CpuGraph>() : graph(a.g.front());
    return CreateAttribute(fbb_, name, a.type, a.i, a.f, s, ints, floats, strs, t, g);
  }

  Offset<CpuGraph> graph(const CpuGraphInfo& g) {
    const auto name = string(g.name);
    const auto ops_vec = ops(g.ops);
    const auto outputs = refs(g.outputs);
    return CreateCpuGraph(fbb_, name, g.input_count, g.outer_count, g.tensor_count, ops_vec, outputs);
  }

  Offset<Vector<Offset<CpuOp>>> ops(const std::vector<CpuOpInfo>& list) {
    std::vector<Offset<CpuOp>> offsets;
    offsets.reserve(list.size());
    for (const auto& o : list) offsets.push_back(op(o));
    return tables(offsets);
  }

  Offset<CpuOp> op(const CpuOpInfo& o) {
    const auto name = string(o.name);
    const auto op_type = string(o.op_type);
    const auto domain = string(o.domain);
    const auto inputs = refs(o.inputs);
    const auto outputs = refs(o.outputs);
    std::vector<Offset<Attribute>> attributes;
    attributes.reserve(o.attributes.size());
    for (const auto& a : o.attributes) attributes.push_back(attribute(a));
    const auto attributes_vec = tables(attributes);
    std::vector<Offset<ConstTensor>> constants;
    constants.reserve(o.constants.size());
    for (const auto& c : o.constants) constants.push_back(constant(c));
    const auto constants_vec = tables(constants);
    return CreateCpuOp(fbb_, name, op_type, domain, inputs, outputs, attributes_vec, constants_vec, o.opset,
                       o.implicit_inputs);
  }

  Offset<Segment> segment(const SegmentInfo& s) {
    const auto name = string(s.name);
    if (const auto* bpu = std::get_if<BpuSegmentInfo>(&s.body)) {
      const auto program = aligned_bytes(bpu->program, kProgramAlignment);
      const auto weights = aligned_bytes(bpu->weights, kWeightsAlignment);
      const auto inputs = refs(bpu->inputs);
      const auto outputs = refs(bpu->outputs);
      const auto body = CreateBpuSegment(fbb_, bpu->isa_version, program, weights, inputs, outputs);
      return CreateSegment(fbb_, name, SegmentBody::BpuSegment, body.Union());
    }
    const auto& cpu = std::get<CpuSegmentInfo>(s.body);
    const auto ops_vec = ops(cpu.ops);
    const auto body = CreateCpuSegment(fbb_, ops_vec);
    return CreateSegment(fbb_, name, SegmentBody::CpuSegment, body.Union());
  }

  Offset<Model> model(const ModelInfo& m) {
    const auto name = string(m.name);
    const auto march = string(m.march);
    const auto inputs = tensors(m.inputs);
    const auto outputs = tensors(m.outputs);
    std::vector<Offset<Segment>> segments;
    segments.reserve(m.segments.size());
    for (const auto& s : m.segments) segments.push_back(segment(s));
    const auto segments_vec = tables(segments);
    const auto intermediates = tensors(m.tensors);
    const auto compile_parameters = key_values(m.compile_parameters);
    const auto deps_info = key_values(m.deps_info);
    std::vector<Offset<DeletedNode>> deleted;
    deleted.reserve(m.deleted_nodes.size());
    for (const auto& d : m.deleted_nodes) {
      const auto dname = string(d.name);
      const auto op_type = string(d.op_type);
      const auto dinputs = strings(d.inputs);
      const auto doutputs = strings(d.outputs);
      std::vector<Offset<Attribute>> attributes;
      for (const auto& a : d.attributes) attributes.push_back(attribute(a));
      const auto attributes_vec = tables(attributes);
      deleted.push_back(CreateDeletedNode(fbb_, dname, op_type, dinputs, doutputs, attributes_vec));
    }
    const auto deleted_vec = tables(deleted);
    std::vector<Offset<DebugEntry>> debug;
    debug.reserve(m.debug_map.size());
    for (const auto& e : m.debug_map) {
      const auto onnx_node = string(e.onnx_node);
      debug.push_back(CreateDebugEntry(fbb_, e.segment_index, e.instruction_index, onnx_node));
    }
    const auto debug_vec = tables(debug);
    return CreateModel(fbb_, name, march, inputs, outputs, segments_vec, intermediates,
                       compile_parameters, deps_info, deleted_vec, debug_vec);
  }

  FlatBufferBuilder& fbb_;
};

Status serialize(const PackageInfo& package, std::vector<uint8_t>* file) {
  const uint64_t bound = package_bound(package);
  if (bound + kFooterSize >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    return make_error(StatusCode::kPackageTooLarge, "the package needs up to ", bound,
                      " bytes; a model file's flatbuffer must stay below ",
                      FLATBUFFERS_MAX_BUFFER_SIZE, " bytes (2 GiB)");
  }
  FlatBufferBuilder fbb(static_cast<size_t>(bound));
  fbb.ForceDefaults(false);
  fbb.DedupVtables(true);  // vtables are shared by content only: deterministic
  PackageWriter writer(fbb);
  const auto root = writer.package(package);
  fbb.Finish(root, PackageIdentifier());
  return seal_flatbuffer(std::span<const uint8_t>(fbb.GetBufferPointer(), fbb.GetSize()), file);
}

}  // namespace

Status seal_flatbuffer(std::span<const uint8_t> flatbuffer, std::vector<uint8_t>* file) noexcept {
  return internal::guarded([&]() -> Status {
    if (flatbuffer.size() >= FLATBUFFERS_MAX_BUFFER_SIZE) {
      return make_error(StatusCode::kPackageTooLarge, "flatbuffer of ", flatbuffer.size(),
                        " bytes; a model file's flatbuffer must stay below ",
                        FLATBUFFERS_MAX_BUFFER_SIZE, " bytes (2 GiB)");
    }
    std::vector<uint8_t> out(flatbuffer.size() + kFooterSize);
    if (!flatbuffer.empty()) std::memcpy(out.data(), flatbuffer.data(), flatbuffer.size());
    uint8_t* footer = out.data() + flatbuffer.size();
    internal::store_le32(footer, static_cast<uint32_t>(flatbuffer.size()));
    internal::store_le32(footer + 4,
                         crc32c(std::span<const uint8_t>(out.data(), flatbuffer.size() + 4)));
    std::memcpy(footer + 8, kFooterMagic, sizeof kFooterMagic);
    *file = std::move(out);
    return {};
  });
}

Status serialize_package_unchecked(const PackageInfo& package,
                                   std::vector<uint8_t>* file) noexcept {
  return internal::guarded([&]() -> Status { return serialize(package, file); });
}

Status serialize_package(const PackageInfo& package, std::vector<uint8_t>* file) noexcept {
  return internal::guarded([&]() -> Status {
    std::vector<uint8_t> bytes;
    Status status = serialize(package, &bytes);
    if (!status.ok()) return status;
    status = verify_package(bytes, nullptr);
    if (!status.ok()) return status;
    *file = std::move(bytes);
    return {};
  });
}

}  // namespace openbpu::format
