// Conv weights rounded for their inputs (GPTQ: Frantar et al., "GPTQ: Accurate Post-Training
// Quantization for Generative Pre-trained Transformers", 2022), and bias correction from the same
// data.
//
// Rounding every weight to its nearest grid point ignores that the errors of one output
// channel's weights add up over correlated inputs. With H = E[x xᵀ] over the Conv's im2col input
// columns (one H per group; the float model's activations on the calibration samples, plus the
// variance of the input's own rounding noise on the diagonal), GPTQ
// rounds a row's weights one input column at a time and moves the weights not yet rounded to
// cancel the error made so far (through the Cholesky factor of H⁻¹), which lowers
// E‖(W − Q)x‖². H's damping is chosen per Conv on held-out data (fitted on the even samples,
// judged on the odd ones); a Conv where no damping beats rounding to nearest there keeps it.
// The weights stay on the grid of their thresholds, so stage 4 quantizes them exactly. Then each
// output channel's mean shift (W − Q)·E[x] is added to the bias (Nagel et al., 2019; E over the
// same columns, padding included). The moments are gathered during the calibration statistics'
// pass (ConvMoments) or by a float pass of round_conv_weights' own.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "openbpu/calibration/tensor_statistics.h"
#include "openbpu/executor/float_executor.h"
#include "openbpu/ir/graph.h"

namespace openbpu::calibration {

struct WeightRoundingOptions {
  size_t max_columns = 1024;  // im2col columns per Conv and sample (evenly strided)
  // A grouped Conv's columns over all samples per im2col row (depth), as far as max_columns
  // allows. Its work per column is groups × depth², while each group's covariance of depth
  // dimensions is within a few percent from 256·depth columns: a depthwise Conv (depth 9 or 25,
  // hundreds of groups) cost rec more than all its dense Convs.
  size_t columns_per_group_depth = 256;
  // GPTQ costs O(depth³) per Conv (depth = input channels per group × kernel size): deeper
  // Convs round to nearest, with bias correction.
  int64_t max_depth = 1024;
  bool rounding = true;       // false: round to nearest, correct the biases only
  size_t memory_budget = size_t{512} << 20;  // bytes of H per pass over the samples
  executor::ExecutorOptions executor;
};

struct WeightRoundingSummary {
  size_t rounded = 0;    // Conv nodes whose weights GPTQ rounded (the others: to nearest)
  size_t corrected = 0;  // Conv biases corrected
  size_t passes = 0;     // passes of its own over the samples
  // E‖(W − Q)x‖² on the held-out half over that of rounding to nearest, the median over the
  // Convs (1 for a Conv that keeps rounding to nearest).
  double median_error_ratio = 1.0;
};

// The input moments of a float model's Convs, gathered during a pass over the samples that runs
// the model anyway (the calibration statistics: StatisticsOptions::observer), so that
// round_conv_weights needs no pass of its own for them. Holds the Convs, in graph order, whose
// moments fit options.memory_budget; round_conv_weights collects the others itself, and
// everything itself when the pass did not see every sample.
class ConvMoments final : public SampleObserver {
 public:
  ConvMoments(const ir::Model& float_model, size_t sample_count, const WeightRoundingOptions& options);
  ~ConvMoments() override;
  void begin_pass(int workers) override;
  void observe(int worker, size_t sample, const std::string& tensor, const Tensor& x) override;
  void end_sample(int worker, size_t sample) override;
  size_t conv_count() const;  // Convs whose moments it gathers

 private:
  friend WeightRoundingSummary round_conv_weights(ir::Model&, const ir::Model&, const SampleStream&,
                                                  const WeightRoundingOptions&, ConvMoments*);
  struct State;
  std::unique_ptr<State> state_;
};

// For every Conv (1-D or 2-D, any group) of a calibrated model whose weights pass through an
// enabled HzCalibration weight node with thresholds, and whose input passes through an
// HzCalibration node on a float32 tensor of `float_model`: collects H and E[x] by running
// `float_model` over `samples`, replaces the weights by their rounded values (same name) and the
// bias by a new constant `<node>_corrected_bias` (one is added if the Conv has none). Weights
// shared by several nodes are left alone. `gathered` (may be null): moments gathered over the
// same samples, the same options and the same float model. Throws Error (a sample the float
// model refuses).
WeightRoundingSummary round_conv_weights(ir::Model& calibrated_model, const ir::Model& float_model,
                                         const SampleStream& samples, const WeightRoundingOptions& options,
                                         ConvMoments* gathered = nullptr);

}  // namespace openbpu::calibration
