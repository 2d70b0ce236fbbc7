// One inference (model.h): the execution contexts and the state machine advance() runs.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>
#include <span>

#include "error.h"
#include "layer_dump.h"
#include "model.h"
#include "openbpu/base/file_name.h"

namespace openbpu::dnn {

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

Progress Model::advance(Inference& inf, const RunControl& control, BpuJobDone done) const {
  if (!inf.started) start(inf);
  if (inf.core >= 0) collect_bpu_job(inf);
  for (; inf.segment < segments_.size(); ++inf.segment) {
    if (control.cancel != nullptr && control.cancel->load()) return Progress::kCancelled;
    const Segment& seg = segments_[inf.segment];
    if (const auto* cpu = std::get_if<CpuSegment>(&seg.body)) {
      run_cpu_segment(inf, seg.name, *cpu);
      continue;
    }
    submit_bpu_segment(inf, seg.name, std::get<BpuSegment>(seg.body), control, std::move(done));
    // From here on the job's completion may already be running advance() on another thread.
    return Progress::kWaitingForBpu;
  }
  write_outputs(inf);
  return Progress::kDone;
}

// Profiling (off: profiler_ is null and nothing is measured): one latency per key, in the order
// of register_profile_keys(); inf.t0 is the current layer's start.
void Model::layer_done(Inference& inf, bool on_bpu, ProfilerClock::time_point end) const {
  const double ms = ms_between(inf.t0, end);
  inf.context->layer_ms.push_back(ms);
  (on_bpu ? inf.bpu_ms : inf.cpu_ms) += ms;
}

void Model::start(Inference& inf) const {
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
        const size_t r = static_cast<size_t>(std::find(resizer_inputs_.begin(), resizer_inputs_.end(), i) - resizer_inputs_.begin());
        gather_roi_input(port, t, inf.rois[r], dst);
      } else {
        gather_input(port, t, dst);
      }
    }
    if (!dump_dir_.empty()) dump_layer(0, "input", "input", static_cast<uint32_t>(i), dense);
  }
  if (profiler_ != nullptr) layer_done(inf, false);
  inf.started = true;
}

void Model::collect_bpu_job(Inference& inf) const {
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
  if (profiler_ != nullptr) layer_done(inf, true, inf.bpu_end);
  ++inf.layer;
  if (!dump_dir_.empty()) {
    for (uint32_t slot : bpu.outputs) dump_layer(inf.layer, "BPU", seg.name, slot, inf.context->table[slot]);
  }
  ++inf.segment;
}

void Model::run_cpu_segment(Inference& inf, const std::string& segment, const CpuSegment& cpu) const {
  ExecutionContext& c = *inf.context;
  for (const CpuOperator& op : cpu.ops) {
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
      fail(HB_DNN_OUT_OF_MEMORY, "model '", name_, "', segment '", segment, "', operator '", op.name, "': out of memory");
    } catch (const std::exception& e) {
      fail(HB_DNN_RUN_TASK_FAILED, "model '", name_, "', segment '", segment, "', operator '", op.name, "' (", op.op_type, "): ", e.what());
    }
    if (profiler_ != nullptr) layer_done(inf, false);
    ++inf.layer;
    for (size_t k = 0; k < outs.size(); ++k) {
      if (!op.adjacent_outputs) std::swap(c.table[op.outputs[k]], outs[k]);
      if (!dump_dir_.empty()) dump_layer(inf.layer, "CPU", op.name, op.outputs[k], c.table[op.outputs[k]]);
    }
  }
}

void Model::submit_bpu_segment(Inference& inf, const std::string& segment, const BpuSegment& bpu, const RunControl& control,
                               BpuJobDone done) const {
  ExecutionContext& c = *inf.context;
  // The job reads the table's tensors and writes the segment's outputs in place (allocated
  // with the context).
  const std::span<std::span<const uint8_t>> in(c.bpu_inputs.data() + bpu.span_offset_in, bpu.inputs.size());
  for (size_t k = 0; k < bpu.inputs.size(); ++k) {
    const kernels::Tensor& t = c.table[bpu.inputs[k]];
    if (t.byte_size() != bpu.input_bytes[k]) {
      fail(HB_DNN_RUN_TASK_FAILED, "model '", name_, "', segment '", segment, "': input ", k, " holds ", t.byte_size(),
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
  const BpuResult r = platform_.core(core).submit(bpu.programs[static_cast<size_t>(core)], in, out, control.priority, std::move(done));
  if (!r.ok()) {
    // Not queued: no completion will come.
    inf.core = -1;
    platform_.job_finished(core);
    fail(r.status == BpuStatus::kOutOfMemory ? HB_DNN_OUT_OF_MEMORY : HB_DNN_RUN_TASK_FAILED, "model '", name_,
         "', segment '", segment, "' on BPU core ", core, ": ", r.message);
  }
}

void Model::write_outputs(Inference& inf) const {
  if (profiler_ != nullptr) inf.t0 = ProfilerClock::now();
  const ExecutionContext& c = *inf.context;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    const TensorPort& port = outputs_[i];
    const kernels::Tensor& t = c.table[table_inputs_ + i];
    // The classic tensor types have no bool: a bool output is declared U8 (one byte, 0 or 1).
    const bool bool_as_u8 = t.dtype() == kernels::DataType::kBool && port.dtype == kernels::DataType::kUint8;
    if ((t.dtype() != port.dtype && !bool_as_u8) || t.byte_size() != port.dense_bytes) {
      fail(HB_DNN_RUN_TASK_FAILED, "model '", name_, "': output ", i, " ('", port.name, "') was computed as ", t.describe(),
           ", the model declares ", kernels::dtype_name(port.dtype), " of ", port.dense_bytes, " bytes");
    }
    scatter_output(port, t, inf.outputs[i]);
  }
  if (profiler_ != nullptr) {
    layer_done(inf, false);
    profiler_->add_inference(profile_record_, c.layer_ms, inf.bpu_ms, inf.cpu_ms);
  }
}

}  // namespace openbpu::dnn
