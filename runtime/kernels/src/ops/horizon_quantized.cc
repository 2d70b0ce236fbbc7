// Horizon-domain integer operators without a window (docs/quantized_ops.md):
// HzSElementwiseAdd / Sub / Max / Min / Mul, the comparisons HzSElementwiseEqual / Greater / Less,
// HzSWhere, HzLut, HzRequantize and HzSQuantizedMatmul. Every
// rounding, multiplier and saturation is the one definition in simulator/integer_arithmetic.h
// (and isa.h for how elementwise operands combine); parameters are validated at prepare.
#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>
#include <vector>

#include "families.h"
#include "horizon_attributes.h"
#include "openbpu/kernels/axes.h"
#include "openbpu/kernels/broadcast.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/vector_clones.h"
#include "openbpu/simulator/isa.h"

namespace openbpu::kernels {

namespace {

namespace sim = openbpu::simulator;
using horizon::check_activation_type;
using horizon::Clamp;
using horizon::FixedPointMultiplier;

using ActivationTypes = TypeList<int8_t, int16_t>;

// Elements per task of elementwise loops.
constexpr int64_t kElementChunk = int64_t{1} << 14;

// Runs fn(out_index, a_index, b_index) for every output element of a broadcast binary operator
// (the element loops: the reference of the rows below, and the shapes they do not cover).
template <typename Fn>
void for_each_pair(const Shape& out_shape, const Tensor& a, const Tensor& b, Fn&& fn) {
  for_each_broadcast<2>(out_shape, {&a.shape(), &b.shape()},
                        [&](int64_t i, const int64_t* offsets) { fn(i, offsets[0], offsets[1]); });
}

// Elements of an int16 operand from which a table of its 65,536 values pays.
constexpr int64_t kTableWorth = int64_t{4} << 16;

// y[i] = f(x[i]) for n elements, in parallel, through a table of f over all values of TX (f
// computed once per value, as the element loop would: the same bytes).
template <typename TX, typename TY, typename F>
void table_map(const TX* x, TY* y, int64_t n, ThreadPool* pool, F&& f) {
  static_assert(sizeof(TX) <= 2);
  constexpr int64_t kValues = int64_t{1} << (8 * sizeof(TX));
  using Index = std::make_unsigned_t<TX>;
  std::vector<TY> table(static_cast<size_t>(kValues));
  parallel_for(pool, kValues, kElementChunk, [&](int64_t begin, int64_t end) {
    for (int64_t v = begin; v < end; ++v)
      table[size_t(v)] = f(static_cast<TX>(static_cast<Index>(v)));
  });
  parallel_for(pool, n, kElementChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = table[static_cast<Index>(x[i])];
  });
}

// The output of a broadcast binary operator as blocks of `inner` consecutive elements over each
// of which the operand of shape `small` has one value: that value's offset per block. Empty when
// the blocks would be shorter than a row is worth.
std::vector<int64_t> constant_blocks(const Shape& out, const Shape& small, int64_t& inner) {
  const size_t rank = out.size(), pad = rank - small.size();
  size_t k = 0;  // out's axes [0, k) hold all of small's axes longer than 1
  for (size_t d = 0; d < small.size(); ++d) {
    if (small[d] != 1) k = pad + d + 1;
  }
  inner = dims_product(out, k, rank);
  if (inner < 64) return {};
  const Shape outer(out.begin(), out.begin() + long(k));
  const Shape small_outer(small.begin(), small.begin() + long(k > pad ? k - pad : 0));
  std::vector<int64_t> offsets;
  offsets.reserve(size_t(shape_element_count(outer)));
  for_each_broadcast<1>(outer, {&small_outer},
                        [&](int64_t, const int64_t* o) { offsets.push_back(o[0]); });
  return offsets;
}

// Runs fn(row, n, one, a_is_one) over the output of a broadcast binary operator in blocks of n
// elements from `row` on, over each of which one operand has one value (at offset `one`; a_is_one
// says which) and the other has the output's shape, in parallel. False (nothing run) when neither
// operand gives blocks worth rows.
template <typename Fn>
bool for_each_constant_block(const Shape& shape, const Tensor& a, const Tensor& b, ThreadPool* pool,
                             Fn&& fn) {
  for (const bool a_is_one : {false, true}) {
    if ((a_is_one ? b : a).shape() != shape) continue;
    int64_t inner = 0;
    const std::vector<int64_t> at = constant_blocks(shape, (a_is_one ? a : b).shape(), inner);
    if (at.empty()) continue;
    parallel_for(pool, int64_t(at.size()), std::max<int64_t>(1, kElementChunk / inner),
                 [&](int64_t j0, int64_t j1) {
                   for (int64_t j = j0; j < j1; ++j) fn(j * inner, inner, at[size_t(j)], a_is_one);
                 });
    return true;
  }
  return false;
}

OPENBPU_KERNEL_INLINE int64_t clamp_to(int64_t v, const Clamp& c) {
  return std::min(std::max(v, c.lo), c.hi);
}

// Rows of equal-shaped operands, compiled for each CPU vector path (vector_clones.h) from the
// definitions of integer_arithmetic.h and isa.h; the element loops below are their reference.
// Rows go through int64 buffers of kRow values: one loop per step, so the steps vectorise and
// the combining step does not depend on the operand types.
constexpr int64_t kRow = 512;

template <typename T>
struct RescaleRow {  // v = m.apply(x)
  OPENBPU_KERNEL_INLINE static void run(const T* x, int64_t n, const sim::PreparedMultiplier& m,
                                        int64_t* v) {
    for (int64_t i = 0; i < n; ++i) v[i] = m.apply(x[i]);
  }
};

struct CombineRow {  // a = combine_rescaled(op, a, b, shift)
  template <sim::isa::ElementwiseOp kOp>
  OPENBPU_KERNEL_INLINE static void rows(int64_t* a, const int64_t* b, int64_t n, uint32_t shift) {
    for (int64_t i = 0; i < n; ++i) a[i] = sim::isa::combine_rescaled(kOp, a[i], b[i], shift);
  }
  OPENBPU_KERNEL_INLINE static void run(sim::isa::ElementwiseOp op, int64_t* a, const int64_t* b,
                                        int64_t n, uint32_t shift) {
    using E = sim::isa::ElementwiseOp;
    switch (op) {
      case E::kSub: return rows<E::kSub>(a, b, n, shift);
      case E::kMax: return rows<E::kMax>(a, b, n, shift);
      case E::kMin: return rows<E::kMin>(a, b, n, shift);
      case E::kEqual: return rows<E::kEqual>(a, b, n, shift);
      case E::kGreater: return rows<E::kGreater>(a, b, n, shift);
      case E::kLess: return rows<E::kLess>(a, b, n, shift);
      default: return rows<E::kAdd>(a, b, n, shift);  // combine_rescaled's default
    }
  }
};

template <typename TY>
struct FinishRow {  // y = clamp(saturate(round_shift_right(v, shift)))
  OPENBPU_KERNEL_INLINE static void run(const int64_t* v, int64_t n, int shift, const Clamp& c,
                                        TY* y) {
    for (int64_t i = 0; i < n; ++i) {
      y[i] = static_cast<TY>(
          clamp_to(sim::saturate<TY>(sim::round_shift_right_int64(v[i], shift)), c));
    }
  }
};

template <typename TA, typename TB, typename TY>
struct MulRow {  // y = clamp(saturate(f.apply(a · b))); |a·b| <= 2^30
  OPENBPU_KERNEL_INLINE static void run(const TA* a, const TB* b, int64_t n,
                                        const sim::PreparedMultiplier& f, const Clamp& c, TY* y) {
    for (int64_t i = 0; i < n; ++i) {
      y[i] =
          static_cast<TY>(clamp_to(sim::saturate<TY>(f.apply(int32_t{a[i]} * int32_t{b[i]})), c));
    }
  }
};

template <typename TX, typename TY>
struct RequantizeRow {  // y = saturate(f.apply(x))
  OPENBPU_KERNEL_INLINE static void run(const TX* x, int64_t n, const sim::PreparedMultiplier& f,
                                        TY* y) {
    for (int64_t i = 0; i < n; ++i) y[i] = sim::saturate<TY>(f.apply(x[i]));
  }
};

// HzSElementwiseAdd / Sub / Max / Min / comparisons: both operands rescaled, combined, shifted
// (isa::combine_rescaled). |fa.apply(a)|, |fb.apply(b)| < 2^15 · 2^31, so the combined value
// and its rounding fit in int64 (round_shift_right_int64's domain).
struct RescaledRows {
  sim::PreparedMultiplier fa, fb;
  sim::isa::ElementwiseOp op;
  int shift;
  Clamp clamp;

