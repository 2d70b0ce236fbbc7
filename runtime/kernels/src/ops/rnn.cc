// Recurrent layers: RNN, GRU and LSTM (opsets 7 and 14).
//
// One kernel class handles the three cells: input validation, the layout attribute, directions,
// sequence_lens and the outputs are shared; the cells differ in gate count, default activations
// and the per-step update. The input projection X·Wᵀ (+ biases) of every step is computed up
// front; the recurrence then runs step by step, parallel over the batch.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "families.h"
#include "openbpu/kernels/dispatch.h"

namespace openbpu::kernels {

namespace {

enum class CellKind { kRnn, kGru, kLstm };

// The activation functions the ONNX recurrent operators accept.
enum class ActivationKind {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus,
};

struct Activation {
  ActivationKind kind = ActivationKind::kTanh;
  double alpha = 0.0;
  double beta = 0.0;

  double operator()(double x) const {
    switch (kind) {
      case ActivationKind::kRelu: return x > 0 ? x : 0.0;
      case ActivationKind::kTanh: return std::tanh(x);
      case ActivationKind::kSigmoid: return sigmoid(x);
      case ActivationKind::kAffine: return alpha * x + beta;
      case ActivationKind::kLeakyRelu: return x >= 0 ? x : alpha * x;
      case ActivationKind::kThresholdedRelu: return x > alpha ? x : 0.0;
      case ActivationKind::kScaledTanh: return alpha * std::tanh(beta * x);
      case ActivationKind::kHardSigmoid: return std::clamp(alpha * x + beta, 0.0, 1.0);
      case ActivationKind::kElu: return x >= 0 ? x : alpha * (std::exp(x) - 1);
      case ActivationKind::kSoftsign: return x / (1 + std::fabs(x));
      case ActivationKind::kSoftplus:
        return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    }
    return x;
  }

