// Test and benchmark helper: a horizon-domain graph compiled for bayes-e and serialized as a
// model file in memory (what hb_mapper makertbin writes, without the conversion before it).
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "openbpu/compiler/compiler.h"
#include "openbpu/compiler/model_writer.h"
#include "openbpu/format/model_file.h"
#include "openbpu/ir/graph.h"
#include "openbpu/kernels/tensor.h"
#include "openbpu/simulator/march.h"

namespace openbpu {

// A float32 tensor of `shape` with values uniform in [-4, 4) from `seed`.
inline kernels::Tensor uniform_input(std::vector<int64_t> shape, uint32_t seed) {
  kernels::Tensor t(kernels::DataType::kFloat32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-4.f, 4.f);
  for (int64_t i = 0; i < t.element_count(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

// Compiles `model` (its input "x" observed on `x`) for bayes-e into `*bytes`, the model named
// `name`; the CPU operators' opsets (ai.onnx 17, horizon 1) are recorded unless `drop_opsets`
// (a format 1.0 file). `compile_options` (its march replaced by bayes-e) defaults to the compiler's;
// `input_sources` names the image inputs (compile_options.image_inputs) a pyramid or the resizer feeds.
inline format::Status compile_bayes_model_file(const ir::Model& model, const kernels::Tensor& x, const std::string& name,
                                               const std::string& toolchain_version, std::vector<uint8_t>* bytes,
                                               bool drop_opsets = false, compiler::CompileOptions compile_options = {},
                                               std::map<std::string, format::InputSource> input_sources = {}) {
  const compiler::TensorInfos infos = compiler::observe_tensor_infos(model, {{"x", x}});
  const auto& march = simulator::march_spec(simulator::March::kBayesE);
  compile_options.march = &march;
  const auto segments = compiler::compile_bpu_segments(*model.graph, infos, compile_options);
  compiler::ModelWriterOptions options;
  options.model_name = name;
  options.march = "bayes-e";
  options.input_sources = std::move(input_sources);
  if (!drop_opsets) options.opsets = {{"", 17}, {"horizon", 1}};
  format::PackageInfo package;
  package.toolchain_name = "openbpu";
  package.toolchain_version = toolchain_version;
  package.models.push_back(compiler::build_model_info(*model.graph, infos, segments, options));
  return format::serialize_package(package, bytes);
}

}  // namespace openbpu
