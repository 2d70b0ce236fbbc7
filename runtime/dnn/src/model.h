// A loaded model, prepared for inference: its input/output properties as the C API reports
// them, and its segments in execution order with everything that does not depend on input data
// done at load time (CPU kernels created with their attributes and constants, BPU programs
// decoded, verified and loaded on every core of the platform).
//
// One inference (Model::advance) keeps every tensor dense, row-major, in ONNX axis order: user
// inputs are gathered from the user's layout into dense tensors, CPU operators run on the
// shared kernel library (design invariant 2), BPU segments run on a core of the platform (the
// device applies the program's own layouts), and model outputs are scattered into the user's
// memory by the output properties' stride.
//
// With HB_DNN_DUMP_PATH set when a model is loaded, each of its inferences also writes every
// layer's outputs (a BPU segment, or one CPU operator) as raw dense bytes:
//   <dir>/<model>_<LLL>_<BPU|CPU|input>_<layer>_<tensor>.bin
// LLL numbers the layers in execution order (000: the model inputs); names are kept to
// [A-Za-z0-9._-]. With HB_DNN_DUMP_FORMAT "txt" or "bin,txt" (default "bin") each .bin gets a
// .txt beside it holding the same values as text (layer_dump.h). Files are written atomically;
// concurrent inferences overwrite each other.
//
// With the profiler on (HB_DNN_PROFILER_LOG_PATH at the first model load, profiler.h), each
// successful inference reports its layers' wall-clock latencies, keyed
//   <model>_subgraph_0_input_layout_convert   the model inputs copied from the user's layout
//   BPU_<model>_subgraph_<k>                  a BPU segment (its name), submit to done
//   <operator name>_<op type>                 one CPU operator
//   <model>_subgraph_0_output_layout_convert  the model outputs scattered into the user's memory
// BPU time = the BPU segments, CPU time = the rest.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "dnn/hb_dnn.h"
#include "execution_context.h"
#include "openbpu/format/model_file.h"
#include "openbpu/kernels/kernel.h"
#include "platform.h"
#include "profiler.h"
#include "tensor_port.h"
#include "ucp_ports.h"

namespace openbpu::dnn {

// Where a segment or an operator finds a tensor in one inference's tensor table.
struct Slot {
  enum Kind : uint8_t { kTable, kConstant, kAbsent } kind = kAbsent;
  uint32_t index = 0;  // table index, or constant index of the op
};

struct CpuOperator {
  std::string name;
  std::string op_type;
  std::unique_ptr<kernels::Kernel> kernel;
  std::vector<kernels::Tensor> constants;
  std::vector<Slot> inputs;
  std::vector<uint32_t> outputs;  // table indices
  // In an ExecutionContext: where its input pointers start (op_inputs), and where its output
  // tensors are staged (op_staging) when the table slots are not adjacent (else the kernel
  // writes into the table).
  size_t input_offset = 0;
  size_t staging_offset = 0;
  bool adjacent_outputs = true;
};

// Where a CPU operator's tensor reference is in its table (the inference's or a graph
// attribute's own).
using TableIndex = std::function<uint32_t(const format::TensorRef& r, const std::string& where)>;

struct CpuSegment {
  std::vector<CpuOperator> ops;
};

struct BpuSegment {
  std::vector<uint64_t> programs;  // program handle on each core of the platform
  std::vector<uint32_t> inputs, outputs;
  std::vector<kernels::DataType> output_types;
  std::vector<std::vector<int64_t>> output_shapes;
  std::vector<size_t> input_bytes;
  size_t span_offset_in = 0, span_offset_out = 0;  // its spans in an ExecutionContext
};

struct Segment {
  std::string name;
  std::variant<CpuSegment, BpuSegment> body;
};

class Model;

// One inference in progress (Model::advance): its tensors and how far it got. The task owns
// it; a BPU job in flight reads and writes its tensors, so nothing touches it meanwhile.
struct Inference {
  Inference() = default;
  Inference(const Inference&) = delete;
  Inference& operator=(const Inference&) = delete;
  ~Inference() { reset(nullptr, nullptr); }

