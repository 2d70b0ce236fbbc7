// dnn_model_check: the runtime's bit-exact bar. Runs a converted model file (.bin / .hbm)
// through the hbDNN C API (hbDNNInitializeFromFiles, hbDNNInfer, hbDNNWaitTaskDone: CPU
// operators on the kernel library, BPU segments on the virtual BPU) and the quantized ONNX
// model through the toolchain's executor, on the same inputs, and compares every model output
// byte for byte. Prints one line per model and exits 1 on the first difference, naming the
// output, the input file and the first differing element.
//
//   dnn_model_check --model Q.onnx --bin-model F --inputs DIR [--count 20]
//                   [--nv12-input NAME | --packed-input NAME] [--tasks N]
// DIR: one .npy per sample for a single-input model, or one folder per model input.
// --nv12-input / --packed-input: as bpu_segment_check (the .npy files are RGB uint8 images; the
// quantized model gets the converted int8 tensor, the runtime the image bytes).
// --tasks N submits N inferences before waiting for the first (asynchronous path).
// --ucp-outputs DIR compares, instead of the classic API's outputs, those ucp_ocr_app (the UCP
// generation's API, tests/runtime/ucp_app) wrote for the same inputs into DIR/<model>/.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <iostream>
#include <map>

#include <CLI/CLI.hpp>

#include "dnn/hb_dnn.h"
#include "openbpu/accuracy/candidate_input.h"
#include "openbpu/common/error.h"
#include "openbpu/common/npy.h"
#include "openbpu/executor/float_executor.h"
#include "openbpu/frontend/onnx_model.h"
#include "segment_check.h"

namespace fs = std::filesystem;
using namespace openbpu;

namespace {

void check(int32_t status, const char* what) {
  if (status != 0) raise(what, " failed: ", hbDNNGetErrorDesc(status));
}

std::vector<fs::path> npy_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".npy") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// One inference's tensors in BPU memory.
struct Buffers {
  std::vector<hbDNNTensor> inputs, outputs;
  Buffers() = default;
  Buffers(const Buffers&) = delete;
  ~Buffers() {
    for (hbDNNTensor& t : inputs) (void)hbSysFreeMem(&t.sysMem[0]);
    for (hbDNNTensor& t : outputs) (void)hbSysFreeMem(&t.sysMem[0]);
  }
};

std::string describe_difference(const hbDNNTensorProperties& p, const void* got, const kernels::Tensor& want) {
  const size_t element = want.byte_size() / static_cast<size_t>(std::max<int64_t>(1, want.element_count()));
  for (int64_t i = 0; i < want.element_count(); ++i) {
    const auto* a = static_cast<const uint8_t*>(got) + static_cast<size_t>(i) * element;
    const auto* b = static_cast<const uint8_t*>(want.raw_data()) + static_cast<size_t>(i) * element;
    if (std::memcmp(a, b, element) != 0) {
      std::string va, vb;
      if (p.tensorType == HB_DNN_TENSOR_TYPE_F32) {
        float x, y;
        std::memcpy(&x, a, 4);
        std::memcpy(&y, b, 4);
        va = std::to_string(x);
        vb = std::to_string(y);
      } else {
        va = std::to_string(want.dtype() == kernels::DataType::kInt8 ? int(*reinterpret_cast<const int8_t*>(a)) : int(*a));
        vb = std::to_string(want.int_at(i));
      }
      return "element " + std::to_string(i) + ": runtime " + va + ", quantized model " + vb;
    }
  }
  return "sizes differ";
}

// The raw bytes of a file written by ucp_ocr_app (tests/runtime/ucp_app).
std::vector<uint8_t> file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) raise(path.string(), ": cannot open (did ucp_ocr_app run on this sample?)");
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

