// recurrent_unrolling: an LSTM, GRU or RNN with a static sequence becomes its time steps as
// operators the BPU runs (the reference runs LSTM on the BPU the same way):
// - the input projection of every gate for all steps at once: MatMul(X as [T·B, I], W_gᵀ) + bias
//   (matmul_to_conv makes it one Conv per gate), a Slice of its rows per step;
// - per step and gate: + MatMul(H_prev, R_gᵀ), the gate's activation; the cell update with
//   elementwise Mul/Add/Sub (GRU: H = h̃ + z·(H_prev − h̃)); one gate per MatMul keeps a
//   quantization scale per gate;
// - Y as the Concat of the steps' H, Y_h / Y_c as the last step's, in the node's layout (built
//   batch-major: the BPU does not concatenate along N); both directions of a bidirectional
//   node; no initial state: the first step has no recurrent term.
// Must not fire: a non-constant W/R/B, a sequence_lens shorter than the sequence or computed,
// input_forget, an activation without a BPU operator, an unknown sequence shape.
#include <cctype>
#include <optional>
#include <tuple>
#include <string>
#include <vector>

#include "graph_rewrite.h"
#include "pass_list.h"

namespace openbpu::passes {

namespace {

enum class Cell { kRnn, kGru, kLstm };

struct Activation {
  std::string op;  // the ONNX operator
  kernels::AttributeMap attrs;
};

// The recurrent operator's static description; nullopt if the pass must not fire.
struct Recurrence {
  Cell cell = Cell::kLstm;
  int64_t gates = 4, hidden = 0, input = 0, steps = 0, batch = 0, directions = 1, layout = 0;
  bool reverse_only = false, linear_before_reset = false;
  std::optional<float> clip;
  const Tensor* w = nullptr;     // [D, G·H, I]
  const Tensor* r = nullptr;     // [D, G·H, H]
  const Tensor* bias = nullptr;  // [D, 2·G·H] or nullptr
  const Tensor* peephole = nullptr;  // LSTM [D, 3·H] or nullptr
  std::vector<Activation> activations;  // per direction: LSTM f, g, h; GRU f, g; RNN f
};

std::optional<Activation> activation_of(std::string name, const std::vector<float>& alphas, size_t& next_alpha,
                                        const std::vector<float>& betas, size_t& next_beta) {
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  Activation a;
  auto take = [](const std::vector<float>& list, size_t& next, float fallback) {
    return next < list.size() ? list[next++] : fallback;
  };
  if (name == "sigmoid") {
    a.op = "Sigmoid";
  } else if (name == "tanh") {
    a.op = "Tanh";
  } else if (name == "relu") {
    a.op = "Relu";
  } else if (name == "leakyrelu") {
    a.op = "LeakyRelu";
    a.attrs.set("alpha", take(alphas, next_alpha, 0.01f));
  } else if (name == "hardsigmoid") {
    a.op = "HardSigmoid";
    a.attrs.set("alpha", take(alphas, next_alpha, 0.2f));
    a.attrs.set("beta", take(betas, next_beta, 0.5f));
  } else {
    return std::nullopt;  // no BPU operator for it: the node stays on the CPU
  }
  return a;
}

bool read_activations(const ir::Node& node, Recurrence& rec) {
  const std::vector<std::string> defaults = rec.cell == Cell::kLstm  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                            : rec.cell == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                                     : std::vector<std::string>{"Tanh"};
  std::vector<std::string> names = node.attrs().get_strings("activations", {});
  if (names.empty()) {
    for (int64_t d = 0; d < rec.directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  }
  if (names.size() != defaults.size() * static_cast<size_t>(rec.directions)) return false;
  const std::vector<float> alphas = node.attrs().get_floats("activation_alpha", {});
  const std::vector<float> betas = node.attrs().get_floats("activation_beta", {});
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    auto a = activation_of(name, alphas, next_alpha, betas, next_beta);
    if (!a) return false;
    rec.activations.push_back(std::move(*a));
  }
  return true;
}

bool is_float_constant(const Tensor* t, const Shape& shape) {
  return t != nullptr && t->dtype() == DataType::kFloat32 && t->shape() == shape;
}

std::optional<Recurrence> recurrence_of(const ir::Node& node, int64_t opset) {
  Recurrence rec;
  if (is_op(&node, "LSTM")) {
    rec.cell = Cell::kLstm, rec.gates = 4;
  } else if (is_op(&node, "GRU")) {
    rec.cell = Cell::kGru, rec.gates = 3;
  } else if (is_op(&node, "RNN")) {
    rec.cell = Cell::kRnn, rec.gates = 1;
  } else {
    return std::nullopt;
  }
  const auto& attrs = node.attrs();
  const std::string direction = attrs.get_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") return std::nullopt;
  rec.directions = direction == "bidirectional" ? 2 : 1;
  rec.reverse_only = direction == "reverse";
  rec.layout = attrs.get_int("layout", 0);
  rec.linear_before_reset = attrs.get_int("linear_before_reset", 0) != 0;
  if (attrs.has("clip")) rec.clip = attrs.get_float("clip");
  if (attrs.get_int("input_forget", 0) != 0 || opset < 10 || (rec.layout != 0 && rec.layout != 1)) return std::nullopt;
  const auto x = static_shape_of(node.input(0));
  if (!x || x->size() != 3 || x->at(0) == 0 || x->at(1) == 0) return std::nullopt;
  rec.steps = rec.layout == 0 ? x->at(0) : x->at(1);
  rec.batch = rec.layout == 0 ? x->at(1) : x->at(0);
  rec.input = x->at(2);
  rec.w = constant_of(node.input(1));
  rec.r = constant_of(node.input(2));
  if (rec.r == nullptr || rec.r->rank() != 3) return std::nullopt;
  rec.hidden = rec.r->dim(2);
  const int64_t gh = rec.gates * rec.hidden;
  if (!is_float_constant(rec.w, {rec.directions, gh, rec.input}) ||
      !is_float_constant(rec.r, {rec.directions, gh, rec.hidden})) {
    return std::nullopt;
  }
  if (node.input(0)->type().dtype != DataType::kFloat32) return std::nullopt;
  if (const ir::Value* b = node.input(3)) {
    rec.bias = constant_of(b);
    if (!is_float_constant(rec.bias, {rec.directions, 2 * gh})) return std::nullopt;
  }
  if (const ir::Value* lens = node.input(4)) {
    const auto values = int_values(lens);
    if (!values || static_cast<int64_t>(values->size()) != rec.batch) return std::nullopt;
    for (int64_t v : *values) {
      if (v != rec.steps) return std::nullopt;
    }
  }
  const Shape state = rec.layout == 0 ? Shape{rec.directions, rec.batch, rec.hidden}
                                      : Shape{rec.batch, rec.directions, rec.hidden};
  for (size_t i : {size_t{5}, size_t{6}}) {
    if (node.input(i) != nullptr && static_shape_of(node.input(i)) != state) return std::nullopt;
  }
  if (rec.cell == Cell::kLstm && node.input(7) != nullptr) {
    rec.peephole = constant_of(node.input(7));
    if (!is_float_constant(rec.peephole, {rec.directions, 3 * rec.hidden})) return std::nullopt;
  }
  if (!read_activations(node, rec)) return std::nullopt;
  return rec;
}

// Builds the unrolled operators of one recurrent node before it.
class Unroller {
 public:
  Unroller(GraphRewriter& rw, ir::Node* node, const Recurrence& rec, int64_t opset)
      : rw_(rw), node_(node), rec_(rec), opset_(opset) {
    base_ = node->name().empty() ? node->output(0) != nullptr ? node->output(0)->name() : std::string("rnn")
                                 : node->name();
  }

