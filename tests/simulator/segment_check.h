// The bit-exact comparison of BPU segments on the virtual BPU device with the quantized model
// run by the toolchain's executor (used by bpu_segment_check and the compiler's unit tests).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "openbpu/compiler/compiler.h"
#include "openbpu/executor/float_executor.h"
#include "openbpu/format/model_file.h"
#include "openbpu/simulator/device.h"

namespace openbpu::testing {

// The NV12 bytes of an int8 yuv444_128 tensor [N, 3, H, W] whose U and V are uniform on 2x2
// blocks (Error otherwise: such an input has no NV12 form).
std::vector<uint8_t> nv12_of(const kernels::Tensor& t, const std::string& name);
// The memory order of a packed image input whose bytes have `dims` (a model file's binding):
// the model's own order when the dims agree, else NHWC bytes of an NCHW input or the reverse.
std::vector<int> memory_order_of(const std::vector<int64_t>& dims, const kernels::Tensor& t);
// The image bytes (value + 128) of an int8 *_128 tensor, in `order` (model axes in memory
// order; empty: the model's own order).
std::vector<uint8_t> packed_of(const kernels::Tensor& t, std::vector<int> order);

class SegmentChecker {
 public:
  // `model` must outlive the checker.
  SegmentChecker(const ir::Model& model, const simulator::MarchSpec& march, int threads = 1);

  // Runs the model on `feeds`, compiles the BPU segments on the first call (shapes from this
  // run), runs each segment on the device with the executor's tensors at its inputs and
  // compares every output byte for byte. Returns "" when all are equal, else a message naming
  // the segment, the output, the first differing element and both values. Throws Error when a
  // segment cannot be compiled or loaded.
  std::string check(const std::map<std::string, kernels::Tensor>& feeds);

  // Model inputs the device receives as images (compiled with a Preprocess instruction); the
  // checker feeds them the image bytes of the executor's int8 *_128 input: NV12 (U and V must
  // be uniform on 2x2 blocks, as an nv12 → yuv444 conversion makes them) or packed bytes in
  // the image's memory order.
  void set_image_inputs(std::map<std::string, compiler::ImageInput> inputs) {
    options_.image_inputs = std::move(inputs);
  }

  // Uses the BPU segments of a model file's model instead of compiling the quantized model
  // (names resolved through the file's tensor tables). Call before the first check().
  void use_model_file(const format::ModelInfo& model);

  const std::vector<compiler::CompiledSegment>& segments() const { return segments_; }
  size_t outputs_compared() const { return compared_; }
  double compile_ms() const { return compile_ms_; }
  double executor_ms() const { return executor_ms_; }
  double device_ms() const { return device_ms_; }

 private:
  const ir::Model& model_;
  const simulator::MarchSpec& march_;
  compiler::CompileOptions options_;
  executor::FloatExecutor executor_;
  simulator::Device device_;
  std::vector<compiler::CompiledSegment> segments_;
  std::vector<uint64_t> handles_;
  bool compiled_ = false;
  std::set<std::string> needed_;  // segment inputs and outputs: the tensors a check keeps
  void load_segments();
  size_t compared_ = 0;
  double compile_ms_ = 0, executor_ms_ = 0, device_ms_ = 0;
};

}  // namespace openbpu::testing
