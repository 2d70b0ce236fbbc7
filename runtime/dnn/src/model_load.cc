// Model loading (model.h): ports, layer dumps, CPU kernels and BPU programs prepared once.
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <system_error>

#include "error.h"
#include "flatbuffer_read.h"
#include "layer_dump.h"
#include "model.h"
#include "openbpu/kernels/error.h"
#include "openbpu/kernels/registry.h"
#include "openbpu/simulator/isa.h"
#include "openbpu/simulator/program.h"

namespace openbpu::dnn {

namespace {

// A model's BPU programs together address at most isa::kMaxModelMemoryBytes of device memory;
// checked from the program headers before any program is loaded (each load allocates its memory).
void check_device_memory(const format::Model& model, const std::string& where) {
  uint64_t total = 0;
  size_t programs = 0;
  for (const format::Segment* s : *model.segments()) {
    const format::BpuSegment* bpu = s->body_as_BpuSegment();
    if (bpu == nullptr || bpu->program() == nullptr) continue;
    total += simulator::program_memory_bytes(std::span<const uint8_t>(bpu->program()->data(), bpu->program()->size()));
    ++programs;
  }
  if (total > simulator::isa::kMaxModelMemoryBytes) {
    fail(HB_DNN_INVALID_MODEL, where, ": its ", programs, " BPU segment", programs == 1 ? "" : "s", " claim ", total,
         " bytes of device memory in total; the programs of a model address at most ",
         simulator::isa::kMaxModelMemoryBytes, " bytes (512 MiB) together");
  }
}

kernels::DataType element_dtype(BpuElementType t) {
  switch (t) {
    case BpuElementType::kInt8: return kernels::DataType::kInt8;
    case BpuElementType::kInt16: return kernels::DataType::kInt16;
    case BpuElementType::kInt32: return kernels::DataType::kInt32;
    case BpuElementType::kUint8: return kernels::DataType::kUint8;
  }
  return kernels::DataType::kUndefined;
}

kernels::Tensor tensor_of(const format::ConstTensor& c, const std::string& where) {
  const kernels::DataType dtype = dtype_of(c.data_type());
  if (dtype == kernels::DataType::kUndefined) {
    fail(HB_DNN_INCOMPATIBLE_MODEL, where, ": constant '", str(c.name()), "' has a type no kernel reads");
  }
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
      case format::AttributeType::GRAPH: break;  // a Subgraph of the kernel (load_cpu_op)
      default: fail(HB_DNN_INVALID_MODEL, where, ": attribute '", name, "' has no value type");
    }
  }
  return attrs;
}

}  // namespace

Model::Model(const format::Model& model, Platform& platform, const std::string& file)
    : name_(str(model.name())), platform_(platform) {
  const std::string where_model = "'" + file + "', model '" + name_ + "'";
  load_ports(model, where_model);
  ucp_ = make_ucp_ports(model, inputs_, outputs_);
  load_dump_settings();
  check_device_memory(model, where_model);
  segments_.reserve(model.segments()->size());  // push_back below cannot throw
  try {
    for (const format::Segment* s : *model.segments()) {
      Segment seg;
      seg.name = str(s->name());
      const std::string where = where_model + ", segment '" + seg.name + "'";
      if (const format::CpuSegment* cpu = s->body_as_CpuSegment()) {
        seg.body = load_cpu_segment(*cpu, where);
      } else if (const format::BpuSegment* bpu = s->body_as_BpuSegment()) {
        seg.body = load_bpu_segment(*bpu, where);
      } else {
        fail(HB_DNN_INCOMPATIBLE_MODEL, where, ": a segment kind this runtime does not know");
      }
      segments_.push_back(std::move(seg));
    }
    register_profile_keys();
  } catch (...) {
    for (Segment& s : segments_) {
      if (auto* b = std::get_if<BpuSegment>(&s.body)) unload_programs(*b);
    }
    throw;
  }
}

Model::~Model() {
  for (Segment& s : segments_) {
    if (auto* b = std::get_if<BpuSegment>(&s.body)) unload_programs(*b);
  }
}

