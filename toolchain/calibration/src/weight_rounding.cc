// Eigen (Debian's libeigen3-dev, header only) does the symmetric rank updates and the Cholesky
// factorisations: both are numerically delicate and well kept there.
#include "openbpu/calibration/weight_rounding.h"

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include "openbpu/calibration/calibration_nodes.h"
#include "openbpu/common/error.h"
#include "openbpu/simulator/integer_arithmetic.h"

namespace openbpu::calibration {

using kernels::DataType;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

// A Conv whose weights can be rounded for its input, with its geometry as 2-D (1-D: height 1).
struct Target {
  ir::Node* conv = nullptr;
  ir::Node* weight_node = nullptr;  // the HzCalibration weight node
  std::string input;                // the float tensor feeding the Conv's input calibration node
  int64_t out_channels = 0, group = 1, in_per_group = 0, kh = 1, kw = 1;
  int64_t stride[2] = {1, 1}, dilation[2] = {1, 1}, pad_begin[2] = {0, 0}, pad_end[2] = {0, 0};
  std::vector<float> scales;  // per output channel
  int bits = 8;
  // Per input channel: the variance of the input's rounding noise, step²/12 (0 when the input
  // stays float). E‖(W − Q)(x + n)‖² = E‖(W − Q)x‖² + Σ (W − Q)² var(n): GPTQ on E[x xᵀ] alone
  // would move weights freely along directions the float input hardly visits, where the
  // quantized input's noise still is.
  std::vector<double> input_noise;
  bool rounds = true;  // GPTQ (else rounding to nearest, and only E[x] is collected)
  int64_t depth() const { return in_per_group * kh * kw; }  // im2col rows of one group
};

// Sums over the sampled im2col columns of one target, per group, in two halves (even and odd
// samples; the column parity when there is one sample): one half fits, the other judges.
struct Moments {
  std::vector<MatrixXd> xx[2];  // Σ x xᵀ (lower triangle)
  std::vector<VectorXd> x[2];   // Σ x
  double columns[2] = {0, 0};
  double total() const { return columns[0] + columns[1]; }
};

// The Conv's 2-D geometry from its attributes; false for what it does not cover (auto_pad other
// than NOTSET/VALID, 3-D).
bool read_geometry(const ir::Node& conv, int64_t spatial, Target& t) {
  const std::string auto_pad = conv.attrs().get_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
  const std::vector<int64_t> strides = conv.attrs().get_ints("strides", {});
  const std::vector<int64_t> dilations = conv.attrs().get_ints("dilations", {});
  const std::vector<int64_t> pads = conv.attrs().get_ints("pads", {});
  const size_t n = static_cast<size_t>(spatial);
  if ((!strides.empty() && strides.size() != n) || (!dilations.empty() && dilations.size() != n) ||
      (!pads.empty() && pads.size() != 2 * n)) {
    return false;
  }
  const size_t first = spatial == 1 ? 1 : 0;  // 1-D: the width
  for (size_t i = 0; i < n; ++i) {
    if (!strides.empty()) t.stride[first + i] = strides[i];
    if (!dilations.empty()) t.dilation[first + i] = dilations[i];
    if (!pads.empty() && auto_pad == "NOTSET") {
      t.pad_begin[first + i] = pads[i];
      t.pad_end[first + i] = pads[n + i];
    }
  }
  return true;
}

std::vector<Target> find_targets(ir::Graph& graph, const ir::Graph& float_graph) {
  std::vector<Target> targets;
  for (ir::Node* conv : graph.nodes()) {
    if (!conv->domain().empty() || conv->op_type() != "Conv" || conv->inputs().size() < 2) continue;
    ir::Node* wcal = conv->input(1) ? conv->input(1)->producer() : nullptr;
    const ir::Node* xcal = conv->input(0) ? conv->input(0)->producer() : nullptr;
    if (wcal == nullptr || xcal == nullptr || !is_calibration_node(*wcal) || !is_calibration_node(*xcal) ||
        wcal->attrs().get_string("kind", "") != "weight" || wcal->attrs().get_int("enabled", 1) == 0 ||
        conv->input(1)->uses().size() != 1) {
      continue;
    }
    const ir::Value* wv = wcal->input(0);
    if (wv == nullptr || !wv->is_constant() || wv->uses().size() != 1 ||
        wv->constant()->dtype() != DataType::kFloat32 || (wv->constant()->rank() != 3 && wv->constant()->rank() != 4)) {
      continue;
    }
    const ir::Value* xf = xcal->input(0) ? float_graph.find_value(xcal->input(0)->name()) : nullptr;
    if (xf == nullptr || xf->is_constant() || xf->type().dtype != DataType::kFloat32) continue;
    const Tensor& w = *wv->constant();
    const ir::Value* bias = conv->inputs().size() > 2 ? conv->input(2) : nullptr;
    if (bias != nullptr && (!bias->is_constant() || bias->constant()->dtype() != DataType::kFloat32 ||
                            bias->constant()->element_count() != w.dim(0))) {
      continue;  // a computed bias: nothing to correct in place
    }
    Target t;
    t.conv = conv;
    t.weight_node = wcal;
    t.input = xf->name();
    t.out_channels = w.dim(0);
    t.group = conv->attrs().get_int("group", 1);
    t.in_per_group = w.dim(1);
    t.kh = w.rank() == 4 ? w.dim(2) : 1;
    t.kw = w.dim(w.rank() - 1);
    t.bits = static_cast<int>(wcal->attrs().get_int("bits", 8));
    const std::vector<float> th = wcal->attrs().get_floats("thresholds", {});
    if (t.group <= 0 || t.out_channels % t.group != 0 || (t.bits != 8 && t.bits != 16) ||
        (th.size() != 1 && static_cast<int64_t>(th.size()) != t.out_channels) ||
        !read_geometry(*conv, w.rank() - 2, t)) {
      continue;
    }
    for (int64_t m = 0; m < t.out_channels; ++m) {
      t.scales.push_back(simulator::symmetric_scale(th.size() == 1 ? th[0] : th[size_t(m)], t.bits));
    }
    const std::vector<float> xth = xcal->attrs().get_floats("thresholds", {});
    const int xbits = static_cast<int>(xcal->attrs().get_int("bits", 8));
    const int64_t channels = t.in_per_group * t.group;
    const bool quantized_input = xcal->attrs().get_int("enabled", 1) != 0 &&
                                 (xth.size() == 1 || static_cast<int64_t>(xth.size()) == channels);
    for (int64_t ch = 0; ch < channels; ++ch) {
      const double step =
          quantized_input ? simulator::symmetric_scale(xth.size() == 1 ? xth[0] : xth[size_t(ch)], xbits) : 0.0;
      t.input_noise.push_back(step * step / 12.0);
    }
    targets.push_back(std::move(t));
  }
  return targets;
}

// Adds the sampled im2col columns of one input tensor [N, C, (H,) W] to the moments.
void accumulate(const Target& t, const Tensor& x, size_t max_columns, int half, Moments& mo) {
  const bool one_d = x.rank() == 3;
  if ((x.rank() != 4 && !one_d) || x.dim(1) != t.in_per_group * t.group) {
    raise("weight rounding: the input '", t.input, "' of Conv '", t.conv->name(), "' has an unexpected shape");
  }
  const int64_t n = x.dim(0), c = x.dim(1), h = one_d ? 1 : x.dim(2), w = x.dim(x.rank() - 1);
  const int64_t oh = (h + t.pad_begin[0] + t.pad_end[0] - t.dilation[0] * (t.kh - 1) - 1) / t.stride[0] + 1;
  const int64_t ow = (w + t.pad_begin[1] + t.pad_end[1] - t.dilation[1] * (t.kw - 1) - 1) / t.stride[1] + 1;
  if (oh <= 0 || ow <= 0) return;
  const int64_t positions = n * oh * ow;
  const int64_t step = std::max<int64_t>(1, (positions + int64_t(max_columns) - 1) / int64_t(max_columns));
  const float* data = x.data<float>();
  constexpr int64_t kBlock = 256;
  const int64_t d = t.depth();
  MatrixXd block[2] = {MatrixXd(d, kBlock), MatrixXd(d, kBlock)};
  for (int64_t g = 0; g < t.group; ++g) {
    int64_t filled[2] = {0, 0};
    auto flush = [&](int k) {
      if (filled[k] == 0) return;
      const auto cols = block[k].leftCols(filled[k]);
      if (t.rounds) mo.xx[k][size_t(g)].selfadjointView<Eigen::Lower>().rankUpdate(cols);
      mo.x[k][size_t(g)] += cols.rowwise().sum();
      if (g == 0) mo.columns[k] += static_cast<double>(filled[k]);
      filled[k] = 0;
    };
    for (int64_t p = 0, column = 0; p < positions; p += step, ++column) {
      const int k = half >= 0 ? half : static_cast<int>(column % 2);
      const int64_t b = p / (oh * ow), oy = (p / ow) % oh, ox = p % ow;
      for (int64_t ci = 0; ci < t.in_per_group; ++ci) {
        const float* plane = data + (b * c + g * t.in_per_group + ci) * h * w;
        for (int64_t ky = 0; ky < t.kh; ++ky) {
          const int64_t iy = oy * t.stride[0] - t.pad_begin[0] + ky * t.dilation[0];
          for (int64_t kx = 0; kx < t.kw; ++kx) {
            const int64_t ix = ox * t.stride[1] - t.pad_begin[1] + kx * t.dilation[1];
            const bool inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
            block[k]((ci * t.kh + ky) * t.kw + kx, filled[k]) = inside ? plane[iy * w + ix] : 0.0;
          }
        }
      }
      if (++filled[k] == kBlock) flush(k);
    }
    flush(0);
    flush(1);
  }
}

double quantized(double v, float scale, int bits) {
  const float f = static_cast<float>(v);
  const int64_t q = bits == 16 ? simulator::quantize_int16(f, scale) : simulator::quantize_int8(f, scale);
  return static_cast<double>(simulator::dequantize(q, scale));
}

MatrixXd nearest(const Target& t, int64_t group, const MatrixXd& w) {
  MatrixXd q(w.rows(), w.cols());
  for (int64_t r = 0; r < w.rows(); ++r) {
    const float scale = t.scales[size_t(group * w.rows() + r)];
    for (int64_t j = 0; j < w.cols(); ++j) q(r, j) = quantized(w(r, j), scale, t.bits);
  }
  return q;
}

// GPTQ of one group's weights W (rows: output channels) for the input moments h, damped by
// `damping` of its mean diagonal; nullopt when the damped h is not positive definite.
std::optional<MatrixXd> gptq(const Target& t, int64_t group, const MatrixXd& w, MatrixXd h, double damping) {
  const int64_t d = h.rows(), rows = w.rows();
  const double mean_diagonal = std::max(h.diagonal().mean(), 1e-30);
  for (int64_t i = 0; i < d; ++i) {
    if (h(i, i) <= 0) h(i, i) = mean_diagonal;  // an input never seen: no error to spread
  }
  h.diagonal().array() += damping * mean_diagonal;
  Eigen::LLT<MatrixXd> llt(h);
  if (llt.info() != Eigen::Success) return std::nullopt;
  Eigen::LLT<MatrixXd> llt_inverse(llt.solve(MatrixXd::Identity(d, d)));
  if (llt_inverse.info() != Eigen::Success) return std::nullopt;
  const MatrixXd u = llt_inverse.matrixU();
  MatrixXd q(rows, d), work = w;
  VectorXd err(rows);
  for (int64_t j = 0; j < d; ++j) {
    for (int64_t r = 0; r < rows; ++r) {
      q(r, j) = quantized(work(r, j), t.scales[size_t(group * rows + r)], t.bits);
      err(r) = (work(r, j) - q(r, j)) / u(j, j);
    }
    if (j + 1 < d) work.rightCols(d - j - 1).noalias() -= err * u.row(j).tail(d - j - 1);
  }
  return q;
}

// E‖e x‖² for the moments h.
double output_error(const MatrixXd& e, const MatrixXd& h) { return (e * h).cwiseProduct(e).sum(); }

// The dampings tried, relative to H's mean diagonal: fewer columns than weights need more.
constexpr double kDampings[] = {0.01, 0.1, 1.0};

struct GroupRounding {
  MatrixXd q;
  double ratio = 1.0;  // held-out error over rounding to nearest's
};

// One group's weights: GPTQ with the damping that, fitted on one half of the columns, leaves the
// other half the lowest error, refitted on all columns; rounding to nearest when no damping
// beats it on the held-out half (few samples, or a Conv whose inputs hardly correlate).
GroupRounding round_group(const Target& t, int64_t group, const MatrixXd& w, const MatrixXd h[2],
                          const MatrixXd& all) {
  GroupRounding out{nearest(t, group, w), 1.0};
  const double nearest_error = output_error(w - out.q, h[1]);
  double best = nearest_error;
  std::optional<double> chosen;
  for (double damping : kDampings) {
    const std::optional<MatrixXd> fit = gptq(t, group, w, h[0], damping);
    if (!fit) continue;
    const double e = output_error(w - *fit, h[1]);
    if (e < best) {
      best = e;
      chosen = damping;
    }
  }
  if (!chosen) return out;
  if (std::optional<MatrixXd> q = gptq(t, group, w, all, *chosen)) {
    out.q = std::move(*q);
    out.ratio = nearest_error > 0 ? best / nearest_error : 1.0;
  }
  return out;
}

// The input covariance of group g in each half and over both, with the input's rounding noise
// on the diagonal. Bias correction removes the mean of the output error, so GPTQ works on the
// covariance: the error that remains after it.
void covariances(const Target& t, int64_t g, const Moments& mo, MatrixXd h[2], MatrixXd& all) {
  VectorXd mean_of[2];
  for (int k = 0; k < 2; ++k) {
    const double n = std::max(mo.columns[k], 1.0);
    mean_of[k] = mo.x[k][size_t(g)] / n;
    h[k] = mo.xx[k][size_t(g)].selfadjointView<Eigen::Lower>();
    h[k] /= n;
  }
  const VectorXd mean = (mo.x[0][size_t(g)] + mo.x[1][size_t(g)]) / mo.total();
  all = (h[0] * mo.columns[0] + h[1] * mo.columns[1]) / mo.total() - mean * mean.transpose();
  for (int k = 0; k < 2; ++k) h[k] -= mean_of[k] * mean_of[k].transpose();
  for (int64_t j = 0; j < t.depth(); ++j) {
    const double noise = t.input_noise[size_t(g * t.in_per_group + j / (t.kh * t.kw))];
    h[0](j, j) += noise;
    h[1](j, j) += noise;
    all(j, j) += noise;
  }
}

// Rounds the target's weights and corrects its bias; returns the held-out error ratio.
double apply(ir::Graph& graph, const Target& t, const Moments& mo) {
  ir::Value* wv = t.weight_node->input(0);
  Tensor weights = wv->constant()->clone();
  float* wp = weights.data<float>();
  const int64_t rows = t.out_channels / t.group, d = t.depth();
  Tensor bias(DataType::kFloat32, {t.out_channels});
  const ir::Value* old_bias = t.conv->inputs().size() > 2 ? t.conv->input(2) : nullptr;
  const bool halves = mo.columns[0] > 0 && mo.columns[1] > 0;
  double ratio_sum = 0;
  for (int64_t g = 0; g < t.group; ++g) {
    Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> wg(
        wp + g * rows * d, rows, d);
    const MatrixXd w = wg.cast<double>();
    const VectorXd mean = (mo.x[0][size_t(g)] + mo.x[1][size_t(g)]) / mo.total();
    GroupRounding r{nearest(t, g, w), 1.0};
    if (t.rounds && halves) {
      MatrixXd h[2], all;
      covariances(t, g, mo, h, all);
      r = round_group(t, g, w, h, all);
    }
    ratio_sum += r.ratio;
    const VectorXd shift = (w - r.q) * mean;
    for (int64_t m = 0; m < rows; ++m) {
      const int64_t o = g * rows + m;
      for (int64_t j = 0; j < d; ++j) wp[o * d + j] = static_cast<float>(r.q(m, j));
      const double b = old_bias ? old_bias->constant()->data<float>()[o] : 0.0;
      bias.data<float>()[o] = static_cast<float>(b + shift(m));
    }
  }
  wv->set_constant(std::move(weights));
  ir::Value* value = graph.add_constant(graph.unique_value_name(t.conv->name() + "_corrected_bias"), bias);
  if (old_bias) {
    graph.set_node_input(t.conv, 2, value);
  } else {
    graph.add_node_input(t.conv, value);
  }
  return ratio_sum / static_cast<double>(t.group);
}

// One pass over the samples, filling the moments of targets [begin, end).
void collect(const ir::Model& float_model, const std::vector<Target>& targets, size_t begin, size_t end,
             const SampleStream& samples, const WeightRoundingOptions& options, std::vector<Moments>& moments) {
  std::map<std::string, std::vector<size_t>> by_tensor;
  for (size_t i = begin; i < end; ++i) by_tensor[targets[i].input].push_back(i);
  int half = 0;  // even or odd sample; -1: the column parity (one sample)
  auto add = [&](const std::string& name, const Tensor& x) {
    auto it = by_tensor.find(name);
    if (it == by_tensor.end()) return;
    for (size_t i : it->second) accumulate(targets[i], x, options.max_columns, half, moments[i]);
  };
  executor::FloatExecutor exec(float_model, options.executor);
  for (size_t s = 0; s < samples.count; ++s) {
    half = samples.count == 1 ? -1 : static_cast<int>(s % 2);
    const std::map<std::string, Tensor> feeds = samples.feeds(s);
    for (const auto& [name, x] : feeds) add(name, x);
    executor::RunOptions run;
    run.observer = [&](const ir::Node&, const ir::Value& value, const Tensor& x) {
      if (x.dtype() == DataType::kFloat32) add(value.name(), x);
    };
    exec.run(feeds, run);
  }
}

}  // namespace