  // The last H (and C) of each direction and, per direction, H of every step in time order.
  struct Direction {
    std::vector<ir::Value*> h_steps;
    ir::Value* h_last = nullptr;
    ir::Value* c_last = nullptr;
  };

  Direction direction(int64_t d) {
    const std::string name = base_ + (rec_.directions > 1 ? ".d" + std::to_string(d) : "");
    std::vector<ir::Value*> projections;
    for (int64_t g = 0; g < rec_.gates; ++g) projections.push_back(input_projection(d, g, name));
    Direction out;
    out.h_steps.resize(static_cast<size_t>(rec_.steps));
    ir::Value* h = initial_state(5, d, name + ".h0");
    ir::Value* c = rec_.cell == Cell::kLstm ? initial_state(6, d, name + ".c0") : nullptr;
    const bool reverse = rec_.reverse_only || d == 1;
    for (int64_t k = 0; k < rec_.steps; ++k) {
      const int64_t t = reverse ? rec_.steps - 1 - k : k;
      const std::string step = name + ".t" + std::to_string(t);
      std::vector<ir::Value*> x;
      for (size_t g = 0; g < projections.size(); ++g) {
        x.push_back(step_rows(projections[g], t, step + ".x" + std::to_string(g)));
      }
      switch (rec_.cell) {
        case Cell::kRnn: h = activation(d, 0, gate(x[0], h, d, 0, step + ".pre"), step + ".h"); break;
        case Cell::kGru: h = gru_step(x, h, d, step); break;
        case Cell::kLstm: std::tie(h, c) = lstm_step(x, h, c, d, step); break;
      }
      out.h_steps[static_cast<size_t>(t)] = h;
    }
    out.h_last = h;
    out.c_last = c;
    return out;
  }