int run(const fs::path& model_path, const std::string& bin_path, const fs::path& inputs_dir, size_t count,
        const std::string& nv12_input, const std::string& packed_input, size_t tasks, const fs::path& ucp_outputs) {
  const bool ucp = !ucp_outputs.empty();
  const ir::Model model = frontend::load_onnx(model_path);
  executor::FloatExecutor executor(model, {2});
  std::vector<std::string> input_names;
  for (const ir::Value* v : model.graph->inputs()) {
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

  hbPackedDNNHandle_t packed = nullptr;
  const char* file = bin_path.c_str();
  check(hbDNNInitializeFromFiles(&packed, &file, 1), "hbDNNInitializeFromFiles");
  const char** names = nullptr;
  int32_t model_count = 0;
  check(hbDNNGetModelNameList(&names, &model_count, packed), "hbDNNGetModelNameList");
  hbDNNHandle_t dnn = nullptr;
  check(hbDNNGetModelHandle(&dnn, packed, names[0]), "hbDNNGetModelHandle");
  int32_t in_count = 0, out_count = 0;
  check(hbDNNGetInputCount(&in_count, dnn), "hbDNNGetInputCount");
  check(hbDNNGetOutputCount(&out_count, dnn), "hbDNNGetOutputCount");

  double runtime_ms = 0, executor_ms = 0;
  size_t compared = 0;
  for (size_t first = 0; first < samples; first += tasks) {
    const size_t last = std::min(samples, first + tasks);
    std::vector<std::map<std::string, kernels::Tensor>> feeds(last - first);
    std::vector<std::unique_ptr<Buffers>> buffers;
    std::vector<hbDNNTaskHandle_t> handles;
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t s = first; s < last; ++s) {
      auto b = std::make_unique<Buffers>();
      auto& feed = feeds[s - first];
      for (int32_t i = 0; i < in_count; ++i) {
        const char* name = nullptr;
        check(hbDNNGetInputName(&name, dnn, i), "hbDNNGetInputName");
        auto list = files.find(name);
        if (list == files.end()) raise(bin_path, ": input '", name, "' is not an input of ", model_path.string());
        kernels::Tensor data = read_npy(list->second[s]);
        std::vector<uint8_t> bytes;
        hbDNNTensor t{};
        check(hbDNNGetInputTensorProperties(&t.properties, dnn, i), "hbDNNGetInputTensorProperties");
        if (name == nv12_input) {
          accuracy::CandidateInputOptions nv12;
          nv12.source = accuracy::CandidateSource::kNv12;
          nv12.offset = 128;
          nv12.dtype = kernels::DataType::kInt8;
          data = accuracy::candidate_input_from_rgb(data, nv12);
          bytes = testing::nv12_of(data, name);
        } else if (name == packed_input) {
          kernels::Tensor shifted(kernels::DataType::kInt8, data.shape());
          for (int64_t k = 0; k < data.element_count(); ++k) {
            shifted.data<int8_t>()[k] = static_cast<int8_t>(data.data<uint8_t>()[k] - 128);
          }
          std::vector<int64_t> dims(t.properties.validShape.dimensionSize,
                                    t.properties.validShape.dimensionSize + t.properties.validShape.numDimensions);
          bytes = testing::packed_of(shifted, testing::memory_order_of(dims, shifted));
          data = std::move(shifted);
        } else {
          const auto* p = static_cast<const uint8_t*>(data.raw_data());
          bytes.assign(p, p + data.byte_size());
          t.properties.alignedShape = t.properties.validShape;  // dense data: the runtime pads
        }
        check(hbSysAllocCachedMem(&t.sysMem[0], static_cast<uint32_t>(bytes.size())), "hbSysAllocCachedMem");
        b->inputs.push_back(t);
        std::memcpy(t.sysMem[0].virAddr, bytes.data(), bytes.size());
        check(hbSysFlushMem(&t.sysMem[0], HB_SYS_MEM_CACHE_CLEAN), "hbSysFlushMem");
        feed[name] = std::move(data);
      }
      for (int32_t o = 0; o < out_count; ++o) {
        hbDNNTensor t{};
        check(hbDNNGetOutputTensorProperties(&t.properties, dnn, o), "hbDNNGetOutputTensorProperties");
        check(hbSysAllocCachedMem(&t.sysMem[0], static_cast<uint32_t>(t.properties.alignedByteSize)), "hbSysAllocCachedMem");
        b->outputs.push_back(t);
      }
      if (!ucp) {
        hbDNNInferCtrlParam param;
        HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
        hbDNNTaskHandle_t task = nullptr;
        hbDNNTensor* outs = b->outputs.data();
        check(hbDNNInfer(&task, &outs, b->inputs.data(), dnn, &param), "hbDNNInfer");
        handles.push_back(task);
      }
      buffers.push_back(std::move(b));
    }
    for (hbDNNTaskHandle_t task : handles) {
      check(hbDNNWaitTaskDone(task, 0), "hbDNNWaitTaskDone");
      check(hbDNNReleaseTask(task), "hbDNNReleaseTask");
    }
    runtime_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

    for (size_t s = first; s < last; ++s) {
      const auto t1 = std::chrono::steady_clock::now();
      const executor::RunResult want = executor.run(feeds[s - first]);
      executor_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
      Buffers& b = *buffers[s - first];
      for (int32_t o = 0; o < out_count; ++o) {
        const char* name = nullptr;
        check(hbDNNGetOutputName(&name, dnn, o), "hbDNNGetOutputName");
        hbDNNTensor& t = b.outputs[static_cast<size_t>(o)];
        check(hbSysFlushMem(&t.sysMem[0], HB_SYS_MEM_CACHE_INVALIDATE), "hbSysFlushMem");
        const kernels::Tensor& w = want.at(name);
        // --ucp-outputs: the output ucp_ocr_app wrote, <dir>/<model>/<sample>_out<k>.bin.
        std::vector<uint8_t> written;
        const void* got = t.sysMem[0].virAddr;
        size_t got_bytes = static_cast<size_t>(t.properties.alignedByteSize);
        if (ucp) {
          const fs::path sample = files.begin()->second[s];
          written = file_bytes(ucp_outputs / names[0] / (sample.stem().string() + "_out" + std::to_string(o) + ".bin"));
          got = written.data();
          got_bytes = written.size();
        }
        const bool same = w.byte_size() == got_bytes && std::memcmp(w.raw_data(), got, w.byte_size()) == 0;
        if (!same) {
          std::cerr << "MISMATCH on " << files.begin()->second[s].string() << ": output '" << name << "' "
                    << (ucp ? "(UCP API) " : "") << describe_difference(t.properties, got, w) << "\n";
          return 1;
        }
        ++compared;
      }
    }
  }
  const std::string model_name = names[0];  // owned by the packed handle, released below
  check(hbDNNRelease(packed), "hbDNNRelease");
  std::cout << fs::path(bin_path).filename().string() << " (" << model_name << ", "
            << (ucp ? "UCP API outputs of ucp_ocr_app" : hbDNNGetVersion()) << "): " << compared
            << " outputs on " << samples << " inputs equal the quantized model's, bit for bit (runtime "
            << static_cast<int>(runtime_ms / double(samples)) << " ms/input, executor "
            << static_cast<int>(executor_ms / double(samples)) << " ms/input)\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Compare a model file run through the hbDNN C API with the quantized model, bit for bit"};
  std::string model, bin, inputs, nv12_input, packed_input;
  size_t count = 20, tasks = 1;
  app.add_option("--model", model, "*_quantized_model.onnx")->required();
  app.add_option("--bin-model", bin, "the converted model file (.bin / .hbm)")->required();
  app.add_option("--inputs", inputs, "folder of .npy inputs (or one folder per model input)")->required();
  app.add_option("--count", count, "inputs to compare");
  app.add_option("--nv12-input", nv12_input, "input fed as NV12 image bytes (its .npy files are RGB uint8)");
  app.add_option("--packed-input", packed_input, "input fed as packed image bytes (its .npy files are uint8)");
  app.add_option("--tasks", tasks, "inferences submitted before waiting")->check(CLI::Range(1, 32));
  std::string ucp_outputs;
  app.add_option("--ucp-outputs", ucp_outputs,
                 "compare the outputs ucp_ocr_app wrote into this folder instead of running the classic API");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(model, bin, inputs, count, nv12_input, packed_input, tasks, ucp_outputs);
  } catch (const std::exception& e) {
    std::cerr << "dnn_model_check: " << e.what() << "\n";
    return 2;
  }
}