void Model::unload_programs(const BpuSegment& b) const noexcept {
  for (size_t c = 0; c < b.programs.size(); ++c) (void)platform_.core(static_cast<int>(c)).unload(b.programs[c]);
}

void Model::load_ports(const format::Model& model, const std::string& where) {
  if (model.inputs() != nullptr) {
    for (const format::TensorDesc* d : *model.inputs()) {
      inputs_.push_back(port_of(*d, where));
      inputs_.back().source = static_cast<int32_t>(d->input_source());
      if (d->input_source() == format::InputSource::RESIZER) resizer_inputs_.push_back(inputs_.size() - 1);
    }
  }
  if (model.outputs() != nullptr) {
    for (const format::TensorDesc* d : *model.outputs()) outputs_.push_back(port_of(*d, where));
  }
  for (TensorPort& p : inputs_) link_parameters(p);
  for (TensorPort& p : outputs_) link_parameters(p);
  // Batch items (model.h, batch()): one item is the input with batch dimension 1.
  int32_t n = 0;
  for (const TensorPort& p : inputs_) {
    const hbDNNTensorShape& v = p.properties.validShape;
    const bool nv12 = p.properties.tensorType == HB_DNN_IMG_TYPE_NV12 || p.properties.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE;
    const int32_t b = v.numDimensions >= 1 && !nv12 ? v.dimensionSize[0] : 0;
    n = (n == 0 || n == b) ? b : -1;
  }
  if (n > 1) {
    batch_ = n;
    for (const TensorPort& p : inputs_) batch_items_.push_back(batch_item_of(p, n));
  }
  table_inputs_ = static_cast<uint32_t>(inputs_.size());
  table_outputs_ = static_cast<uint32_t>(outputs_.size());
  table_size_ = table_inputs_ + table_outputs_ + (model.tensors() == nullptr ? 0 : model.tensors()->size());
  slot_names_.reserve(table_size_);
  for (const TensorPort& p : inputs_) slot_names_.push_back(p.name);
  for (const TensorPort& p : outputs_) slot_names_.push_back(p.name);
  if (model.tensors() != nullptr) {
    for (const format::TensorDesc* d : *model.tensors()) slot_names_.push_back(str(d->name()));
  }
}

void Model::load_dump_settings() {
  const char* dir = std::getenv("HB_DNN_DUMP_PATH");
  if (dir == nullptr || *dir == '\0') return;
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
    fail(HB_DNN_INVALID_ARGUMENT, "HB_DNN_DUMP_FORMAT '", format_env, "' is not one of bin, txt, bin,txt");
  }
  dump_txt_ = dump_format->txt;
}

uint32_t Model::table_index(const format::TensorRef& r, const std::string& where) const {
  switch (r.kind()) {
    case format::TensorRefKind::MODEL_INPUT: return r.index();
    case format::TensorRefKind::MODEL_OUTPUT: return table_inputs_ + r.index();
    case format::TensorRefKind::INTERMEDIATE: return table_inputs_ + table_outputs_ + r.index();
    default: fail(HB_DNN_INVALID_MODEL, where, ": the segment refers to a constant or absent tensor");
  }
}

namespace {

CpuOperator load_cpu_op(const format::CpuOp& op, const std::string& where, const TableIndex& table_index);

// A graph attribute of a CPU control-flow operator (format 1.3): its ops run in order on a tensor
// table of its own (inputs, outer values, then what the ops write); see CpuGraph in the schema.
class CpuGraphRunner final : public kernels::Subgraph {
 public:
  CpuGraphRunner(const format::CpuGraph& g, const std::string& where)
      : name_(str(g.name())), input_count_(g.input_count()), outer_count_(g.outer_count()), tensor_count_(g.tensor_count()) {
    const TableIndex local = [&](const format::TensorRef& r, const std::string& at) {
      if (r.kind() != format::TensorRefKind::INTERMEDIATE || r.index() >= tensor_count_) {
        fail(HB_DNN_INVALID_MODEL, at, ": a graph's op refers to a tensor outside the graph");
      }
      return r.index();
    };
    const std::string where_graph = where + ", graph '" + name_ + "'";
    if (g.ops() != nullptr) {
      for (const format::CpuOp* op : *g.ops()) ops_.push_back(load_cpu_op(*op, where_graph, local));
    }
    if (g.outputs() != nullptr) {
      for (const format::TensorRef* r : *g.outputs()) outputs_.push_back(local(*r, where_graph));
    }
  }

