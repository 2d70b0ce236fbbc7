// The virtual BPU's functional units (isa.h) against the runtime kernel library, bit for bit.
//
// Each test draws random cases from fixed seeds, runs the horizon-domain (or standard ONNX)
// operator of the kernel library on dense NCHW tensors, and runs the instruction on the same
// logical data in device memory laid out (a) NHWC with C padded to 8 or 16 (rank 4; other
// ranks pad the innermost axis) at unaligned addresses, and (b) dense row-major. Memory starts
// as garbage (0x5A); every output element must match and no byte outside the output may
// change. A failure prints the case's seed and parameters in one line (SCOPED_TRACE). The
// units compiled per host ISA (host_isa.h: conv, elementwise) run every case on each path this
// CPU has.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/horizon_test_support.h"
#include "openbpu/simulator/host_isa.h"
#include "openbpu/simulator/integer_arithmetic.h"
#include "openbpu/simulator/isa.h"
#include "openbpu/simulator/program.h"

namespace openbpu::simulator {
namespace {

using kernels::AttributeMap;
using kernels::DataType;
using kernels::Shape;
using kernels::Tensor;
using kernels::testing::attributes;
using kernels::testing::multiplier_lists;
using kernels::testing::run_horizon;
using kernels::testing::run_op;

constexpr uint8_t kGarbage = 0x5A;

// Runs fn on every host ISA path this CPU has (host_isa.h), naming the path on failure; the
// path in use before is restored.
template <typename Fn>
void on_every_host_isa(Fn&& fn) {
  const HostIsa before = host_isa();
  for (HostIsa isa : supported_host_isas()) {
    ASSERT_TRUE(set_host_isa(isa));
    SCOPED_TRACE("host ISA " + std::string(host_isa_name(isa)));
    fn();
    if (::testing::Test::HasFailure()) break;
  }
  set_host_isa(before);
}

// ------------------------------------------------------------------ device memory and layouts

isa::ElementType element_type(DataType t) {
  switch (t) {
    case DataType::kInt8: return isa::ElementType::kInt8;
    case DataType::kInt16: return isa::ElementType::kInt16;
    default: return isa::ElementType::kInt32;
  }
}

int64_t type_min(DataType t) {
  return t == DataType::kInt8 ? INT8_MIN : t == DataType::kInt16 ? INT16_MIN : INT32_MIN;
}
int64_t type_max(DataType t) {
  return t == DataType::kInt8 ? INT8_MAX : t == DataType::kInt16 ? INT16_MAX : INT32_MAX;
}

std::string name(DataType t) { return std::string(kernels::dtype_name(t)); }

std::string str(const std::vector<int64_t>& v) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < v.size(); ++i) s << (i ? "," : "") << v[i];
  s << "]";
  return s.str();
}

// A device memory that grows as tensors and tables are placed; unused bytes are garbage.
class Device {
 public:
  // A fresh region of `bytes` bytes at a 64-byte boundary plus `misalign`.
  uint32_t allocate(size_t bytes, uint32_t misalign = 0) {
    const size_t at = (memory_.size() + 63) / 64 * 64 + misalign;
    memory_.resize(at + bytes + 16, kGarbage);
    return static_cast<uint32_t>(at);
  }
  uint32_t put(const void* data, size_t bytes, uint32_t misalign = 0) {
    const uint32_t at = allocate(bytes, misalign);
    if (bytes > 0) std::memcpy(memory_.data() + at, data, bytes);
    return at;
  }
  template <typename T>
  uint32_t put_values(const std::vector<T>& values, uint32_t misalign = 0) {
    return put(values.data(), values.size() * sizeof(T), misalign);
  }
  uint32_t put_multipliers(const std::vector<FixedPointMultiplier>& fs, uint32_t misalign = 0) {
    std::vector<isa::MultiplierEntry> entries;
    for (const auto& f : fs) entries.push_back({f.multiplier, f.shift});
    return put_values(entries, misalign);
  }
  std::vector<uint8_t>& memory() { return memory_; }
  const std::vector<uint8_t>& memory() const { return memory_; }

 private:
  std::vector<uint8_t> memory_;
};

// How a tensor is stored: the physical axis order (outermost first, logical axis numbers), the
// innermost physical axis padded to a multiple of `align`, the address misaligned by `misalign`.
struct Layout {
  std::string name;
  std::vector<int> order;  // empty: row-major
  int64_t align = 1;
  uint32_t misalign = 0;
};

Layout dense_layout() { return {"dense", {}, 1, 0}; }
// NHWC with C padded to `align` for rank 4; the innermost axis padded otherwise.
Layout padded_layout(int64_t align, uint32_t misalign) {
  return {"padded" + std::to_string(align) + "+" + std::to_string(misalign), {0, 2, 3, 1}, align,
          misalign};
}

// Calls fn(dense index, byte address) for every element of desc in row-major order.
template <typename Fn>
void for_each_element(const isa::TensorDesc& d, Fn&& fn) {
  int64_t total = 1;
  for (uint32_t a = 0; a < d.rank; ++a) total *= d.dims[a];
  std::vector<int64_t> index(d.rank, 0);
  for (int64_t i = 0; i < total; ++i) {
    int64_t at = d.address;
    for (uint32_t a = 0; a < d.rank; ++a) at += index[a] * d.strides[a];
    fn(i, at);
    for (uint32_t a = d.rank; a-- > 0;) {
      if (++index[a] < d.dims[a]) break;
      index[a] = 0;
    }
  }
}

// A descriptor of `dims` in `layout`, in fresh memory (garbage-filled).
isa::TensorDesc place(Device& dev, DataType type, const Shape& dims, const Layout& layout) {
  isa::TensorDesc d{};
  d.type = element_type(type);
  d.rank = static_cast<uint32_t>(dims.size());
  for (uint32_t a = 0; a < isa::kMaxRank; ++a) d.dims[a] = a < d.rank ? uint32_t(dims[a]) : 1;
  std::vector<int> order = layout.order;
  if (order.size() != dims.size()) {
    order.resize(dims.size());
    std::iota(order.begin(), order.end(), 0);
  }
  int64_t stride = isa::element_bytes(d.type);
  for (size_t i = order.size(); i-- > 0;) {
    const int axis = order[i];
    d.strides[axis] = static_cast<int32_t>(stride);
    int64_t extent = dims[size_t(axis)];
    if (i + 1 == order.size()) extent = (extent + layout.align - 1) / layout.align * layout.align;
    stride *= extent;
  }
  d.address = dev.allocate(size_t(stride), layout.misalign);
  return d;
}

void write(Device& dev, const isa::TensorDesc& d, const Tensor& t) {
  const size_t width = isa::element_bytes(d.type);
  EXPECT_EQ(width, kernels::dtype_size(t.dtype()));
  const auto* src = static_cast<const uint8_t*>(t.raw_data());
  for_each_element(d, [&](int64_t i, int64_t at) {
    std::memcpy(dev.memory().data() + at, src + size_t(i) * width, width);
  });
}

Tensor read(const Device& dev, const isa::TensorDesc& d, DataType type) {
  Shape shape(d.dims, d.dims + d.rank);
  Tensor t(type, shape);
  const size_t width = isa::element_bytes(d.type);
  auto* dst = static_cast<uint8_t*>(t.raw_data());
  for_each_element(d, [&](int64_t i, int64_t at) {
    std::memcpy(dst + size_t(i) * width, dev.memory().data() + at, width);
  });
  return t;
}

// Places t in `layout` and writes it.
isa::TensorDesc place_tensor(Device& dev, const Tensor& t, const Layout& layout) {
  const isa::TensorDesc d = place(dev, t.dtype(), t.shape(), layout);
  write(dev, d, t);
  return d;
}

// `d` (of a broadcastable shape) viewed with the dims of `out`: stride 0 where d has extent 1.
isa::TensorDesc broadcast_to(isa::TensorDesc d, const Shape& out) {
  for (uint32_t a = 0; a < d.rank; ++a) {
    if (d.dims[a] == 1 && out[a] != 1) {
      d.dims[a] = uint32_t(out[a]);
      d.strides[a] = 0;
    }
  }
  return d;
}

// Runs one instruction; checks that no byte outside `out`'s elements changed.
template <typename Payload>
void run(Device& dev, isa::Opcode opcode, const Payload& payload, const isa::TensorDesc& out) {
  const std::vector<uint8_t> before = dev.memory();
  execute_instruction(Instruction{opcode, payload, 0}, dev.memory());
  std::vector<bool> written(before.size(), false);
  const size_t width = isa::element_bytes(out.type);
  for_each_element(out, [&](int64_t, int64_t at) {
    for (size_t b = 0; b < width; ++b) written[size_t(at) + b] = true;
  });
  for (size_t i = 0; i < before.size(); ++i) {
    if (!written[i] && before[i] != dev.memory()[i]) {
      ADD_FAILURE() << "byte " << i << " outside the output changed";
      return;
    }
  }
}

// Every element of `got` equals `want` (same shape and type); reports the first few misses.
void expect_same(const Tensor& want, const Tensor& got, const std::string& what) {
  ASSERT_EQ(want.shape(), got.shape()) << what;
  ASSERT_EQ(want.dtype(), got.dtype()) << what;
  int misses = 0;
  for (int64_t i = 0; i < want.element_count() && misses < 5; ++i) {
    if (want.int_at(i) != got.int_at(i)) {
      ADD_FAILURE() << what << ": element " << i << " kernel " << want.int_at(i) << " simulator "
                    << got.int_at(i);
      ++misses;
    }
  }
}

// ------------------------------------------------------------------ random parameters

int64_t pick(std::mt19937& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}
double uniform(std::mt19937& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}
bool chance(std::mt19937& rng, double p) { return uniform(rng, 0, 1) < p; }

template <typename T>
T pick_of(std::mt19937& rng, const std::vector<T>& options) {
  return options[size_t(pick(rng, 0, int64_t(options.size()) - 1))];
}

DataType activation(std::mt19937& rng) { return chance(rng, 0.5) ? DataType::kInt8 : DataType::kInt16; }

// A tensor of random values over the whole range of `type`.
Tensor random_tensor(DataType type, const Shape& shape, std::mt19937& rng) {
  Tensor t(type, shape);
  std::uniform_int_distribution<int64_t> dist(type_min(type), type_max(type));
  for (int64_t i = 0; i < t.element_count(); ++i) {
    const int64_t v = dist(rng);
    switch (type) {
      case DataType::kInt8: t.data<int8_t>()[i] = static_cast<int8_t>(v); break;
      case DataType::kInt16: t.data<int16_t>()[i] = static_cast<int16_t>(v); break;
      default: t.data<int32_t>()[i] = static_cast<int32_t>(v); break;
    }
  }
  return t;
}

// A multiplier near `real` (within a factor e), sometimes 0.
FixedPointMultiplier random_multiplier(std::mt19937& rng, double real, double zero_chance = 0.02) {
  if (chance(rng, zero_chance)) return {0, 0};
  return to_fixed_point(real * std::exp(uniform(rng, -1, 1)));
}

std::vector<FixedPointMultiplier> random_multipliers(std::mt19937& rng, int64_t count, double real) {
  std::vector<FixedPointMultiplier> fs;
  for (int64_t i = 0; i < count; ++i) fs.push_back(random_multiplier(rng, real));
  return fs;
}

// Random clamp bounds inside `type` (often the whole range).
std::pair<int64_t, int64_t> random_clamp(std::mt19937& rng, DataType type) {
  if (chance(rng, 0.5)) return {type_min(type), type_max(type)};
  const int64_t range = std::min<int64_t>(type_max(type), 1 << 20);
  int64_t lo = pick(rng, -range, range / 2), hi = pick(rng, lo, range);
  if (chance(rng, 0.3)) lo = 0;  // ReLU
  return {lo, std::max(lo, hi)};
}

void set_clamp(AttributeMap& attrs, std::pair<int64_t, int64_t> clamp) {
  attrs.set("clip_min", clamp.first);
  attrs.set("clip_max", clamp.second);
}

void set_multipliers(AttributeMap& attrs, const char* multipliers, const char* shifts,
                     const std::vector<FixedPointMultiplier>& fs) {
  auto [m, s] = multiplier_lists(fs);
  attrs.set(multipliers, m);
  attrs.set(shifts, s);
}

// The layouts of the inputs and of the output every case runs in: padded (NHWC for rank 4) at
// unaligned addresses (the output padded differently), dense, and dense inputs with a padded
// output.
struct Layouts {
  Layout in, out;
};
std::vector<Layouts> layouts(std::mt19937& rng) {
  const bool eight = chance(rng, 0.5);
  const Layout padded = padded_layout(eight ? 8 : 16, uint32_t(pick(rng, 1, 3)));
  const Layout other = padded_layout(eight ? 16 : 8, uint32_t(pick(rng, 0, 2)));
  return {{padded, other}, {dense_layout(), dense_layout()}, {dense_layout(), other}};
}

// ------------------------------------------------------------------ Conv / ConvTranspose

struct ConvCase {
  uint32_t seed = 0;
  bool transpose = false;
  DataType x_type = DataType::kInt8, y_type = DataType::kInt8;
  std::optional<DataType> r_type;
  bool bias = true;
  bool extreme = false;  // x all at the type's minimum, w all -128: the largest sums
  bool reweigh = false;  // then new weights at the same address, run again (no stale packed weights)
  int64_t N = 1, C = 1, H = 1, W = 1, M = 1, group = 1, KH = 1, KW = 1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0, pb = 0, pr = 0, oph = 0, opw = 0;
  std::pair<int64_t, int64_t> clamp{INT32_MIN, INT32_MAX};