  template <typename TY, typename TA, typename TB>
  TY element(TA a, TB b) const {  // the reference
    const int64_t v =
        sim::isa::combine_rescaled(op, fa.apply(a), fb.apply(b), static_cast<uint32_t>(shift));
    return static_cast<TY>(
        clamp_to(sim::saturate<TY>(sim::round_shift_right_int64(v, shift)), clamp));
  }

  // n elements of y from n of a (or a's one value when !a_row) and n of b (likewise).
  template <typename TA, typename TB, typename TY>
  void run(const TA* a, bool a_row, const TB* b, bool b_row, int64_t n, TY* y) const {
    std::array<int64_t, kRow> va, vb;
    if (!a_row) va.fill(fa.apply(*a));
    if (!b_row) vb.fill(fb.apply(*b));
    std::array<int64_t, kRow> constant_a;  // combined in place, so a's one value stays in va
    int64_t* v = a_row ? va.data() : constant_a.data();
    for (int64_t i = 0; i < n; i += kRow) {
      const int64_t m = std::min(kRow, n - i);
      if (a_row) {
        vector_dispatch<RescaleRow<TA>>(a + i, m, fa, v);
      } else {
        std::copy_n(va.begin(), m, v);
      }
      if (b_row) vector_dispatch<RescaleRow<TB>>(b + i, m, fb, vb.data());
      vector_dispatch<CombineRow>(op, v, static_cast<const int64_t*>(vb.data()), m,
                                  static_cast<uint32_t>(shift));
      vector_dispatch<FinishRow<TY>>(static_cast<const int64_t*>(v), m, shift, clamp, y + i);
    }
  }
};

// ---------------------------------------------------------------------------------------------
// HzSElementwiseAdd / Sub / Max / Min / Equal / Greater / Less: both operands rescaled, combined,
// shifted (isa::combine_rescaled); a comparison writes an int8 mask (1 true, 0 false).

// The per-operand multipliers of a and b and the intermediate shift (attributes
// input_multipliers, input_shifts, intermediate_shift), validated.
struct Rescaling {
  FixedPointMultiplier fa, fb;
  int shift = 8;