  // Y [T, D, B, H] (layout 0) or [B, T, D, H] (layout 1). Built batch-major — the steps'
  // [B, H] concatenated along H, then the directions — because the BPU does not concatenate
  // along the N axis; with B = 1 the time-major layout is a Reshape of it.
  ir::Value* sequence_output(const std::vector<Direction>& dirs) {
    const int64_t b = rec_.batch, t = rec_.steps, d = rec_.directions, h = rec_.hidden;
    std::vector<ir::Value*> per_direction;
    for (const Direction& dir : dirs) {
      ir::Value* steps = concat(dir.h_steps, 1, {b, t * h}, base_ + ".y_steps");
      per_direction.push_back(reshape(steps, {b, t, 1, h}, base_ + ".y_dir"));
    }
    ir::Value* y = concat(per_direction, 2, {b, t, d, h}, base_ + ".y");
    return batch_major_to_layout(y, {t, d, b, h}, {1, 2, 0, 3}, base_ + ".y_time_first");
  }

  // Y_h / Y_c [D, B, H] (layout 0) or [B, D, H] (layout 1) from each direction's last state.
  ir::Value* state_output(const std::vector<ir::Value*>& last, const std::string& name) {
    const int64_t b = rec_.batch, d = rec_.directions, h = rec_.hidden;
    ir::Value* all = reshape(concat(last, 1, {b, d * h}, name + ".parts"), {b, d, h}, name + ".batch_major");
    return batch_major_to_layout(all, {d, b, h}, {1, 0, 2}, name);
  }

 private:
  // A batch-major output in the node's layout: as it is for layout 1; for layout 0 a Reshape to
  // `time_major` when B = 1, else a Transpose by `perm`.
  ir::Value* batch_major_to_layout(ir::Value* v, const Shape& time_major, std::vector<int64_t> perm,
                                   const std::string& name) {
    if (rec_.layout == 1) return v;
    if (rec_.batch == 1) return reshape(v, time_major, name);
    kernels::AttributeMap a;
    a.set("perm", std::move(perm));
    return add("Transpose", {v}, name, time_major, std::move(a));
  }

  ir::Value* add(std::string op, std::vector<ir::Value*> inputs, const std::string& name, const Shape& shape,
                 kernels::AttributeMap attrs = {}) {
    return rw_.add_node(node_, std::move(op), std::move(inputs), {name},
                        {ir::TensorType::of(DataType::kFloat32, shape)}, std::move(attrs))
        ->output(0);
  }

  Shape state_shape() const { return {rec_.batch, rec_.hidden}; }

  ir::Value* reshape(ir::Value* v, const Shape& shape, const std::string& name) {
    if (static_shape_of(v) == shape) return v;
    return add("Reshape", {v, rw_.add_constant(name + ".shape", int64_tensor({static_cast<int64_t>(shape.size())}, shape))},
               name, shape);
  }