  int64_t out_h() const {
    return transpose ? (H - 1) * sh + (KH - 1) * dh + 1 + oph - pt - pb
                     : (H + pt + pb - ((KH - 1) * dh + 1)) / sh + 1;
  }
  int64_t out_w() const {
    return transpose ? (W - 1) * sw + (KW - 1) * dw + 1 + opw - pl - pr
                     : (W + pl + pr - ((KW - 1) * dw + 1)) / sw + 1;
  }
  std::string str() const {
    std::ostringstream s;
    s << (transpose ? "ConvTranspose" : "Conv") << " seed=" << seed << " x=" << name(x_type)
      << " y=" << name(y_type) << " r=" << (r_type ? name(*r_type) : "none") << " bias=" << bias
      << " N=" << N << " C=" << C << " H=" << H << " W=" << W << " M=" << M << " group=" << group
      << " kernel=" << KH << "x" << KW << " strides=" << sh << "," << sw << " dilations=" << dh
      << "," << dw << " pads=" << pt << "," << pl << "," << pb << "," << pr
      << " output_padding=" << oph << "," << opw << " clip=" << clamp.first << ","
      << clamp.second << (extreme ? " extreme" : "");
    return s.str();
  }
};

ConvCase random_conv_case(uint32_t seed, bool transpose) {
  std::mt19937 rng(seed);
  ConvCase c;
  c.seed = seed;
  c.transpose = transpose;
  c.x_type = activation(rng);
  c.y_type = pick_of(rng, std::vector<DataType>{DataType::kInt8, DataType::kInt16, DataType::kInt32});
  if (!transpose && chance(rng, 0.3)) c.r_type = activation(rng);
  c.bias = chance(rng, 0.8);
  c.N = pick(rng, 1, 2);
  switch (pick(rng, 0, 4)) {
    case 0:  // depthwise
      c.group = c.C = c.M = pick(rng, 1, 40);
      break;
    case 1:  // depthwise with a channel multiplier
      c.group = c.C = pick(rng, 1, 12);
      c.M = c.C * pick(rng, 2, 3);
      break;
    case 2:  // grouped
      c.group = pick(rng, 2, 4);
      c.C = c.group * pick(rng, 1, 6);
      c.M = c.group * pick(rng, 1, 6);
      break;
    default:
      c.C = pick(rng, 1, 24);
      c.M = pick(rng, 1, 24);
      break;
  }
  if (chance(rng, 0.05)) c.C = c.group * pick(rng, 60, 120);  // long dot products
  do {
    c.H = pick(rng, 1, 12);
    c.W = pick(rng, 1, 12);
    c.KH = pick(rng, 1, 4);
    c.KW = pick(rng, 1, 4);
    c.sh = pick(rng, 1, 3);
    c.sw = pick(rng, 1, 3);
    c.dh = chance(rng, 0.3) ? 2 : 1;
    c.dw = chance(rng, 0.3) ? 2 : 1;
    c.pt = pick(rng, 0, (c.KH - 1) * c.dh);
    c.pb = pick(rng, 0, (c.KH - 1) * c.dh);
    c.pl = pick(rng, 0, (c.KW - 1) * c.dw);
    c.pr = pick(rng, 0, (c.KW - 1) * c.dw);
    if (transpose) {
      c.oph = pick(rng, 0, std::max(c.sh, c.dh) - 1);
      c.opw = pick(rng, 0, std::max(c.sw, c.dw) - 1);
    }
  } while (c.out_h() < 1 || c.out_w() < 1 ||
           (!transpose && (c.H + c.pt + c.pb < (c.KH - 1) * c.dh + 1 ||
                           c.W + c.pl + c.pr < (c.KW - 1) * c.dw + 1)));
  c.clamp = random_clamp(rng, c.y_type);
  return c;
}

void check_conv(const ConvCase& c) {
  SCOPED_TRACE(c.str());
  std::mt19937 rng(c.seed ^ 0x9E3779B9u);
  const int64_t Cg = c.C / c.group, Mg = c.M / c.group, OH = c.out_h(), OW = c.out_w();
  Tensor x = random_tensor(c.x_type, {c.N, c.C, c.H, c.W}, rng);
  Tensor w = random_tensor(DataType::kInt8,
                           c.transpose ? Shape{c.C, Mg, c.KH, c.KW} : Shape{c.M, Cg, c.KH, c.KW}, rng);
  if (c.extreme) {
    for (int64_t i = 0; i < x.element_count(); ++i) {
      if (c.x_type == DataType::kInt8) x.data<int8_t>()[i] = INT8_MIN;
      else x.data<int16_t>()[i] = INT16_MIN;
    }
    for (int64_t i = 0; i < w.element_count(); ++i) w.data<int8_t>()[i] = INT8_MIN;
  }
  std::optional<Tensor> b;
  if (c.bias) {
    Tensor t(DataType::kInt32, {c.M});
    for (int64_t m = 0; m < c.M; ++m) t.data<int32_t>()[m] = int32_t(pick(rng, -(1 << 20), 1 << 20));
    b = t;
  }
  std::optional<Tensor> r;
  if (c.r_type) r = random_tensor(*c.r_type, {c.N, c.M, OH, OW}, rng);
  // The accumulator's typical magnitude; multipliers map it to about the output's range.
  const double x_range = double(type_max(c.x_type));
  const double acc = std::sqrt(double(Cg * c.KH * c.KW)) * x_range * 128 / 3;
  std::vector<FixedPointMultiplier> requant, residual_requant;
  AttributeMap attrs = attributes({{"kernel_shape", std::vector<int64_t>{c.KH, c.KW}},
                                   {"strides", std::vector<int64_t>{c.sh, c.sw}},
                                   {"pads", std::vector<int64_t>{c.pt, c.pl, c.pb, c.pr}},
                                   {"dilations", std::vector<int64_t>{c.dh, c.dw}},
                                   {"group", c.group},
                                   {"output_type", name(c.y_type)}});
  if (c.y_type != DataType::kInt32) {
    requant = random_multipliers(rng, c.M, double(type_max(c.y_type)) / acc);
    set_multipliers(attrs, "multipliers", "shifts", requant);
  }
  if (r) {
    residual_requant = random_multipliers(rng, c.M, acc / double(type_max(*c.r_type)) / 2);
    set_multipliers(attrs, "residual_multipliers", "residual_shifts", residual_requant);
  }
  if (c.transpose) attrs.set("output_padding", std::vector<int64_t>{c.oph, c.opw});
  set_clamp(attrs, c.clamp);
  // The reference on weights w, and w packed [M][KH][KW][Cg] for the instruction.
  auto reference = [&](const Tensor& weights) {
    std::vector<std::optional<Tensor>> inputs{x, weights, b};
    if (r) inputs.push_back(r);
    return run_horizon(c.transpose ? "HzSQuantizedConvTranspose" : "HzSQuantizedConv", attrs, inputs);
  };
  auto pack = [&](const Tensor& weights) {
    std::vector<int8_t> packed(size_t(c.M * c.KH * c.KW * Cg));
    const int8_t* pw = weights.data<int8_t>();
    for (int64_t m = 0; m < c.M; ++m) {
      const int64_t g = m / Mg;
      for (int64_t kh = 0; kh < c.KH; ++kh) {
        for (int64_t kw = 0; kw < c.KW; ++kw) {
          for (int64_t ci = 0; ci < Cg; ++ci) {
            const int64_t src = c.transpose ? (((g * Cg + ci) * Mg + (m - g * Mg)) * c.KH + kh) * c.KW + kw
                                            : ((m * Cg + ci) * c.KH + kh) * c.KW + kw;
            packed[size_t(((m * c.KH + kh) * c.KW + kw) * Cg + ci)] = pw[src];
          }
        }
      }
    }
    return packed;
  };
  const Tensor want = reference(w);
  ASSERT_EQ(want.shape(), (Shape{c.N, c.M, OH, OW}));
  const std::vector<int8_t> packed = pack(w);
  for (const auto& [layout, out_layout] : layouts(rng)) {
    SCOPED_TRACE(layout.name + " -> " + out_layout.name);
    Device dev;
    isa::ConvInstruction in{};
    in.weights = dev.put_values(packed, layout.misalign);
    in.bias = b ? dev.put(b->raw_data(), b->byte_size(), layout.misalign) : isa::kNoAddress;
    in.requant = requant.empty() ? isa::kNoAddress : dev.put_multipliers(requant, layout.misalign);
    in.residual_requant =
        r ? dev.put_multipliers(residual_requant, layout.misalign) : isa::kNoAddress;
    in.input = place_tensor(dev, x, layout);
    if (r) in.residual = place_tensor(dev, *r, layout);
    in.output = place(dev, c.y_type, want.shape(), out_layout);
    in.kernel_h = uint32_t(c.KH);
    in.kernel_w = uint32_t(c.KW);
    in.stride_h = uint32_t(c.sh);
    in.stride_w = uint32_t(c.sw);
    in.dilation_h = uint32_t(c.dh);
    in.dilation_w = uint32_t(c.dw);
    in.pad_top = int32_t(c.pt);
    in.pad_left = int32_t(c.pl);
    in.group = uint32_t(c.group);
    in.clip_min = int32_t(c.clamp.first);
    in.clip_max = int32_t(c.clamp.second);
    run(dev, c.transpose ? isa::Opcode::kConvTranspose : isa::Opcode::kConv, in, in.output);
    expect_same(want, read(dev, in.output, c.y_type), c.str());
    if (!c.reweigh) continue;
    const Tensor w2 = random_tensor(DataType::kInt8, w.shape(), rng);
    const std::vector<int8_t> packed2 = pack(w2);
    std::memcpy(dev.memory().data() + in.weights, packed2.data(), packed2.size());
    run(dev, c.transpose ? isa::Opcode::kConvTranspose : isa::Opcode::kConv, in, in.output);
    expect_same(reference(w2), read(dev, in.output, c.y_type), c.str() + " reweighed");
  }
}

TEST(FunctionalConv, MatchesHzSQuantizedConv) {
  on_every_host_isa([] {
    for (uint32_t seed = 1; seed <= 300; ++seed) {
      check_conv(random_conv_case(seed, false));
      if (::testing::Test::HasFailure()) return;
    }
  });
}

TEST(FunctionalConv, MatchesHzSQuantizedConvTranspose) {
  on_every_host_isa([] {
    for (uint32_t seed = 1001; seed <= 1200; ++seed) {
      check_conv(random_conv_case(seed, true));
      if (::testing::Test::HasFailure()) return;
    }
  });
}

// Fixed shapes the random draw may miss: depthwise 3x3 and int16 5x5 with many channels (whole
// and partial registers of channels, several per pixel), a strided 3x3
// with residual into int16, a 1x1 without bias to int32, an int16 conv with dot products
// longer than the int32 chunk, a stride-2 transpose with padding and groups, a 3x3 with 256
// input channels and 72 outputs (block pairs, a single block, unused lanes) whose weights are
// then replaced at the same address.
TEST(FunctionalConv, TypicalLayers) {
  std::vector<ConvCase> cases;
  ConvCase c;
  c.seed = 7;
  c.N = 1;
  c.C = c.M = c.group = 64;
  c.H = c.W = 20;
  c.KH = c.KW = 3;
  c.pt = c.pl = c.pb = c.pr = 1;
  c.clamp = {0, 127};
  cases.push_back(c);
  c = ConvCase{};
  c.seed = 8;
  c.C = 24;
  c.M = 40;
  c.H = 17;
  c.W = 15;
  c.KH = c.KW = 3;
  c.sh = c.sw = 2;
  c.pt = c.pl = c.pb = c.pr = 1;
  c.y_type = DataType::kInt16;
  c.r_type = DataType::kInt8;
  c.clamp = {INT16_MIN, INT16_MAX};
  cases.push_back(c);
  c = ConvCase{};
  c.seed = 9;
  c.C = 33;
  c.M = 17;
  c.H = 9;
  c.W = 11;
  c.bias = false;
  c.y_type = DataType::kInt32;
  cases.push_back(c);
  c = ConvCase{};
  c.seed = 10;
  c.x_type = DataType::kInt16;
  c.C = 100;
  c.M = 5;
  c.H = c.W = 6;
  c.KH = c.KW = 3;
  c.y_type = DataType::kInt16;
  c.clamp = {INT16_MIN, INT16_MAX};
  cases.push_back(c);
  c = ConvCase{};
  c.seed = 11;
  c.transpose = true;
  c.C = 8;
  c.M = 12;
  c.group = 2;
  c.H = 7;
  c.W = 6;
  c.KH = c.KW = 4;
  c.sh = c.sw = 2;
  c.pt = c.pl = c.pb = c.pr = 1;
  c.clamp = {-100, 100};
  cases.push_back(c);
  c = ConvCase{};
  c.seed = 12;
  c.C = 256;
  c.M = 72;
  c.H = c.W = 9;
  c.KH = c.KW = 3;
  c.pt = c.pl = c.pb = c.pr = 1;
  c.clamp = {-128, 127};
  c.reweigh = true;
  cases.push_back(c);
  c = ConvCase{};
  c.seed = 13;
  c.x_type = c.y_type = DataType::kInt16;
  c.C = c.M = c.group = 200;
  c.H = 5;
  c.W = 13;
  c.KH = c.KW = 5;
  c.pt = c.pl = c.pb = c.pr = 2;
  c.clamp = {INT16_MIN, INT16_MAX};
  cases.push_back(c);
  // Shapes of the amx path's engine (at least 128 pixels, segments near whole 64-value tiles):
  // int8 3x3 with an odd count of 16-channel blocks; int16 1x1 with a residual; a transposed
  // 3x3 whose phases skip taps.
  c = ConvCase{};
  c.seed = 14;
  c.C = 64;
  c.M = 40;
  c.H = c.W = 12;
  c.KH = c.KW = 3;
  c.pt = c.pl = c.pb = c.pr = 1;
  c.clamp = {-128, 127};
  cases.push_back(c);
  c = ConvCase{};
  c.seed = 15;
  c.x_type = c.y_type = DataType::kInt16;
  c.r_type = DataType::kInt8;
  c.N = 2;
  c.C = 60;
  c.M = 20;
  c.H = c.W = 9;
  c.clamp = {INT16_MIN, INT16_MAX};
  cases.push_back(c);
  c = ConvCase{};
  c.seed = 16;
  c.transpose = true;
  c.C = 64;
  c.M = 24;
  c.H = c.W = 7;
  c.KH = c.KW = 3;
  c.sh = c.sw = 2;
  c.pt = c.pl = c.pb = c.pr = 1;
  c.clamp = {-128, 127};
  cases.push_back(c);
  on_every_host_isa([&] {
    for (const ConvCase& k : cases) check_conv(k);
  });
}

