// bpu_segment_check: the bit-exact bar of the BPU backend before the runtime exists.
//
// Runs a quantized model (*_quantized_model.onnx) with the toolchain's executor on each input,
// compiles its BPU segments, runs every segment on the virtual BPU device with the executor's
// tensors at the segment's inputs, and compares every segment output with the executor's
// tensor, byte for byte. Prints one line per segment and exits 1 on the first difference,
// naming the segment, the output, the input file, the element and both values.
//
//   bpu_segment_check --model Q.onnx --inputs DIR [--count 20] [--march bayes-e] [--bin-model F]
// With --bin-model the segments are the ones in that model file (.bin / .hbm, verified on load),
// not a fresh compilation of the quantized model. --counters DIR writes the timing model's
// per-instruction counters of each segment (MACs, bytes loaded / stored, cycles) as
// DIR/<segment>.counters.json. --nv12-input NAME: the .npy files of input NAME are RGB uint8
// images; the quantized model gets them as nv12-sampled int8 yuv444 (the accuracy harness's
// conversion) and the device as NV12 bytes through the segment's Preprocess instruction.
// --packed-input NAME: the .npy files are uint8 images in the model input's layout; the
// quantized model gets them minus 128 (the *_128 types), the device as bytes.
// DIR holds one .npy per sample (sorted by name) for a single-input model, or one folder per
// model input named after it.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>

#include <CLI/CLI.hpp>

#include "openbpu/common/error.h"
#include "openbpu/common/npy.h"
#include "openbpu/compiler/compiler.h"
#include "openbpu/executor/float_executor.h"
#include "openbpu/format/model_file.h"
#include "openbpu/frontend/onnx_model.h"
#include "openbpu/accuracy/candidate_input.h"
#include "openbpu/common/atomic_file.h"
#include "openbpu/simulator/march.h"
#include "openbpu/simulator/program.h"
#include "openbpu/simulator/timing.h"
#include "segment_check.h"

namespace fs = std::filesystem;
using namespace openbpu;

namespace {

std::vector<fs::path> npy_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".npy") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void write_counters(const std::vector<compiler::CompiledSegment>& segments, const simulator::MarchSpec& march,
                    const fs::path& dir) {
  fs::create_directories(dir);
  for (const compiler::CompiledSegment& seg : segments) {
    const simulator::DecodeResult d = simulator::decode_program(seg.program, seg.weights);
    if (!d.ok) raise(seg.name, ": ", d.error);
    const std::string json = simulator::estimate_json(simulator::estimate_program(d.program, march), march);
    write_file_atomically(dir / (seg.name + ".counters.json"), json + "\n");
  }
}