  static Rescaling read(std::string_view op, const AttributeMap& attrs) {
    const std::vector<FixedPointMultiplier> m = horizon::read_multipliers(op, attrs, "input_multipliers", "input_shifts");
    OPENBPU_CHECK(m.size() == 2, op, ": input_multipliers and input_shifts must have 2 entries (for a and b), got ",
                  m.size());
    const int64_t shift = attrs.get_int("intermediate_shift", 8);
    OPENBPU_CHECK(shift >= 0 && shift <= 31, op, ": intermediate_shift must be in [0, 31], got ", shift);
    return {m[0], m[1], static_cast<int>(shift)};
  }
};

class ElementwiseRescaledKernel final : public Kernel {
 public:
  ElementwiseRescaledKernel(const NodeInfo& node, sim::isa::ElementwiseOp combine)
      : op_(node.op_type), combine_(combine) {
    const AttributeMap& attrs = node.attrs;
    rescaling_ = Rescaling::read(op_, attrs);
    output_type_ = horizon::read_output_type(op_, attrs, false);
    OPENBPU_CHECK(!sim::isa::is_comparison(combine) || output_type_ == DataType::kInt8, op_,
                  ": a comparison writes an int8 mask; output_type must be int8");
    clamp_ = horizon::read_clamp(op_, attrs, output_type_);
  }

