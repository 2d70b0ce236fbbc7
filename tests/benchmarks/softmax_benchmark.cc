// Softmax on the CPU kernels: the integer HzQuantizedSoftmax (simulator::softmax_row, what the
// quantized model and the virtual BPU's Softmax instruction compute) beside the float32 Softmax
// kernel, on the shapes the PP-OCRv4 rec model has (its attention rows and the final per-step
// distribution over 6625 characters). One thread; random operands.
//
//   softmax_benchmark [google benchmark flags]
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "openbpu/kernels/registry.h"
#include "openbpu/simulator/integer_arithmetic.h"

namespace kernels = openbpu::kernels;
namespace sim = openbpu::simulator;

namespace {

// rec's Softmax inputs: attention [1, 8, 40, 40] (axis 3) and the output [1, 40, 6625] (axis 2).
const std::vector<kernels::Shape> kShapes = {{1, 8, 40, 40}, {1, 40, 6625}};

kernels::Tensor random_tensor(kernels::DataType type, const kernels::Shape& shape) {
  kernels::Tensor t(type, shape);
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> value(-2000, 2000);
  for (int64_t i = 0; i < t.element_count(); ++i) {
    if (type == kernels::DataType::kFloat32) t.data<float>()[i] = 0.004f * static_cast<float>(value(rng));
    else if (type == kernels::DataType::kInt16) t.data<int16_t>()[i] = static_cast<int16_t>(value(rng));
    else t.data<int8_t>()[i] = static_cast<int8_t>(value(rng) / 16);
  }
  return t;
}

void run_softmax(benchmark::State& state, const std::string& op, kernels::DataType in, kernels::AttributeMap attrs) {
  const kernels::Shape& shape = kShapes[static_cast<size_t>(state.range(0))];
  attrs.set("axis", static_cast<int64_t>(shape.size()) - 1);
  const kernels::NodeInfo node{"softmax", op, op == "Softmax" ? "" : "horizon", op == "Softmax" ? 13 : 1, attrs, 1, 1};
  const std::unique_ptr<kernels::Kernel> kernel = kernels::create_kernel(node);
  const kernels::Tensor x = random_tensor(in, shape);
  std::vector<const kernels::Tensor*> inputs = {&x};
  std::vector<kernels::Tensor> outputs(1);
  for (auto _ : state) {
    kernels::KernelContext ctx(inputs, outputs, kernels::Allocator::default_allocator(), nullptr);
    kernel->run(ctx);
    benchmark::DoNotOptimize(outputs[0].raw_data());
  }
  state.SetItemsProcessed(state.iterations() * x.element_count());
  state.SetLabel(kernels::shape_to_string(shape));
}

kernels::AttributeMap integer_attrs(const char* output_type, double out_scale) {
  const sim::SoftmaxMultipliers m = sim::softmax_multipliers(0.004, out_scale);
  kernels::AttributeMap a;
  a.set("output_type", std::string(output_type));
  a.set("exponent_multiplier", static_cast<int64_t>(m.exponent.multiplier));
  a.set("exponent_shift", static_cast<int64_t>(m.exponent.shift));
  a.set("output_multiplier", static_cast<int64_t>(m.output.multiplier));
  a.set("output_shift", static_cast<int64_t>(m.output.shift));
  return a;
}

void BM_SoftmaxF32(benchmark::State& state) { run_softmax(state, "Softmax", kernels::DataType::kFloat32, {}); }
void BM_SoftmaxInt16(benchmark::State& state) {
  run_softmax(state, "HzQuantizedSoftmax", kernels::DataType::kInt16, integer_attrs("int16", 1.0 / 32767));
}
void BM_SoftmaxInt8ToInt16(benchmark::State& state) {
  run_softmax(state, "HzQuantizedSoftmax", kernels::DataType::kInt8, integer_attrs("int16", 1.0 / 32767));
}

}  // namespace

BENCHMARK(BM_SoftmaxF32)->DenseRange(0, 1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SoftmaxInt16)->DenseRange(0, 1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SoftmaxInt8ToInt16)->DenseRange(0, 1)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