// One instruction split over host threads (host_isa.h, version 2): the tiled engine in panels,
// depthwise in pixel ranges, with enough pixels for three parts; the bytes equal the reference's.
TEST(FunctionalConv, HostThreadsDoNotChangeTheBytes) {
  std::vector<ConvCase> cases;
  ConvCase c;
  c.seed = 30;
  c.C = 16;
  c.M = 24;
  c.H = c.W = 40;
  c.KH = c.KW = 3;
  c.pt = c.pl = c.pb = c.pr = 1;
  c.clamp = {-128, 127};
  cases.push_back(c);
  c.seed = 31;
  c.x_type = c.y_type = DataType::kInt16;
  c.C = c.M = c.group = 20;
  c.clamp = {INT16_MIN, INT16_MAX};
  cases.push_back(c);
  c = ConvCase{};
  c.seed = 32;
  c.transpose = true;
  c.C = 8;
  c.M = 4;
  c.H = c.W = 21;
  c.KH = c.KW = c.sh = c.sw = 2;
  c.clamp = {-128, 127};
  cases.push_back(c);
  const int before = host_threads();
  for (int threads : {2, 3}) {
    set_host_threads(threads);
    SCOPED_TRACE("host threads " + std::to_string(threads));
    on_every_host_isa([&] {
      for (const ConvCase& k : cases) check_conv(k);
    });
  }
  set_host_threads(before);
}

// Sums past the int32 range: int8 dot products longer than 2^17 terms of (-128)·(-128) (one
// pixel; and 64 pixels of 17000 terms), int16
// ones of 1000 terms (3 and 9 output channels), an int16 depthwise 23x23 kernel (int64
// accumulators), each to int32 (saturated) and requantized to int16.
TEST(FunctionalConv, LongExtremeSumsAreExact) {
  std::vector<ConvCase> cases;
  for (DataType y : {DataType::kInt32, DataType::kInt16}) {
    ConvCase c;
    c.extreme = true;
    c.y_type = y;
    c.clamp = {type_min(y), type_max(y)};
    c.seed = 20;
    c.C = 140000;
    c.M = 2;
    cases.push_back(c);
    c.seed = 23;  // the tiled engines (amx: 64 pixels, int32 sums in chunks of 16384 terms)
    c.C = 17000;
    c.M = 17;
    c.H = c.W = 8;
    cases.push_back(c);
    c.H = c.W = 1;
    c.seed = 21;
    c.x_type = DataType::kInt16;
    c.C = 1000;
    c.M = 3;
    c.H = c.W = 2;
    cases.push_back(c);
    c.seed = 24;  // eight channels and more: the AVX-512 output stage's vector steps
    c.M = 9;
    cases.push_back(c);
    c.seed = 22;
    c.C = c.M = c.group = 5;
    c.H = c.W = 23;
    c.KH = c.KW = 23;
    c.pt = c.pl = c.pb = c.pr = 11;
    cases.push_back(c);
  }
  on_every_host_isa([&] {
    for (const ConvCase& k : cases) check_conv(k);
  });
}

// The scalar path always exists and comes first; each supported path can be selected and is
// reported back; the names are those OPENBPU_ISA takes.
TEST(HostIsa, EverySupportedPathIsSelectable) {
  const std::vector<HostIsa> all = supported_host_isas();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front(), HostIsa::kScalar);
  const HostIsa before = host_isa();
  for (HostIsa isa : all) {
    EXPECT_TRUE(set_host_isa(isa));
    EXPECT_EQ(host_isa(), isa);
  }
  set_host_isa(before);
  EXPECT_EQ(host_isa_name(HostIsa::kScalar), "scalar");
  EXPECT_EQ(host_isa_name(HostIsa::kAvx2), "avx2");
  EXPECT_EQ(host_isa_name(HostIsa::kAvx512), "avx512");
  EXPECT_EQ(host_isa_name(HostIsa::kAmx), "amx");
}

// ------------------------------------------------------------------ MatMul

TEST(FunctionalMatMul, MatchesHzSQuantizedMatmul) {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    const DataType ta = activation(rng), tb = activation(rng);
    const DataType ty =
        pick_of(rng, std::vector<DataType>{DataType::kInt8, DataType::kInt16, DataType::kInt32});
    const int64_t rank = pick(rng, 2, 5);
    Shape batch;
    for (int64_t d = 0; d + 2 < rank; ++d) batch.push_back(pick(rng, 1, 3));
    const int64_t I = pick(rng, 1, 9), J = pick(rng, 1, 9);
    const int64_t K = chance(rng, 0.1) ? pick(rng, 250, 700) : pick(rng, 1, 20);
    Shape sa = batch, sb = batch;
    for (size_t d = 0; d < batch.size(); ++d) {
      const int64_t which = pick(rng, 0, 2);  // 0: both full, 1: a broadcast, 2: b broadcast
      if (which == 1) sa[d] = 1;
      if (which == 2) sb[d] = 1;
    }
    sa.insert(sa.end(), {I, K});
    sb.insert(sb.end(), {K, J});
    const bool stride_zero = chance(rng, 0.5);  // broadcast as stride 0 (else extent 1)
    std::ostringstream trace;
    trace << "MatMul seed=" << seed << " a=" << name(ta) << str(sa) << " b=" << name(tb) << str(sb)
          << " y=" << name(ty) << " broadcast=" << (stride_zero ? "stride0" : "extent1");
    SCOPED_TRACE(trace.str());
    const Tensor a = random_tensor(ta, sa, rng), b = random_tensor(tb, sb, rng);
    AttributeMap attrs = attributes({{"output_type", name(ty)}});
    FixedPointMultiplier f{};
    if (ty != DataType::kInt32) {
      const double acc = std::sqrt(double(K)) * double(type_max(ta)) * double(type_max(tb)) / 3;
      f = random_multiplier(rng, double(type_max(ty)) / acc);
      attrs.set("multiplier", int64_t{f.multiplier});
      attrs.set("shift", int64_t{f.shift});
    }
    const Tensor want = run_horizon("HzSQuantizedMatmul", attrs, {a, b});
    // (a) a's K padded, b stored transposed ([.., J, K] physically) and padded; (b) dense.
    std::vector<int> b_order(static_cast<size_t>(rank));
    std::iota(b_order.begin(), b_order.end(), 0);
    std::swap(b_order[size_t(rank - 1)], b_order[size_t(rank - 2)]);
    const int64_t align = chance(rng, 0.5) ? 8 : 16;
    const std::vector<std::pair<Layout, Layout>> layout_pairs = {
        {{"a padded", {}, align, 1}, {"b transposed", b_order, align, 3}},
        {dense_layout(), dense_layout()}};
    for (const auto& [la, lb] : layout_pairs) {
      SCOPED_TRACE("layouts " + la.name + " / " + lb.name);
      Device dev;
      isa::MatMulInstruction in{};
      in.a = place_tensor(dev, a, la);
      in.b = place_tensor(dev, b, lb);
      in.output = place(dev, ty, want.shape(), {"y padded", {}, align, 2});
      if (stride_zero) {  // batch axes only
        Shape batch_a = want.shape(), batch_b = want.shape();
        batch_a[size_t(rank - 1)] = K;
        batch_b[size_t(rank - 2)] = K;
        in.a = broadcast_to(in.a, batch_a);
        in.b = broadcast_to(in.b, batch_b);
      }
      in.multiplier = f.multiplier;
      in.shift = f.shift;
      run(dev, isa::Opcode::kMatMul, in, in.output);
      expect_same(want, read(dev, in.output, ty), trace.str());
    }
    if (::testing::Test::HasFailure()) return;
  }
}

// K = 140000 terms of (-128)·(-128) exceed int32; the int32 output saturates.
TEST(FunctionalMatMul, LongExtremeSumsAreExact) {
  for (DataType ty : {DataType::kInt32, DataType::kInt8}) {
    SCOPED_TRACE("y " + name(ty));
    const int64_t K = 140000;
    Tensor a(DataType::kInt8, {1, K}), b(DataType::kInt8, {K, 2});
    std::memset(a.raw_data(), 0x80, a.byte_size());
    std::memset(b.raw_data(), 0x80, b.byte_size());
    b.data<int8_t>()[1] = 5;
    AttributeMap attrs = attributes({{"output_type", name(ty)}});
    const FixedPointMultiplier f = to_fixed_point(1e-8);
    if (ty != DataType::kInt32) {
      attrs.set("multiplier", int64_t{f.multiplier});
      attrs.set("shift", int64_t{f.shift});
    }
    const Tensor want = run_horizon("HzSQuantizedMatmul", attrs, {a, b});
    Device dev;
    isa::MatMulInstruction in{};
    in.a = place_tensor(dev, a, dense_layout());
    in.b = place_tensor(dev, b, padded_layout(16, 1));
    in.output = place(dev, ty, want.shape(), dense_layout());
    in.multiplier = f.multiplier;
    in.shift = f.shift;
    run(dev, isa::Opcode::kMatMul, in, in.output);
    expect_same(want, read(dev, in.output, ty), "long K");
  }
}

// ------------------------------------------------------------------ Elementwise

TEST(FunctionalElementwise, MatchesTheHzSElementwiseKernels) {
  // Indexed by isa::ElementwiseOp.
  const char* ops[] = {"HzSElementwiseAdd", "HzSElementwiseSub",   "HzSElementwiseMul",     "HzSElementwiseMax",
                       "HzSElementwiseMin", "HzSElementwiseEqual", "HzSElementwiseGreater", "HzSElementwiseLess"};
  on_every_host_isa([&] {
  for (uint32_t seed = 1; seed <= 400; ++seed) {
    std::mt19937 rng(seed);
    const int op = int(pick(rng, 0, 7));
    const bool comparison = isa::is_comparison(static_cast<isa::ElementwiseOp>(op));
    const DataType ta = activation(rng), tb = comparison ? ta : activation(rng);
    const DataType ty = comparison ? DataType::kInt8 : activation(rng);
    const int64_t rank = pick(rng, 1, 6);
    Shape out, sa, sb;
    for (int64_t d = 0; d < rank; ++d) {
      out.push_back(pick(rng, 1, rank > 4 ? 3 : (rank <= 2 ? 70 : 6)));  // long rows: the vector loops
      const int64_t which = pick(rng, 0, 3);  // 0, 1: both full, 2: a broadcast, 3: b broadcast
      sa.push_back(which == 2 ? 1 : out.back());
      sb.push_back(which == 3 ? 1 : out.back());
    }
    const int64_t ishift = pick_of(rng, std::vector<int64_t>{0, 4, 8, 13, 20});
    const std::pair<int64_t, int64_t> clamp =
        comparison ? std::pair<int64_t, int64_t>{-128, 127} : random_clamp(rng, ty);
    AttributeMap attrs = attributes({{"output_type", name(ty)}});
    set_clamp(attrs, clamp);
    FixedPointMultiplier fa{}, fb{};
    const double ry = double(type_max(ty));
    if (op != int(isa::ElementwiseOp::kMul)) {
      fa = random_multiplier(rng, ry / double(type_max(ta)) * double(1 << ishift) / 2);
      fb = random_multiplier(rng, ry / double(type_max(tb)) * double(1 << ishift) / 2);
      if (comparison && chance(rng, 0.5)) fb = fa;  // the same scale: equal codes compare equal
      set_multipliers(attrs, "input_multipliers", "input_shifts", {fa, fb});
      attrs.set("intermediate_shift", ishift);
    } else {
      fa = random_multiplier(rng, ry / (double(type_max(ta)) * double(type_max(tb))) * 4);
      attrs.set("multiplier", int64_t{fa.multiplier});
      attrs.set("shift", int64_t{fa.shift});
    }
    std::ostringstream trace;
    trace << ops[op] << " seed=" << seed << " a=" << name(ta) << str(sa) << " b=" << name(tb)
          << str(sb) << " y=" << name(ty) << " intermediate_shift=" << ishift
          << " clip=" << clamp.first << "," << clamp.second;
    SCOPED_TRACE(trace.str());
    Tensor a = random_tensor(ta, sa, rng), b = random_tensor(tb, sb, rng);
    if (comparison) {  // few distinct codes, so that ties occur
      for (Tensor* t : {&a, &b}) {
        for (int64_t i = 0; i < t->element_count(); ++i) {
          if (ta == DataType::kInt8) t->data<int8_t>()[i] = int8_t(t->data<int8_t>()[i] % 3);
          if (ta == DataType::kInt16) t->data<int16_t>()[i] = int16_t(t->data<int16_t>()[i] % 3);
        }
      }
    }
    const Tensor want = run_horizon(ops[op], attrs, {a, b});
    for (const auto& [layout, out_layout] : layouts(rng)) {
      SCOPED_TRACE(layout.name + " -> " + out_layout.name);
      Device dev;
      isa::ElementwiseInstruction in{};
      in.op = static_cast<isa::ElementwiseOp>(op);
      in.a = broadcast_to(place_tensor(dev, a, layout), out);
      in.b = broadcast_to(place_tensor(dev, b, layout), out);
      in.output = place(dev, ty, out, out_layout);
      in.multiplier_a = fa.multiplier;
      in.shift_a = fa.shift;
      in.multiplier_b = fb.multiplier;
      in.shift_b = fb.shift;
      in.intermediate_shift = uint32_t(ishift);
      in.clip_min = int32_t(clamp.first);
      in.clip_max = int32_t(clamp.second);
      run(dev, isa::Opcode::kElementwise, in, in.output);
      expect_same(want, read(dev, in.output, ty), trace.str());
    }
    if (::testing::Test::HasFailure()) return;
  }
  });
}