  const hbDNNTensor* inputs = nullptr;
  hbDNNTensor* outputs = nullptr;
  // hbDNNRoiInfer: one ROI per resizer input, in input order; the resizer inputs are source
  // images resized from their ROI (null: hbDNNInfer, every input has the model's size).
  const hbDNNRoi* rois = nullptr;
  bool started = false;  // the model inputs are in the table
  size_t segment = 0;    // the next segment, or the BPU segment in flight
  size_t layer = 0;      // layers run so far (dump file numbering)
  // The model's context this inference uses (from its start until reset()) and its model.
  const Model* model = nullptr;
  ExecutionContext* context = nullptr;
  // The BPU job in flight (core >= 0), and how it ended — set by whoever receives the device's
  // completion before it calls advance() again (null: outputs written).
  int core = -1;
  const char* bpu_failure = nullptr;
  ProfilerClock::time_point bpu_end;  // when the job ended (its latency ends there)
  // Profiling: BPU and CPU totals, the current layer's start (the latencies per layer are in
  // the context).
  double bpu_ms = 0, cpu_ms = 0;
  ProfilerClock::time_point t0;

  // Ready for a new inference of these tensors; the context goes back to its model (no BPU job
  // may be in flight).
  void reset(const hbDNNTensor* in, hbDNNTensor* out, const hbDNNRoi* roi_list = nullptr);
};

enum class Progress {
  kDone,           // the outputs are in the user's memory
  kWaitingForBpu,  // a BPU job was submitted; advance() again once its completion arrived
  kCancelled,      // stopped at a segment boundary (RunControl::cancel)
};

// Per-inference choices the scheduler makes.
struct RunControl {
  int32_t core_mask = 0;                  // hbBPUCore bits; 0 = any
  int32_t priority = 0;                   // 0..255 (hbDNNInferCtrlParam.priority): the BPU jobs'
                                          // priority; 255 preempts at function-call boundaries
  const std::atomic<bool>* cancel = nullptr;  // stop at the next segment boundary when set
};

class Model {
 public:
  // Prepares model `index` of a verified package. Throws ApiError (HB_DNN_INVALID_MODEL /
  // HB_DNN_INCOMPATIBLE_MODEL / HB_DNN_OUT_OF_MEMORY) naming the model, segment and operator.
  Model(const format::Model& model, Platform& platform, const std::string& file);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const std::string& name() const { return name_; }
  const std::vector<TensorPort>& inputs() const { return inputs_; }
  const std::vector<TensorPort>& outputs() const { return outputs_; }
  Platform& platform() const { return platform_; }
  // The model as the UCP-generation API describes it (hobot/dnn/hb_dnn.h).
  const UcpPorts& ucp() const { return ucp_; }
  Profiler* profiler() const { return profiler_; }  // null: profiling off

  // Batch inputs as separate tensors: when every input has the same batch N > 1 (validShape[0])
  // and none is NV12, hbDNNInfer also takes N tensors per input, each one batch item (batch
  // dimension 1 in its validShape / alignedShape, the rest as the model's), ordered
  // input0[b0], input0[b1], ..., input1[b0], ... . batch() is that N, or 1.
  int32_t batch() const { return batch_; }
  // The number of tensors `inputs` holds: inputs().size(), or batch() times that when the first
  // tensor is a batch item (validShape[0] == 1 while the model's is batch() > 1).
  size_t input_tensor_count(const hbDNNTensor* inputs) const;
  // Checks one inference's tensors against the model (types, shapes, memory). Throws ApiError
  // HB_DNN_INVALID_ARGUMENT naming the input/output (and batch item) and the rule.
  void check_tensors(const hbDNNTensor* inputs, const hbDNNTensor* outputs) const;
  void check_inputs(const hbDNNTensor* inputs) const;
  void check_outputs(const hbDNNTensor* outputs) const;
  // The inputs fed by the resizer (input_source: resizer), in input order.
  const std::vector<size_t>& resizer_inputs() const { return resizer_inputs_; }
  // Checks batch `batch` of hbDNNRoiInfer (hb_dnn.h): `inputs` (inputs().size() tensors; a
  // resizer input's is its source image) and `rois` (one per resizer input) against the
  // platform's resizer rules. Throws ApiError HB_DNN_INVALID_ARGUMENT naming the batch, input,
  // ROI and the rule.
  void check_roi_inputs(const hbDNNTensor* inputs, const hbDNNRoi* rois, size_t batch) const;
  // Runs `inference` on from where it stopped: CPU segments on the calling thread, until it
  // submits a BPU segment to a core (kWaitingForBpu: the device calls `done` when the job has
  // ended; the caller records its failure in inference.bpu_failure and calls advance() again,
  // and must not touch `inference` before), reaches the end (kDone), or finds `control.cancel`
  // set at a segment boundary (kCancelled; a job in flight is always collected first). So no
  // thread waits for the BPU. Throws ApiError (HB_DNN_RUN_TASK_FAILED, HB_DNN_OUT_OF_MEMORY)
  // naming the segment / operator; after a throw the inference is over.
  Progress advance(Inference& inference, const RunControl& control, BpuJobDone done) const;