  void run(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    check_activation_type(op_, "a", a.dtype(), a.describe());
    check_activation_type(op_, "b", b.dtype(), b.describe());
    const Shape shape = broadcast_shapes(a.shape(), b.shape(), op_);
    Tensor& y = ctx.allocate_output_for_overwrite(0, output_type_, shape);
    const int shift = rescaling_.shift;
    dispatch<ActivationTypes>(a.dtype(), op_, [&]<typename TA>() {
      dispatch<ActivationTypes>(b.dtype(), op_, [&]<typename TB>() {
        dispatch<ActivationTypes>(output_type_, op_, [&]<typename TY>() {
          const TA* pa = a.data<TA>();
          const TB* pb = b.data<TB>();
          TY* py = y.data<TY>();
          const RescaledRows rows{sim::PreparedMultiplier(rescaling_.fa),
                                  sim::PreparedMultiplier(rescaling_.fb), combine_, shift, clamp_};
          ThreadPool* pool = ctx.thread_pool();
          const int64_t n = y.element_count();
          if (b.element_count() == 1 && a.shape() == shape &&
              (sizeof(TA) == 1 || n >= kTableWorth)) {
            table_map(pa, py, n, pool,
                      [&](TA x) { return rows.element<TY>(x, pb[0]); });  // a clip, an offset
            return;
          }
          if (a.element_count() == 1 && b.shape() == shape &&
              (sizeof(TB) == 1 || n >= kTableWorth)) {
            table_map(pb, py, n, pool, [&](TB x) { return rows.element<TY>(pa[0], x); });
            return;
          }
          if (a.shape() == shape && b.shape() == shape) {
            parallel_for(pool, n, kElementChunk, [&](int64_t begin, int64_t end) {
              rows.run(pa + begin, true, pb + begin, true, end - begin, py + begin);
            });
            return;
          }
          // Blocks over which one operand is one value (per channel, or a small scalar).
          if (for_each_constant_block(
                  shape, a, b, pool, [&](int64_t row, int64_t m, int64_t one, bool a_is_one) {
                    rows.run(pa + (a_is_one ? one : row), !a_is_one, pb + (a_is_one ? row : one),
                             a_is_one, m, py + row);
                  })) {
            return;
          }
          for_each_pair(shape, a, b, [&](int64_t i, int64_t ia, int64_t ib) {
            py[i] = rows.element<TY>(pa[ia], pb[ib]);
          });
        });
      });
    });
  }

 private:
  std::string op_;
  sim::isa::ElementwiseOp combine_;
  Rescaling rescaling_;
  DataType output_type_ = DataType::kInt8;
  Clamp clamp_;
};

template <sim::isa::ElementwiseOp kCombine>
std::unique_ptr<Kernel> make_elementwise_rescaled(const NodeInfo& node) {
  return std::make_unique<ElementwiseRescaledKernel>(node, kCombine);
}

// ---------------------------------------------------------------------------------------------
// HzSWhere(condition, a, b): condition an int8 mask; a and b rescaled to the output's scale
// (isa.h, kSelect).

class WhereKernel final : public Kernel {
 public:
  static constexpr std::string_view kOp = "HzSWhere";

  explicit WhereKernel(const NodeInfo& node) {
    const AttributeMap& attrs = node.attrs;
    rescaling_ = Rescaling::read(kOp, attrs);
    output_type_ = horizon::read_output_type(kOp, attrs, false);
  }

  void run(KernelContext& ctx) const override {
    const Tensor& c = ctx.input(0);
    const Tensor& a = ctx.input(1);
    const Tensor& b = ctx.input(2);
    OPENBPU_CHECK(c.dtype() == DataType::kInt8, kOp, ": the condition must be an int8 mask, got ", c.describe());
    check_activation_type(kOp, "a", a.dtype(), a.describe());
    check_activation_type(kOp, "b", b.dtype(), b.describe());
    const std::array<const Shape*, 3> shapes = {&c.shape(), &a.shape(), &b.shape()};
    const Shape shape = broadcast_shapes(shapes, kOp);
    Tensor& y = ctx.allocate_output(0, output_type_, shape);
    const int shift = rescaling_.shift;
    const int8_t* pc = c.data<int8_t>();
    dispatch<ActivationTypes>(a.dtype(), kOp, [&]<typename TA>() {
      dispatch<ActivationTypes>(b.dtype(), kOp, [&]<typename TB>() {
        dispatch<ActivationTypes>(output_type_, kOp, [&]<typename TY>() {
          const TA* pa = a.data<TA>();
          const TB* pb = b.data<TB>();
          TY* py = y.data<TY>();
          for_each_broadcast<3>(shape, shapes, [&](int64_t i, const int64_t* o) {
            const int64_t v = pc[o[0]] != 0 ? sim::apply_multiplier_int32(pa[o[1]], rescaling_.fa)
                                            : sim::apply_multiplier_int32(pb[o[2]], rescaling_.fb);
            py[i] = static_cast<TY>(sim::saturate<TY>(sim::round_shift_right(v, shift)));
          });
        });
      });
    });
  }

