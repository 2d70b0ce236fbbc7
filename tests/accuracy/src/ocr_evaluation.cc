#include "openbpu/accuracy/ocr_evaluation.h"

#include <algorithm>
#include <chrono>

#include "openbpu/accuracy/output_similarity.h"
#include "openbpu/common/error.h"
#include "openbpu/common/npy.h"

namespace openbpu::accuracy {

namespace {

std::string input_name_of(const executor::FloatExecutor& model, const std::string& requested,
                          const char* which) {
  const auto& inputs = model.required_inputs();
  if (!requested.empty()) {
    for (const ir::Value* v : inputs) {
      if (v->name() == requested) return requested;
    }
    std::string names;
    for (const ir::Value* v : inputs) names += (names.empty() ? "" : ", ") + v->name();
    raise("the ", which, " model has no input '", requested, "' (inputs: ", names, ")");
  }
  if (inputs.size() != 1) {
    raise("the ", which, " model has ", inputs.size(),
          " inputs; name the one to feed (--input-name / --candidate-input-name)");
  }
  return inputs[0]->name();
}

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
      .count();
}

}  // namespace

nlohmann::json evaluate_ocr(const OcrDataset& dataset, executor::FloatExecutor& float_model,
                            executor::FloatExecutor& candidate, TaskScorer& scorer,
                            const EvaluationOptions& options, std::ostream* per_sample) {
  const std::string float_input = input_name_of(float_model, options.float_input_name, "float");
  const std::string candidate_input_name =
      input_name_of(candidate, options.candidate_input_name, "candidate");
  const size_t count = options.limit > 0
                           ? std::min(dataset.samples.size(), static_cast<size_t>(options.limit))
                           : dataset.samples.size();
  double cosine_sum = 0, cosine_min = 1, float_ms = 0, candidate_ms = 0;
  for (size_t i = 0; i < count; ++i) {
    const OcrSample& sample = dataset.samples[i];
    try {
      const kernels::Tensor x = read_npy(sample.input);
      auto start = std::chrono::steady_clock::now();
      const executor::RunResult f = float_model.run({{float_input, x}});
      float_ms += elapsed_ms(start);
      const kernels::Tensor cx = candidate_input(sample, options.candidate);
      start = std::chrono::steady_clock::now();
      const executor::RunResult c = candidate.run({{candidate_input_name, cx}});
      candidate_ms += elapsed_ms(start);
      const double cosine = cosine_similarity(f.tensors.at(0), c.tensors.at(0));
      cosine_sum += cosine;
      cosine_min = std::min(cosine_min, cosine);
      const std::string line = scorer.add(sample, f.tensors.at(0), c.tensors.at(0));
      if (per_sample) *per_sample << "  " << line << " cosine " << cosine << "\n";
    } catch (const std::exception& e) {
      raise(dataset.folder.string(), " sample ", sample.id, ": ", e.what());
    }
  }
  const double n = static_cast<double>(count);
  nlohmann::json report = {
      {"kind", ocr_task_name(dataset.task)},
      {"samples", count},
      {"output_cosine", {{"mean", cosine_sum / n}, {"min", cosine_min}}},
      {"milliseconds_per_sample", {{"float", float_ms / n}, {"candidate", candidate_ms / n}}}};
  report.update(scorer.report());
  return report;
}

}  // namespace openbpu::accuracy
