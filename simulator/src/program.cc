// Program encoding, verified decoding and descriptor helpers (program.h).
#include "openbpu/simulator/program.h"

#include "openbpu/simulator/integer_arithmetic.h"
#include "functional/units.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <sstream>
#include <type_traits>

namespace openbpu::simulator {

namespace {

using isa::ElementType;
using isa::Opcode;
using isa::TensorDesc;

// ------------------------------------------------------------------ message building

template <typename... Args>
std::string concat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

std::string describe(const TensorDesc& d) {
  std::ostringstream out;
  out << "@" << d.address << " [";
  for (uint32_t i = 0; i < d.rank && i < isa::kMaxRank; ++i) out << (i ? "," : "") << d.dims[i];
  out << "] strides [";
  for (uint32_t i = 0; i < d.rank && i < isa::kMaxRank; ++i) out << (i ? "," : "") << d.strides[i];
  out << "]";
  return out.str();
}

bool is_known_type(ElementType t) { return isa::element_bytes(t) != 0; }

bool is_activation(ElementType t) { return t == ElementType::kInt8 || t == ElementType::kInt16; }

// ------------------------------------------------------------------ verification

// One instruction's checker: collects the first violated rule.
class Checker {
 public:
  Checker(uint64_t memory_bytes, std::span<const uint8_t> constants)
      : memory_(memory_bytes), constants_(constants) {}

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  void fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
  }
  void rule(bool holds, const std::string& message) {
    if (!holds) fail(message);
  }

  // A tensor operand: rank, type, dims, strides, extent. `output` forbids broadcast strides.
  void tensor(const char* name, const TensorDesc& d, bool output, uint32_t min_rank = 1) {
    if (!ok()) return;
    if (d.rank > isa::kMaxRank) return fail(concat(name, ": rank ", d.rank, " exceeds ", isa::kMaxRank));
    if (d.rank < min_rank) return fail(concat(name, ": rank ", d.rank, " is below ", min_rank));
    if (!is_known_type(d.type)) {
      return fail(concat(name, ": unknown element type ", static_cast<uint32_t>(d.type)));
    }
    for (uint32_t i = 0; i < isa::kMaxRank; ++i) {
      if (i < d.rank) {
        if (d.dims[i] == 0) return fail(concat(name, ": dimension ", i, " is 0"));
        if (output && d.dims[i] > 1 && d.strides[i] == 0) {
          return fail(concat(name, ": output axis ", i, " has stride 0 (broadcast is for inputs only)"));
        }
      } else if (d.dims[i] != 1 || d.strides[i] != 0) {
        return fail(concat(name, ": unused axis ", i, " must have dimension 1 and stride 0"));
      }
    }
    const ByteRange r = byte_range(d);
    if (r.lo < 0 || static_cast<uint64_t>(r.hi) > memory_) {
      return fail(concat(name, " ", describe(d), ": bytes [", r.lo, ", ", r.hi,
                         ") lie outside device memory of ", memory_, " bytes"));
    }
    if (output) distinct_elements(name, d);
  }

  // Each element of `d` at its own bytes: the element count times the element size fits in
  // the byte extent (an operand that reads or writes elements repeatedly could claim work far
  // beyond the memory it covers).
  void distinct_elements(const char* name, const TensorDesc& d) {
    if (!ok()) return;
    const ByteRange r = byte_range(d);
    uint64_t bytes = isa::element_bytes(d.type);
    bool fits = true;
    for (uint32_t i = 0; fits && i < d.rank; ++i) fits = !__builtin_mul_overflow(bytes, d.dims[i], &bytes);
    rule(fits && bytes <= static_cast<uint64_t>(r.hi - r.lo),
         concat(name, " ", describe(d), ": its elements overlap (they need more than the ",
                r.hi - r.lo, " bytes they span)"));
  }

  // A constant table of `count` int32 words in the constant region; each word must lie in
  // [lo, hi] (every `step`-th word from `first`, for tables of records).
  void words(const char* name, uint32_t address, uint64_t count, int64_t lo, int64_t hi,
             uint64_t first = 0, uint64_t step = 1) {
    constant_table(name, address, count * 4);
    for (uint64_t i = first; ok() && i < count; i += step) {
      const int32_t v = word(address + 4 * i);
      if (v < lo || v > hi) {
        fail(concat(name, "[", i, "] = ", v, " is outside [", lo, ", ", hi, "]"));
      }
    }
  }

  // A table of `count` fixed-point multipliers in the constant region.
  void multipliers(const char* name, uint32_t address, uint64_t count) {
    constant_table(name, address, count * sizeof(isa::MultiplierEntry));
    for (uint64_t i = 0; ok() && i < count; ++i) {
      multiplier(word(address + 8 * i), word(address + 8 * i + 4), name);
    }
  }