 private:
  Rescaling rescaling_;
  DataType output_type_ = DataType::kInt8;
};

// ---------------------------------------------------------------------------------------------
// HzSElementwiseMul

class ElementwiseMulKernel final : public Kernel {
 public:
  static constexpr std::string_view kOp = "HzSElementwiseMul";

  explicit ElementwiseMulKernel(const NodeInfo& node) {
    const std::vector<FixedPointMultiplier> m =
        horizon::read_multiplier(kOp, node.attrs, "multiplier", "shift");
    OPENBPU_CHECK(!m.empty(), kOp, ": attributes multiplier and shift are required");
    f_ = m[0];
    output_type_ = horizon::read_output_type(kOp, node.attrs, false);
    clamp_ = horizon::read_clamp(kOp, node.attrs, output_type_);
  }

  void run(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    check_activation_type(kOp, "a", a.dtype(), a.describe());
    check_activation_type(kOp, "b", b.dtype(), b.describe());
    const Shape shape = broadcast_shapes(a.shape(), b.shape(), kOp);
    Tensor& y = ctx.allocate_output_for_overwrite(0, output_type_, shape);
    dispatch<ActivationTypes>(a.dtype(), kOp, [&]<typename TA>() {
      dispatch<ActivationTypes>(b.dtype(), kOp, [&]<typename TB>() {
        dispatch<ActivationTypes>(output_type_, kOp, [&]<typename TY>() {
          const TA* pa = a.data<TA>();
          const TB* pb = b.data<TB>();
          TY* py = y.data<TY>();
          const sim::PreparedMultiplier f(f_);
          ThreadPool* pool = ctx.thread_pool();
          if (a.shape() == shape && b.shape() == shape) {
            parallel_for(pool, y.element_count(), kElementChunk, [&](int64_t begin, int64_t end) {
              vector_dispatch<MulRow<TA, TB, TY>>(pa + begin, pb + begin, end - begin, f, clamp_,
                                                  py + begin);
            });
            return;
          }
          // Blocks over which one operand is one value (a per-channel scale, a scalar): the
          // product is symmetric, so the full operand goes first.
          const auto block = [&]<typename TF, typename TO>(const TF* full, TO value, int64_t m,
                                                           TY* out) {
            std::array<TO, kRow> row;
            row.fill(value);
            for (int64_t i = 0; i < m; i += kRow) {
              vector_dispatch<MulRow<TF, TO, TY>>(full + i, row.data(), std::min(kRow, m - i), f,
                                                  clamp_, out + i);
            }
          };
          if (for_each_constant_block(shape, a, b, pool,
                                      [&](int64_t row, int64_t m, int64_t one, bool a_is_one) {
                                        if (a_is_one) return block(pb + row, pa[one], m, py + row);
                                        block(pa + row, pb[one], m, py + row);
                                      })) {
            return;
          }
          for_each_pair(shape, a, b, [&](int64_t i, int64_t ia, int64_t ib) {
            // |a·b| <= 2^30: the product is an int32.
            const int32_t product = int32_t{pa[ia]} * int32_t{pb[ib]};
            py[i] = static_cast<TY>(
                clamp_to(sim::saturate<TY>(sim::apply_multiplier_int32(product, f_)), clamp_));
          });
        });
      });
    });
  }

 private:
  FixedPointMultiplier f_;
  DataType output_type_ = DataType::kInt8;
  Clamp clamp_;
};

// ---------------------------------------------------------------------------------------------
// HzLut

class LutKernel final : public Kernel {
 public:
  static constexpr std::string_view kOp = "HzLut";