  std::vector<kernels::Tensor> run(std::span<const kernels::Tensor* const> inputs,
                                   std::span<const kernels::Tensor* const> outer) const override {
    OPENBPU_CHECK(inputs.size() == input_count_ && outer.size() == outer_count_, "graph '", name_, "' takes ",
                  input_count_, " inputs and ", outer_count_, " outer values, got ", inputs.size(), " and ", outer.size());
    std::vector<kernels::Tensor> table(tensor_count_);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i] != nullptr) table[i] = *inputs[i];
    }
    for (size_t i = 0; i < outer.size(); ++i) {
      if (outer[i] != nullptr) table[input_count_ + i] = *outer[i];
    }
    std::vector<const kernels::Tensor*> ins;
    std::vector<kernels::Tensor> outs;
    for (const CpuOperator& op : ops_) {
      ins.clear();
      for (const Slot& s : op.inputs) {
        ins.push_back(s.kind == Slot::kTable ? &table[s.index] : s.kind == Slot::kConstant ? &op.constants[s.index] : nullptr);
      }
      outs.assign(op.outputs.size(), kernels::Tensor());
      kernels::KernelContext ctx(ins, outs, kernels::Allocator::default_allocator(), nullptr);
      try {
        op.kernel->run(ctx);
      } catch (const kernels::KernelError& e) {
        kernels::fail("graph '", name_, "', operator '", op.name, "' (", op.op_type, "): ", e.what());
      }
      for (size_t k = 0; k < outs.size(); ++k) table[op.outputs[k]] = std::move(outs[k]);
    }
    std::vector<kernels::Tensor> result;
    for (uint32_t index : outputs_) result.push_back(table[index]);
    return result;
  }

 private:
  std::string name_;
  uint32_t input_count_, outer_count_, tensor_count_;
  std::vector<CpuOperator> ops_;
  std::vector<uint32_t> outputs_;
};

CpuOperator load_cpu_op(const format::CpuOp& op, const std::string& where, const TableIndex& table_index) {
  CpuOperator o;
  o.name = str(op.name());
  o.op_type = str(op.op_type());
  const std::string domain = str(op.domain());
  const std::string where_op = where + ", operator '" + o.name + "' (" + (domain.empty() ? "" : domain + ".") + o.op_type + ")";
  if (op.constants() != nullptr) {
    for (const format::ConstTensor* c : *op.constants()) o.constants.push_back(tensor_of(*c, where_op));
  }
  const uint32_t input_count = op.inputs() == nullptr ? 0 : op.inputs()->size();
  for (uint32_t i = 0; i < input_count; ++i) {
    const format::TensorRef& r = *op.inputs()->Get(i);
    if (r.kind() == format::TensorRefKind::OP_CONSTANT) {
      o.inputs.push_back({Slot::kConstant, r.index()});
    } else if (r.kind() == format::TensorRefKind::ABSENT) {
      o.inputs.push_back({Slot::kAbsent, 0});
    } else {
      o.inputs.push_back({Slot::kTable, table_index(r, where)});
    }
  }
  for (const format::TensorRef* r : *op.outputs()) o.outputs.push_back(table_index(*r, where));
  const kernels::AttributeMap attrs = attributes_of(op, where_op);
  std::vector<kernels::NamedSubgraph> graphs;
  if (op.attributes() != nullptr) {
    for (const format::Attribute* a : *op.attributes()) {
      if (a->type() == format::AttributeType::GRAPH && a->g() != nullptr) {
        graphs.push_back({a->name()->string_view(), std::make_shared<CpuGraphRunner>(*a->g(), where_op)});
      }
    }
  }
  if (kernels::find_kernel(domain, o.op_type) == nullptr) {
    fail(HB_DNN_INCOMPATIBLE_MODEL, where_op, ": this runtime has no CPU kernel for the operator");
  }
  if (op.opset() == 0) {
    fail(HB_DNN_INCOMPATIBLE_MODEL, where_op, ": the file (format 1.0) does not record the operator's opset; ",
         "convert the model again with this toolchain");
  }
  const kernels::NodeInfo info{o.name, o.op_type, domain, static_cast<int>(op.opset()), attrs,
                               static_cast<int>(input_count - op.implicit_inputs()), static_cast<int>(o.outputs.size()),
                               graphs};
  try {
    o.kernel = kernels::create_kernel(info);
  } catch (const kernels::KernelError& e) {
    fail(HB_DNN_INVALID_MODEL, where_op, ": ", e.what());
  }
  return o;
}

}  // namespace

