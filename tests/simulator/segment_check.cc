#include "segment_check.h"

#include <chrono>
#include <cstring>
#include <sstream>

#include "openbpu/common/error.h"

namespace openbpu::testing {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string element_text(kernels::DataType t, const uint8_t* p) {
  switch (t) {
    case kernels::DataType::kInt8: return std::to_string(static_cast<int8_t>(*p));
    case kernels::DataType::kInt16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return std::to_string(v);
    }
    default: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return std::to_string(v);
    }
  }
}

}  // namespace

SegmentChecker::SegmentChecker(const ir::Model& model, const simulator::MarchSpec& march, int threads)
    : model_(model), march_(march), executor_(model, {threads}) {}

void SegmentChecker::load_segments() {
  for (const compiler::CompiledSegment& seg : segments_) {
    const simulator::DeviceResult loaded = device_.load(seg.program, seg.weights);
    if (!loaded.ok()) raise(seg.name, ": the device refused the program: ", loaded.message);
    handles_.push_back(loaded.id);
  }
  compiled_ = true;
}

void SegmentChecker::use_model_file(const format::ModelInfo& model) {
  auto name_of = [&](const format::TensorRefInfo& r) -> std::string {
    switch (r.kind) {
      case format::TensorRefKind::MODEL_INPUT: return model.inputs.at(r.index).name;
      case format::TensorRefKind::MODEL_OUTPUT: return model.outputs.at(r.index).name;
      case format::TensorRefKind::INTERMEDIATE: return model.tensors.at(r.index).name;
      default: raise("model file: a BPU segment refers to a constant or absent tensor");
    }
  };
  segments_.clear();
  for (const format::SegmentInfo& s : model.segments) {
    const auto* bpu = std::get_if<format::BpuSegmentInfo>(&s.body);
    if (bpu == nullptr) continue;
    compiler::CompiledSegment seg;
    seg.name = s.name;
    seg.program = bpu->program;
    seg.weights = bpu->weights;
    for (const format::TensorRefInfo& r : bpu->inputs) seg.inputs.push_back(name_of(r));
    for (const format::TensorRefInfo& r : bpu->outputs) seg.outputs.push_back(name_of(r));
    segments_.push_back(std::move(seg));
  }
  load_segments();
}

std::string SegmentChecker::check(const std::map<std::string, kernels::Tensor>& feeds) {
  std::map<std::string, kernels::Tensor> seen;
  executor::RunOptions options;
  options.observer = [&](const ir::Node&, const ir::Value& v, const kernels::Tensor& t) {
    seen[v.name()] = t.clone();
  };
  auto t0 = Clock::now();
  executor_.run(feeds, options);
  executor_ms_ += ms_since(t0);
  for (const auto& [name, t] : feeds) seen.emplace(name, t.clone());

  if (!compiled_) {
    compiler::TensorInfos infos;
    for (const auto& [name, t] : seen) infos[name] = {t.dtype(), t.shape()};
    t0 = Clock::now();
    segments_ = compiler::compile_bpu_segments(*model_.graph, infos, {&march_});
    compile_ms_ = ms_since(t0);
    load_segments();
  }

  for (size_t k = 0; k < segments_.size(); ++k) {
    const compiler::CompiledSegment& seg = segments_[k];
    std::vector<std::span<const uint8_t>> in;
    for (const std::string& name : seg.inputs) {
      const kernels::Tensor& t = seen.at(name);
      in.emplace_back(static_cast<const uint8_t*>(t.raw_data()), t.byte_size());
    }
    std::vector<std::vector<uint8_t>> results;
    std::vector<std::span<uint8_t>> out;
    for (const std::string& name : seg.outputs) results.emplace_back(seen.at(name).byte_size(), 0xA5);
    for (auto& r : results) out.emplace_back(r);
    t0 = Clock::now();
    const simulator::DeviceResult job = device_.submit(handles_[k], in, out);
    if (!job.ok()) raise(seg.name, ": submit failed: ", job.message);
    const simulator::DeviceResult done = device_.wait(job.id, std::chrono::minutes(10));
    if (!done.ok()) raise(seg.name, ": ", done.message);
    device_ms_ += ms_since(t0);
    for (size_t o = 0; o < seg.outputs.size(); ++o) {
      const kernels::Tensor& expected = seen.at(seg.outputs[o]);
      const auto* e = static_cast<const uint8_t*>(expected.raw_data());
      const std::vector<uint8_t>& got = results[o];
      if (std::memcmp(e, got.data(), got.size()) == 0) {
        ++compared_;
        continue;
      }
      const size_t width = kernels::dtype_size(expected.dtype());
      size_t first = 0, differing = 0;
      for (size_t i = 0; i < got.size(); i += width) {
        if (std::memcmp(e + i, got.data() + i, width) != 0 && differing++ == 0) first = i / width;
      }
      std::ostringstream message;
      message << seg.name << " output '" << seg.outputs[o] << "' " << expected.describe() << ": "
              << differing << " of " << expected.element_count()
              << " elements differ; first at flat index " << first << ": simulator "
              << element_text(expected.dtype(), got.data() + first * width) << ", quantized model "
              << element_text(expected.dtype(), e + first * width);
      return message.str();
    }
  }
  return "";
}

}  // namespace openbpu::testing