  explicit LutKernel(const NodeInfo& node) {
    OPENBPU_CHECK(node.input_count == 2, kOp, ": takes inputs x and table, got ", node.input_count,
                  " inputs");
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& table = ctx.input(1);
    check_activation_type(kOp, "x", x.dtype(), x.describe());
    Tensor& y = ctx.allocate_output_for_overwrite(0, x.dtype(), x.shape());
    const int64_t n = x.element_count();
    if (x.dtype() == DataType::kInt8) {
      OPENBPU_CHECK(table.dtype() == DataType::kInt8 && table.rank() == 1 && table.dim(0) == 256,
                    kOp, ": an int8 x needs an int8 table of shape [256], got ", table.describe());
      sim::LutInt8 lut;
      std::memcpy(lut.table.data(), table.raw_data(), lut.table.size());
      const int8_t* px = x.data<int8_t>();
      int8_t* py = y.data<int8_t>();
      parallel_for(ctx.thread_pool(), n, kElementChunk, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) py[i] = lut.lookup(px[i]);
      });
    } else {
      OPENBPU_CHECK(table.dtype() == DataType::kInt32 && table.rank() == 1 && table.dim(0) == 257,
                    kOp, ": an int16 x needs int32 knots of shape [257], got ", table.describe());
      sim::LutInt16 lut;
      std::memcpy(lut.knots.data(), table.raw_data(), lut.knots.size() * sizeof(int32_t));
      const int16_t* px = x.data<int16_t>();
      int16_t* py = y.data<int16_t>();
      if (n >= kTableWorth) {  // every value's lookup once, then a plain table
        table_map(px, py, n, ctx.thread_pool(), [&](int16_t v) { return lut.lookup(v); });
        return;
      }
      const bool gathers = vector_path() == VectorPath::kAvx512 && sim::lut_int16_fits_int32(lut);
      const auto* bx = reinterpret_cast<const uint8_t*>(px);
      auto* by = reinterpret_cast<uint8_t*>(py);
      parallel_for(ctx.thread_pool(), n, kElementChunk, [&](int64_t begin, int64_t end) {
        sim::lut_int16_row(lut, bx + 2 * begin, by + 2 * begin, end - begin, gathers);
      });
    }
  }
};

// ---------------------------------------------------------------------------------------------
// HzRequantize

class RequantizeKernel final : public Kernel {
 public:
  static constexpr std::string_view kOp = "HzRequantize";

  explicit RequantizeKernel(const NodeInfo& node) : axis_(node.attrs.get_int("axis", 1)) {
    const std::vector<FixedPointMultiplier> one =
        horizon::read_multiplier(kOp, node.attrs, "multiplier", "shift");
    multipliers_ = horizon::read_multipliers(kOp, node.attrs, "multipliers", "shifts");
    OPENBPU_CHECK(one.empty() != multipliers_.empty(), kOp,
                  ": give either multiplier/shift (per tensor) or multipliers/shifts (per channel "
                  "along axis), not both and not neither");
    per_channel_ = !multipliers_.empty();
    if (!per_channel_) multipliers_ = one;
    output_type_ = horizon::read_output_type(kOp, node.attrs, false);
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    OPENBPU_CHECK(x.dtype() == DataType::kInt8 || x.dtype() == DataType::kInt16 ||
                      x.dtype() == DataType::kInt32,
                  kOp, ": x must be int8, int16 or int32, got ", x.describe());
    int64_t channels = 1, inner = 1;
    if (per_channel_) {
      const int64_t a = normalize_axis(axis_, x.rank(), "HzRequantize: axis");
      channels = x.dim(a);
      inner = dims_product(x.shape(), size_t(a) + 1, x.shape().size());
      OPENBPU_CHECK(static_cast<int64_t>(multipliers_.size()) == channels, kOp,
                    ": multipliers/shifts have ", multipliers_.size(), " entries but axis ", a,
                    " of x ", x.describe(), " has ", channels);
    }
    Tensor& y = ctx.allocate_output_for_overwrite(0, output_type_, x.shape());
    dispatch<TypeList<int8_t, int16_t, int32_t>>(x.dtype(), kOp, [&]<typename TX>() {
      dispatch<ActivationTypes>(output_type_, kOp, [&]<typename TY>() {
        const TX* px = x.data<TX>();
        TY* py = y.data<TY>();
        parallel_for(
            ctx.thread_pool(), x.element_count(), kElementChunk, [&](int64_t begin, int64_t end) {
              for (int64_t i = begin; i < end;) {  // runs of one channel's multiplier
                const int64_t channel = channels == 1 ? 0 : (i / inner) % channels;
                const int64_t run = channels == 1 ? end : std::min(end, (i / inner + 1) * inner);
                const sim::PreparedMultiplier f(multipliers_[size_t(channel)]);
                vector_dispatch<RequantizeRow<TX, TY>>(px + i, run - i, f, py + i);
                i = run;
              }
            });
      });
    });
  }

 private:
  int64_t axis_;
  bool per_channel_ = false;
  std::vector<FixedPointMultiplier> multipliers_;
  DataType output_type_ = DataType::kInt8;
};

// ---------------------------------------------------------------------------------------------
// HzSQuantizedMatmul