  // `bytes` bytes at `address` inside the constant region.
  void constant_table(const char* name, uint32_t address, uint64_t bytes) {
    if (!ok()) return;
    if (address == isa::kNoAddress) return fail(concat(name, ": address missing"));
    if (address + bytes > constants_.size()) {
      return fail(concat(name, ": bytes [", address, ", ", address + bytes,
                         ") lie outside the constant region of ", constants_.size(), " bytes"));
    }
  }

  void same_dims(const char* a_name, const TensorDesc& a, const char* b_name, const TensorDesc& b) {
    if (!ok()) return;
    bool same = a.rank == b.rank;
    for (uint32_t i = 0; same && i < a.rank; ++i) same = a.dims[i] == b.dims[i];
    rule(same, concat(a_name, " ", describe(a), " and ", b_name, " ", describe(b),
                      " must have the same dimensions"));
  }

  // The input and output of a pooling or resizing: rank 4, same N and C, same int8/int16 type.
  void feature_maps(const TensorDesc& input, const TensorDesc& output) {
    tensor("input", input, false, 4);
    tensor("output", output, true, 4);
    if (!ok()) return;
    rule(input.rank == 4 && output.rank == 4, "input and output must have rank 4");
    rule(input.dims[0] == output.dims[0] && input.dims[1] == output.dims[1],
         "input and output must have the same N and C");
    rule(is_activation(input.type) && output.type == input.type,
         "input and output must have the same int8/int16 type");
  }

  void clamp(int32_t lo, int32_t hi, ElementType out) {
    if (!ok()) return;
    int64_t tmin = std::numeric_limits<int32_t>::min(), tmax = std::numeric_limits<int32_t>::max();
    if (out == ElementType::kInt8) tmin = -128, tmax = 127;
    if (out == ElementType::kInt16) tmin = -32768, tmax = 32767;
    rule(lo <= hi && lo >= tmin && hi <= tmax,
         concat("clamp [", lo, ", ", hi, "] must be ordered and inside the output type's range"));
  }

  void multiplier(int32_t m, int32_t s, const char* name) {
    rule(is_valid_multiplier({m, s}),
         concat(name, ": multiplier ", m, " shift ", s,
                " is not a fixed-point multiplier (0 or [2^30, 2^31), shift [0, 93])"));
  }

 private:
  int32_t word(uint64_t at) const {
    int32_t v;
    std::memcpy(&v, constants_.data() + at, 4);
    return v;
  }

  uint64_t memory_;
  std::span<const uint8_t> constants_;
  std::string error_;
};

void check_conv(Checker& c, const isa::ConvInstruction& in, bool transpose) {
  c.tensor("input", in.input, false, 4);
  c.tensor("output", in.output, true, 4);
  if (!c.ok()) return;
  c.rule(in.input.rank == 4 && in.output.rank == 4, "input and output must have rank 4 (N, C, H, W)");
  c.rule(is_activation(in.input.type), "input must be int8 or int16");
  const uint32_t C = in.input.dims[1], M = in.output.dims[1];
  c.rule(in.group >= 1 && C % in.group == 0 && M % in.group == 0,
         concat("group ", in.group, " must divide input channels ", C, " and output channels ", M));
  c.rule(in.input.dims[0] == in.output.dims[0], "input and output batch differ");
  c.rule(in.kernel_h >= 1 && in.kernel_w >= 1 && in.stride_h >= 1 && in.stride_w >= 1 &&
             in.dilation_h >= 1 && in.dilation_w >= 1,
         "kernel, stride and dilation must be >= 1");
  if (!c.ok()) return;
  const uint64_t weights = uint64_t{M} * in.kernel_h * in.kernel_w * (C / in.group);
  c.constant_table("weights", in.weights, weights);
  if (in.bias != isa::kNoAddress) c.constant_table("bias", in.bias, uint64_t{M} * 4);
  if (in.output.type == ElementType::kInt32) {
    c.rule(in.requant == isa::kNoAddress, "an int32 output takes no requantization table");
  } else {
    c.multipliers("requant", in.requant, M);
  }
  if (in.residual.rank != 0) {
    c.rule(!transpose, "ConvTranspose takes no residual");
    c.tensor("residual", in.residual, false, 4);
    c.same_dims("residual", in.residual, "output", in.output);
    c.rule(is_activation(in.residual.type), "residual must be int8 or int16");
    c.multipliers("residual_requant", in.residual_requant, M);
  } else {
    c.rule(in.residual_requant == isa::kNoAddress, "residual_requant given without a residual");
  }
  c.clamp(in.clip_min, in.clip_max, in.output.type);
}

}  // namespace