  // Tasks of this model that exist (hbDNNRelease is refused while > 0).
  std::atomic<int> live_tasks{0};

  // A free execution context, or a new one (std::bad_alloc); give it back with
  // release_context. Thread-safe. Only a new context allocates.
  ExecutionContext* acquire_context() const;
  void release_context(ExecutionContext* context) const noexcept;

 private:
  std::string name_;
  Platform& platform_;
  std::vector<TensorPort> inputs_, outputs_;
  UcpPorts ucp_;
  int32_t batch_ = 1;
  std::vector<TensorPort> batch_items_;  // per input, one batch item's port (batch_ > 1)
  std::vector<size_t> resizer_inputs_;
  std::vector<Segment> segments_;
  // The tensor table of an inference: model inputs, outputs, then intermediates.
  uint32_t table_inputs_ = 0, table_outputs_ = 0;
  size_t table_size_ = 0;
  // Table slots the CPU operators write, their input and staged-output counts, BPU spans.
  std::vector<uint32_t> cpu_output_slots_;
  size_t op_input_count_ = 0, op_staging_count_ = 0, bpu_span_in_ = 0, bpu_span_out_ = 0;
  size_t layer_count_ = 0;  // profiler keys
  mutable std::mutex contexts_mutex_;
  mutable std::vector<std::unique_ptr<ExecutionContext>> contexts_;
  mutable std::vector<ExecutionContext*> free_contexts_;  // capacity: contexts_.size()
  std::unique_ptr<ExecutionContext> make_context() const;
  std::vector<std::string> slot_names_;  // the tensor name of each table slot

  // HB_DNN_DUMP_PATH at load time (empty: no dumps). When set, every inference writes the
  // model inputs and each layer's outputs there (dump_layer).
  std::string dump_dir_;
  bool dump_txt_ = false;  // HB_DNN_DUMP_FORMAT asks for a .txt beside each .bin
  // The profiler (null when off) and this model's record in it.
  Profiler* profiler_ = nullptr;
  size_t profile_record_ = 0;
  void dump_layer(size_t layer, const char* kind, const std::string& layer_name, uint32_t slot,
                  const kernels::Tensor& t) const;

  // Loading (model_load.cc), in the constructor's order.
  void load_ports(const format::Model& model, const std::string& where);
  void load_dump_settings();
  uint32_t table_index(const format::TensorRef& r, const std::string& where) const;
  CpuOperator load_cpu_operator(const format::CpuOp& op, const std::string& where);
  CpuSegment load_cpu_segment(const format::CpuSegment& cpu, const std::string& where);
  BpuSegment load_bpu_segment(const format::BpuSegment& bpu, const std::string& where);
  void register_profile_keys();
  void unload_programs(const BpuSegment& b) const noexcept;

  // The steps of advance() (inference.cc).
  void start(Inference& inf) const;
  void collect_bpu_job(Inference& inf) const;
  void run_cpu_segment(Inference& inf, const std::string& segment, const CpuSegment& cpu) const;
  void submit_bpu_segment(Inference& inf, const std::string& segment, const BpuSegment& bpu, const RunControl& control,
                          BpuJobDone done) const;
  void write_outputs(Inference& inf) const;
  void layer_done(Inference& inf, bool on_bpu, ProfilerClock::time_point end = ProfilerClock::now()) const;
};

}  // namespace openbpu::dnn