class QuantizedMatmulKernel final : public Kernel {
 public:
  static constexpr std::string_view kOp = "HzSQuantizedMatmul";

  explicit QuantizedMatmulKernel(const NodeInfo& node) {
    output_type_ = horizon::read_output_type(kOp, node.attrs, true);
    const std::vector<FixedPointMultiplier> m =
        horizon::read_multiplier(kOp, node.attrs, "multiplier", "shift");
    if (output_type_ == DataType::kInt32) {
      OPENBPU_CHECK(m.empty(), kOp,
                    ": multiplier and shift must be absent for output_type \"int32\" (the "
                    "accumulator is the output)");
    } else {
      OPENBPU_CHECK(!m.empty(), kOp,
                    ": multiplier and shift are required for output_type int8/int16");
      f_ = m[0];
    }
  }

  void run(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    check_activation_type(kOp, "a", a.dtype(), a.describe());
    check_activation_type(kOp, "b", b.dtype(), b.describe());
    OPENBPU_CHECK(a.rank() >= 1 && b.rank() >= 1, kOp, ": a and b must have rank >= 1, got ",
                  a.describe(), " and ", b.describe());
    // 1-D operands are promoted (a: [1, K], b: [K, 1]) and the added axis removed afterwards.
    Shape sa = a.shape(), sb = b.shape();
    if (sa.size() == 1) sa.insert(sa.begin(), 1);
    if (sb.size() == 1) sb.push_back(1);
    const int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
    OPENBPU_CHECK(sb[sb.size() - 2] == k, kOp, ": the inner dimensions of a ", a.describe(),
                  " and b ", b.describe(), " must match");
    const Shape batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
    const Shape batch = broadcast_shapes(batch_a, batch_b, kOp);
    Shape out_shape = batch;
    if (a.rank() > 1) out_shape.push_back(m);
    if (b.rank() > 1) out_shape.push_back(n);
    Tensor& y = ctx.allocate_output(0, output_type_, out_shape);
    const int64_t batches = shape_element_count(batch);
    if (y.element_count() == 0) return;
    // Matrix offsets of each batch entry into a and b.
    std::vector<int64_t> offset_a(static_cast<size_t>(batches)),
        offset_b(static_cast<size_t>(batches));
    {
      const std::vector<int64_t> stride_a = broadcast_strides(batch_a, batch);
      const std::vector<int64_t> stride_b = broadcast_strides(batch_b, batch);
      std::vector<int64_t> index(batch.size(), 0);
      for (int64_t i = 0; i < batches; ++i) {
        int64_t oa = 0, ob = 0;
        for (size_t d = 0; d < batch.size(); ++d) {
          oa += index[d] * stride_a[d];
          ob += index[d] * stride_b[d];
        }
        offset_a[size_t(i)] = oa * m * k;
        offset_b[size_t(i)] = ob * k * n;
        for (size_t d = batch.size(); d-- > 0;) {
          if (++index[d] < batch[d]) break;
          index[d] = 0;
        }
      }
    }
    dispatch<ActivationTypes>(a.dtype(), kOp, [&]<typename TA>() {
      dispatch<ActivationTypes>(b.dtype(), kOp, [&]<typename TB>() {
        dispatch<TypeList<int8_t, int16_t, int32_t>>(output_type_, kOp, [&]<typename TY>() {
          const TA* pa = a.data<TA>();
          const TB* pb = b.data<TB>();
          TY* py = y.data<TY>();
          parallel_for(ctx.thread_pool(), batches * m, 1, [&](int64_t begin, int64_t end) {
            std::vector<int64_t> acc(static_cast<size_t>(n));
            for (int64_t row = begin; row < end; ++row) {
              const int64_t bi = row / m, i = row % m;
              const TA* arow = pa + offset_a[size_t(bi)] + i * k;
              const TB* bmat = pb + offset_b[size_t(bi)];
              std::fill(acc.begin(), acc.end(), int64_t{0});
              for (int64_t p = 0; p < k; ++p) {
                const int64_t av = arow[p];
                if (av == 0) continue;
                const TB* brow = bmat + p * n;
                for (int64_t j = 0; j < n; ++j) acc[size_t(j)] += av * brow[j];
              }
              TY* out = py + row * n;
              for (int64_t j = 0; j < n; ++j) {
                if constexpr (std::is_same_v<TY, int32_t>) {
                  out[j] = sim::saturate<int32_t>(acc[size_t(j)]);
                } else {
                  out[j] = sim::requantize<TY>(acc[size_t(j)], f_);
                }
              }
            }
          });
        });
      });
    });
  }