  static double sigmoid(double x) {
    if (x >= 0) return 1 / (1 + std::exp(-x));
    const double e = std::exp(x);
    return e / (1 + e);
  }
};

// Parses one activation name (case-insensitive), taking its alpha / beta from the attribute
// lists in order when present, else the function's default.
Activation parse_activation(std::string_view op, const std::string& name,
                            const std::vector<float>& alphas, size_t& next_alpha,
                            const std::vector<float>& betas, size_t& next_beta) {
  std::string lower(name);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  struct Entry {
    const char* name;
    ActivationKind kind;
    bool uses_alpha, uses_beta;
    double default_alpha, default_beta;
  };
  static constexpr Entry kTable[] = {
      {"relu", ActivationKind::kRelu, false, false, 0, 0},
      {"tanh", ActivationKind::kTanh, false, false, 0, 0},
      {"sigmoid", ActivationKind::kSigmoid, false, false, 0, 0},
      {"affine", ActivationKind::kAffine, true, true, 1.0, 0.0},
      {"leakyrelu", ActivationKind::kLeakyRelu, true, false, 0.01, 0},
      {"thresholdedrelu", ActivationKind::kThresholdedRelu, true, false, 1.0, 0},
      {"scaledtanh", ActivationKind::kScaledTanh, true, true, 1.0, 1.0},
      {"hardsigmoid", ActivationKind::kHardSigmoid, true, true, 0.2, 0.5},
      {"elu", ActivationKind::kElu, true, false, 1.0, 0},
      {"softsign", ActivationKind::kSoftsign, false, false, 0, 0},
      {"softplus", ActivationKind::kSoftplus, false, false, 0, 0},
  };
  for (const Entry& e : kTable) {
    if (lower != e.name) continue;
    Activation a{e.kind, e.default_alpha, e.default_beta};
    if (e.uses_alpha && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (e.uses_beta && next_beta < betas.size()) a.beta = betas[next_beta++];
    return a;
  }
  fail(op, ": unknown activation function '", name,
       "' (expected Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, "
       "HardSigmoid, Elu, Softsign or Softplus)");
}

class RecurrentKernel final : public Kernel {
 public:
  RecurrentKernel(const NodeInfo& node, CellKind cell) : op_(node.op_type), cell_(cell) {
    const auto& attrs = node.attrs;
    gates_ = cell == CellKind::kRnn ? 1 : cell == CellKind::kGru ? 3 : 4;
    const int per_direction = cell == CellKind::kRnn ? 1 : cell == CellKind::kGru ? 2 : 3;

    const std::string direction = attrs.get_string("direction", "forward");
    if (direction == "forward") {
      directions_ = 1;
    } else if (direction == "reverse") {
      directions_ = 1;
      reverse_only_ = true;
    } else if (direction == "bidirectional") {
      directions_ = 2;
    } else {
      fail(op_, ": direction must be forward, reverse or bidirectional, got '", direction, "'");
    }
    hidden_size_ = attrs.get_int("hidden_size", 0);
    OPENBPU_CHECK(!attrs.has("hidden_size") || hidden_size_ > 0, op_, ": hidden_size must be > 0, got ",
          hidden_size_);
    if (attrs.has("clip")) {
      clip_ = attrs.get_float("clip");
      OPENBPU_CHECK(clip_ > 0, op_, ": clip must be > 0, got ", clip_);
    }
    layout_ = attrs.get_int("layout", 0);
    OPENBPU_CHECK(layout_ == 0 || layout_ == 1, op_, ": layout must be 0 or 1, got ", layout_);
    OPENBPU_CHECK(node.opset >= 14 || !attrs.has("layout"), op_, "-", node.opset,
          " has no attribute 'layout' (added in opset 14)");
    if (cell == CellKind::kLstm) input_forget_ = attrs.get_int("input_forget", 0) != 0;
    if (cell == CellKind::kGru) linear_before_reset_ = attrs.get_int("linear_before_reset", 0) != 0;

    std::vector<std::string> names = attrs.get_strings("activations", {});
    if (names.empty()) {
      for (int d = 0; d < directions_; ++d) {
        if (cell == CellKind::kRnn) names.insert(names.end(), {"Tanh"});
        if (cell == CellKind::kGru) names.insert(names.end(), {"Sigmoid", "Tanh"});
        if (cell == CellKind::kLstm) names.insert(names.end(), {"Sigmoid", "Tanh", "Tanh"});
      }
    }
    const size_t wanted = static_cast<size_t>(per_direction * directions_);
    if (directions_ == 2 && names.size() == static_cast<size_t>(per_direction)) {
      const std::vector<std::string> one = names;
      names.insert(names.end(), one.begin(), one.end());
    }
    OPENBPU_CHECK(names.size() == wanted, op_, ": activations must list ", wanted, " functions (",
          per_direction, " per direction), got ", names.size());
    const std::vector<float> alphas = attrs.get_floats("activation_alpha", {});
    const std::vector<float> betas = attrs.get_floats("activation_beta", {});
    size_t next_alpha = 0, next_beta = 0;
    for (const auto& name : names) {
      activations_.push_back(parse_activation(op_, name, alphas, next_alpha, betas, next_beta));
    }
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    dispatch<FloatTypes>(x.dtype(), op_, [&]<typename T>() { compute<T>(ctx); });
  }

 private:
  // Tensor contents as double, after checking type and shape.
  std::vector<double> read(const Tensor& t, DataType dtype, const Shape& shape,
                           std::string_view name) const {
    OPENBPU_CHECK(t.dtype() == dtype, op_, ": ", name, " must have the type of X (", dtype_name(dtype),
          "), got ", t.describe());
    OPENBPU_CHECK(t.shape() == shape, op_, ": ", name, " must have shape ", shape_to_string(shape),
          ", got ", t.describe());
    std::vector<double> v(static_cast<size_t>(t.element_count()));
    for (int64_t i = 0; i < t.element_count(); ++i) v[static_cast<size_t>(i)] = t.float_at(i);
    return v;
  }

  double clip(double v) const { return clip_ > 0 ? std::clamp(v, -clip_, clip_) : v; }

  template <typename T>
  void compute(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const Tensor& w_t = ctx.input(1);
    const Tensor& r_t = ctx.input(2);
    OPENBPU_CHECK(x.rank() == 3, op_, ": X must be 3-D, got ", x.describe());
    const int64_t seq = layout_ == 0 ? x.dim(0) : x.dim(1);
    const int64_t batch = layout_ == 0 ? x.dim(1) : x.dim(0);
    const int64_t input_size = x.dim(2);
    OPENBPU_CHECK(w_t.rank() == 3, op_, ": W must be 3-D [num_directions, ", gates_,
          "*hidden_size, input_size], got ", w_t.describe());
    const int64_t hidden = hidden_size_ > 0 ? hidden_size_ : w_t.dim(1) / gates_;
    OPENBPU_CHECK(hidden > 0, op_, ": cannot infer hidden_size from W ", w_t.describe());
    const int64_t dirs = directions_;
    const int64_t g = gates_;
    const DataType dt = x.dtype();
    const std::vector<double> w = read(w_t, dt, {dirs, g * hidden, input_size}, "W");
    const std::vector<double> r = read(r_t, dt, {dirs, g * hidden, hidden}, "R");
    std::vector<double> bias(static_cast<size_t>(dirs * 2 * g * hidden), 0.0);
    if (const Tensor* b = ctx.optional_input(3)) bias = read(*b, dt, {dirs, 2 * g * hidden}, "B");
    std::vector<int64_t> lengths(static_cast<size_t>(batch), seq);
    if (const Tensor* s = ctx.optional_input(4)) {
      OPENBPU_CHECK(s->dtype() == DataType::kInt32 || s->dtype() == DataType::kInt64, op_,
            ": sequence_lens must be int32, got ", s->describe());
      OPENBPU_CHECK(s->rank() == 1 && s->dim(0) == batch, op_, ": sequence_lens must have shape [", batch,
            "], got ", s->describe());
      lengths = s->to_int64_vector();
      for (int64_t len : lengths) {
        OPENBPU_CHECK(len >= 0 && len <= seq, op_, ": sequence_lens values must be in [0, ", seq, "], got ",
              len);
      }
    }
    const Shape state_shape =
        layout_ == 0 ? Shape{dirs, batch, hidden} : Shape{batch, dirs, hidden};
    // State tensors are read into [dirs, batch, hidden] order.
    auto read_state = [&](int index, std::string_view name) {
      std::vector<double> state(static_cast<size_t>(dirs * batch * hidden), 0.0);
      if (const Tensor* t = ctx.optional_input(index)) {
        const std::vector<double> v = read(*t, dt, state_shape, name);
        for (int64_t d = 0; d < dirs; ++d) {
          for (int64_t b = 0; b < batch; ++b) {
            const int64_t src = layout_ == 0 ? (d * batch + b) : (b * dirs + d);
            std::copy_n(v.begin() + src * hidden, hidden, state.begin() + (d * batch + b) * hidden);
          }
        }
      }
      return state;
    };
    std::vector<double> h_state = read_state(5, "initial_h");
    std::vector<double> c_state;
    std::vector<double> peephole(static_cast<size_t>(dirs * 3 * hidden), 0.0);
    if (cell_ == CellKind::kLstm) {
      c_state = read_state(6, "initial_c");
      if (const Tensor* p = ctx.optional_input(7)) peephole = read(*p, dt, {dirs, 3 * hidden}, "P");
    }

    const Shape y_shape =
        layout_ == 0 ? Shape{seq, dirs, batch, hidden} : Shape{batch, seq, dirs, hidden};
    Tensor& y = ctx.allocate_output(0, dt, y_shape);
    T* y_data = y.data<T>();
    const T* x_data = x.data<T>();
    ThreadPool* pool = ctx.thread_pool();

    for (int64_t d = 0; d < dirs; ++d) {
      const bool reverse = reverse_only_ || d == 1;
      const double* wd = w.data() + d * g * hidden * input_size;
      const double* rd = r.data() + d * g * hidden * hidden;
      const double* wb = bias.data() + d * 2 * g * hidden;
      const double* rb = wb + g * hidden;
      const double* pd = peephole.data() + d * 3 * hidden;
      const Activation* act = activations_.data() + d * (cell_ == CellKind::kRnn   ? 1
                                                         : cell_ == CellKind::kGru ? 2
                                                                                   : 3);
      // Input projection of every step: [seq, batch, g*hidden], with Wb (and Rb where the cell
      // adds it unconditionally).
      std::vector<double> projected(static_cast<size_t>(seq * batch * g * hidden));
      parallel_for(pool, seq * batch, 1, [&](int64_t begin, int64_t end) {
        for (int64_t tb = begin; tb < end; ++tb) {
          const int64_t t = tb / batch, b = tb % batch;
          const int64_t x_row = layout_ == 0 ? (t * batch + b) : (b * seq + t);
          const T* xr = x_data + x_row * input_size;
          double* out = projected.data() + tb * g * hidden;
          for (int64_t j = 0; j < g * hidden; ++j) {
            const double* wr = wd + j * input_size;
            double sum = 0.0;
            for (int64_t k = 0; k < input_size; ++k) {
              sum += static_cast<double>(to_compute(xr[k])) * wr[k];
            }
            const bool add_recurrent_bias = !(cell_ == CellKind::kGru && j >= 2 * hidden);
            out[j] = sum + wb[j] + (add_recurrent_bias ? rb[j] : 0.0);
          }
        }
      });

      double* h_dir = h_state.data() + d * batch * hidden;
      double* c_dir = cell_ == CellKind::kLstm ? c_state.data() + d * batch * hidden : nullptr;
      const int64_t work = std::max<int64_t>(1, g * hidden * hidden);
      for (int64_t step = 0; step < seq; ++step) {
        const int64_t t = reverse ? seq - 1 - step : step;
        parallel_for(
            pool, batch, std::max<int64_t>(1, 65536 / work), [&](int64_t begin, int64_t end) {
              std::vector<double> gate(static_cast<size_t>(g * hidden));
              std::vector<double> next(static_cast<size_t>(hidden));
              for (int64_t b = begin; b < end; ++b) {
                if (t >= lengths[static_cast<size_t>(b)]) continue;
                double* h = h_dir + b * hidden;
                double* c = c_dir != nullptr ? c_dir + b * hidden : nullptr;
                const double* proj = projected.data() + (t * batch + b) * g * hidden;
                step_cell(proj, rd, rb, pd, act, h, c, gate.data(), next.data(), hidden);
                const int64_t y_row =
                    layout_ == 0 ? ((t * dirs + d) * batch + b) : ((b * seq + t) * dirs + d);
                T* yr = y_data + y_row * hidden;
                for (int64_t j = 0; j < hidden; ++j) {
                  yr[j] = from_compute<T>(static_cast<ComputeType<T>>(h[j]));
                }
              }
            });
      }
    }

    auto write_state = [&](int index, const std::vector<double>& state) {
      Tensor& out = ctx.allocate_output(index, dt, state_shape);
      T* o = out.data<T>();
      for (int64_t d = 0; d < dirs; ++d) {
        for (int64_t b = 0; b < batch; ++b) {
          const int64_t dst = layout_ == 0 ? (d * batch + b) : (b * dirs + d);
          for (int64_t j = 0; j < hidden; ++j) {
            o[dst * hidden + j] = from_compute<T>(static_cast<ComputeType<T>>(
                state[static_cast<size_t>((d * batch + b) * hidden + j)]));
          }
        }
      }
    };
    write_state(1, h_state);
    if (cell_ == CellKind::kLstm) write_state(2, c_state);
  }

  // One step of one batch row: updates h (and c) in place. `proj` holds X·Wᵀ + biases.
  void step_cell(const double* proj, const double* r, const double* rb, const double* p,
                 const Activation* act, double* h, double* c, double* gate, double* next,
                 int64_t hidden) const {
    auto recurrent = [&](int64_t row, const double* state) {
      const double* rr = r + row * hidden;
      double sum = 0.0;
      for (int64_t k = 0; k < hidden; ++k) sum += rr[k] * state[k];
      return sum;
    };
    switch (cell_) {
      case CellKind::kRnn:
        for (int64_t j = 0; j < hidden; ++j) next[j] = act[0](clip(proj[j] + recurrent(j, h)));
        break;
      case CellKind::kGru: {
        // Gate order z, r, h.
        for (int64_t j = 0; j < 2 * hidden; ++j) gate[j] = act[0](clip(proj[j] + recurrent(j, h)));
        const double* z = gate;
        const double* reset = gate + hidden;
        if (linear_before_reset_) {
          for (int64_t j = 0; j < hidden; ++j) {
            const double hr = recurrent(2 * hidden + j, h) + rb[2 * hidden + j];
            gate[2 * hidden + j] = act[1](clip(proj[2 * hidden + j] + reset[j] * hr));
          }
        } else {
          for (int64_t j = 0; j < hidden; ++j) next[j] = reset[j] * h[j];
          for (int64_t j = 0; j < hidden; ++j) {
            const double hr = recurrent(2 * hidden + j, next) + rb[2 * hidden + j];
            gate[2 * hidden + j] = act[1](clip(proj[2 * hidden + j] + hr));
          }
        }
        for (int64_t j = 0; j < hidden; ++j) {
          next[j] = (1 - z[j]) * gate[2 * hidden + j] + z[j] * h[j];
        }
        break;
      }
      case CellKind::kLstm: {
        // Gate order i, o, f, c; peepholes P = [Pi, Po, Pf].
        for (int64_t j = 0; j < 4 * hidden; ++j) gate[j] = proj[j] + recurrent(j, h);
        for (int64_t j = 0; j < hidden; ++j) {
          const double in_gate = act[0](clip(gate[j] + p[j] * c[j]));
          const double forget_gate =
              input_forget_ ? 1 - in_gate
                            : act[0](clip(gate[2 * hidden + j] + p[2 * hidden + j] * c[j]));
          const double candidate = act[1](clip(gate[3 * hidden + j]));
          const double cell = forget_gate * c[j] + in_gate * candidate;
          const double out_gate = act[0](clip(gate[hidden + j] + p[hidden + j] * cell));
          c[j] = cell;
          next[j] = out_gate * act[2](cell);
        }
        break;
      }
    }
    std::copy(next, next + hidden, h);
  }

  std::string op_;
  CellKind cell_;
  int64_t gates_ = 1;
  int directions_ = 1;
  bool reverse_only_ = false;
  int64_t hidden_size_ = 0;
  double clip_ = 0.0;  // 0: no clipping
  int64_t layout_ = 0;
  bool input_forget_ = false;
  bool linear_before_reset_ = false;
  std::vector<Activation> activations_;  // per direction: RNN f; GRU f, g; LSTM f, g, h
};

template <CellKind kCell>
std::unique_ptr<Kernel> make_recurrent(const NodeInfo& node) {
  return std::make_unique<RecurrentKernel>(node, kCell);
}

std::vector<AttrSpec> recurrent_attributes(CellKind cell) {
  std::vector<AttrSpec> specs = {
      {"activation_alpha", AttrKind::kFloats},
      {"activation_beta", AttrKind::kFloats},
      {"activations", AttrKind::kStrings},
      {"clip", AttrKind::kFloat},
      {"direction", AttrKind::kString},
      {"hidden_size", AttrKind::kInt},
      {"layout", AttrKind::kInt},
  };
  if (cell == CellKind::kGru) specs.push_back({"linear_before_reset", AttrKind::kInt});
  if (cell == CellKind::kLstm) specs.push_back({"input_forget", AttrKind::kInt});
  return specs;
}

}  // namespace

void register_rnn_kernels(std::vector<KernelDef>& defs) {
  defs.push_back(
      {"", "RNN", 7, recurrent_attributes(CellKind::kRnn), &make_recurrent<CellKind::kRnn>});
  defs.push_back(
      {"", "GRU", 7, recurrent_attributes(CellKind::kGru), &make_recurrent<CellKind::kGru>});
  defs.push_back(
      {"", "LSTM", 7, recurrent_attributes(CellKind::kLstm), &make_recurrent<CellKind::kLstm>});
}

}  // namespace openbpu::kernels