WeightRoundingSummary round_conv_weights(ir::Model& calibrated_model, const ir::Model& float_model,
                                         const SampleStream& samples,
                                         const WeightRoundingOptions& options) {
  ir::Graph& graph = *calibrated_model.graph;
  std::vector<Target> targets = find_targets(graph, *float_model.graph);
  for (Target& t : targets) t.rounds = options.rounding && t.depth() <= options.max_depth;
  WeightRoundingSummary summary;
  std::vector<double> ratios;
  for (size_t begin = 0; begin < targets.size();) {
    // As many targets as the memory budget holds (at least one).
    size_t end = begin, bytes = 0;
    while (end < targets.size()) {
      const size_t d = static_cast<size_t>(targets[end].depth());
      const size_t need = targets[end].rounds ? static_cast<size_t>(targets[end].group) * 2 * d * (d + 1) * sizeof(double) : 0;
      if (end > begin && bytes + need > options.memory_budget) break;
      bytes += need;
      ++end;
    }
    std::vector<Moments> moments(targets.size());
    for (size_t i = begin; i < end; ++i) {
      const int64_t d = targets[i].depth();
      if (targets[i].rounds) {
        for (auto& xx : moments[i].xx) xx.assign(size_t(targets[i].group), MatrixXd::Zero(d, d));
      }
      for (auto& x : moments[i].x) x.assign(size_t(targets[i].group), VectorXd::Zero(d));
    }
    collect(float_model, targets, begin, end, samples, options, moments);
    ++summary.passes;
    for (size_t i = begin; i < end; ++i) {
      if (moments[i].total() == 0) continue;  // the Conv's input was never computed
      const double ratio = apply(graph, targets[i], moments[i]);
      ratios.push_back(ratio);
      moments[i] = Moments{};
      ++summary.corrected;
      if (ratio < 1.0) ++summary.rounded;
    }
    begin = end;
  }
  if (!ratios.empty()) {
    std::sort(ratios.begin(), ratios.end());
    summary.median_error_ratio = ratios[ratios.size() / 2];
  }
  graph.remove_unused_values();
  return summary;
}

}  // namespace openbpu::calibration