 private:
  DataType output_type_ = DataType::kInt8;
  FixedPointMultiplier f_;
};

}  // namespace

void register_horizon_quantized_kernels(std::vector<KernelDef>& defs) {
  const std::vector<AttrSpec> add_sub = {{"input_multipliers", AttrKind::kInts, true},
                                         {"input_shifts", AttrKind::kInts, true},
                                         {"intermediate_shift", AttrKind::kInt},
                                         {"output_type", AttrKind::kString, true},
                                         {"clip_min", AttrKind::kInt},
                                         {"clip_max", AttrKind::kInt},
                                         {"input_scales", AttrKind::kFloats},
                                         {"output_scale", AttrKind::kFloat}};
  using sim::isa::ElementwiseOp;
  defs.push_back({"horizon", "HzSElementwiseAdd", 1, add_sub, &make_elementwise_rescaled<ElementwiseOp::kAdd>});
  defs.push_back({"horizon", "HzSElementwiseSub", 1, add_sub, &make_elementwise_rescaled<ElementwiseOp::kSub>});
  defs.push_back({"horizon", "HzSElementwiseMax", 1, add_sub, &make_elementwise_rescaled<ElementwiseOp::kMax>});
  defs.push_back({"horizon", "HzSElementwiseMin", 1, add_sub, &make_elementwise_rescaled<ElementwiseOp::kMin>});
  defs.push_back({"horizon", "HzSElementwiseEqual", 1, add_sub, &make_elementwise_rescaled<ElementwiseOp::kEqual>});
  defs.push_back({"horizon", "HzSElementwiseGreater", 1, add_sub, &make_elementwise_rescaled<ElementwiseOp::kGreater>});
  defs.push_back({"horizon", "HzSElementwiseLess", 1, add_sub, &make_elementwise_rescaled<ElementwiseOp::kLess>});
  defs.push_back({"horizon",
                  "HzSWhere",
                  1,
                  {{"input_multipliers", AttrKind::kInts, true},
                   {"input_shifts", AttrKind::kInts, true},
                   {"intermediate_shift", AttrKind::kInt},
                   {"output_type", AttrKind::kString, true},
                   {"input_scales", AttrKind::kFloats},
                   {"output_scale", AttrKind::kFloat}},
                  &make_kernel<WhereKernel>});
  defs.push_back({"horizon",
                  "HzSElementwiseMul",
                  1,
                  {{"multiplier", AttrKind::kInt, true},
                   {"shift", AttrKind::kInt, true},
                   {"output_type", AttrKind::kString, true},
                   {"clip_min", AttrKind::kInt},
                   {"clip_max", AttrKind::kInt},
                   {"input_scales", AttrKind::kFloats},
                   {"output_scale", AttrKind::kFloat}},
                  &make_kernel<ElementwiseMulKernel>});
  defs.push_back({"horizon",
                  "HzLut",
                  1,
                  {{"function", AttrKind::kString},
                   {"input_scale", AttrKind::kFloat},
                   {"output_scale", AttrKind::kFloat}},
                  &make_kernel<LutKernel>});
  defs.push_back({"horizon",
                  "HzRequantize",
                  1,
                  {{"multiplier", AttrKind::kInt},
                   {"shift", AttrKind::kInt},
                   {"multipliers", AttrKind::kInts},
                   {"shifts", AttrKind::kInts},
                   {"axis", AttrKind::kInt},
                   {"output_type", AttrKind::kString, true},
                   {"input_scale", AttrKind::kFloat},
                   {"input_scales", AttrKind::kFloats},
                   {"output_scale", AttrKind::kFloat}},
                  &make_kernel<RequantizeKernel>});
  defs.push_back({"horizon",
                  "HzSQuantizedMatmul",
                  1,
                  {{"multiplier", AttrKind::kInt},
                   {"shift", AttrKind::kInt},
                   {"output_type", AttrKind::kString, true},
                   {"input_scales", AttrKind::kFloats},
                   {"output_scale", AttrKind::kFloat}},
                  &make_kernel<QuantizedMatmulKernel>});
}

}  // namespace openbpu::kernels