// ------------------------------------------------------------------ descriptors

uint64_t element_count(const TensorDesc& desc) {
  uint64_t n = 1;
  for (uint32_t i = 0; i < desc.rank && i < isa::kMaxRank; ++i) n *= desc.dims[i];
  return n;
}

ByteRange byte_range(const TensorDesc& desc) {
  const int64_t width = isa::element_bytes(desc.type);
  int64_t lo = desc.address, hi = desc.address;
  for (uint32_t i = 0; i < desc.rank && i < isa::kMaxRank; ++i) {
    if (desc.dims[i] == 0) return {desc.address, desc.address};
    // |span| < 2^63 (dims < 2^32, |stride| ≤ 2^31); the sums saturate (an unverified descriptor
    // may span more than int64 holds, which the verifier then refuses as outside device memory).
    const int64_t span = static_cast<int64_t>(desc.dims[i] - 1) * desc.strides[i];
    int64_t& end = span < 0 ? lo : hi;
    if (__builtin_add_overflow(end, span, &end)) {
      end = span < 0 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
    }
  }
  return {lo, hi > std::numeric_limits<int64_t>::max() - width ? std::numeric_limits<int64_t>::max() : hi + width};
}

TensorDesc dense_desc(uint32_t address, ElementType type, std::span<const int64_t> dims) {
  TensorDesc d{};
  d.address = address;
  d.type = type;
  d.rank = static_cast<uint32_t>(dims.size());
  for (uint32_t i = 0; i < isa::kMaxRank; ++i) d.dims[i] = 1;
  int64_t stride = isa::element_bytes(type);
  for (size_t i = dims.size(); i-- > 0;) {
    d.dims[i] = static_cast<uint32_t>(dims[i]);
    d.strides[i] = static_cast<int32_t>(stride);
    stride *= dims[i];
  }
  return d;
}

void scatter_dense(const TensorDesc& desc, std::span<const uint8_t> dense, std::span<uint8_t> memory) {
  functional::dense_to_device(desc, dense.data(), memory.data());
}

void gather_dense(const TensorDesc& desc, std::span<const uint8_t> memory, std::span<uint8_t> dense) {
  functional::device_to_dense(desc, memory.data(), dense.data());
}

// ------------------------------------------------------------------ opcode names

const char* opcode_name(Opcode opcode) {
  switch (opcode) {
    case Opcode::kFunctionBegin: return "FunctionBegin";
    case Opcode::kConv: return "Conv";
    case Opcode::kConvTranspose: return "ConvTranspose";
    case Opcode::kMatMul: return "MatMul";
    case Opcode::kElementwise: return "Elementwise";
    case Opcode::kLut: return "Lut";
    case Opcode::kRequantize: return "Requantize";
    case Opcode::kReduce: return "Reduce";
    case Opcode::kAveragePool: return "AveragePool";
    case Opcode::kMaxPool: return "MaxPool";
    case Opcode::kResize: return "Resize";
    case Opcode::kCopy: return "Copy";
    case Opcode::kFill: return "Fill";
    case Opcode::kClamp: return "Clamp";
    case Opcode::kPreprocess: return "Preprocess";
    case Opcode::kSoftmax: return "Softmax";
    case Opcode::kSelect: return "Select";
    case Opcode::kGatherElements: return "GatherElements";
    case Opcode::kLutProduct: return "LutProduct";
  }
  return "unknown";
}

// ------------------------------------------------------------------ verification

