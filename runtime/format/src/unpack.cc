// Verified flatbuffer -> PackageInfo (plain values), for tools that print or edit a model.

#include <new>
#include <string>
#include <vector>

#include "internal.h"
#include "openbpu/format/model_file.h"

namespace openbpu::format {

namespace {

using flatbuffers::Offset;
using flatbuffers::String;
using flatbuffers::Vector;

std::string string_of(const String* s) {
  return s == nullptr ? std::string() : s->str();
}

template <typename T>
std::vector<T> scalars_of(const Vector<T>* v) {
  std::vector<T> out;
  if (v == nullptr) return out;
  out.reserve(v->size());
  for (uint32_t i = 0; i < v->size(); ++i) out.push_back(v->Get(i));
  return out;
}

std::vector<std::string> strings_of(const Vector<Offset<String>>* v) {
  std::vector<std::string> out;
  if (v == nullptr) return out;
  out.reserve(v->size());
  for (uint32_t i = 0; i < v->size(); ++i) out.push_back(v->Get(i)->str());
  return out;
}

std::vector<TensorRefInfo> refs_of(const Vector<const TensorRef*>* v) {
  std::vector<TensorRefInfo> out;
  if (v == nullptr) return out;
  out.reserve(v->size());
  for (uint32_t i = 0; i < v->size(); ++i) out.push_back({v->Get(i)->kind(), v->Get(i)->index()});
  return out;
}

KeyValueList key_values_of(const Vector<Offset<KeyValue>>* v) {
  KeyValueList out;
  if (v == nullptr) return out;
  out.reserve(v->size());
  for (uint32_t i = 0; i < v->size(); ++i) {
    out.emplace_back(string_of(v->Get(i)->key()), string_of(v->Get(i)->value()));
  }
  return out;
}

TensorInfo tensor_of(const TensorDesc& t) {
  TensorInfo out;
  out.name = string_of(t.name());
  out.valid_shape = scalars_of(t.valid_shape());
  out.aligned_shape = scalars_of(t.aligned_shape());
  out.layout = t.layout();
  out.tensor_type = t.tensor_type();
  out.quanti_type = t.quanti_type();
  out.shift = scalars_of(t.shift());
  out.scale = scalars_of(t.scale());
  out.zero_point = scalars_of(t.zero_point());
  out.quantize_axis = t.quantize_axis();
  out.aligned_byte_size = t.aligned_byte_size();
  out.stride = scalars_of(t.stride());
  out.input_source = t.input_source();
  return out;
}

std::vector<TensorInfo> tensors_of(const Vector<Offset<TensorDesc>>* v) {
  std::vector<TensorInfo> out;
  if (v == nullptr) return out;
  out.reserve(v->size());
  for (uint32_t i = 0; i < v->size(); ++i) out.push_back(tensor_of(*v->Get(i)));
  return out;
}

ConstTensorInfo constant_of(const ConstTensor& c) {
  ConstTensorInfo out;
  out.name = string_of(c.name());
  out.data_type = c.data_type();
  out.shape = scalars_of(c.shape());
  out.data = scalars_of(c.data());
  return out;
}

CpuOpInfo op_of(const CpuOp& op);

CpuGraphInfo graph_of(const CpuGraph& g) {
  CpuGraphInfo out;
  out.name = string_of(g.name());
  out.input_count = g.input_count();
  out.outer_count = g.outer_count();
  out.tensor_count = g.tensor_count();
  if (g.ops() != nullptr) {
    for (uint32_t i = 0; i < g.ops()->size(); ++i) out.ops.push_back(op_of(*g.ops()->Get(i)));
  }
  out.outputs = refs_of(g.outputs());
  return out;
}

std::vector<AttributeInfo> attributes_of(const Vector<Offset<Attribute>>* attributes) {
  std::vector<AttributeInfo> out;
  if (attributes == nullptr) return out;
  for (uint32_t i = 0; i < attributes->size(); ++i) {
    const Attribute& a = *attributes->Get(i);
    AttributeInfo info;
    info.name = string_of(a.name());
    info.type = a.type();
    info.i = a.i();
    info.f = a.f();
    info.s = string_of(a.s());
    info.ints = scalars_of(a.ints());
    info.floats = scalars_of(a.floats());
    info.strings = strings_of(a.strings());
    if (a.t() != nullptr) info.t = constant_of(*a.t());
    if (a.g() != nullptr) info.g.push_back(graph_of(*a.g()));
    out.push_back(std::move(info));
  }
  return out;
}

CpuOpInfo op_of(const CpuOp& op) {
  CpuOpInfo out;
  out.name = string_of(op.name());
  out.op_type = string_of(op.op_type());
  out.domain = string_of(op.domain());
  out.opset = op.opset();
  out.implicit_inputs = op.implicit_inputs();
  out.inputs = refs_of(op.inputs());
  out.outputs = refs_of(op.outputs());
  out.attributes = attributes_of(op.attributes());
  if (op.constants() != nullptr) {
    for (uint32_t i = 0; i < op.constants()->size(); ++i) {
      out.constants.push_back(constant_of(*op.constants()->Get(i)));
    }
  }
  return out;
}

SegmentInfo segment_of(const Segment& s) {
  SegmentInfo out;
  out.name = string_of(s.name());
  if (const BpuSegment* bpu = s.body_as_BpuSegment()) {
    BpuSegmentInfo body;
    body.isa_version = bpu->isa_version();
    body.program = scalars_of(bpu->program());
    body.weights = scalars_of(bpu->weights());
    body.inputs = refs_of(bpu->inputs());
    body.outputs = refs_of(bpu->outputs());
    out.body = std::move(body);
  } else if (const CpuSegment* cpu = s.body_as_CpuSegment()) {
    CpuSegmentInfo body;
    if (cpu->ops() != nullptr) {
      for (uint32_t i = 0; i < cpu->ops()->size(); ++i)
        body.ops.push_back(op_of(*cpu->ops()->Get(i)));
    }
    out.body = std::move(body);
  }
  return out;
}

ModelInfo model_of(const Model& m) {
  ModelInfo out;
  out.name = string_of(m.name());
  out.march = string_of(m.march());
  out.inputs = tensors_of(m.inputs());
  out.outputs = tensors_of(m.outputs());
  out.tensors = tensors_of(m.tensors());
  if (m.segments() != nullptr) {
    for (uint32_t i = 0; i < m.segments()->size(); ++i) {
      out.segments.push_back(segment_of(*m.segments()->Get(i)));
    }
  }
  out.compile_parameters = key_values_of(m.compile_parameters());
  out.deps_info = key_values_of(m.deps_info());
  if (m.deleted_nodes() != nullptr) {
    for (uint32_t i = 0; i < m.deleted_nodes()->size(); ++i) {
      const DeletedNode& d = *m.deleted_nodes()->Get(i);
      out.deleted_nodes.push_back({string_of(d.name()), string_of(d.op_type()),
                                   strings_of(d.inputs()), strings_of(d.outputs()),
                                   attributes_of(d.attributes())});
    }
  }
  if (m.debug_map() != nullptr) {
    for (uint32_t i = 0; i < m.debug_map()->size(); ++i) {
      const DebugEntry& e = *m.debug_map()->Get(i);
      out.debug_map.push_back({e.segment_index(), e.instruction_index(), string_of(e.onnx_node())});
    }
  }
  return out;
}

}  // namespace

bool AttributeInfo::operator==(const AttributeInfo& o) const {
  return name == o.name && type == o.type && i == o.i && f == o.f && s == o.s && ints == o.ints &&
         floats == o.floats && strings == o.strings && t == o.t && g == o.g;
}

Status unpack_package(const PackageView& view, PackageInfo* package) noexcept {
  return internal::guarded([&]() -> Status {
    if (!view.valid()) {
      return Status{StatusCode::kInternalError, "unpack_package: the view was not verified"};
    }
    const Package& p = view.package();
    PackageInfo out;
    out.toolchain_name = string_of(p.toolchain_name());
    out.toolchain_version = string_of(p.toolchain_version());
    if (p.models() != nullptr) {
      for (uint32_t i = 0; i < p.models()->size(); ++i)
        out.models.push_back(model_of(*p.models()->Get(i)));
    }
    *package = std::move(out);
    return {};
  });
}

}  // namespace openbpu::format
