// Helpers for pass tests: a graph in text form goes through one pass; the test compares the
// dump with the expected text and checks that the outputs did not change numerically on
// pseudo-random inputs (the seed and the worst difference are printed on failure).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>

#include "openbpu/executor/float_executor.h"
#include "openbpu/ir/dump.h"
#include "openbpu/ir/parse.h"
#include "openbpu/passes/pipeline.h"

namespace openbpu::passes::testing {

// Relative difference allowed between a rewritten graph's outputs and the original's: folding
// and fusion reorder float arithmetic.
constexpr double kFloatTolerance = 1e-5;

// Values in [-4, 4) (float) or [0, 8) (int64); an unknown or symbolic dim is 2.
inline kernels::Tensor pseudo_random_input(const ir::Value& input, uint64_t seed) {
  EXPECT_TRUE(input.type().shape.has_value())
      << "test graph input '" << input.name() << "' needs a rank";
  kernels::Shape shape;
  for (const ir::Dim& d : input.type().shape.value_or(std::vector<ir::Dim>{})) {
    shape.push_back(d.is_known() ? d.value : 2);
  }
  kernels::Tensor t(input.type().dtype, shape);
  uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) * 0x1.0p-53;  // [0, 1)
  };
  if (t.dtype() == kernels::DataType::kFloat32) {
    float* p = t.data<float>();
    for (int64_t i = 0; i < t.element_count(); ++i) p[i] = static_cast<float>(-4 + 8 * next());
  } else if (t.dtype() == kernels::DataType::kInt64) {
    int64_t* p = t.data<int64_t>();
    for (int64_t i = 0; i < t.element_count(); ++i) p[i] = static_cast<int64_t>(8 * next());
  } else {
    ADD_FAILURE() << "pseudo_random_input: unsupported type for '" << input.name() << "'";
  }
  return t;
}

// Max |a - b| relative to max |a| over all outputs, running both models on the same inputs.
inline double relative_output_difference(const ir::Model& reference, const ir::Model& candidate,
                                         uint64_t seed) {
  std::map<std::string, kernels::Tensor> feeds;
  uint64_t k = seed;
  for (const ir::Value* in : reference.graph->inputs()) {
    if (!in->is_constant()) feeds[in->name()] = pseudo_random_input(*in, ++k);
  }
  executor::FloatExecutor ref_exec(reference), cand_exec(candidate);
  const auto ref = ref_exec.run(feeds);
  const auto cand = cand_exec.run(feeds);
  EXPECT_EQ(ref.names, cand.names) << "graph output names changed";
  double worst = 0;
  for (size_t i = 0; i < ref.tensors.size() && i < cand.tensors.size(); ++i) {
    const auto& a = ref.tensors[i];
    const auto& b = cand.tensors[i];
    EXPECT_EQ(a.shape(), b.shape()) << "output " << ref.names[i];
    if (a.shape() != b.shape()) return INFINITY;
    double max_ref = 0, max_diff = 0;
    for (int64_t j = 0; j < a.element_count(); ++j) {
      max_ref = std::max(max_ref, std::fabs(a.float_at(j)));
      max_diff = std::max(max_diff, std::fabs(a.float_at(j) - b.float_at(j)));
    }
    worst = std::max(worst, max_diff / std::max(max_ref, 1e-30));
  }
  return worst;
}

struct PassRun {
  std::string dump;  // the graph after the pass (ir::dump of the main graph)
  int rewrites = 0;
  double difference = 0;  // relative output difference against the input graph
};

// Parses `text`, runs `pass`, dumps the result (with types if asked) and measures the output
// difference against a second parse of `text`.
inline PassRun run_pass(const std::string& text, const std::string& pass,
                        std::map<std::string, std::string> options = {}, bool types = false,
                        uint64_t seed = 1) {
  ir::Model model = ir::parse_model(text);
  const ir::Model reference = ir::parse_model(text);
  PassRun run;
  const auto reports = run_passes(model, {{pass, std::move(options)}});
  run.rewrites = reports.front().rewrites;
  run.dump = ir::dump(*model.graph, {types});
  run.difference = relative_output_difference(reference, model, seed);
  return run;
}

// The graph's dump after a parse (a text as the dump prints it: constants first, nodes in
// order), to write expectations with the same formatting as the input.
inline std::string normalized(const std::string& text, bool types = false) {
  return ir::dump(*ir::parse_model(text).graph, {types});
}

// A must-not-fire case: `pass` on `text` makes no rewrite and leaves the graph as parsed.
inline void expect_unchanged(const std::string& text, const std::string& pass) {
  ir::Model model = ir::parse_model(text);
  const auto reports = run_passes(model, {{pass, {}}});
  EXPECT_EQ(reports.front().rewrites, 0) << pass;
  EXPECT_EQ(ir::dump(*model.graph), normalized(text)) << pass;
}

}  // namespace openbpu::passes::testing