std::string verify_instruction(const Instruction& instruction, uint64_t memory_bytes,
                               std::span<const uint8_t> constants, uint32_t isa_version) {
  Checker c(memory_bytes, constants);
  const Opcode op = instruction.opcode;
  std::visit(
      [&](const auto& p) {
        using P = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<P, isa::FunctionBegin>) {
          c.rule(op == Opcode::kFunctionBegin, "payload does not match the opcode");
        } else if constexpr (std::is_same_v<P, isa::ConvInstruction>) {
          c.rule(op == Opcode::kConv || op == Opcode::kConvTranspose, "payload does not match the opcode");
          check_conv(c, p, op == Opcode::kConvTranspose);
        } else if constexpr (std::is_same_v<P, isa::MatMulInstruction>) {
          c.rule(op == Opcode::kMatMul, "payload does not match the opcode");
          c.tensor("a", p.a, false, 2);
          c.tensor("b", p.b, false, 2);
          c.tensor("output", p.output, true, 2);
          if (!c.ok()) return;
          const uint32_t r = p.output.rank;
          c.rule(p.a.rank == r && p.b.rank == r, "a, b and output must have the same rank");
          c.rule(is_activation(p.a.type) && is_activation(p.b.type), "a and b must be int8 or int16");
          if (!c.ok()) return;
          c.rule(p.a.dims[r - 1] == p.b.dims[r - 2], "a's last axis must equal b's second-to-last (K)");
          c.rule(p.a.dims[r - 2] == p.output.dims[r - 2] && p.b.dims[r - 1] == p.output.dims[r - 1],
                 "output must be [..., I, J] for a [..., I, K] and b [..., K, J]");
          for (uint32_t d = 0; d + 2 < r; ++d) {
            c.rule((p.a.dims[d] == p.output.dims[d] || (p.a.dims[d] == 1)) &&
                       (p.b.dims[d] == p.output.dims[d] || (p.b.dims[d] == 1)),
                   concat("batch axis ", d, " of a or b does not match the output"));
          }
          if (p.output.type != ElementType::kInt32) c.multiplier(p.multiplier, p.shift, "multiplier");
        } else if constexpr (std::is_same_v<P, isa::ElementwiseInstruction>) {
          c.rule(op == Opcode::kElementwise, "payload does not match the opcode");
          c.tensor("a", p.a, false, 0);
          c.tensor("b", p.b, false, 0);
          c.tensor("output", p.output, true, 0);
          c.same_dims("a", p.a, "output", p.output);
          c.same_dims("b", p.b, "output", p.output);
          c.rule(is_activation(p.a.type) && is_activation(p.b.type) && is_activation(p.output.type),
                 "a, b and output must be int8 or int16");
          c.rule(static_cast<uint32_t>(p.op) <= 7, concat("unknown elementwise op ", static_cast<uint32_t>(p.op)));
          c.rule(isa_version >= 4 || static_cast<uint32_t>(p.op) <= 2,
                 concat("elementwise op Max/Min needs ISA version 4, the program has version ", isa_version));
          c.rule(isa_version >= 6 || !isa::is_comparison(p.op),
                 concat("elementwise op Equal/Greater/Less needs ISA version 6, the program has version ", isa_version));
          c.rule(!isa::is_comparison(p.op) || p.output.type == ElementType::kInt8,
                 "a comparison's output (a mask) must be int8");
          c.multiplier(p.multiplier_a, p.shift_a, "multiplier_a");
          if (p.op != isa::ElementwiseOp::kMul) {
            c.multiplier(p.multiplier_b, p.shift_b, "multiplier_b");
            c.rule(p.intermediate_shift <= 31, "intermediate_shift must be in [0, 31]");
          }
          c.clamp(p.clip_min, p.clip_max, p.output.type);
        } else if constexpr (std::is_same_v<P, isa::SelectInstruction>) {
          c.rule(op == Opcode::kSelect, "payload does not match the opcode");
          c.rule(isa_version >= 6, concat("Select needs ISA version 6, the program has version ", isa_version));
          c.tensor("condition", p.condition, false, 0);
          c.tensor("a", p.a, false, 0);
          c.tensor("b", p.b, false, 0);
          c.tensor("output", p.output, true, 0);
          c.same_dims("condition", p.condition, "output", p.output);
          c.same_dims("a", p.a, "output", p.output);
          c.same_dims("b", p.b, "output", p.output);
          c.rule(p.condition.type == ElementType::kInt8, "condition must be int8 (a mask)");
          c.rule(is_activation(p.a.type) && is_activation(p.b.type) && is_activation(p.output.type),
                 "a, b and output must be int8 or int16");
          c.multiplier(p.multiplier_a, p.shift_a, "multiplier_a");
          c.multiplier(p.multiplier_b, p.shift_b, "multiplier_b");
          c.rule(p.intermediate_shift <= 31, "intermediate_shift must be in [0, 31]");
        } else if constexpr (std::is_same_v<P, isa::GatherElementsInstruction>) {
          c.rule(op == Opcode::kGatherElements, "payload does not match the opcode");
          c.rule(isa_version >= 6, concat("GatherElements needs ISA version 6, the program has version ", isa_version));
          c.tensor("input", p.input, false, 1);
          c.tensor("output", p.output, true, 1);
          if (!c.ok()) return;
          c.rule(p.input.rank == p.output.rank, "input and output must have the same rank");
          c.rule(is_activation(p.input.type) && p.output.type == p.input.type,
                 "input and output must have the same int8/int16 type");
          c.rule(p.axis < p.input.rank, concat("axis ", p.axis, " is beyond the rank ", p.input.rank));
          if (!c.ok()) return;
          for (uint32_t d = 0; d < p.input.rank; ++d) {
            c.rule(d == p.axis || p.output.dims[d] <= p.input.dims[d],
                   concat("output axis ", d, " is longer than the input's"));
          }
          uint64_t count = 1;
          for (uint32_t d = 0; d < p.output.rank; ++d) count *= p.output.dims[d];
          c.words("table", p.table, count, 0, int64_t{p.input.dims[p.axis]} - 1);
        } else if constexpr (std::is_same_v<P, isa::LutInstruction>) {
          c.rule(op == Opcode::kLut, "payload does not match the opcode");
          c.tensor("input", p.input, false, 0);
          c.tensor("output", p.output, true, 0);
          c.same_dims("input", p.input, "output", p.output);
          c.rule(is_activation(p.input.type) && p.output.type == p.input.type,
                 "input and output must both be int8 or both int16");
          c.constant_table("table", p.table, p.input.type == ElementType::kInt8 ? 256 : 257 * 4);
        } else if constexpr (std::is_same_v<P, isa::LutProductInstruction>) {
          c.rule(op == Opcode::kLutProduct, "payload does not match the opcode");
          c.rule(isa_version >= 7,
                 concat("LutProduct needs ISA version 7, the program has version ", isa_version));
          c.tensor("input", p.input, false, 0);
          c.tensor("output", p.output, true, 0);
          c.same_dims("input", p.input, "output", p.output);
          c.rule(is_activation(p.input.type) && is_activation(p.output.type),
                 "input and output must be int8 or int16");
          c.rule(is_activation(p.table_type), "table_type must be int8 or int16");
          c.rule(p.rescale <= 1, "rescale must be 0 or 1");
          if (!c.ok()) return;
          if (p.rescale != 0) {
            c.multiplier(p.rescale_multiplier, p.rescale_shift, "rescale_multiplier");
          } else {
            c.rule(p.input.type == p.table_type,
                   "without rescale the input must have the table's type");
          }
          c.multiplier(p.multiplier, p.shift, "multiplier");
          c.clamp(p.clip_min, p.clip_max, p.output.type);
          c.constant_table("table", p.table, p.table_type == ElementType::kInt8 ? 256 : 257 * 4);
        } else if constexpr (std::is_same_v<P, isa::RequantizeInstruction>) {
          c.rule(op == Opcode::kRequantize, "payload does not match the opcode");
          c.tensor("input", p.input, false, 0);
          c.tensor("output", p.output, true, 0);
          c.same_dims("input", p.input, "output", p.output);
          c.rule(is_activation(p.output.type), "output must be int8 or int16");
          if (!c.ok()) return;
          if (p.count != 1) {
            c.rule(p.axis < p.input.rank && p.count == p.input.dims[p.axis],
                   concat("count ", p.count, " must be 1 or the extent of axis ", p.axis));
          }
          c.multipliers("table", p.table, p.count);
        } else if constexpr (std::is_same_v<P, isa::ReduceInstruction>) {
          c.rule(op == Opcode::kReduce, "payload does not match the opcode");
          c.tensor("input", p.input, false, 1);
          c.tensor("output", p.output, true, 1);
          c.distinct_elements("input", p.input);  // its work is its element count
          if (!c.ok()) return;
          c.rule(p.input.rank == p.output.rank, "input and output must have the same rank");
          c.rule(static_cast<uint32_t>(p.op) <= 3, concat("unknown reduce op ", static_cast<uint32_t>(p.op)));
          if (isa::is_index_reduce(p.op)) {
            const bool min = p.op == isa::ReduceOp::kArgMin;
            const char* name = min ? "ArgMin" : "ArgMax";
            const uint32_t since = min ? 5 : 2;
            c.rule(isa_version >= since, concat("reduce op ", name, " needs ISA version ", since,
                                                ", the program has version ", isa_version));
            c.rule(is_activation(p.input.type) && p.output.type == ElementType::kInt32,
                   concat(name, ": input must be int8/int16 and output int32"));
            c.rule(std::has_single_bit(p.axes_mask), concat(name, ": axes_mask must name exactly one axis"));
          } else {
            c.rule(is_activation(p.input.type) && p.output.type == p.input.type,
                   "input and output must have the same int8/int16 type");
          }
          c.rule((p.axes_mask >> p.input.rank) == 0, "axes_mask names an axis beyond the rank");
          for (uint32_t d = 0; d < p.input.rank; ++d) {
            const bool reduced = (p.axes_mask >> d) & 1u;
            c.rule(reduced ? p.output.dims[d] == 1 : p.output.dims[d] == p.input.dims[d],
                   concat("output axis ", d, " must be 1 if reduced, else the input's extent"));
          }
          if (p.op == isa::ReduceOp::kMean) c.multiplier(p.multiplier, p.shift, "multiplier");
        } else if constexpr (std::is_same_v<P, isa::SoftmaxInstruction>) {
          c.rule(op == Opcode::kSoftmax, "payload does not match the opcode");
          c.rule(isa_version >= 3, concat("Softmax needs ISA version 3, the program has version ", isa_version));
          c.tensor("input", p.input, false, 1);
          c.tensor("output", p.output, true, 1);
          if (!c.ok()) return;
          c.same_dims("input", p.input, "output", p.output);
          c.rule(is_activation(p.input.type) && is_activation(p.output.type), "input and output must be int8 or int16");
          c.rule(p.axis < p.input.rank, concat("axis ", p.axis, " is beyond the rank ", p.input.rank));
          if (!c.ok()) return;
          // In place (the same descriptor and type) or apart: a row is read three times before
          // the last pass writes it.
          const ByteRange a = byte_range(p.input), b = byte_range(p.output);
          const bool same = p.input.address == p.output.address && p.input.type == p.output.type &&
                            std::equal(p.input.strides, p.input.strides + p.input.rank, p.output.strides);
          c.rule(same || a.hi <= b.lo || b.hi <= a.lo, "input and output overlap without being the same tensor");
          c.multiplier(p.exponent_multiplier, p.exponent_shift, "exponent multiplier");
          c.multiplier(p.output_multiplier, p.output_shift, "output multiplier");
        } else if constexpr (std::is_same_v<P, isa::PoolInstruction>) {
          c.rule(op == Opcode::kAveragePool || op == Opcode::kMaxPool, "payload does not match the opcode");
          c.feature_maps(p.input, p.output);
          if (!c.ok()) return;
          c.rule(p.kernel_h >= 1 && p.kernel_w >= 1 && p.stride_h >= 1 && p.stride_w >= 1 &&
                     p.dilation_h >= 1 && p.dilation_w >= 1,
                 "kernel, stride and dilation must be >= 1");
          if (op == Opcode::kAveragePool && c.ok()) {
            c.words("row_counts", p.row_counts, p.output.dims[2], 0, p.kernel_h);
            c.words("col_counts", p.col_counts, p.output.dims[3], 0, p.kernel_w);
            c.multipliers("table", p.table, uint64_t{p.kernel_h} * p.kernel_w);
          }
        } else if constexpr (std::is_same_v<P, isa::ResizeInstruction>) {
          c.rule(op == Opcode::kResize, "payload does not match the opcode");
          c.feature_maps(p.input, p.output);
          if (!c.ok()) return;
          c.rule(static_cast<uint32_t>(p.mode) <= 1, "unknown resize mode");
          for (int axis = 0; axis < 2; ++axis) {
            const char* name = axis == 0 ? "row_table" : "col_table";
            const uint32_t address = axis == 0 ? p.row_table : p.col_table;
            const uint64_t n = p.output.dims[2 + axis];
            const int64_t last = int64_t{p.input.dims[2 + axis]} - 1;
            c.words(name, address, 3 * n, 0, last, 0, 3);   // i0
            c.words(name, address, 3 * n, 0, last, 1, 3);   // i1
            c.words(name, address, 3 * n, 0, 1024, 2, 3);  // f
          }
        } else if constexpr (std::is_same_v<P, isa::CopyInstruction>) {
          c.rule(op == Opcode::kCopy, "payload does not match the opcode");
          c.tensor("source", p.source, false, 0);
          c.tensor("destination", p.destination, true, 0);
          c.same_dims("source", p.source, "destination", p.destination);
          c.rule(p.source.type == p.destination.type, "source and destination types differ");
          if (c.ok()) {
            const ByteRange a = byte_range(p.source), b = byte_range(p.destination);
            c.rule(a.hi <= b.lo || b.hi <= a.lo, "source and destination bytes overlap");
          }
        } else if constexpr (std::is_same_v<P, isa::FillInstruction>) {
          c.rule(op == Opcode::kFill, "payload does not match the opcode");
          c.tensor("destination", p.destination, true, 0);
        } else if constexpr (std::is_same_v<P, isa::ClampInstruction>) {
          c.rule(op == Opcode::kClamp, "payload does not match the opcode");
          c.tensor("input", p.input, false, 0);
          c.tensor("output", p.output, true, 0);
          c.same_dims("input", p.input, "output", p.output);
          c.rule(p.input.type == p.output.type && is_activation(p.input.type),
                 "input and output must have the same int8/int16 type");
          c.clamp(p.lo, p.hi, p.output.type);
        } else if constexpr (std::is_same_v<P, isa::PreprocessInstruction>) {
          c.rule(op == Opcode::kPreprocess, "payload does not match the opcode");
          c.rule(p.format == isa::ImageFormat::kNv12 || p.format == isa::ImageFormat::kPacked,
                 concat("unknown image format ", static_cast<uint32_t>(p.format)));
          c.tensor("source", p.source, false, 1);
          c.tensor("output", p.output, true, 1);
          if (!c.ok()) return;
          c.rule(p.source.type == ElementType::kUint8 && p.output.type == ElementType::kInt8,
                 "source must be uint8 and output int8");
          if (p.format == isa::ImageFormat::kPacked) {
            c.same_dims("source", p.source, "output", p.output);
            return;
          }
          const uint32_t H = p.output.dims[2], W = p.output.dims[3];
          c.rule(p.source.rank == 3 && p.output.rank == 4 && p.output.dims[1] == 3 &&
                     p.source.dims[0] == p.output.dims[0] && H % 2 == 0 && W % 2 == 0 &&
                     p.source.dims[1] == H / 2 * 3 && p.source.dims[2] == W,
                 "nv12 needs source [N, H*3/2, W] and output [N, 3, H, W] with even H and W");
        }
      },
      instruction.payload);
  return c.error();
}