CpuOperator Model::load_cpu_operator(const format::CpuOp& op, const std::string& where) {
  return load_cpu_op(op, where, [this](const format::TensorRef& r, const std::string& at) { return table_index(r, at); });
}

CpuSegment Model::load_cpu_segment(const format::CpuSegment& cpu, const std::string& where) {
  CpuSegment body;
  for (const format::CpuOp* op : *cpu.ops()) {
    CpuOperator o = load_cpu_operator(*op, where);
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
  return body;
}

BpuSegment Model::load_bpu_segment(const format::BpuSegment& bpu, const std::string& where) {
  if (bpu.isa_version() > platform_.chip().isa_version) {
    fail(HB_DNN_INCOMPATIBLE_MODEL, where, ": the program uses BPU ISA v", bpu.isa_version(), "; this runtime runs up to v",
         platform_.chip().isa_version);
  }
  BpuSegment body;
  const std::span<const uint8_t> program(bpu.program()->data(), bpu.program()->size());
  const std::span<const uint8_t> weights = bpu.weights() == nullptr
                                               ? std::span<const uint8_t>()
                                               : std::span<const uint8_t>(bpu.weights()->data(), bpu.weights()->size());
  try {
    for (int c = 0; c < platform_.cores(); ++c) {
      const BpuResult r = platform_.core(c).load(program, weights);
      if (r.status == BpuStatus::kOutOfMemory) fail(HB_DNN_OUT_OF_MEMORY, where, ": ", r.message);
      if (!r.ok()) fail(HB_DNN_INVALID_MODEL, where, ": ", r.message);
      body.programs.push_back(r.id);
    }
    const BpuProgramInfo& decoded = *platform_.core(0).program_info(body.programs.front());
    if (bpu.inputs()->size() != decoded.inputs.size() || bpu.outputs()->size() != decoded.outputs.size()) {
      fail(HB_DNN_INVALID_MODEL, where, ": the segment lists ", bpu.inputs()->size(), " inputs / ", bpu.outputs()->size(),
           " outputs, its program binds ", decoded.inputs.size(), " / ", decoded.outputs.size());
    }
    for (uint32_t i = 0; i < bpu.inputs()->size(); ++i) {
      const uint32_t slot = table_index(*bpu.inputs()->Get(i), where);
      const size_t bytes = decoded.inputs[i].bytes;
      if (slot < table_inputs_ && inputs_[slot].dense_bytes != bytes) {
        fail(HB_DNN_INVALID_MODEL, where, ": model input '", inputs_[slot].name, "' holds ", inputs_[slot].dense_bytes,
             " bytes, the program reads ", bytes);
      }
      body.inputs.push_back(slot);
      body.input_bytes.push_back(bytes);
    }
    for (uint32_t i = 0; i < bpu.outputs()->size(); ++i) {
      body.outputs.push_back(table_index(*bpu.outputs()->Get(i), where));
      const BpuBinding& d = decoded.outputs[i];
      body.output_types.push_back(element_dtype(d.type));
      body.output_shapes.push_back(d.dims);
    }
  } catch (...) {
    unload_programs(body);
    throw;
  }
  body.span_offset_in = bpu_span_in_;
  body.span_offset_out = bpu_span_out_;
  bpu_span_in_ += body.inputs.size();
  bpu_span_out_ += body.outputs.size();
  return body;
}

void Model::register_profile_keys() {
  Profiler* profiler = Profiler::active();
  if (profiler == nullptr) return;
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

}  // namespace openbpu::dnn
