// Runs the float model and a candidate model over a rendered OCR data set and measures the
// candidate: output cosine against the float model, and the task metrics of a TaskScorer.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "openbpu/accuracy/candidate_input.h"
#include "openbpu/accuracy/ocr_dataset.h"
#include "openbpu/accuracy/task_scorer.h"
#include "openbpu/executor/float_executor.h"

namespace openbpu::accuracy {

struct EvaluationOptions {
  std::string float_input_name;      // empty: the model's only input
  std::string candidate_input_name;  // empty: the model's only input
  CandidateInputOptions candidate;
  int64_t limit = 0;  // first `limit` samples; 0: all
};

// Feeds each sample's float input to `float_model` and its candidate input to `candidate`,
// compares their first outputs. Returns {"kind", "samples", "output_cosine": {"mean", "min"},
// "milliseconds_per_sample": {"float", "candidate"}} merged with scorer.report(). Writes one
// line per sample to `per_sample` when given. Throws Error naming the sample on any failure.
nlohmann::json evaluate_ocr(const OcrDataset& dataset, executor::FloatExecutor& float_model,
                            executor::FloatExecutor& candidate, TaskScorer& scorer,
                            const EvaluationOptions& options, std::ostream* per_sample = nullptr);

}  // namespace openbpu::accuracy