// ------------------------------------------------------------------ encoding

namespace {

template <typename T>
void append(std::vector<uint8_t>& out, const T& value) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(&value);
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

template <typename T>
bool read(std::span<const uint8_t> bytes, size_t& at, T& value) {
  if (bytes.size() - at < sizeof(T)) return false;
  std::memcpy(&value, bytes.data() + at, sizeof(T));
  at += sizeof(T);
  return true;
}

// The payload type of each opcode.
template <typename F>
bool with_payload_type(Opcode op, F&& f) {
  switch (op) {
    case Opcode::kFunctionBegin: f.template operator()<isa::FunctionBegin>(); return true;
    case Opcode::kConv:
    case Opcode::kConvTranspose: f.template operator()<isa::ConvInstruction>(); return true;
    case Opcode::kMatMul: f.template operator()<isa::MatMulInstruction>(); return true;
    case Opcode::kElementwise: f.template operator()<isa::ElementwiseInstruction>(); return true;
    case Opcode::kLut: f.template operator()<isa::LutInstruction>(); return true;
    case Opcode::kRequantize: f.template operator()<isa::RequantizeInstruction>(); return true;
    case Opcode::kReduce: f.template operator()<isa::ReduceInstruction>(); return true;
    case Opcode::kAveragePool:
    case Opcode::kMaxPool: f.template operator()<isa::PoolInstruction>(); return true;
    case Opcode::kResize: f.template operator()<isa::ResizeInstruction>(); return true;
    case Opcode::kCopy: f.template operator()<isa::CopyInstruction>(); return true;
    case Opcode::kFill: f.template operator()<isa::FillInstruction>(); return true;
    case Opcode::kClamp: f.template operator()<isa::ClampInstruction>(); return true;
    case Opcode::kPreprocess: f.template operator()<isa::PreprocessInstruction>(); return true;
    case Opcode::kSoftmax: f.template operator()<isa::SoftmaxInstruction>(); return true;
    case Opcode::kSelect: f.template operator()<isa::SelectInstruction>(); return true;
    case Opcode::kGatherElements: f.template operator()<isa::GatherElementsInstruction>(); return true;
    case Opcode::kLutProduct: f.template operator()<isa::LutProductInstruction>(); return true;
  }
  return false;
}

}  // namespace