  ir::Value* slice(ir::Value* v, int64_t axis, int64_t begin, int64_t end, const Shape& shape, const std::string& name) {
    auto one = [&](const char* what, int64_t value) { return rw_.add_constant(name + what, int64_tensor({1}, {value})); };
    return add("Slice", {v, one(".starts", begin), one(".ends", end), one(".axes", axis)}, name, shape);
  }

  ir::Value* concat(const std::vector<ir::Value*>& parts, int64_t axis, const Shape& shape, const std::string& name) {
    if (parts.size() == 1) return reshape(parts[0], shape, name);
    kernels::AttributeMap a;
    a.set("axis", axis);
    return add("Concat", parts, name, shape, std::move(a));
  }

  // MatMul(v, M) with M = rows [row0, row0 + H) of `weights` [D, G·H, K] for direction d,
  // transposed to [K, H]; + `bias` [H] when given.
  ir::Value* linear(ir::Value* v, const Tensor& weights, int64_t d, int64_t row0, const std::vector<float>* bias,
                    int64_t rows, const std::string& name) {
    const int64_t k = weights.dim(2), h = rec_.hidden;
    std::vector<float> m(static_cast<size_t>(k * h));
    const float* w = weights.data<float>() + (d * weights.dim(1) + row0) * k;
    for (int64_t j = 0; j < h; ++j) {
      for (int64_t i = 0; i < k; ++i) m[static_cast<size_t>(i * h + j)] = w[j * k + i];
    }
    ir::Value* y = add("MatMul", {v, rw_.add_constant(name + ".weight", float32_tensor({k, h}, m))}, name + ".matmul",
                       {rows, h});
    if (bias == nullptr) return y;
    return add("Add", {y, rw_.add_constant(name + ".bias", float32_tensor({h}, *bias))}, name, {rows, h});
  }

  // Bias [H] of gate g: `input` (Wb) and/or `recurrent` (Rb) parts of B, nullopt when B is absent.
  std::optional<std::vector<float>> gate_bias(int64_t d, int64_t g, bool input, bool recurrent) const {
    if (rec_.bias == nullptr || (!input && !recurrent)) return std::nullopt;
    const int64_t h = rec_.hidden, gh = rec_.gates * h;
    const float* b = rec_.bias->data<float>() + d * 2 * gh;
    std::vector<float> out(static_cast<size_t>(h), 0.0f);
    for (int64_t j = 0; j < h; ++j) {
      if (input) out[static_cast<size_t>(j)] += b[g * h + j];
      if (recurrent) out[static_cast<size_t>(j)] += b[gh + g * h + j];
    }
    return out;
  }

  // GRU with linear_before_reset keeps Rb of the h gate inside r·(…); every other gate's Rb
  // joins its input projection.
  bool recurrent_bias_in_projection(int64_t g) const {
    return !(rec_.cell == Cell::kGru && g == 2 && rec_.linear_before_reset);
  }

  // X·W_gᵀ + biases for every step: [T·B, H], rows in time order.
  ir::Value* input_projection(int64_t d, int64_t g, const std::string& name) {
    const int64_t rows = rec_.steps * rec_.batch;
    if (x_rows_ == nullptr) {
      ir::Value* x = node_->input(0);
      if (rec_.layout == 1 && rec_.batch > 1) {
        kernels::AttributeMap perm;
        perm.set("perm", std::vector<int64_t>{1, 0, 2});
        x = add("Transpose", {x}, base_ + ".x_time_first", {rec_.steps, rec_.batch, rec_.input}, std::move(perm));
      }
      x_rows_ = reshape(x, {rows, rec_.input}, base_ + ".x_rows");
    }
    ir::Value* x = x_rows_;
    const auto bias = gate_bias(d, g, true, recurrent_bias_in_projection(g));
    return linear(x, *rec_.w, d, g * rec_.hidden, bias ? &*bias : nullptr, rows, name + ".x" + std::to_string(g));
  }

  ir::Value* step_rows(ir::Value* projection, int64_t t, const std::string& name) {
    if (rec_.steps == 1) return projection;
    return slice(projection, 0, t * rec_.batch, (t + 1) * rec_.batch, state_shape(), name);
  }

