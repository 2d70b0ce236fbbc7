// The input moments are float products of blocks of im2col columns (the kernel library's GEMM,
// dispatched at run time: Eigen here is compiled for the baseline x86-64), summed in double.
// Eigen (Debian's libeigen3-dev, header only) does the Cholesky factorisations and triangular
// inverses: numerically delicate and well kept there.
#include "openbpu/calibration/weight_rounding.h"

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include "openbpu/base/thread_pool.h"
#include "openbpu/calibration/calibration_nodes.h"
#include "openbpu/common/error.h"
#include "openbpu/kernels/gemm.h"
#include "openbpu/simulator/integer_arithmetic.h"

namespace openbpu::calibration {

using kernels::DataType;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

// What the moments of a Conv's input depend on: the input tensor and the im2col geometry (2-D;
// 1-D: height 1).
struct ConvShape {
  std::string name;   // the Conv node's
  std::string input;  // the float tensor feeding it
  int64_t out_channels = 0, group = 1, in_per_group = 0, kh = 1, kw = 1;
  int64_t stride[2] = {1, 1}, dilation[2] = {1, 1}, pad_begin[2] = {0, 0}, pad_end[2] = {0, 0};
  bool rounds = true;  // GPTQ (else rounding to nearest, and only E[x] is collected)
  int64_t depth() const { return in_per_group * kh * kw; }  // im2col rows of one group
  bool operator==(const ConvShape& o) const {
    return name == o.name && input == o.input && out_channels == o.out_channels && group == o.group && in_per_group == o.in_per_group &&
           kh == o.kh && kw == o.kw && std::equal(stride, stride + 2, o.stride) &&
           std::equal(dilation, dilation + 2, o.dilation) && std::equal(pad_begin, pad_begin + 2, o.pad_begin) &&
           std::equal(pad_end, pad_end + 2, o.pad_end) && rounds == o.rounds;
  }
};

// A Conv whose weights can be rounded for its input.
struct Target : ConvShape {
  ir::Node* conv = nullptr;
  ir::Node* weight_node = nullptr;  // the HzCalibration weight node
  std::vector<float> scales;        // per output channel
  int bits = 8;
  // Per input channel: the variance of the input's rounding noise, step²/12 (0 when the input
  // stays float). E‖(W − Q)(x + n)‖² = E‖(W − Q)x‖² + Σ (W − Q)² var(n): GPTQ on E[x xᵀ] alone
  // would move weights freely along directions the float input hardly visits, where the
  // quantized input's noise still is.
  std::vector<double> input_noise;
};

// Sums over the sampled im2col columns of one target, per group, in two halves (even and odd
// samples; the column parity when there is one sample): one half fits, the other judges.
struct Moments {
  std::vector<MatrixXd> xx[2];  // Σ x xᵀ (upper triangle)
  std::vector<VectorXd> x[2];   // Σ x
  double columns[2] = {0, 0};
  double total() const { return columns[0] + columns[1]; }
  // Zero sums for halves [0, halves) of a shape.
  void reset(const ConvShape& s, int halves) {
    for (int k = 0; k < halves; ++k) {
      if (s.rounds) xx[k].assign(size_t(s.group), MatrixXd::Zero(s.depth(), s.depth()));
      x[k].assign(size_t(s.group), VectorXd::Zero(s.depth()));
      columns[k] = 0;
    }
  }
};

// Bytes of the moments of a shape: both halves, and one sample's sums per worker.
size_t moment_bytes(const ConvShape& s, int workers) {
  const size_t d = static_cast<size_t>(s.depth());
  return static_cast<size_t>(s.group) * (2 + static_cast<size_t>(workers)) * (s.rounds ? d * d : d) * sizeof(double);
}

// The Conv's 2-D geometry from its attributes; false for what it does not cover (auto_pad other
// than NOTSET/VALID, 3-D).
bool read_geometry(const ir::Node& conv, int64_t spatial, ConvShape& t) {
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

// The shape of a Conv with weights `w` ([M, C/group, (kh,) kw]) and input `input`; false for
// what weight rounding does not cover.
bool read_shape(const ir::Node& conv, const Tensor& w, const std::string& input, ConvShape& s) {
  s.name = conv.name();
  s.input = input;
  s.out_channels = w.dim(0);
  s.group = conv.attrs().get_int("group", 1);
  s.in_per_group = w.dim(1);
  s.kh = w.rank() == 4 ? w.dim(2) : 1;
  s.kw = w.dim(w.rank() - 1);
  return s.group > 0 && s.out_channels % s.group == 0 && read_geometry(conv, w.rank() - 2, s);
}

// The Conv's weights, when they are a float32 constant of rank 3 or 4 used by it alone, and its
// bias, when it is absent or such a constant of one value per output channel.
const Tensor* own_weights(const ir::Value* wv) {
  if (wv == nullptr || !wv->is_constant() || wv->uses().size() != 1 || wv->constant()->dtype() != DataType::kFloat32 ||
      (wv->constant()->rank() != 3 && wv->constant()->rank() != 4)) {
    return nullptr;
  }
  return wv->constant();
}
bool constant_bias(const ir::Node& conv, const Tensor& w) {
  const ir::Value* bias = conv.inputs().size() > 2 ? conv.input(2) : nullptr;
  return bias == nullptr || (bias->is_constant() && bias->constant()->dtype() == DataType::kFloat32 &&
                             bias->constant()->element_count() == w.dim(0));
}

std::vector<Target> find_targets(ir::Graph& graph, const ir::Graph& float_graph, const WeightRoundingOptions& options) {
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
    const Tensor* w = own_weights(wcal->input(0));
    const ir::Value* xf = xcal->input(0) ? float_graph.find_value(xcal->input(0)->name()) : nullptr;
    if (w == nullptr || xf == nullptr || xf->is_constant() || xf->type().dtype != DataType::kFloat32) continue;
    if (!constant_bias(*conv, *w)) continue;  // a computed bias: nothing to correct in place
    Target t;
    t.conv = conv;
    t.weight_node = wcal;
    t.bits = static_cast<int>(wcal->attrs().get_int("bits", 8));
    const std::vector<float> th = wcal->attrs().get_floats("thresholds", {});
    if (!read_shape(*conv, *w, xf->name(), t) || (t.bits != 8 && t.bits != 16) ||
        (th.size() != 1 && static_cast<int64_t>(th.size()) != t.out_channels)) {
      continue;
    }
    t.rounds = options.rounding && t.depth() <= options.max_depth;
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

// One block of sampled im2col columns (row-major, kBlock floats per row, a last row of ones) and
// its product with itself.
constexpr int64_t kBlock = 512;
struct BlockBuffers {
  std::vector<float> rows, product;
};

// Adds block columns [0, cols) of group g to the moments of one half: the float product of the
// rows (d + 1 of them, with the ones) with themselves holds Σ x xᵀ and, in its last row, Σ x.
// The product is symmetric: row panels of it up to their last column hold its lower triangle
// (about 55% of the work for 8 panels), and Σ x xᵀ keeps its upper triangle.
void add_block(const ConvShape& t, int64_t g, int64_t cols, int k, Moments& mo, BlockBuffers& buf,
               base::ThreadPool* pool) {
  const int64_t d = t.depth();
  const float* rows = buf.rows.data();
  if (t.rounds) {
    const int64_t e = d + 1;
    const kernels::MatrixViewF32 a{rows, kBlock, 1};
    const int64_t panels = e >= 256 ? 8 : e >= 64 ? 4 : 1;
    for (int64_t p = 0; p < panels; ++p) {
      const int64_t r0 = e * p / panels, r1 = e * (p + 1) / panels;
      kernels::gemm_f32(r1 - r0, r1, cols, 1.0f, {rows + r0 * kBlock, kBlock, 1}, a.transposed(), 0.0f,
                        buf.product.data() + r0 * e, e, d >= 64 ? pool : nullptr);
    }
    // Column-major, the row-major lower triangle is the upper one.
    const Eigen::Map<const Eigen::MatrixXf, 0, Eigen::OuterStride<>> product(buf.product.data(), e, e,
                                                                              Eigen::OuterStride<>(e));
    MatrixXd& xx = mo.xx[k][size_t(g)];
    for (int64_t j = 0; j < d; ++j) xx.col(j).head(j + 1) += product.col(j).head(j + 1).cast<double>();
    mo.x[k][size_t(g)] += product.col(d).head(d).cast<double>();
  } else {
    VectorXd& sum = mo.x[k][size_t(g)];
    for (int64_t r = 0; r < d; ++r) {
      float s = 0;
      for (int64_t j = 0; j < cols; ++j) s += rows[r * kBlock + j];
      sum(r) += s;
    }
  }
  if (g == 0) mo.columns[k] += static_cast<double>(cols);
}

// Adds the sampled im2col columns of one input tensor [N, C, (H,) W] to the moments, a block of
// columns at a time. `half` 0 or 1: the half the columns go to; -1: alternately.
void accumulate(const ConvShape& t, const Tensor& x, size_t max_columns, int half, Moments& mo, BlockBuffers& buf,
                base::ThreadPool* pool) {
  const bool one_d = x.rank() == 3;
  if ((x.rank() != 4 && !one_d) || x.dim(1) != t.in_per_group * t.group) {
    raise("weight rounding: the input '", t.input, "' of Conv '", t.name, "' has an unexpected shape");
  }
  const int64_t n = x.dim(0), c = x.dim(1), h = one_d ? 1 : x.dim(2), w = x.dim(x.rank() - 1);
  const int64_t oh = (h + t.pad_begin[0] + t.pad_end[0] - t.dilation[0] * (t.kh - 1) - 1) / t.stride[0] + 1;
  const int64_t ow = (w + t.pad_begin[1] + t.pad_end[1] - t.dilation[1] * (t.kw - 1) - 1) / t.stride[1] + 1;
  if (oh <= 0 || ow <= 0) return;
  const int64_t positions = n * oh * ow;
  const int64_t step = std::max<int64_t>(1, (positions + int64_t(max_columns) - 1) / int64_t(max_columns));
  // The sampled output positions of each half: batch, and the input row and column of the kernel's
  // first tap.
  struct Column {
    int64_t b, y0, x0;
    int64_t offset;  // of the first tap in channel 0 (when interior)
    bool interior;   // every tap inside the input
  };
  const int64_t span_y = t.dilation[0] * (t.kh - 1), span_x = t.dilation[1] * (t.kw - 1);
  std::vector<Column> columns[2];
  for (int64_t p = 0, column = 0; p < positions; p += step, ++column) {
    const int k = half >= 0 ? half : static_cast<int>(column % 2);
    const int64_t b = p / (oh * ow), y0 = (p / ow) % oh * t.stride[0] - t.pad_begin[0];
    const int64_t x0 = p % ow * t.stride[1] - t.pad_begin[1];
    const bool interior = y0 >= 0 && y0 + span_y < h && x0 >= 0 && x0 + span_x < w;
    columns[k].push_back({b, y0, x0, (b * c * h + y0) * w + x0, interior});
  }
  const float* data = x.data<float>();
  const int64_t d = t.depth();
  buf.rows.resize(size_t((d + 1) * kBlock));
  std::fill(buf.rows.begin() + d * kBlock, buf.rows.end(), 1.0f);
  if (t.rounds) buf.product.resize(size_t((d + 1) * (d + 1)));
  for (int64_t g = 0; g < t.group; ++g) {
    for (int k = 0; k < 2; ++k) {
      for (size_t first = 0; first < columns[k].size(); first += size_t(kBlock)) {
        const int64_t cols = std::min<int64_t>(kBlock, int64_t(columns[k].size() - first));
        const Column* col = columns[k].data() + first;
        for (int64_t ci = 0; ci < t.in_per_group; ++ci) {
          for (int64_t ky = 0; ky < t.kh; ++ky) {
            for (int64_t kx = 0; kx < t.kw; ++kx) {
              float* row = buf.rows.data() + ((ci * t.kh + ky) * t.kw + kx) * kBlock;
              const int64_t channel = g * t.in_per_group + ci;
              const int64_t tap = (channel * h + ky * t.dilation[0]) * w + kx * t.dilation[1];
              for (int64_t j = 0; j < cols; ++j) {
                if (col[j].interior) {
                  row[j] = data[col[j].offset + tap];
                  continue;
                }
                const int64_t iy = col[j].y0 + ky * t.dilation[0], ix = col[j].x0 + kx * t.dilation[1];
                const bool inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
                row[j] = inside ? data[((col[j].b * c + channel) * h + iy) * w + ix] : 0.0f;
              }
            }
          }
        }
        add_block(t, g, cols, k, mo, buf, pool);
      }
    }
  }
}

// The moments of a set of Conv shapes over one pass of the samples. Each sample's sums are
// made on their own (per worker) and added to its half in sample order, so the moments do not
// depend on how many workers ran the samples.
class MomentPass {
 public:
  MomentPass(std::vector<ConvShape> shapes, size_t sample_count, const WeightRoundingOptions& options)
      : shapes_(std::move(shapes)), moments_(shapes_.size()), sample_count_(sample_count) {
    for (size_t i = 0; i < shapes_.size(); ++i) {
      by_tensor_[shapes_[i].input].push_back(i);
      // Columns per sample: a grouped Conv's, options.columns_per_group_depth per im2col row over
      // all samples.
      const size_t samples = std::max<size_t>(sample_count, 1);
      const size_t want = shapes_[i].group == 1
                              ? options.max_columns
                              : (options.columns_per_group_depth * size_t(shapes_[i].depth()) + samples - 1) / samples;
      columns_.push_back(std::clamp<size_t>(want, 1, options.max_columns));
    }
  }
  // A pass starts from zero (a second pass replaces the first one's moments).
  void begin(int workers) {
    for (size_t i = 0; i < shapes_.size(); ++i) moments_[i].reset(shapes_[i], 2);
    workers_.assign(size_t(std::max(workers, 1)), Worker{});
    for (Worker& w : workers_) w.sums.resize(shapes_.size());
  }
  void observe(int worker, const std::string& tensor, const Tensor& x, base::ThreadPool* pool) {
    auto it = by_tensor_.find(tensor);
    if (it == by_tensor_.end() || x.dtype() != DataType::kFloat32) return;
    Worker& w = workers_.at(size_t(worker));
    for (size_t i : it->second) {
      if (sample_count_ == 1) {  // one sample: its columns alternate between the halves
        accumulate(shapes_[i], x, columns_[i], -1, moments_[i], w.buffers, pool);
        continue;
      }
      Moments& sums = w.sums[i];
      if (sums.x[0].empty()) sums.reset(shapes_[i], 1);
      accumulate(shapes_[i], x, columns_[i], 0, sums, w.buffers, pool);
      w.touched.push_back(i);
    }
  }
  // The sample's sums on `worker` go to its half.
  void end_sample(int worker, size_t sample) {
    Worker& w = workers_.at(size_t(worker));
    const int k = static_cast<int>(sample % 2);
    for (size_t i : w.touched) {
      Moments& sums = w.sums[i];
      Moments& total = moments_[i];
      for (size_t g = 0; g < sums.x[0].size(); ++g) {
        if (!sums.xx[0].empty()) {
          total.xx[k][g] += sums.xx[0][g];
          sums.xx[0][g].setZero();
        }
        total.x[k][g] += sums.x[0][g];
        sums.x[0][g].setZero();
      }
      total.columns[k] += sums.columns[0];
      sums.columns[0] = 0;
    }
    w.touched.clear();
  }
  void end() { workers_.clear(); }
  const std::vector<ConvShape>& shapes() const { return shapes_; }
  Moments& moments(size_t i) { return moments_[i]; }

 private:
  struct Worker {
    std::vector<Moments> sums;  // one sample's, in half 0
    std::vector<size_t> touched;
    BlockBuffers buffers;
  };
  std::vector<ConvShape> shapes_;
  std::vector<Moments> moments_;
  std::map<std::string, std::vector<size_t>> by_tensor_;
  std::vector<Worker> workers_;
  std::vector<size_t> columns_;  // per sample, of each shape
  size_t sample_count_;
};

// One pass of the float model over the samples for the moments of `shapes` (one executor, the
// GEMMs on the kernel threads).
void run_pass(const ir::Model& float_model, MomentPass& pass, const SampleStream& samples,
              const WeightRoundingOptions& options) {
  base::ThreadPool pool(std::max(1, options.executor.threads));
  executor::FloatExecutor exec(float_model, options.executor);
  pass.begin(1);
  for (size_t s = 0; s < samples.count; ++s) {
    const std::map<std::string, Tensor> feeds = samples.feeds(s);
    for (const auto& [name, x] : feeds) pass.observe(0, name, x, &pool);
    executor::RunOptions run;
    run.observer = [&](const ir::Node&, const ir::Value& value, const Tensor& x) {
      pass.observe(0, value.name(), x, &pool);
    };
    exec.run(feeds, run);
    pass.end_sample(0, s);
  }
  pass.end();
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
  // The upper factor U of H⁻¹ = UᵀU without forming H⁻¹: with J the order reversal and
  // J H J = L Lᵀ, H⁻¹ = J L⁻ᵀ L⁻¹ J, so U = J L⁻¹ J.
  Eigen::LLT<MatrixXd> llt(h.reverse());
  if (llt.info() != Eigen::Success) return std::nullopt;
  MatrixXd l_inverse = MatrixXd::Identity(d, d);
  llt.matrixL().solveInPlace(l_inverse);
  const MatrixXd u = l_inverse.reverse();
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
    h[k] = mo.xx[k][size_t(g)].selfadjointView<Eigen::Upper>();
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

// A target's rounded weights, corrected bias and held-out error ratio.
struct Rounded {
  Tensor weights, bias;
  double ratio = 1.0;
};

// Rounds the target's weights and corrects its bias (reads the graph, changes nothing).
Rounded round_target(const Target& t, const Moments& mo) {
  const ir::Value* wv = t.weight_node->input(0);
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
  return {std::move(weights), std::move(bias), ratio_sum / static_cast<double>(t.group)};
}

// Puts the rounded weights and the corrected bias (a new constant) in the graph.
void apply(ir::Graph& graph, const Target& t, Rounded r) {
  t.weight_node->input(0)->set_constant(std::move(r.weights));
  ir::Value* value = graph.add_constant(graph.unique_value_name(t.conv->name() + "_corrected_bias"), r.bias);
  if (t.conv->inputs().size() > 2) {
    graph.set_node_input(t.conv, 2, value);
  } else {
    graph.add_node_input(t.conv, value);
  }
}

}  // namespace

// The Convs of the float model whose moments fit the budget, gathered by the pass that observes.
struct ConvMoments::State {
  State(std::vector<ConvShape> shapes, size_t samples, const WeightRoundingOptions& options)
      : pass(std::move(shapes), samples, options), sample_count(samples) {}
  MomentPass pass;
  size_t sample_count, ended = 0;
  bool complete() const { return sample_count > 0 && ended == sample_count; }
  // The gathered moments of a target, when they are its.
  Moments* find(const Target& t) {
    for (size_t i = 0; i < pass.shapes().size(); ++i) {
      if (pass.shapes()[i] == static_cast<const ConvShape&>(t)) return &pass.moments(i);
    }
    return nullptr;
  }
};

ConvMoments::ConvMoments(const ir::Model& float_model, size_t sample_count, const WeightRoundingOptions& options) {
  const int workers = static_cast<int>(std::clamp<size_t>(size_t(std::max(options.executor.threads, 1)), 1,
                                                          std::max<size_t>(sample_count, 1)));
  std::vector<ConvShape> shapes;
  size_t bytes = 0;
  for (const ir::Node* conv : float_model.graph->nodes()) {
    if (!conv->domain().empty() || conv->op_type() != "Conv" || conv->inputs().size() < 2) continue;
    const Tensor* w = own_weights(conv->input(1));
    const ir::Value* x = conv->input(0);
    ConvShape s;
    if (w == nullptr || x == nullptr || x->is_constant() || x->type().dtype != DataType::kFloat32 ||
        !constant_bias(*conv, *w) || !read_shape(*conv, *w, x->name(), s)) {
      continue;
    }
    s.rounds = options.rounding && s.depth() <= options.max_depth;
    const size_t need = moment_bytes(s, workers);
    if (bytes + need > options.memory_budget) break;  // the rest: a pass of round_conv_weights
    bytes += need;
    shapes.push_back(std::move(s));
  }
  state_ = std::make_unique<State>(std::move(shapes), sample_count, options);
}

ConvMoments::~ConvMoments() = default;

void ConvMoments::begin_pass(int workers) {
  state_->ended = 0;
  state_->pass.begin(workers);
}

void ConvMoments::observe(int worker, size_t, const std::string& tensor, const Tensor& x) {
  state_->pass.observe(worker, tensor, x, nullptr);
}

void ConvMoments::end_sample(int worker, size_t sample) {
  state_->pass.end_sample(worker, sample);
  ++state_->ended;
  if (state_->complete()) state_->pass.end();
}

size_t ConvMoments::conv_count() const { return state_->pass.shapes().size(); }

WeightRoundingSummary round_conv_weights(ir::Model& calibrated_model, const ir::Model& float_model,
                                         const SampleStream& samples, const WeightRoundingOptions& options,
                                         ConvMoments* gathered) {
  ir::Graph& graph = *calibrated_model.graph;
  const std::vector<Target> targets = find_targets(graph, *float_model.graph, options);
  WeightRoundingSummary summary;
  base::ThreadPool pool(std::max(1, options.executor.threads));
  std::vector<std::optional<Rounded>> rounded(targets.size());
  // Rounds targets `which` with their moments (one per task; the graph is only read).
  auto round_all = [&](const std::vector<size_t>& which, const std::function<Moments&(size_t)>& moments_of) {
    base::parallel_for(&pool, static_cast<int64_t>(which.size()), 1, [&](int64_t first, int64_t last) {
      for (int64_t k = first; k < last; ++k) {
        Moments& mo = moments_of(size_t(k));
        if (mo.total() > 0) rounded[which[size_t(k)]] = round_target(targets[which[size_t(k)]], mo);  // else never computed
        mo = Moments{};
      }
    });
  };
  // The moments gathered by the statistics pass, then passes of our own for the others, as many
  // targets each as the memory budget holds (at least one).
  std::vector<size_t> done, rest;
  std::vector<Moments*> found;
  for (size_t i = 0; i < targets.size(); ++i) {
    Moments* mo = gathered != nullptr && gathered->state_->complete() ? gathered->state_->find(targets[i]) : nullptr;
    if (mo != nullptr) {
      done.push_back(i);
      found.push_back(mo);
    } else {
      rest.push_back(i);
    }
  }
  round_all(done, [&](size_t k) -> Moments& { return *found[k]; });
  for (size_t begin = 0; begin < rest.size();) {
    size_t end = begin, bytes = 0;
    while (end < rest.size()) {
      const size_t need = moment_bytes(targets[rest[end]], 1);
      if (end > begin && bytes + need > options.memory_budget) break;
      bytes += need;
      ++end;
    }
    const std::vector<size_t> batch(rest.begin() + long(begin), rest.begin() + long(end));
    std::vector<ConvShape> shapes;
    for (size_t i : batch) shapes.push_back(targets[i]);
    MomentPass pass(std::move(shapes), samples.count, options);
    run_pass(float_model, pass, samples, options);
    ++summary.passes;
    round_all(batch, [&](size_t k) -> Moments& { return pass.moments(k); });
    begin = end;
  }
  // Into the graph in graph order.
  std::vector<double> ratios;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (!rounded[i]) continue;
    ratios.push_back(rounded[i]->ratio);
    ++summary.corrected;
    if (rounded[i]->ratio < 1.0) ++summary.rounded;
    apply(graph, targets[i], std::move(*rounded[i]));
  }
  if (!ratios.empty()) {
    std::sort(ratios.begin(), ratios.end());
    summary.median_error_ratio = ratios[ratios.size() / 2];
  }
  graph.remove_unused_values();
  return summary;
}

}  // namespace openbpu::calibration