std::vector<uint8_t> encode_program(const Program& program) {
  std::vector<uint8_t> stream;
  for (const Instruction& instruction : program.instructions) {
    std::visit(
        [&](const auto& p) {
          append(stream, isa::InstructionHeader{instruction.opcode, static_cast<uint32_t>(sizeof(p)),
                                                instruction.hints});
          append(stream, p);
        },
        instruction.payload);
  }
  isa::ProgramHeader header{};
  header.magic = isa::kProgramMagic;
  header.isa_version = isa::kIsaVersion;
  header.memory_bytes = program.memory_bytes;
  header.constant_bytes = program.constant_bytes;
  header.input_count = static_cast<uint32_t>(program.inputs.size());
  header.output_count = static_cast<uint32_t>(program.outputs.size());
  header.instruction_count = static_cast<uint32_t>(program.instructions.size());
  header.instruction_bytes = static_cast<uint32_t>(stream.size());
  std::vector<uint8_t> out;
  append(out, header);
  for (const TensorDesc& d : program.inputs) append(out, isa::Binding{d});
  for (const TensorDesc& d : program.outputs) append(out, isa::Binding{d});
  out.insert(out.end(), stream.begin(), stream.end());
  return out;
}

uint64_t program_memory_bytes(std::span<const uint8_t> bytes) {
  size_t at = 0;
  isa::ProgramHeader header{};
  return read(bytes, at, header) ? header.memory_bytes : 0;
}