  // Input 5 (initial_h) or 6 (initial_c) of direction d as [B, H]; nullptr when absent (zeros).
  ir::Value* initial_state(size_t input, int64_t d, const std::string& name) {
    ir::Value* s = node_->input(input);
    if (s == nullptr) return nullptr;
    if (rec_.directions > 1) {
      const Shape part = rec_.layout == 0 ? Shape{1, rec_.batch, rec_.hidden} : Shape{rec_.batch, 1, rec_.hidden};
      s = slice(s, rec_.layout == 0 ? 0 : 1, d, d + 1, part, name + ".slice");
    }
    return reshape(s, state_shape(), name);
  }

  ir::Value* activation(int64_t d, size_t which, ir::Value* v, const std::string& name) {
    const size_t per_direction = rec_.activations.size() / static_cast<size_t>(rec_.directions);
    const Activation& a = rec_.activations[static_cast<size_t>(d) * per_direction + which];
    return add(a.op, {v}, name, state_shape(), a.attrs);
  }

  // The pre-activation of gate g: projection + H_prev·R_gᵀ (+ a peephole term), clipped.
  ir::Value* gate(ir::Value* projection, ir::Value* h, int64_t d, int64_t g, const std::string& name,
                  ir::Value* peephole_state = nullptr, int64_t peephole_index = 0) {
    ir::Value* sum = projection;
    if (h != nullptr) {
      sum = add("Add", {sum, linear(h, *rec_.r, d, g * rec_.hidden, nullptr, rec_.batch, name + ".r")}, name + ".sum",
                state_shape());
    }
    if (rec_.peephole != nullptr && peephole_state != nullptr) {
      const float* p = rec_.peephole->data<float>() + (d * 3 + peephole_index) * rec_.hidden;
      ir::Value* weight = rw_.add_constant(name + ".peephole", float32_tensor({rec_.hidden}, std::vector<float>(p, p + rec_.hidden)));
      sum = add("Add", {sum, add("Mul", {peephole_state, weight}, name + ".p", state_shape())}, name + ".with_p",
                state_shape());
    }
    if (!rec_.clip) return sum;
    if (opset_ < 11) {
      kernels::AttributeMap a;
      a.set("min", -*rec_.clip);
      a.set("max", *rec_.clip);
      return add("Clip", {sum}, name + ".clip", state_shape(), std::move(a));
    }
    auto bound = [&](const char* what, float v) { return rw_.add_constant(name + what, float32_tensor({}, {v})); };
    return add("Clip", {sum, bound(".min", -*rec_.clip), bound(".max", *rec_.clip)}, name + ".clip", state_shape());
  }

  // ONNX gate order i, o, f, c; activations f (gates), g (cell input), h (output).
  std::pair<ir::Value*, ir::Value*> lstm_step(const std::vector<ir::Value*>& x, ir::Value* h, ir::Value* c, int64_t d,
                                              const std::string& name) {
    ir::Value* i = activation(d, 0, gate(x[0], h, d, 0, name + ".i_pre", c, 0), name + ".i");
    ir::Value* f = activation(d, 0, gate(x[2], h, d, 2, name + ".f_pre", c, 2), name + ".f");
    ir::Value* cell_in = activation(d, 1, gate(x[3], h, d, 3, name + ".c_pre"), name + ".g");
    ir::Value* c_new = add("Mul", {i, cell_in}, name + ".ig", state_shape());
    if (c != nullptr) {
      c_new = add("Add", {add("Mul", {f, c}, name + ".fc", state_shape()), c_new}, name + ".c", state_shape());
    }
    ir::Value* o = activation(d, 0, gate(x[1], h, d, 1, name + ".o_pre", c_new, 1), name + ".o");
    ir::Value* h_new = add("Mul", {o, activation(d, 2, c_new, name + ".hc")}, name + ".h", state_shape());
    return {h_new, c_new};
  }