TEST(FunctionalElementwise, ComparisonsGiveEveryOutcome) {
  // Guards the differential test above: its comparisons are not all false (or all true).
  const std::vector<int8_t> va = {-1, 0, 1}, vb = {0, 0, 0};
  const Tensor a = Tensor::from_values<int8_t>({3}, va);
  const Tensor b = Tensor::from_values<int8_t>({3}, vb);
  AttributeMap attrs = attributes({{"output_type", std::string("int8")}});
  set_multipliers(attrs, "input_multipliers", "input_shifts", {to_fixed_point(256.0), to_fixed_point(256.0)});
  attrs.set("intermediate_shift", int64_t{8});
  auto values = [](const Tensor& t) { return std::vector<int8_t>(t.data<int8_t>(), t.data<int8_t>() + 3); };
  EXPECT_EQ(values(run_horizon("HzSElementwiseEqual", attrs, {a, b})), (std::vector<int8_t>{0, 1, 0}));
  EXPECT_EQ(values(run_horizon("HzSElementwiseGreater", attrs, {a, b})), (std::vector<int8_t>{0, 0, 1}));
  EXPECT_EQ(values(run_horizon("HzSElementwiseLess", attrs, {a, b})), (std::vector<int8_t>{1, 0, 0}));
}

TEST(FunctionalSelect, MatchesHzSWhere) {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    const DataType ta = activation(rng), tb = activation(rng), ty = activation(rng);
    const int64_t rank = pick(rng, 1, 6);
    Shape out, sc, sa, sb;
    for (int64_t d = 0; d < rank; ++d) {
      out.push_back(pick(rng, 1, rank > 4 ? 3 : 6));
      sc.push_back(chance(rng, 0.25) ? 1 : out.back());
      sa.push_back(chance(rng, 0.25) ? 1 : out.back());
      sb.push_back(chance(rng, 0.25) ? 1 : out.back());
      if (sc.back() == 1 && sb.back() == 1) sa.back() = out.back();  // the operands make the output's shape
    }
    const int64_t ishift = pick_of(rng, std::vector<int64_t>{0, 4, 8, 13});
    const double ry = double(type_max(ty));
    const FixedPointMultiplier fa = random_multiplier(rng, ry / double(type_max(ta)) * double(1 << ishift));
    const FixedPointMultiplier fb = random_multiplier(rng, ry / double(type_max(tb)) * double(1 << ishift));
    AttributeMap attrs = attributes({{"output_type", name(ty)}});
    set_multipliers(attrs, "input_multipliers", "input_shifts", {fa, fb});
    attrs.set("intermediate_shift", ishift);
    std::ostringstream trace;
    trace << "seed=" << seed << " c" << str(sc) << " a=" << name(ta) << str(sa) << " b=" << name(tb) << str(sb)
          << " y=" << name(ty) << " intermediate_shift=" << ishift;
    SCOPED_TRACE(trace.str());
    Tensor c = random_tensor(DataType::kInt8, sc, rng);
    for (int64_t i = 0; i < c.element_count(); ++i) {
      if (chance(rng, 0.5)) c.data<int8_t>()[i] = 0;  // any non-zero code is true
    }
    const Tensor a = random_tensor(ta, sa, rng), b = random_tensor(tb, sb, rng);
    const Tensor want = run_horizon("HzSWhere", attrs, {c, a, b});
    for (const auto& [layout, out_layout] : layouts(rng)) {
      SCOPED_TRACE(layout.name + " -> " + out_layout.name);
      Device dev;
      isa::SelectInstruction in{};
      in.condition = broadcast_to(place_tensor(dev, c, layout), out);
      in.a = broadcast_to(place_tensor(dev, a, layout), out);
      in.b = broadcast_to(place_tensor(dev, b, layout), out);
      in.output = place(dev, ty, out, out_layout);
      in.multiplier_a = fa.multiplier;
      in.shift_a = fa.shift;
      in.multiplier_b = fb.multiplier;
      in.shift_b = fb.shift;
      in.intermediate_shift = uint32_t(ishift);
      run(dev, isa::Opcode::kSelect, in, in.output);
      expect_same(want, read(dev, in.output, ty), trace.str());
    }
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(FunctionalSelect, VerifierRules) {
  Device dev;
  isa::SelectInstruction in{};
  in.condition = place(dev, DataType::kInt8, {2, 3}, dense_layout());
  in.a = place(dev, DataType::kInt8, {2, 3}, dense_layout());
  in.b = place(dev, DataType::kInt16, {2, 3}, dense_layout());
  in.output = place(dev, DataType::kInt8, {2, 3}, dense_layout());
  in.multiplier_a = in.multiplier_b = 1 << 30;
  const uint64_t bytes = dev.memory().size();
  auto verify = [&](const isa::SelectInstruction& p, uint32_t version = isa::kIsaVersion) {
    return verify_instruction(Instruction{isa::Opcode::kSelect, p, 0}, bytes, {}, version);
  };
  EXPECT_EQ(verify(in), "");
  EXPECT_EQ(verify(in, 5), "Select needs ISA version 6, the program has version 5");
  isa::SelectInstruction wide_condition = in;
  wide_condition.condition.type = isa::ElementType::kInt16;
  EXPECT_EQ(verify(wide_condition), "condition must be int8 (a mask)");
  isa::SelectInstruction shifted = in;
  shifted.intermediate_shift = 32;
  EXPECT_EQ(verify(shifted), "intermediate_shift must be in [0, 31]");
}

// kGatherElements against the kernel library's GatherElements (the quantized model runs it on
// int8/int16), every layout, indices along any axis.
TEST(FunctionalGatherElements, MatchesTheGatherElementsKernel) {
  for (uint32_t seed = 1; seed <= 150; ++seed) {
    std::mt19937 rng(seed);
    const DataType type = activation(rng);
    const int64_t rank = pick(rng, 1, 5);
    const int64_t axis = pick(rng, 0, rank - 1);
    Shape xs, ys;
    for (int64_t d = 0; d < rank; ++d) {
      xs.push_back(pick(rng, 1, 6));
      ys.push_back(d == axis ? pick(rng, 1, 7) : pick(rng, 1, xs.back()));
    }
    std::vector<int64_t> indices;
    for (int64_t i = 0; i < kernels::shape_element_count(ys); ++i) indices.push_back(pick(rng, 0, xs[size_t(axis)] - 1));
    std::ostringstream trace;
    trace << "seed=" << seed << " x=" << name(type) << str(xs) << " indices" << str(ys) << " axis=" << axis;
    SCOPED_TRACE(trace.str());
    const Tensor x = random_tensor(type, xs, rng);
    const Tensor idx = Tensor::from_values<int64_t>(ys, indices);
    kernels::NodeInfo node{"gather", "GatherElements", "", 13, attributes({{"axis", axis}}), 2, 1};
    auto kernel = kernels::create_kernel(node);
    std::vector<const Tensor*> in_tensors = {&x, &idx};
    std::vector<Tensor> out(1);
    kernels::KernelContext ctx(in_tensors, out, kernels::Allocator::default_allocator(), nullptr);
    kernel->run(ctx);
    std::vector<int32_t> table(indices.begin(), indices.end());
    for (const auto& [layout, out_layout] : layouts(rng)) {
      SCOPED_TRACE(layout.name + " -> " + out_layout.name);
      Device dev;
      isa::GatherElementsInstruction in{};
      in.input = place_tensor(dev, x, layout);
      in.output = place(dev, type, ys, out_layout);
      in.axis = uint32_t(axis);
      in.table = dev.put(table.data(), table.size() * 4, layout.misalign);
      run(dev, isa::Opcode::kGatherElements, in, in.output);
      expect_same(out[0], read(dev, in.output, type), trace.str());
    }
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(FunctionalGatherElements, VerifierReadsTheIndices) {
  Device dev;
  isa::GatherElementsInstruction in{};
  in.input = place(dev, DataType::kInt8, {2, 3}, dense_layout());
  in.output = place(dev, DataType::kInt8, {2, 4}, dense_layout());
  in.axis = 1;
  const std::vector<int32_t> good = {0, 1, 2, 2, 1, 0, 0, 1}, bad = {0, 1, 2, 3, 1, 0, 0, 1};
  in.table = dev.put(good.data(), good.size() * 4, 0);
  auto verify = [&](const isa::GatherElementsInstruction& p, uint32_t version = isa::kIsaVersion) {
    return verify_instruction(Instruction{isa::Opcode::kGatherElements, p, 0}, dev.memory().size(),
                              std::span<const uint8_t>(dev.memory()), version);
  };
  EXPECT_EQ(verify(in), "");
  EXPECT_EQ(verify(in, 5), "GatherElements needs ISA version 6, the program has version 5");
  isa::GatherElementsInstruction out_of_range = in;
  out_of_range.table = dev.put(bad.data(), bad.size() * 4, 0);
  EXPECT_EQ(verify(out_of_range), "table[3] = 3 is outside [0, 2]");
  isa::GatherElementsInstruction wider = in;
  wider.axis = 0;
  EXPECT_EQ(verify(wider), "output axis 1 is longer than the input's");
}

TEST(FunctionalElementwise, NewOperationsNeedTheirIsaVersion) {
  Device dev;
  isa::ElementwiseInstruction in{};
  in.a = place(dev, DataType::kInt8, {2, 3}, dense_layout());
  in.b = place(dev, DataType::kInt8, {2, 3}, dense_layout());
  in.output = place(dev, DataType::kInt8, {2, 3}, dense_layout());
  in.multiplier_a = in.multiplier_b = 1 << 30;
  in.clip_min = -128;
  in.clip_max = 127;
  const uint64_t bytes = dev.memory().size();
  auto verify = [&](isa::ElementwiseOp op, uint32_t version) {
    isa::ElementwiseInstruction p = in;
    p.op = op;
    return verify_instruction(Instruction{isa::Opcode::kElementwise, p, 0}, bytes, {}, version);
  };
  EXPECT_EQ(verify(isa::ElementwiseOp::kMax, 4), "");
  EXPECT_EQ(verify(isa::ElementwiseOp::kMin, 3), "elementwise op Max/Min needs ISA version 4, the program has version 3");
  EXPECT_EQ(verify(isa::ElementwiseOp::kAdd, 3), "");
  EXPECT_EQ(verify(isa::ElementwiseOp::kGreater, 5),
            "elementwise op Equal/Greater/Less needs ISA version 6, the program has version 5");
  EXPECT_EQ(verify(isa::ElementwiseOp::kLess, 6), "");
  EXPECT_EQ(verify(static_cast<isa::ElementwiseOp>(8), 6), "unknown elementwise op 8");
}

// ------------------------------------------------------------------ Lut, Requantize, Clamp

Shape random_shape(std::mt19937& rng, int64_t max_rank, int64_t max_extent) {
  Shape s;
  const int64_t rank = pick(rng, 1, max_rank);
  for (int64_t d = 0; d < rank; ++d) s.push_back(pick(rng, 1, max_extent));
  return s;
}

TEST(FunctionalLut, MatchesHzLut) {
  on_every_host_isa([] {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    const DataType type = activation(rng);
    const Shape shape = random_shape(rng, 5, 7);
    const float in_scale = float(uniform(rng, 0.005, 0.05)), out_scale = float(uniform(rng, 0.004, 0.01));
    std::ostringstream trace;
    trace << "Lut seed=" << seed << " x=" << name(type) << str(shape) << " in_scale=" << in_scale
          << " out_scale=" << out_scale;
    SCOPED_TRACE(trace.str());
    auto f = [](double v) { return std::tanh(v) * 0.9; };
    Tensor table;
    if (type == DataType::kInt8) {
      const LutInt8 lut = build_lut_int8(f, in_scale, out_scale);
      table = Tensor(DataType::kInt8, {256});
      std::memcpy(table.raw_data(), lut.table.data(), 256);
    } else {
      const LutInt16 lut = build_lut_int16(f, in_scale / 256, out_scale / 256);
      table = Tensor(DataType::kInt32, {257});
      std::memcpy(table.raw_data(), lut.knots.data(), 257 * 4);
    }
    const Tensor x = random_tensor(type, shape, rng);
    const Tensor want = run_horizon("HzLut", {}, {x, table});
    for (const auto& [layout, out_layout] : layouts(rng)) {
      SCOPED_TRACE(layout.name + " -> " + out_layout.name);
      Device dev;
      isa::LutInstruction in{};
      in.table = dev.put(table.raw_data(), table.byte_size(), layout.misalign);
      in.input = place_tensor(dev, x, layout);
      in.output = place(dev, type, shape, out_layout);
      run(dev, isa::Opcode::kLut, in, in.output);
      expect_same(want, read(dev, in.output, type), trace.str());
    }
    if (::testing::Test::HasFailure()) return;
  }
  });
}

// Int16 tables whose segments need int64 arithmetic (knots near the int32 limits, steep
// segments) and tables that fit int32, on every path, with every input value.
TEST(FunctionalLut, Int16KnotsOfAnyMagnitude) {
  on_every_host_isa([] {
    for (uint32_t seed = 1; seed <= 4; ++seed) {
      std::mt19937 rng(seed);
      const int64_t magnitude = seed % 2 ? (int64_t{1} << 31) - 1 : (int64_t{1} << 22);
      std::uniform_int_distribution<int64_t> knot(-magnitude, magnitude);
      Tensor table(DataType::kInt32, {257});
      for (int64_t k = 0; k < 257; ++k) table.data<int32_t>()[k] = int32_t(knot(rng));
      Tensor x(DataType::kInt16, {1, 65536});
      for (int64_t i = 0; i < 65536; ++i) x.data<int16_t>()[i] = int16_t(i - 32768);
      // Then the same table but one knot, twice (on avx512 the second run of a table reads
      // the outputs' table of int16_input_table; a stale one would fail).
      for (int pass = 0; pass < 4; ++pass) {
        if (pass == 2) table.data<int32_t>()[200] /= 2;
        const Tensor want = run_horizon("HzLut", {}, {x, table});
        Device dev;
        isa::LutInstruction in{};
        in.table = dev.put(table.raw_data(), table.byte_size(), 0);
        in.input = place_tensor(dev, x, dense_layout());
        in.output = place(dev, DataType::kInt16, x.shape(), dense_layout());
        run(dev, isa::Opcode::kLut, in, in.output);
        expect_same(want, read(dev, in.output, DataType::kInt16),
                    "seed " + std::to_string(seed) + " pass " + std::to_string(pass));
      }
      if (::testing::Test::HasFailure()) return;
    }
  });
}

// A kLutProduct's parameters, and what the three quantized kernels it replaces (HzRequantize,
// HzLut, HzSElementwiseMul of x and the table's output) make of x.
struct LutProductCase {
  Tensor table;
  DataType tn, ty;
  bool rescale;
  FixedPointMultiplier narrow, product;
  std::pair<int64_t, int64_t> clamp;
};
Tensor lut_product_reference(const LutProductCase& c, const Tensor& x, bool x_first = true) {
  Tensor n = x;
  if (c.rescale) {
    AttributeMap attrs = attributes({{"output_type", name(c.tn)}});
    attrs.set("multiplier", int64_t{c.narrow.multiplier});
    attrs.set("shift", int64_t{c.narrow.shift});
    n = run_horizon("HzRequantize", attrs, {x});
  }
  const Tensor h = run_horizon("HzLut", {}, {n, c.table});
  AttributeMap mul = attributes({{"output_type", name(c.ty)}});
  mul.set("multiplier", int64_t{c.product.multiplier});
  mul.set("shift", int64_t{c.product.shift});
  set_clamp(mul, c.clamp);
  return x_first ? run_horizon("HzSElementwiseMul", mul, {x, h})
                 : run_horizon("HzSElementwiseMul", mul, {h, x});
}
// The instruction on x in a fresh device (verified first), its output read back.
Tensor run_lut_product(const LutProductCase& c, const Tensor& x, const Layout& layout,
                       const Layout& out_layout) {
  Device dev;
  isa::LutProductInstruction in{};
  in.table = dev.put(c.table.raw_data(), c.table.byte_size(), layout.misalign);
  in.table_type = element_type(c.tn);
  in.rescale = c.rescale ? 1 : 0;
  in.rescale_multiplier = c.narrow.multiplier;  // read only with the rescale
  in.rescale_shift = c.narrow.shift;
  in.multiplier = c.product.multiplier;
  in.shift = c.product.shift;
  in.clip_min = int32_t(c.clamp.first);
  in.clip_max = int32_t(c.clamp.second);
  in.input = place_tensor(dev, x, layout);
  in.output = place(dev, c.ty, x.shape(), out_layout);
  EXPECT_EQ(verify_instruction(Instruction{isa::Opcode::kLutProduct, in, 0}, dev.memory().size(),
                               dev.memory(), isa::kIsaVersion),
            "");
  run(dev, isa::Opcode::kLutProduct, in, in.output);
  return read(dev, in.output, c.ty);
}

// kLutProduct against the three quantized kernels it replaces (HzRequantize, HzLut,
// HzSElementwiseMul of x and the table's output): int8 and int16 inputs, tables and outputs,
// with and without the rescale, swish- and hardswish-like tables and int16 knots that need int64
// (then the AVX-512 rows fall back to the definition), long rows with tails, every layout.
TEST(FunctionalLutProduct, MatchesRequantizeLutAndMul) {
  on_every_host_isa([] {
    for (uint32_t seed = 1; seed <= 160; ++seed) {
      std::mt19937 rng(seed);
      const DataType tx = activation(rng), ty = activation(rng);
      const bool rescale = chance(rng, 0.6);
      const DataType tn = rescale ? activation(rng) : tx;
      const Shape shape = seed % 4 == 0 ? random_shape(rng, 2, 300) : random_shape(rng, 5, 7);
      const bool swish = chance(rng, 0.5), wide_knots = tn == DataType::kInt16 && seed % 10 == 3;
      const float in_scale = float(uniform(rng, 0.005, 0.05)),
                  out_scale = float(uniform(rng, 0.004, 0.01));
      auto f = [swish](double v) {
        return swish ? 1 / (1 + std::exp(-v)) : std::clamp(v / 6 + 0.5, 0.0, 1.0);
      };
      Tensor table;
      if (tn == DataType::kInt8) {
        const LutInt8 lut = build_lut_int8(f, in_scale, out_scale);
        table = Tensor(DataType::kInt8, {256});
        std::memcpy(table.raw_data(), lut.table.data(), 256);
      } else {
        const LutInt16 lut = build_lut_int16(f, in_scale / 256, out_scale / 256);
        table = Tensor(DataType::kInt32, {257});
        std::memcpy(table.raw_data(), lut.knots.data(), 257 * 4);
        std::uniform_int_distribution<int64_t> knot(-(int64_t{1} << 31) + 1,
                                                    (int64_t{1} << 31) - 1);
        for (int64_t k = 0; wide_knots && k < 257; ++k)
          table.data<int32_t>()[k] = int32_t(knot(rng));
      }
      const FixedPointMultiplier narrow =
          random_multiplier(rng, double(type_max(tn)) / double(type_max(tx)) * 4, 0);
      const FixedPointMultiplier product = random_multiplier(
          rng, double(type_max(ty)) / (double(type_max(tx)) * double(type_max(tn))) * 4);
      const std::pair<int64_t, int64_t> clamp = random_clamp(rng, ty);
      const bool x_first = chance(rng, 0.5);
      std::ostringstream trace;
      trace << "LutProduct seed=" << seed << " x=" << name(tx) << str(shape)
            << " table=" << name(tn) << " y=" << name(ty) << " rescale=" << rescale
            << " swish=" << swish << " wide_knots=" << wide_knots << " clip=" << clamp.first << ","
            << clamp.second;
      SCOPED_TRACE(trace.str());
      const Tensor x = random_tensor(tx, shape, rng);
      const LutProductCase c{table, tn, ty, rescale, narrow, product, clamp};
      const Tensor want = lut_product_reference(c, x, x_first);
      for (const auto& [layout, out_layout] : layouts(rng)) {
        SCOPED_TRACE(layout.name + " -> " + out_layout.name);
        expect_same(want, run_lut_product(c, x, layout, out_layout), trace.str());
      }
      if (::testing::Test::HasFailure()) return;
    }
  });
}

// int16 x through the table of the instruction's 65,536 outputs (built the second time a thread
// sees the same parameters, or at once for 65,536 values or more): every input value, dense and
// strided rows, and parameters that differ only in the clip, the output type or one knot,
// alternated (a stale table would give the other's outputs).
TEST(FunctionalLutProduct, Int16InputsThroughOutputTables) {
  on_every_host_isa([] {
    for (uint32_t seed = 1; seed <= 2; ++seed) {
      std::mt19937 rng(seed);
      const bool swish = seed == 2;
      auto f = [swish](double v) {
        return swish ? 1 / (1 + std::exp(-v)) : std::clamp(v / 6 + 0.5, 0.0, 1.0);
      };
      const LutInt16 lut = build_lut_int16(f, float(uniform(rng, 0.005, 0.05)) / 256,
                                           float(uniform(rng, 0.004, 0.01)) / 256);
      LutProductCase c{Tensor(DataType::kInt32, {257}),
                       DataType::kInt16,
                       DataType::kInt16,
                       seed == 2,
                       random_multiplier(rng, 4, 0),
                       random_multiplier(rng, 4.0 / 32767),
                       {-32768, 32767}};
      std::memcpy(c.table.raw_data(), lut.knots.data(), 257 * 4);
      // Variants of c that differ from it in one parameter each.
      std::vector<LutProductCase> variants(7, c);
      variants[0].clamp.first = -1000;
      variants[1].clamp.second = 20000;
      variants[2].clamp = variants[3].clamp = {-128, 127};
      variants[3].ty = DataType::kInt8;  // and from variants[2] in the output type only
      variants[4].table = c.table.clone();
      variants[4].table.data<int32_t>()[136 + int(seed)] /= 2;
      variants[5].product.shift += 1;
      variants[6].rescale = !c.rescale;
      SCOPED_TRACE("seed " + std::to_string(seed));

      Tensor every(DataType::kInt16, {1, 65536});
      for (int64_t i = 0; i < 65536; ++i) every.data<int16_t>()[i] = int16_t(i - 32768);
      const Tensor shuffled = random_tensor(DataType::kInt16, {3, 5, 7, 9}, rng);
      std::vector<const LutProductCase*> order;
      for (const LutProductCase& v : variants) order.insert(order.end(), {&c, &v});
      for (const LutProductCase* p : order) {
        expect_same(lut_product_reference(*p, every),
                    run_lut_product(*p, every, dense_layout(), dense_layout()), "every value");
        const Tensor want = lut_product_reference(*p, shuffled);
        expect_same(want, run_lut_product(*p, shuffled, dense_layout(), dense_layout()), "dense");
        expect_same(want, run_lut_product(*p, shuffled, padded_layout(16, 1), padded_layout(8, 2)),
                    "strided");
      }
      if (::testing::Test::HasFailure()) return;
    }
  });
}

TEST(FunctionalLutProduct, VerifierRules) {
  Device dev;
  isa::LutProductInstruction in{};
  in.table = dev.allocate(257 * 4);
  in.table_type = isa::ElementType::kInt16;
  in.input = place(dev, DataType::kInt8, {2, 3}, dense_layout());
  in.output = place(dev, DataType::kInt16, {2, 3}, dense_layout());
  in.rescale = 1;
  in.rescale_multiplier = in.multiplier = 1 << 30;
  in.clip_min = -32768;
  in.clip_max = 32767;
  const std::vector<uint8_t> constants(dev.memory().begin(),
                                       dev.memory().begin() + in.table + 257 * 4);
  auto verify = [&](const isa::LutProductInstruction& p, uint32_t version = isa::kIsaVersion) {
    return verify_instruction(Instruction{isa::Opcode::kLutProduct, p, 0}, dev.memory().size(),
                              constants, version);
  };
  EXPECT_EQ(verify(in), "");
  EXPECT_EQ(verify(in, 6), "LutProduct needs ISA version 7, the program has version 6");
  isa::LutProductInstruction same_type = in;
  same_type.rescale = 0;
  EXPECT_EQ(verify(same_type), "without rescale the input must have the table's type");
  isa::LutProductInstruction wide_table = in;
  wide_table.table_type = isa::ElementType::kInt32;
  EXPECT_EQ(verify(wide_table), "table_type must be int8 or int16");
  isa::LutProductInstruction flag = in;
  flag.rescale = 2;
  EXPECT_EQ(verify(flag), "rescale must be 0 or 1");
  isa::LutProductInstruction clip = in;
  clip.clip_max = 40000;
  EXPECT_EQ(verify(clip),
            "clamp [-32768, 40000] must be ordered and inside the output type's range");
  isa::LutProductInstruction outside = in;
  outside.table = in.table + 4;
  EXPECT_NE(verify(outside).find("lie outside the constant region"), std::string::npos);
}

TEST(FunctionalRequantize, MatchesHzRequantize) {
  on_every_host_isa([] {
  for (uint32_t seed = 1; seed <= 120; ++seed) {
    std::mt19937 rng(seed);
    const DataType tx =
        pick_of(rng, std::vector<DataType>{DataType::kInt8, DataType::kInt16, DataType::kInt32});
    const DataType ty = activation(rng);
    const Shape shape = seed > 90 ? random_shape(rng, 2, 300) : random_shape(rng, 5, 7);  // long rows: vector loops
    const bool per_channel = chance(rng, 0.5);
    const int64_t axis = pick(rng, 0, int64_t(shape.size()) - 1);
    const int64_t count = per_channel ? shape[size_t(axis)] : 1;
    // int32 inputs: often a narrow range (a conv accumulator), sometimes the whole range.
    const double x_range = tx == DataType::kInt32 && chance(rng, 0.7) ? 1e6 : double(type_max(tx));
    const std::vector<FixedPointMultiplier> fs =
        random_multipliers(rng, count, double(type_max(ty)) / x_range * 2);
    AttributeMap attrs = attributes({{"output_type", name(ty)}});
    if (per_channel) {
      set_multipliers(attrs, "multipliers", "shifts", fs);
      attrs.set("axis", axis);
    } else {
      attrs.set("multiplier", int64_t{fs[0].multiplier});
      attrs.set("shift", int64_t{fs[0].shift});
    }
    std::ostringstream trace;
    trace << "Requantize seed=" << seed << " x=" << name(tx) << str(shape) << " y=" << name(ty)
          << " per_channel=" << per_channel << " axis=" << axis;
    SCOPED_TRACE(trace.str());
    Tensor x = random_tensor(tx, shape, rng);
    if (tx == DataType::kInt32 && x_range < 1e9) {
      for (int64_t i = 0; i < x.element_count(); ++i) x.data<int32_t>()[i] /= 2000;
    }
    const Tensor want = run_horizon("HzRequantize", attrs, {x});
    for (const auto& [layout, out_layout] : layouts(rng)) {
      SCOPED_TRACE(layout.name + " -> " + out_layout.name);
      Device dev;
      isa::RequantizeInstruction in{};
      in.table = dev.put_multipliers(fs, layout.misalign);
      in.count = uint32_t(count);
      in.axis = per_channel ? uint32_t(axis) : 0;
      in.input = place_tensor(dev, x, layout);
      in.output = place(dev, ty, shape, out_layout);
      run(dev, isa::Opcode::kRequantize, in, in.output);
      expect_same(want, read(dev, in.output, ty), trace.str());
    }
    if (::testing::Test::HasFailure()) return;
  }
  });
}

// A dense tensor is one long row; the units cut it (cut_long_rows) so that its parts go to the
// host threads: an elementwise add with a per-channel operand, an int16 LUT and a per-channel
// requantize over 98304 elements, dense and NHWC, with 1 and 3 host threads.
TEST(FunctionalRows, LongRowsSplitOverHostThreads) {
  const int before = host_threads();
  std::mt19937 rng(5);
  const Shape shape{1, 64, 32, 48}, channel{1, 64, 1, 1};
  const Tensor a = random_tensor(DataType::kInt16, shape, rng), b = random_tensor(DataType::kInt16, channel, rng);
  const FixedPointMultiplier fa = random_multiplier(rng, 0.25), fb = random_multiplier(rng, 0.25);
  AttributeMap add = attributes({{"output_type", name(DataType::kInt16)}});
  set_multipliers(add, "input_multipliers", "input_shifts", {fa, fb});
  add.set("intermediate_shift", int64_t{2});
  set_clamp(add, {INT16_MIN, INT16_MAX});
  const LutInt16 lut = build_lut_int16([](double v) { return std::tanh(v); }, 1e-4f, 1e-4f);
  Tensor table(DataType::kInt32, {257});
  std::memcpy(table.raw_data(), lut.knots.data(), 257 * 4);
  const std::vector<FixedPointMultiplier> fs = random_multipliers(rng, 64, 0.01);
  AttributeMap requant = attributes({{"output_type", name(DataType::kInt8)}, {"axis", int64_t{1}}});
  set_multipliers(requant, "multipliers", "shifts", fs);
  const Tensor want_add = run_horizon("HzSElementwiseAdd", add, {a, b});
  const Tensor want_lut = run_horizon("HzLut", {}, {a, table});
  const Tensor want_requant = run_horizon("HzRequantize", requant, {a});
  for (const Layout& layout : {dense_layout(), padded_layout(16, 0)}) {
    for (int threads : {1, 3}) {
      set_host_threads(threads);
      SCOPED_TRACE(layout.name + ", host threads " + std::to_string(threads));
      on_every_host_isa([&] {
        Device dev;
        isa::ElementwiseInstruction e{};
        e.op = isa::ElementwiseOp::kAdd;
        e.a = place_tensor(dev, a, layout);
        e.b = broadcast_to(place_tensor(dev, b, layout), shape);
        e.output = place(dev, DataType::kInt16, shape, layout);
        e.multiplier_a = fa.multiplier;
        e.shift_a = fa.shift;
        e.multiplier_b = fb.multiplier;
        e.shift_b = fb.shift;
        e.intermediate_shift = 2;
        e.clip_min = INT16_MIN;
        e.clip_max = INT16_MAX;
        run(dev, isa::Opcode::kElementwise, e, e.output);
        expect_same(want_add, read(dev, e.output, DataType::kInt16), "add");
        isa::LutInstruction l{};
        l.table = dev.put(table.raw_data(), table.byte_size());
        l.input = e.a;
        l.output = place(dev, DataType::kInt16, shape, layout);
        run(dev, isa::Opcode::kLut, l, l.output);
        expect_same(want_lut, read(dev, l.output, DataType::kInt16), "lut");
        isa::RequantizeInstruction q{};
        q.table = dev.put_multipliers(fs);
        q.count = 64;
        q.axis = 1;
        q.input = e.a;
        q.output = place(dev, DataType::kInt8, shape, layout);
        run(dev, isa::Opcode::kRequantize, q, q.output);
        expect_same(want_requant, read(dev, q.output, DataType::kInt8), "requantize");
      });
    }
  }
  set_host_threads(before);
}

TEST(FunctionalClamp, MatchesClip) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    const DataType type = activation(rng);
    const Shape shape = random_shape(rng, 5, 7);
    std::pair<int64_t, int64_t> clamp = random_clamp(rng, type);
    std::ostringstream trace;
    trace << "Clamp seed=" << seed << " x=" << name(type) << str(shape) << " lo=" << clamp.first
          << " hi=" << clamp.second;
    SCOPED_TRACE(trace.str());
    const Tensor x = random_tensor(type, shape, rng);
    Tensor lo(type, {}), hi(type, {});
    if (type == DataType::kInt8) {
      lo.data<int8_t>()[0] = int8_t(clamp.first);
      hi.data<int8_t>()[0] = int8_t(clamp.second);
    } else {
      lo.data<int16_t>()[0] = int16_t(clamp.first);
      hi.data<int16_t>()[0] = int16_t(clamp.second);
    }
    const Tensor want = run_op("Clip", {}, {x, lo, hi})[0];
    for (const auto& [layout, out_layout] : layouts(rng)) {
      SCOPED_TRACE(layout.name + " -> " + out_layout.name);
      Device dev;
      isa::ClampInstruction in{};
      in.input = place_tensor(dev, x, layout);
      in.output = place(dev, type, shape, out_layout);
      in.lo = int32_t(clamp.first);
      in.hi = int32_t(clamp.second);
      run(dev, isa::Opcode::kClamp, in, in.output);
      expect_same(want, read(dev, in.output, type), trace.str());
    }
    if (::testing::Test::HasFailure()) return;
  }
}

