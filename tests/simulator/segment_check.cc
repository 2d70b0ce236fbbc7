#include "segment_check.h"

#include <chrono>
#include <cstring>
#include <sstream>

#include "openbpu/common/error.h"
#include "openbpu/simulator/program.h"

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

std::vector<uint8_t> nv12_of(const kernels::Tensor& t, const std::string& name) {
  if (t.dtype() != kernels::DataType::kInt8 || t.rank() != 4 || t.dim(1) != 3) {
    raise("input '", name, "' ", t.describe(), " is not an int8 yuv444 image");
  }
  const int64_t N = t.dim(0), H = t.dim(2), W = t.dim(3), plane = H * W;
  const int8_t* p = t.data<int8_t>();
  std::vector<uint8_t> out(static_cast<size_t>(N * H * W * 3 / 2));
  for (int64_t n = 0; n < N; ++n) {
    const int8_t* image = p + n * 3 * plane;
    uint8_t* o = out.data() + n * H * W * 3 / 2;
    for (int64_t i = 0; i < plane; ++i) o[i] = static_cast<uint8_t>(image[i] + 128);
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t w = 0; w < W; ++w) {
        for (int64_t c = 1; c <= 2; ++c) {
          const int8_t v = image[c * plane + h * W + w];
          const int8_t corner = image[c * plane + (h / 2 * 2) * W + w / 2 * 2];
          if (v != corner) raise("input '", name, "': U/V differ inside a 2x2 block at (", h, ", ", w, ")");
        }
      }
    }
    for (int64_t h = 0; h < H / 2; ++h) {
      for (int64_t w = 0; w < W / 2; ++w) {
        o[plane + h * W + 2 * w] = static_cast<uint8_t>(image[plane + 2 * h * W + 2 * w] + 128);
        o[plane + h * W + 2 * w + 1] = static_cast<uint8_t>(image[2 * plane + 2 * h * W + 2 * w] + 128);
      }
    }
  }
  return out;
}

std::vector<int> memory_order_of(const std::vector<int64_t>& dims, const kernels::Tensor& t) {
  if (dims == t.shape() || t.rank() != 4) return {};
  if (dims == std::vector<int64_t>{t.dim(0), t.dim(2), t.dim(3), t.dim(1)}) return {0, 2, 3, 1};
  return {0, 3, 1, 2};
}

std::vector<uint8_t> packed_of(const kernels::Tensor& t, std::vector<int> order) {
  if (order.empty()) {
    for (int64_t i = 0; i < t.rank(); ++i) order.push_back(static_cast<int>(i));
  }
  const simulator::isa::TensorDesc model =
      simulator::dense_desc(0, simulator::isa::ElementType::kUint8, t.shape());
  simulator::isa::TensorDesc memory = model;
  for (size_t i = 0; i < order.size(); ++i) {
    memory.dims[i] = model.dims[order[i]];
    memory.strides[i] = model.strides[order[i]];
  }
  std::vector<uint8_t> out(static_cast<size_t>(t.element_count()));
  simulator::gather_dense(memory, std::span(static_cast<const uint8_t*>(t.raw_data()), t.byte_size()), out);
  for (uint8_t& b : out) b = static_cast<uint8_t>(b + 128);
  return out;
}

SegmentChecker::SegmentChecker(const ir::Model& model, const simulator::MarchSpec& march, int threads)
    : model_(model), march_(march), options_(&march), executor_(model, {threads}) {}

void SegmentChecker::load_segments() {
  for (const compiler::CompiledSegment& seg : segments_) {
    needed_.insert(seg.inputs.begin(), seg.inputs.end());
    needed_.insert(seg.outputs.begin(), seg.outputs.end());
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
    const simulator::DecodeResult decoded = simulator::decode_program(bpu->program, bpu->weights);
    if (!decoded.ok) raise(s.name, ": ", decoded.error);
    seg.input_descs = decoded.program.inputs;
    seg.output_descs = decoded.program.outputs;
    segments_.push_back(std::move(seg));
  }
  load_segments();
}

std::string SegmentChecker::check(const std::map<std::string, kernels::Tensor>& feeds) {
  std::map<std::string, kernels::Tensor> seen;
  executor::RunOptions options;
  // Before compiling every tensor is kept (the shapes); afterwards only the segments' boundaries.
  options.observer = [&](const ir::Node&, const ir::Value& v, const kernels::Tensor& t) {
    if (!compiled_ || needed_.count(v.name()) != 0) seen[v.name()] = t.clone();
  };
  auto t0 = Clock::now();
  executor_.run(feeds, options);
  executor_ms_ += ms_since(t0);
  for (const auto& [name, t] : feeds) seen.emplace(name, t.clone());

  if (!compiled_) {
    compiler::TensorInfos infos;
    for (const auto& [name, t] : seen) infos[name] = {t.dtype(), t.shape()};
    t0 = Clock::now();
    segments_ = compiler::compile_bpu_segments(*model_.graph, infos, options_);
    compile_ms_ = ms_since(t0);
    load_segments();
  }

  for (size_t k = 0; k < segments_.size(); ++k) {
    const compiler::CompiledSegment& seg = segments_[k];
    std::vector<std::span<const uint8_t>> in;
    std::vector<std::vector<uint8_t>> images;
    images.reserve(seg.inputs.size());
    for (size_t i = 0; i < seg.inputs.size(); ++i) {
      const kernels::Tensor& t = seen.at(seg.inputs[i]);
      if (seg.input_descs[i].type == simulator::isa::ElementType::kUint8) {
        if (seg.input_descs[i].rank == 3) {
          images.push_back(nv12_of(t, seg.inputs[i]));
        } else {
          auto image = options_.image_inputs.find(seg.inputs[i]);
          images.push_back(packed_of(t, image != options_.image_inputs.end()
                                            ? image->second.memory_order
                                            : memory_order_of({seg.input_descs[i].dims, seg.input_descs[i].dims + seg.input_descs[i].rank}, t)));
        }
        in.emplace_back(images.back());
      } else {
        in.emplace_back(static_cast<const uint8_t*>(t.raw_data()), t.byte_size());
      }
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