DecodeResult decode_program(std::span<const uint8_t> bytes, std::span<const uint8_t> constants) {
  const size_t constant_bytes = constants.size();
  DecodeResult result;
  auto fail = [&](std::string message) {
    result.ok = false;
    result.error = std::move(message);
    result.program = Program{};
    return result;
  };
  size_t at = 0;
  isa::ProgramHeader header{};
  if (!read(bytes, at, header)) {
    return fail(concat("program of ", bytes.size(), " bytes is shorter than its header (",
                       sizeof(header), " bytes)"));
  }
  if (header.magic != isa::kProgramMagic) return fail("not a virtual BPU program (wrong magic)");
  if (header.isa_version < isa::kOldestIsaVersion || header.isa_version > isa::kIsaVersion) {
    return fail(concat("program uses ISA version ", header.isa_version, "; this simulator runs versions ",
                       isa::kOldestIsaVersion, " to ", isa::kIsaVersion,
                       header.isa_version > isa::kIsaVersion ? " (needs a newer runtime)" : ""));
  }
  if (header.constant_bytes != constant_bytes) {
    return fail(concat("program expects ", header.constant_bytes, " bytes of weights, the segment has ",
                       constant_bytes));
  }
  if (header.memory_bytes > isa::kMaxMemoryBytes) {
    return fail(concat("memory size ", header.memory_bytes, " bytes exceeds the ", isa::kMaxMemoryBytes,
                       " bytes (512 MiB) a program may address"));
  }
  if (header.memory_bytes < header.constant_bytes) {
    return fail(concat("memory size ", header.memory_bytes, " is below the weights' size ", header.constant_bytes));
  }
  const uint64_t bindings = uint64_t{header.input_count} + header.output_count;
  if (bindings * sizeof(isa::Binding) > bytes.size() - at) {
    return fail(concat("program declares ", bindings, " bindings but has only ", bytes.size() - at,
                       " bytes after its header"));
  }
  if (uint64_t{header.instruction_bytes} != bytes.size() - at - bindings * sizeof(isa::Binding)) {
    return fail(concat("instruction stream is ", bytes.size() - at - bindings * sizeof(isa::Binding),
                       " bytes, the header says ", header.instruction_bytes));
  }
  Program& program = result.program;
  program.memory_bytes = header.memory_bytes;
  program.constant_bytes = header.constant_bytes;
  for (uint64_t i = 0; i < bindings; ++i) {
    isa::Binding b{};
    read(bytes, at, b);
    Checker c(header.memory_bytes, constants);
    const bool is_input = i < header.input_count;
    c.tensor(is_input ? "input binding" : "output binding", b.tensor, true, 0);
    if (c.ok() && b.tensor.address < header.constant_bytes) {
      c.fail("binding lies in the constant region");
    }
    if (!c.ok()) {
      return fail(concat(is_input ? "input " : "output ", is_input ? i : i - header.input_count, ": ", c.error()));
    }
    (is_input ? program.inputs : program.outputs).push_back(b.tensor);
  }
  for (uint32_t k = 0; k < header.instruction_count; ++k) {
    isa::InstructionHeader ih{};
    if (!read(bytes, at, ih)) return fail(concat("instruction ", k, ": truncated header"));
    Instruction instruction;
    instruction.opcode = ih.opcode;
    instruction.hints = ih.hints;
    if ((ih.hints & ~isa::kKnownHints) != 0) {
      return fail(concat("instruction ", k, ": unknown hint bits ", ih.hints & ~isa::kKnownHints));
    }
    bool size_ok = true, fits = true;
    const bool known = with_payload_type(ih.opcode, [&]<typename P>() {
      if (ih.bytes != sizeof(P)) {
        size_ok = false;
        return;
      }
      P payload{};
      if (!read(bytes, at, payload)) {
        fits = false;
        return;
      }
      instruction.payload = payload;
    });
    if (!known) return fail(concat("instruction ", k, ": unknown opcode ", static_cast<uint32_t>(ih.opcode)));
    if (!size_ok) {
      return fail(concat("instruction ", k, " (", opcode_name(ih.opcode), "): payload of ", ih.bytes,
                         " bytes, version ", isa::kIsaVersion, " encodes it in a different size"));
    }
    if (!fits) return fail(concat("instruction ", k, " (", opcode_name(ih.opcode), "): truncated payload"));
    const std::string error = verify_instruction(instruction, header.memory_bytes, constants, header.isa_version);
    if (!error.empty()) return fail(concat("instruction ", k, " (", opcode_name(ih.opcode), "): ", error));
    program.instructions.push_back(std::move(instruction));
  }
  if (at != bytes.size()) return fail(concat(bytes.size() - at, " bytes after the last instruction"));
  result.ok = true;
  return result;
}

}  // namespace openbpu::simulator