// ------------------------------------------------------------------ Reduce

TEST(FunctionalReduce, MatchesHzSQuantizedReduceMeanAndReduceMax) {
  on_every_host_isa([] {
  for (uint32_t seed = 1; seed <= 150; ++seed) {
    std::mt19937 rng(seed);
    const bool mean = chance(rng, 0.6);
    const DataType type = activation(rng);
    const Shape shape = random_shape(rng, 5, 7);
    const int64_t rank = int64_t(shape.size());
    uint32_t mask = uint32_t(pick(rng, 1, (int64_t{1} << rank) - 1));
    std::vector<int64_t> axes;
    int64_t count = 1;
    Shape out = shape;
    for (int64_t d = 0; d < rank; ++d) {
      if ((mask >> d) & 1u) {
        axes.push_back(chance(rng, 0.5) ? d : d - rank);
        count *= shape[size_t(d)];
        out[size_t(d)] = 1;
      }
    }
    const FixedPointMultiplier f = random_multiplier(rng, 1.0 / double(count), 0.0);
    std::ostringstream trace;
    trace << "Reduce seed=" << seed << (mean ? " mean" : " max") << " x=" << name(type) << str(shape)
          << " axes=" << str(axes);
    SCOPED_TRACE(trace.str());
    const Tensor x = random_tensor(type, shape, rng);
    Tensor want;
    if (mean) {
      want = run_horizon("HzSQuantizedReduceMean",
                         attributes({{"axes", axes},
                                     {"keepdims", int64_t{1}},
                                     {"multiplier", int64_t{f.multiplier}},
                                     {"shift", int64_t{f.shift}}}),
                         {x});
    } else {
      want = run_op("ReduceMax", attributes({{"axes", axes}, {"keepdims", int64_t{1}}}), {x})[0];
    }
    ASSERT_EQ(want.shape(), out);
    for (const auto& [layout, out_layout] : layouts(rng)) {
      SCOPED_TRACE(layout.name + " -> " + out_layout.name);
      Device dev;
      isa::ReduceInstruction in{};
      in.op = mean ? isa::ReduceOp::kMean : isa::ReduceOp::kMax;
      in.input = place_tensor(dev, x, layout);
      in.output = place(dev, type, out, out_layout);
      in.axes_mask = mask;
      in.multiplier = f.multiplier;
      in.shift = f.shift;
      run(dev, isa::Opcode::kReduce, in, in.output);
      expect_same(want, read(dev, in.output, type), trace.str());
    }
    if (::testing::Test::HasFailure()) return;
  }
  });
}