int run(const fs::path& model_path, const fs::path& inputs_dir, size_t count, const std::string& march_name,
        const std::string& bin_model, const std::string& counters, const std::string& nv12_input,
        const std::string& packed_input) {
  const auto march = simulator::march_from_name(march_name);
  if (!march) raise("unknown march '", march_name, "'");
  const ir::Model model = frontend::load_onnx(model_path);
  const ir::Graph& graph = *model.graph;

  // Samples: per model input, the sorted .npy files.
  std::vector<std::string> input_names;
  for (const ir::Value* v : graph.inputs()) {
    if (!v->is_constant()) input_names.push_back(v->name());
  }
  std::map<std::string, std::vector<fs::path>> files;
  if (input_names.size() == 1) {
    files[input_names[0]] = npy_files(inputs_dir);
  } else {
    for (const std::string& name : input_names) files[name] = npy_files(inputs_dir / name);
  }
  size_t samples = count;
  for (const auto& [name, list] : files) samples = std::min(samples, list.size());
  if (samples < count) raise(inputs_dir.string(), ": ", samples, " samples, ", count, " asked for");

  testing::SegmentChecker checker(model, simulator::march_spec(*march), 2);
  if (!nv12_input.empty()) checker.set_image_inputs({{nv12_input, {simulator::isa::ImageFormat::kNv12, {}}}});
  if (!bin_model.empty()) {
    format::ModelFile file;
    if (const format::Status st = format::ModelFile::load(bin_model, &file); !st.ok()) raise(st.message);
    format::PackageInfo package;
    if (const format::Status st = format::unpack_package(file.view(), &package); !st.ok()) raise(bin_model, ": ", st.message);
    if (package.models.size() != 1) raise(bin_model, ": holds ", package.models.size(), " models; one expected");
    checker.use_model_file(package.models.front());
  }
  for (size_t s = 0; s < samples; ++s) {
    std::map<std::string, kernels::Tensor> feeds;
    for (const auto& [name, list] : files) {
      feeds[name] = read_npy(list[s]);
      if (name == nv12_input) {
        accuracy::CandidateInputOptions nv12;
        nv12.source = accuracy::CandidateSource::kNv12;
        nv12.offset = 128;
        nv12.dtype = kernels::DataType::kInt8;
        feeds[name] = accuracy::candidate_input_from_rgb(feeds[name], nv12);
      } else if (name == packed_input) {
        const kernels::Tensor& image = feeds[name];
        if (image.dtype() != kernels::DataType::kUint8) raise(list[s].string(), ": a packed image input must be uint8");
        kernels::Tensor shifted(kernels::DataType::kInt8, image.shape());
        for (int64_t i = 0; i < image.element_count(); ++i) {
          shifted.data<int8_t>()[i] = static_cast<int8_t>(image.data<uint8_t>()[i] - 128);
        }
        feeds[name] = std::move(shifted);
      }
    }
    const std::string mismatch = checker.check(feeds);
    if (s == 0) {
      std::cout << model_path.filename().string() << ": " << checker.segments().size() << " BPU segment(s), "
                << (bin_model.empty() ? "compiled for " + march_name + " in " +
                                            std::to_string(static_cast<int>(checker.compile_ms())) + " ms"
                                      : "from " + bin_model)
                << "\n";
      for (const auto& seg : checker.segments()) {
        std::cout << "  " << seg.name << ": ";
        if (bin_model.empty()) {
          std::cout << seg.nodes.size() << " nodes, " << seg.instruction_nodes.size() << " instructions, "
                    << seg.activation_bytes << " activation bytes (unplanned " << seg.unplanned_bytes << "), ";
        } else {
          std::cout << seg.program.size() << " program bytes, ";
        }
        std::cout << seg.weights.size() << " weight bytes, " << seg.inputs.size() << " input(s), "
                  << seg.outputs.size() << " output(s)\n";
      }
    }
    if (s == 0 && !counters.empty()) write_counters(checker.segments(), simulator::march_spec(*march), counters);
    if (!mismatch.empty()) {
      std::cerr << "MISMATCH on " << files.begin()->second[s].string() << ": " << mismatch << "\n";
      return 1;
    }
  }
  std::cout << "bit-exact: " << checker.outputs_compared() << " segment outputs on " << samples
            << " inputs equal the quantized model's (executor "
            << static_cast<int>(checker.executor_ms() / double(samples)) << " ms/input, simulator "
            << static_cast<int>(checker.device_ms() / double(samples)) << " ms/input)\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Compare every BPU segment on the virtual BPU with the quantized model, bit for bit"};
  std::string model, inputs, march = "bayes-e", bin_model, counters, nv12_input, packed_input;
  size_t count = 20;
  app.add_option("--model", model, "*_quantized_model.onnx")->required();
  app.add_option("--inputs", inputs, "folder of .npy inputs (or one folder per model input)")->required();
  app.add_option("--count", count, "inputs to compare");
  app.add_option("--march", march, "march to compile for");
  app.add_option("--bin-model", bin_model, "take the BPU segments from this model file (.bin / .hbm)");
  app.add_option("--counters", counters, "write each segment's timing-model counters as JSON into this folder");
  app.add_option("--nv12-input", nv12_input, "this input's .npy files are RGB uint8 images, fed as NV12");
  app.add_option("--packed-input", packed_input, "this input's .npy files are uint8 images (rgb/bgr/yuv444/gray)");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(model, inputs, count, march, bin_model, counters, nv12_input, packed_input);
  } catch (const std::exception& e) {
    std::cerr << "bpu_segment_check: error: " << e.what() << "\n";
    return 2;
  }
}