  // ONNX gate order z, r, h; H = h̃ + z·(H_prev − h̃).
  ir::Value* gru_step(const std::vector<ir::Value*>& x, ir::Value* h, int64_t d, const std::string& name) {
    ir::Value* z = activation(d, 0, gate(x[0], h, d, 0, name + ".z_pre"), name + ".z");
    ir::Value* r = activation(d, 0, gate(x[1], h, d, 1, name + ".r_pre"), name + ".r");
    ir::Value* pre = x[2];
    if (rec_.linear_before_reset) {
      const auto rb = gate_bias(d, 2, false, true);
      ir::Value* recurrent = nullptr;
      if (h != nullptr) {
        recurrent = linear(h, *rec_.r, d, 2 * rec_.hidden, rb ? &*rb : nullptr, rec_.batch, name + ".hr");
      } else if (rb) {
        recurrent = rw_.add_constant(name + ".rb", float32_tensor({rec_.hidden}, *rb));
      }
      if (recurrent != nullptr) {
        pre = add("Add", {pre, add("Mul", {r, recurrent}, name + ".rhr", state_shape())}, name + ".n_sum", state_shape());
      }
    } else if (h != nullptr) {
      ir::Value* reset = add("Mul", {r, h}, name + ".rh", state_shape());
      pre = add("Add", {pre, linear(reset, *rec_.r, d, 2 * rec_.hidden, nullptr, rec_.batch, name + ".hr")},
                name + ".n_sum", state_shape());
    }
    if (rec_.clip) pre = gate(pre, nullptr, d, 2, name + ".n_pre");
    ir::Value* n = activation(d, 1, pre, name + ".n");
    if (h == nullptr) {  // H = (1 − z)·h̃
      return add("Sub", {n, add("Mul", {z, n}, name + ".zn", state_shape())}, name + ".h", state_shape());
    }
    ir::Value* diff = add("Sub", {h, n}, name + ".hn", state_shape());
    return add("Add", {n, add("Mul", {z, diff}, name + ".zd", state_shape())}, name + ".h", state_shape());
  }

  GraphRewriter& rw_;
  ir::Node* node_;
  const Recurrence& rec_;
  int64_t opset_;
  std::string base_;
  ir::Value* x_rows_ = nullptr;  // X as [T·B, I], made once
};

bool is_used(const ir::Graph& graph, const ir::Value* v) {
  return v != nullptr && (!v->uses().empty() || graph.is_output(v));
}

bool unroll(GraphRewriter& rw, ir::Node* node, int64_t opset) {
  const auto rec = recurrence_of(*node, opset);
  if (!rec) return false;
  ir::Graph& graph = rw.graph();
  ir::Value* outputs[3] = {node->output(0), node->output(1), node->output(2)};
  for (ir::Value* v : outputs) {
    if (v != nullptr && rw.pinned(v)) return false;
  }
  Unroller unroller(rw, node, *rec, opset);
  std::vector<Unroller::Direction> dirs;
  for (int64_t d = 0; d < rec->directions; ++d) dirs.push_back(unroller.direction(d));
  std::vector<std::pair<ir::Value*, ir::Value*>> replacements;
  if (is_used(graph, outputs[0])) replacements.emplace_back(outputs[0], unroller.sequence_output(dirs));
  for (int k : {1, 2}) {
    if (!is_used(graph, outputs[k])) continue;
    std::vector<ir::Value*> last;
    for (const auto& dir : dirs) last.push_back(k == 1 ? dir.h_last : dir.c_last);
    replacements.emplace_back(outputs[k], unroller.state_output(last, outputs[k]->name() + ".last"));
  }
  for (auto& [old_value, replacement] : replacements) {
    if (rw.can_replace(old_value, replacement)) continue;
    for (auto& [unused, made] : replacements) rw.erase_if_dead(made->producer());
    return false;
  }
  for (auto& [old_value, replacement] : replacements) rw.replace_value(old_value, replacement, true);
  rw.erase_if_dead(node);
  return true;
}

int run(PassContext& ctx) {
  GraphRewriter rw(*ctx.model.graph);
  const int64_t opset = onnx_opset(ctx.model);
  return rw.sweep([&](ir::Node* node) { return unroll(rw, node, opset); });
}

}  // namespace

PassDef recurrent_unrolling_pass() {
  return {"recurrent_unrolling",
          "LSTM / GRU / RNN over a static sequence: per-step MatMul, activation and elementwise operators",
          {},
          run};
}

}  // namespace openbpu::passes