TEST(FunctionalReduce, ArgMaxAndArgMinMatchHzQuantizedKernels) {
  for (uint32_t seed = 1; seed <= 150; ++seed) {
    std::mt19937 rng(seed);
    const bool min = seed % 2 == 0;
    const DataType type = activation(rng);
    const Shape shape = random_shape(rng, 5, 9);
    const int64_t rank = int64_t(shape.size());
    const int64_t axis = pick(rng, 0, rank - 1);
    // Values from a narrow range half of the time, so that ties are common.
    const int64_t spread = chance(rng, 0.5) ? 3 : type_max(type);
    Tensor x(type, shape);
    for (int64_t i = 0; i < x.element_count(); ++i) {
      const int64_t v = pick(rng, std::max(type_min(type), -spread), spread);
      if (type == DataType::kInt8) x.data<int8_t>()[i] = static_cast<int8_t>(v);
      else x.data<int16_t>()[i] = static_cast<int16_t>(v);
    }
    Shape out = shape;
    out[size_t(axis)] = 1;
    std::ostringstream trace;
    trace << (min ? "ArgMin" : "ArgMax") << " seed=" << seed << " x=" << name(type) << str(shape) << " axis=" << axis;
    SCOPED_TRACE(trace.str());
    const Tensor want = run_horizon(min ? "HzQuantizedArgMin" : "HzQuantizedArgMax",
                                    attributes({{"axis", axis}, {"keepdims", int64_t{1}}}), {x});
    ASSERT_EQ(want.shape(), out);
    for (const auto& [layout, out_layout] : layouts(rng)) {
      SCOPED_TRACE(layout.name + " -> " + out_layout.name);
      Device dev;
      isa::ReduceInstruction in{};
      in.op = min ? isa::ReduceOp::kArgMin : isa::ReduceOp::kArgMax;
      in.input = place_tensor(dev, x, layout);
      in.output = place(dev, DataType::kInt32, out, out_layout);
      in.axes_mask = 1u << uint32_t(axis);
      EXPECT_EQ(verify_instruction(Instruction{isa::Opcode::kReduce, in, 0}, dev.memory().size(), {}), "");
      run(dev, isa::Opcode::kReduce, in, in.output);
      expect_same(want, read(dev, in.output, DataType::kInt32), trace.str());
    }
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(FunctionalReduce, ArgMaxVerifierRules) {
  Device dev;
  isa::ReduceInstruction in{};
  in.op = isa::ReduceOp::kArgMax;
  in.input = place(dev, DataType::kInt8, {1, 5, 2, 3}, dense_layout());
  in.output = place(dev, DataType::kInt32, {1, 1, 2, 3}, dense_layout());
  in.axes_mask = 2u;
  const uint64_t bytes = dev.memory().size();
  auto verify = [&](const isa::ReduceInstruction& p, uint32_t version = isa::kIsaVersion) {
    return verify_instruction(Instruction{isa::Opcode::kReduce, p, 0}, bytes, {}, version);
  };
  EXPECT_EQ(verify(in), "");
  EXPECT_EQ(verify(in, 1), "reduce op ArgMax needs ISA version 2, the program has version 1");
  isa::ReduceInstruction two_axes = in;
  two_axes.axes_mask = 6u;
  two_axes.output.dims[2] = 1;
  EXPECT_EQ(verify(two_axes), "ArgMax: axes_mask must name exactly one axis");
  isa::ReduceInstruction int8_out = in;
  int8_out.output.type = isa::ElementType::kInt8;
  EXPECT_EQ(verify(int8_out), "ArgMax: input must be int8/int16 and output int32");
  isa::ReduceInstruction argmin = in;
  argmin.op = isa::ReduceOp::kArgMin;
  EXPECT_EQ(verify(argmin), "");
  EXPECT_EQ(verify(argmin, 4), "reduce op ArgMin needs ISA version 5, the program has version 4");
  argmin.output.type = isa::ElementType::kInt8;
  EXPECT_EQ(verify(argmin), "ArgMin: input must be int8/int16 and output int32");
  isa::ReduceInstruction unknown = in;
  unknown.op = static_cast<isa::ReduceOp>(4);
  EXPECT_EQ(verify(unknown), "unknown reduce op 4");
  // Version-1 instructions still verify in a version-1 program.
  isa::ReduceInstruction max = in;
  max.op = isa::ReduceOp::kMax;
  max.output = place(dev, DataType::kInt8, {1, 1, 2, 3}, dense_layout());
  EXPECT_EQ(verify_instruction(Instruction{isa::Opcode::kReduce, max, 0}, dev.memory().size(), {}, 1), "");
}

// An operand that visits its bytes repeatedly claims work beyond the memory it covers: a
// reduction over a broadcast axis, an output whose elements overlap. Broadcast inputs of
// instructions whose work is their output's (elementwise) stay valid.
TEST(FunctionalReduce, VerifierRefusesRepeatedElements) {
  Device dev;
  isa::ReduceInstruction in{};
  in.op = isa::ReduceOp::kMax;
  in.input = place(dev, DataType::kInt8, {1, 5, 2, 3}, dense_layout());
  in.output = place(dev, DataType::kInt8, {1, 1, 2, 3}, dense_layout());
  in.axes_mask = 2u;
  const uint64_t bytes = dev.memory().size();
  auto verify = [&](const auto& p, isa::Opcode op) {
    return verify_instruction(Instruction{op, p, 0}, bytes, {});
  };
  EXPECT_EQ(verify(in, isa::Opcode::kReduce), "");
  isa::ReduceInstruction broadcast_axis = in;
  broadcast_axis.input.dims[1] = 4000000000u;
  broadcast_axis.input.strides[1] = 0;
  EXPECT_NE(verify(broadcast_axis, isa::Opcode::kReduce).find("[1,4000000000,2,3] strides [30,0,3,1]"), std::string::npos);
  EXPECT_NE(verify(broadcast_axis, isa::Opcode::kReduce).find("its elements overlap"), std::string::npos);
  isa::ReduceInstruction overlapping_output = in;
  overlapping_output.output.strides[2] = 1;  // rows 1 byte apart, 3 elements each
  EXPECT_NE(verify(overlapping_output, isa::Opcode::kReduce).find("output"), std::string::npos);
  EXPECT_NE(verify(overlapping_output, isa::Opcode::kReduce).find("its elements overlap"), std::string::npos);

  isa::ElementwiseInstruction add{};
  add.op = isa::ElementwiseOp::kAdd;
  add.a = in.input;
  add.b = in.output;  // [1, 1, 2, 3] read as [1, 5, 2, 3]: stride 0 along axis 1
  add.b.dims[1] = 5;
  add.b.strides[1] = 0;
  add.output = in.input;
  add.multiplier_a = add.multiplier_b = 1 << 30;
  add.shift_a = add.shift_b = 30;
  add.clip_min = -128;
  add.clip_max = 127;
  EXPECT_EQ(verify(add, isa::Opcode::kElementwise), "");
}

// ------------------------------------------------------------------ softmax

TEST(FunctionalSoftmax, MatchesHzQuantizedSoftmax) {
  for (uint32_t seed = 1; seed <= 120; ++seed) {
    std::mt19937 rng(seed);
    const DataType type = activation(rng);
    const DataType out_type = chance(rng, 0.7) ? type : activation(rng);
    const Shape shape = random_shape(rng, 5, 9);
    const int64_t rank = int64_t(shape.size());
    const int64_t axis = pick(rng, 0, rank - 1);
    // Input scales from sharp (a few integers span e^10) to flat; output scales of the type.
    const double in_scale = std::ldexp(1.0, int(pick(rng, -12, 0))) * (type == DataType::kInt8 ? 16 : 1);
    const double out_scale = 1.0 / double(type_max(out_type)) * (chance(rng, 0.5) ? 1.0 : 0.5);
    const simulator::SoftmaxMultipliers f = simulator::softmax_multipliers(in_scale, out_scale);
    std::ostringstream trace;
    trace << "Softmax seed=" << seed << " x=" << name(type) << str(shape) << " y=" << name(out_type)
          << " axis=" << axis << " in_scale=" << in_scale;
    SCOPED_TRACE(trace.str());
    const Tensor x = random_tensor(type, shape, rng);
    const Tensor want = run_horizon("HzQuantizedSoftmax",
                                    attributes({{"axis", axis},
                                                {"output_type", std::string(name(out_type))},
                                                {"exponent_multiplier", int64_t{f.exponent.multiplier}},
                                                {"exponent_shift", int64_t{f.exponent.shift}},
                                                {"output_multiplier", int64_t{f.output.multiplier}},
                                                {"output_shift", int64_t{f.output.shift}}}),
                                    {x});
    ASSERT_EQ(want.shape(), shape);
    for (const auto& [layout, out_layout] : layouts(rng)) {
      SCOPED_TRACE(layout.name + " -> " + out_layout.name);
      Device dev;
      isa::SoftmaxInstruction in{};
      in.input = place_tensor(dev, x, layout);
      in.output = place(dev, out_type, shape, out_layout);
      in.axis = uint32_t(axis);
      in.exponent_multiplier = f.exponent.multiplier;
      in.exponent_shift = f.exponent.shift;
      in.output_multiplier = f.output.multiplier;
      in.output_shift = f.output.shift;
      EXPECT_EQ(verify_instruction(Instruction{isa::Opcode::kSoftmax, in, 0}, dev.memory().size(), {}), "");
      run(dev, isa::Opcode::kSoftmax, in, in.output);
      expect_same(want, read(dev, in.output, out_type), trace.str());
    }
    if (out_type != type) continue;
    // In place (output = input) gives the same bits.
    Device dev;
    isa::SoftmaxInstruction in{};
    in.input = place_tensor(dev, x, dense_layout());
    in.output = in.input;
    in.axis = uint32_t(axis);
    in.exponent_multiplier = f.exponent.multiplier;
    in.exponent_shift = f.exponent.shift;
    in.output_multiplier = f.output.multiplier;
    in.output_shift = f.output.shift;
    EXPECT_EQ(verify_instruction(Instruction{isa::Opcode::kSoftmax, in, 0}, dev.memory().size(), {}), "");
    run(dev, isa::Opcode::kSoftmax, in, in.output);
    expect_same(want, read(dev, in.output, type), trace.str() + " in place");
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(FunctionalSoftmax, VerifierRules) {
  Device dev;
  const simulator::SoftmaxMultipliers f = simulator::softmax_multipliers(0.05, 1.0 / 32767);
  isa::SoftmaxInstruction in{};
  in.input = place(dev, DataType::kInt16, {1, 5, 2, 3}, dense_layout());
  in.output = place(dev, DataType::kInt16, {1, 5, 2, 3}, dense_layout());
  in.axis = 1;
  in.exponent_multiplier = f.exponent.multiplier;
  in.exponent_shift = f.exponent.shift;
  in.output_multiplier = f.output.multiplier;
  in.output_shift = f.output.shift;
  const isa::TensorDesc int32_tensor = place(dev, DataType::kInt32, {1, 5, 2, 3}, dense_layout());
  const uint64_t bytes = dev.memory().size();
  auto verify = [&](const isa::SoftmaxInstruction& p, uint32_t version = isa::kIsaVersion) {
    return verify_instruction(Instruction{isa::Opcode::kSoftmax, p, 0}, bytes, {}, version);
  };
  EXPECT_EQ(verify(in), "");
  EXPECT_EQ(verify(in, 2), "Softmax needs ISA version 3, the program has version 2");
  isa::SoftmaxInstruction axis = in;
  axis.axis = 4;
  EXPECT_EQ(verify(axis), "axis 4 is beyond the rank 4");
  isa::SoftmaxInstruction int32_out = in;
  int32_out.output = int32_tensor;
  EXPECT_NE(verify(int32_out).find("input and output must be int8 or int16"), std::string::npos);
  isa::SoftmaxInstruction narrower_in_place = in;
  narrower_in_place.output = in.input;
  EXPECT_EQ(verify(narrower_in_place), "");
  narrower_in_place.output.type = isa::ElementType::kInt8;  // same address, another type
  EXPECT_EQ(verify(narrower_in_place), "input and output overlap without being the same tensor");
  isa::SoftmaxInstruction shifted = in;
  shifted.output.address = in.input.address + 2;  // overlaps without being the same tensor
  EXPECT_EQ(verify(shifted), "input and output overlap without being the same tensor");
  isa::SoftmaxInstruction bad_multiplier = in;
  bad_multiplier.output_multiplier = 5;
  EXPECT_NE(verify(bad_multiplier).find("output multiplier"), std::string::npos);
  // The same payload under another opcode is refused.
  EXPECT_EQ(verify_instruction(Instruction{isa::Opcode::kLut, in, 0}, bytes, {}), "payload does not match the opcode");
}

// ------------------------------------------------------------------ pooling

struct PoolCase {
  uint32_t seed = 0;
  DataType type = DataType::kInt8;
  int64_t N = 1, C = 1, H = 1, W = 1, KH = 1, KW = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  bool ceil_mode = false, count_include_pad = false;

  AttributeMap window_attributes() const {
    return attributes({{"kernel_shape", std::vector<int64_t>{KH, KW}},
                       {"strides", std::vector<int64_t>{sh, sw}},
                       {"pads", std::vector<int64_t>{pt, pl, pb, pr}},
                       {"dilations", std::vector<int64_t>{dh, dw}},
                       {"ceil_mode", int64_t{ceil_mode}}});
  }
  std::string str() const {
    std::ostringstream s;
    s << "seed=" << seed << " x=" << name(type) << " N=" << N << " C=" << C << " H=" << H
      << " W=" << W << " kernel=" << KH << "x" << KW << " strides=" << sh << "," << sw
      << " dilations=" << dh << "," << dw << " pads=" << pt << "," << pl << "," << pb << ","
      << pr << " ceil_mode=" << ceil_mode << " count_include_pad=" << count_include_pad;
    return s.str();
  }
};

PoolCase random_pool_case(uint32_t seed) {
  std::mt19937 rng(seed);
  PoolCase c;
  c.seed = seed;
  c.type = activation(rng);
  c.N = pick(rng, 1, 2);
  c.C = pick(rng, 1, 20);
  c.H = pick(rng, 1, 12);
  c.W = pick(rng, 1, 12);
  c.KH = pick(rng, 1, std::min<int64_t>(c.H, 4));
  c.KW = pick(rng, 1, std::min<int64_t>(c.W, 4));
  c.sh = pick(rng, 1, 3);
  c.sw = pick(rng, 1, 3);
  c.dh = chance(rng, 0.2) && (c.KH - 1) * 2 < c.H ? 2 : 1;
  c.dw = chance(rng, 0.2) && (c.KW - 1) * 2 < c.W ? 2 : 1;
  c.pt = pick(rng, 0, c.KH - 1);
  c.pb = pick(rng, 0, c.KH - 1);
  c.pl = pick(rng, 0, c.KW - 1);
  c.pr = pick(rng, 0, c.KW - 1);
  c.ceil_mode = chance(rng, 0.5);
  c.count_include_pad = chance(rng, 0.5);
  return c;
}

// ONNX's divisor per output index of one axis: the taps inside the input, or inside the padded
// input (begin and end pads, not the extra end of ceil_mode) with count_include_pad.
std::vector<int32_t> divisor_counts(int64_t out, int64_t in, int64_t kernel, int64_t stride,
                                    int64_t dilation, int64_t pad_begin, int64_t pad_end,
                                    bool include_pad) {
  const int64_t lo = include_pad ? -pad_begin : 0, hi = include_pad ? in + pad_end : in;
  std::vector<int32_t> counts;
  for (int64_t o = 0; o < out; ++o) {
    int32_t n = 0;
    for (int64_t k = 0; k < kernel; ++k) {
      const int64_t i = o * stride - pad_begin + k * dilation;
      n += i >= lo && i < hi;
    }
    counts.push_back(n);
  }
  return counts;
}

isa::PoolInstruction pool_instruction(const PoolCase& c) {
  isa::PoolInstruction in{};
  in.kernel_h = uint32_t(c.KH);
  in.kernel_w = uint32_t(c.KW);
  in.stride_h = uint32_t(c.sh);
  in.stride_w = uint32_t(c.sw);
  in.dilation_h = uint32_t(c.dh);
  in.dilation_w = uint32_t(c.dw);
  in.pad_top = int32_t(c.pt);
  in.pad_left = int32_t(c.pl);
  in.row_counts = in.col_counts = in.table = isa::kNoAddress;
  return in;
}

TEST(FunctionalPool, AveragePoolMatchesHzSQuantizedAveragePool) {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    const PoolCase c = random_pool_case(seed);
    SCOPED_TRACE("AveragePool " + c.str());
    std::mt19937 rng(seed ^ 0x51u);
    const Tensor x = random_tensor(c.type, {c.N, c.C, c.H, c.W}, rng);
    std::vector<FixedPointMultiplier> table;
    for (int64_t n = 1; n <= c.KH * c.KW; ++n) {
      table.push_back(to_fixed_point(uniform(rng, 0.8, 1.25) / double(n)));
    }
    AttributeMap attrs = c.window_attributes();
    attrs.set("count_include_pad", int64_t{c.count_include_pad});
    set_multipliers(attrs, "multipliers", "shifts", table);
    const Tensor want = run_horizon("HzSQuantizedAveragePool", attrs, {x});
    const int64_t OH = want.dim(2), OW = want.dim(3);
    const std::vector<int32_t> rows =
        divisor_counts(OH, c.H, c.KH, c.sh, c.dh, c.pt, c.pb, c.count_include_pad);
    const std::vector<int32_t> cols =
        divisor_counts(OW, c.W, c.KW, c.sw, c.dw, c.pl, c.pr, c.count_include_pad);
    for (const auto& [layout, out_layout] : layouts(rng)) {
      SCOPED_TRACE(layout.name + " -> " + out_layout.name);
      Device dev;
      isa::PoolInstruction in = pool_instruction(c);
      in.row_counts = dev.put_values(rows, layout.misalign);
      in.col_counts = dev.put_values(cols, layout.misalign);
      in.table = dev.put_multipliers(table, layout.misalign);
      in.input = place_tensor(dev, x, layout);
      in.output = place(dev, c.type, want.shape(), out_layout);
      run(dev, isa::Opcode::kAveragePool, in, in.output);
      expect_same(want, read(dev, in.output, c.type), c.str());
    }
    if (::testing::Test::HasFailure()) return;
  }
}

// ONNX MaxPool runs on int8 only; an int16 case uses x16 = 256·x8 + 77 (max commutes with it).
TEST(FunctionalPool, MaxPoolMatchesMaxPool) {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    const PoolCase c = random_pool_case(seed);
    SCOPED_TRACE("MaxPool " + c.str());
    std::mt19937 rng(seed ^ 0x52u);
    const Tensor x8 = random_tensor(DataType::kInt8, {c.N, c.C, c.H, c.W}, rng);
    const Tensor want8 = run_op("MaxPool", c.window_attributes(), {x8})[0];
    Tensor x = x8, want = want8;
    if (c.type == DataType::kInt16) {
      auto widen = [](const Tensor& t) {
        Tensor w(DataType::kInt16, t.shape());
        for (int64_t i = 0; i < t.element_count(); ++i) {
          w.data<int16_t>()[i] = int16_t(t.data<int8_t>()[i] * 256 + 77);
        }
        return w;
      };
      x = widen(x8);
      want = widen(want8);
    }
    for (const auto& [layout, out_layout] : layouts(rng)) {
      SCOPED_TRACE(layout.name + " -> " + out_layout.name);
      Device dev;
      isa::PoolInstruction in = pool_instruction(c);
      in.input = place_tensor(dev, x, layout);
      in.output = place(dev, c.type, want.shape(), out_layout);
      run(dev, isa::Opcode::kMaxPool, in, in.output);
      expect_same(want, read(dev, in.output, c.type), c.str());
    }
    if (::testing::Test::HasFailure()) return;
  }
}

// An output whose window lies entirely in the padding: isa.h gives the type's minimum.
TEST(FunctionalPool, MaxPoolEmptyWindowGivesTypeMinimum) {
  for (DataType type : {DataType::kInt8, DataType::kInt16}) {
    Device dev;
    std::mt19937 rng(5);
    const Tensor x = random_tensor(type, {1, 3, 2, 2}, rng);
    PoolCase c;
    c.KH = c.KW = 1;
    c.pt = c.pl = 1;
    isa::PoolInstruction in = pool_instruction(c);
    in.input = place_tensor(dev, x, dense_layout());
    in.output = place(dev, type, {1, 3, 3, 3}, padded_layout(8, 1));
    run(dev, isa::Opcode::kMaxPool, in, in.output);
    const Tensor y = read(dev, in.output, type);
    for (int64_t ch = 0; ch < 3; ++ch) {
      for (int64_t i = 0; i < 9; ++i) {
        const int64_t oh = i / 3, ow = i % 3;
        const int64_t want = oh == 0 || ow == 0 ? type_min(type)
                                                : x.int_at((ch * 2 + oh - 1) * 2 + ow - 1);
        EXPECT_EQ(y.int_at(ch * 9 + i), want) << name(type) << " c=" << ch << " " << oh << "," << ow;
      }
    }
  }
}

// ------------------------------------------------------------------ Resize

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// {i0, i1, f} per output index of one axis, from ONNX's coordinate transformation.
std::vector<int32_t> resize_table(const std::string& mode, const std::string& transform,
                                  const std::string& rounding, int64_t in, int64_t out) {
  std::vector<int32_t> table;
  for (int64_t o = 0; o < out; ++o) {
    int64_t num = 0, den = 1;
    if (transform == "half_pixel") {
      num = (2 * o + 1) * in - out;
      den = 2 * out;
    } else if (transform == "align_corners") {
      if (out > 1) {
        num = o * (in - 1);
        den = out - 1;
      }
    } else {  // asymmetric
      num = o * in;
      den = out;
    }
    if (mode == "nearest") {
      const int64_t fl = floor_div(num, den), rem = num - fl * den;
      int64_t i = fl;
      if (rounding == "round_prefer_floor") i = 2 * rem > den ? fl + 1 : fl;
      if (rounding == "ceil") i = rem > 0 ? fl + 1 : fl;
      i = std::clamp<int64_t>(i, 0, in - 1);
      table.insert(table.end(), {int32_t(i), int32_t(i), 0});
    } else {
      const int64_t c = resize_linear_coordinate(num, den, in);
      const int64_t i0 = c >> kResizeFractionBits;
      table.insert(table.end(), {int32_t(i0), int32_t(std::min(i0 + 1, in - 1)),
                                 int32_t(c & ((1 << kResizeFractionBits) - 1))});
    }
  }
  return table;
}

TEST(FunctionalResize, MatchesHzQuantizedResizeUpsample) {
  struct Mode {
    std::string mode, transform, rounding;
  };
  const std::vector<Mode> modes = {{"nearest", "half_pixel", "round_prefer_floor"},
                                   {"nearest", "asymmetric", "floor"},
                                   {"linear", "half_pixel", "round_prefer_floor"},
                                   {"linear", "align_corners", "round_prefer_floor"}};
  on_every_host_isa([&] {
  for (uint32_t seed = 1; seed <= 120; ++seed) {
    std::mt19937 rng(seed);
    const Mode m = modes[seed % modes.size()];
    const DataType type = activation(rng);
    const int64_t N = pick(rng, 1, 2), C = pick(rng, 1, seed % 4 == 0 ? 40 : 12), H = pick(rng, 1, 9), W = pick(rng, 1, 9);
    const int64_t OH = chance(rng, 0.5) ? 2 * H : pick(rng, 1, 2 * H + 3);
    const int64_t OW = chance(rng, 0.5) ? 2 * W : pick(rng, 1, 2 * W + 3);
    std::ostringstream trace;
    trace << "Resize seed=" << seed << " " << m.mode << " " << m.transform << " " << m.rounding
          << " x=" << name(type) << str({N, C, H, W}) << " out=" << OH << "x" << OW;
    SCOPED_TRACE(trace.str());
    const Tensor x = random_tensor(type, {N, C, H, W}, rng);
    const Tensor want = run_horizon("HzQuantizedResizeUpsample",
                                    attributes({{"mode", m.mode},
                                                {"coordinate_transformation_mode", m.transform},
                                                {"nearest_mode", m.rounding},
                                                {"output_size", std::vector<int64_t>{OH, OW}}}),
                                    {x});
    const std::vector<int32_t> rows = resize_table(m.mode, m.transform, m.rounding, H, OH);
    const std::vector<int32_t> cols = resize_table(m.mode, m.transform, m.rounding, W, OW);
    for (const auto& [layout, out_layout] : layouts(rng)) {
      SCOPED_TRACE(layout.name + " -> " + out_layout.name);
      Device dev;
      isa::ResizeInstruction in{};
      in.mode = m.mode == "nearest" ? isa::ResizeMode::kNearest : isa::ResizeMode::kLinear;
      in.row_table = dev.put_values(rows, layout.misalign);
      in.col_table = dev.put_values(cols, layout.misalign);
      in.input = place_tensor(dev, x, layout);
      in.output = place(dev, type, want.shape(), out_layout);
      run(dev, isa::Opcode::kResize, in, in.output);
      expect_same(want, read(dev, in.output, type), trace.str());
    }
    if (::testing::Test::HasFailure()) return;
  }
  });
}

// Copy, resize and reduce split their rows over the host threads (reduce with an accumulator
// per part, combined): the same bytes with 1 and 3 threads on every path.
TEST(FunctionalRows, CopyResizeReduceSplitOverHostThreads) {
  const int before = host_threads();
  std::mt19937 rng(6);
  const Tensor x = random_tensor(DataType::kInt16, {1, 64, 32, 48}, rng);
  const Tensor small = random_tensor(DataType::kInt8, {1, 16, 32, 48}, rng);
  const FixedPointMultiplier f = random_multiplier(rng, 1.0 / (32 * 48), 0.0);
  const std::vector<int64_t> axes{2, 3};
  const Tensor want_mean = run_horizon("HzSQuantizedReduceMean",
                                       attributes({{"axes", axes},
                                                   {"keepdims", int64_t{1}},
                                                   {"multiplier", int64_t{f.multiplier}},
                                                   {"shift", int64_t{f.shift}}}),
                                       {x});
  const Tensor want_max = run_op("ReduceMax", attributes({{"axes", axes}, {"keepdims", int64_t{1}}}), {x})[0];
  const Tensor want_resize = run_horizon("HzQuantizedResizeUpsample",
                                         attributes({{"mode", std::string("linear")},
                                                     {"coordinate_transformation_mode", std::string("half_pixel")},
                                                     {"output_size", std::vector<int64_t>{64, 96}}}),
                                         {small});
  const std::vector<int32_t> rows = resize_table("linear", "half_pixel", "round_prefer_floor", 32, 64);
  const std::vector<int32_t> cols = resize_table("linear", "half_pixel", "round_prefer_floor", 48, 96);
  for (int threads : {1, 3}) {
    set_host_threads(threads);
    SCOPED_TRACE("host threads " + std::to_string(threads));
    on_every_host_isa([&] {
      Device dev;
      isa::CopyInstruction copy{};
      copy.source = place_tensor(dev, x, dense_layout());
      copy.destination = place(dev, DataType::kInt16, x.shape(), padded_layout(16, 0));
      run(dev, isa::Opcode::kCopy, copy, copy.destination);
      expect_same(x, read(dev, copy.destination, DataType::kInt16), "copy");
      for (const bool mean : {true, false}) {
        isa::ReduceInstruction reduce{};
        reduce.op = mean ? isa::ReduceOp::kMean : isa::ReduceOp::kMax;
        reduce.input = copy.destination;
        reduce.output = place(dev, DataType::kInt16, {1, 64, 1, 1}, dense_layout());
        reduce.axes_mask = 0b1100;
        reduce.multiplier = f.multiplier;
        reduce.shift = f.shift;
        run(dev, isa::Opcode::kReduce, reduce, reduce.output);
        expect_same(mean ? want_mean : want_max, read(dev, reduce.output, DataType::kInt16), "reduce");
      }
      isa::ResizeInstruction resize{};
      resize.mode = isa::ResizeMode::kLinear;
      resize.row_table = dev.put_values(rows);
      resize.col_table = dev.put_values(cols);
      resize.input = place_tensor(dev, small, padded_layout(16, 0));
      resize.output = place(dev, DataType::kInt8, want_resize.shape(), padded_layout(16, 0));
      run(dev, isa::Opcode::kResize, resize, resize.output);
      expect_same(want_resize, read(dev, resize.output, DataType::kInt8), "resize");
    });
  }
  set_host_threads(before);
}

// The runtime's moves between dense tensors and device memory (scatter_dense, gather_dense;
// copies split over the host threads): every layout, type and a shape of many rows.
TEST(FunctionalRows, ScatterAndGatherDenseEveryLayout) {
  const int before = host_threads();
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    std::mt19937 rng(seed);
    const DataType type = pick_of(rng, std::vector<DataType>{DataType::kInt8, DataType::kInt16, DataType::kInt32});
    const Shape shape = seed % 5 == 0 ? Shape{1, 3, 96, 160} : random_shape(rng, 4, 9);
    const Tensor x = random_tensor(type, shape, rng);
    set_host_threads(seed % 2 == 0 ? 3 : 1);
    for (const auto& [layout, out_layout] : layouts(rng)) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " " + out_layout.name);
      Device dev;
      const isa::TensorDesc d = place(dev, type, shape, out_layout);
      scatter_dense(d, std::span(static_cast<const uint8_t*>(x.raw_data()), x.byte_size()), dev.memory());
      expect_same(x, read(dev, d, type), "scatter");
      std::vector<uint8_t> back(x.byte_size());
      gather_dense(d, dev.memory(), back);
      EXPECT_EQ(0, std::memcmp(back.data(), x.raw_data(), back.size())) << "gather";
    }
    if (::testing::Test::HasFailure()) break;
  }
  set_host_threads(before);
}

// ------------------------------------------------------------------ Copy, Fill

// A 6-D source viewed through permuted strides (a transpose), some axes reversed (negative
// strides); the destination padded or dense. Reference: ONNX Transpose, then the reversal.
TEST(FunctionalCopy, PermutedReversedSixDimensionalView) {
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed);
    const DataType type =
        pick_of(rng, std::vector<DataType>{DataType::kInt8, DataType::kInt16, DataType::kInt32});
    const int64_t rank = seed % 3 == 0 ? pick(rng, 1, 5) : 6;
    Shape shape;
    for (int64_t d = 0; d < rank; ++d) shape.push_back(pick(rng, 1, 4));
    std::vector<int64_t> perm(static_cast<size_t>(rank));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<bool> reversed;
    for (int64_t d = 0; d < rank; ++d) reversed.push_back(chance(rng, 0.3));
    std::ostringstream trace;
    trace << "Copy seed=" << seed << " " << name(type) << str(shape) << " perm=" << str(perm)
          << " reversed=";
    for (bool r : reversed) trace << r;
    SCOPED_TRACE(trace.str());
    const Tensor x = random_tensor(type, shape, rng);
    const Tensor transposed = run_op("Transpose", attributes({{"perm", perm}}), {x})[0];
    // want[ι] = transposed[ι with reversed axes mirrored]
    Tensor want(type, transposed.shape());
    {
      const Shape& ts = transposed.shape();
      const size_t width = kernels::dtype_size(type);
      std::vector<int64_t> index(size_t(rank), 0);
      for (int64_t i = 0; i < want.element_count(); ++i) {
        int64_t src = 0;
        for (int64_t d = 0; d < rank; ++d) {
          const int64_t k = reversed[size_t(d)] ? ts[size_t(d)] - 1 - index[size_t(d)] : index[size_t(d)];
          src = src * ts[size_t(d)] + k;
        }
        std::memcpy(static_cast<uint8_t*>(want.raw_data()) + size_t(i) * width,
                    static_cast<const uint8_t*>(transposed.raw_data()) + size_t(src) * width, width);
        for (int64_t d = rank; d-- > 0;) {
          if (++index[size_t(d)] < ts[size_t(d)]) break;
          index[size_t(d)] = 0;
        }
      }
    }
    for (const auto& [layout, out_layout] : layouts(rng)) {
      SCOPED_TRACE("destination " + out_layout.name);
      Device dev;
      const isa::TensorDesc dense = place_tensor(dev, x, {"source", {}, 1, layout.misalign});
      isa::CopyInstruction in{};
      in.source = dense;
      for (int64_t d = 0; d < rank; ++d) {
        in.source.dims[d] = dense.dims[perm[size_t(d)]];
        in.source.strides[d] = dense.strides[perm[size_t(d)]];
      }
      for (int64_t d = 0; d < rank; ++d) {
        if (reversed[size_t(d)]) {
          in.source.address += uint32_t(int64_t(in.source.dims[d] - 1) * in.source.strides[d]);
          in.source.strides[d] = -in.source.strides[d];
        }
      }
      in.destination = place(dev, type, want.shape(), out_layout);
      run(dev, isa::Opcode::kCopy, in, in.destination);
      expect_same(want, read(dev, in.destination, type), trace.str());
    }
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(FunctionalFill, SaturatedValueEverywhereAndNothingElse) {
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    std::mt19937 rng(seed);
    const DataType type =
        pick_of(rng, std::vector<DataType>{DataType::kInt8, DataType::kInt16, DataType::kInt32});
    const Shape shape = random_shape(rng, 6, 4);
    const int32_t value = int32_t(pick_of(rng, std::vector<int64_t>{0, -1, 77, 300, -40000, INT32_MIN,
                                                                    INT32_MAX}));
    std::ostringstream trace;
    trace << "Fill seed=" << seed << " " << name(type) << str(shape) << " value=" << value;
    SCOPED_TRACE(trace.str());
    const int64_t want = std::clamp<int64_t>(value, type_min(type), type_max(type));
    for (const auto& [layout, out_layout] : layouts(rng)) {
      Device dev;
      isa::FillInstruction in{};
      in.destination = place(dev, type, shape, out_layout);
      in.value = value;
      run(dev, isa::Opcode::kFill, in, in.destination);
      const Tensor y = read(dev, in.destination, type);
      for (int64_t i = 0; i < y.element_count(); ++i) ASSERT_EQ(y.int_at(i), want) << out_layout.name;
    }
  }
}

}  // namespace
}  // namespace openbpu::simulator
