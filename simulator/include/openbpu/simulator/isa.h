// The virtual BPU's instruction set, version 1 (design style rule 2: the ISA is defined once,
// here). docs/bpu_isa.md explains the machine; this header is the normative definition.
//
// The machine
//  - One flat, byte-addressed device memory per loaded program. Address 0 starts the constant
//    region (the segment's weights blob, loaded verbatim); the activation region follows it.
//    Every address an instruction names is a byte offset into that memory.
//  - Instructions work at layer granularity: one instruction computes one whole layer (a
//    convolution with its bias, residual, requantization and activation; an elementwise add; a
//    strided copy). Tiling fields say how the compiler split the layer for on-chip SRAM; they
//    change the timing model's estimate, never the result.
//  - Tensors are described by TensorDesc: the tensor's dimensions in the axis order of the ONNX
//    model (N, C, H, W for a feature map) and a byte stride per axis. The memory layout is
//    therefore a property of the descriptor, not of the instruction: the compiler stores feature
//    maps NHWC with C padded to the march's channel alignment by choosing the strides, and a
//    transpose is a copy whose source strides are permuted. An input descriptor may have stride
//    0 on an axis (broadcast); an output descriptor may not.
//  - All arithmetic is the one definition in integer_arithmetic.h (design invariant 1):
//    apply_multiplier, round_shift_right, saturate, LutInt16::lookup. In the loop nests below
//    `x[i, j, ...]` reads the element at address + Σ index·stride, `sat<T>` saturates to the
//    output's element type, `F{M, s}` is a FixedPointMultiplier and accumulators are int64.
//
// Encoding (little-endian; x86-64 and aarch64 both are)
//  program  := ProgramHeader, Binding × (input_count + output_count), instruction × count
//  instruction := InstructionHeader, payload of the opcode's struct (InstructionHeader::bytes)
//  Every struct below consists of 32-bit fields only, so its bytes are its encoding. A decoder
//  (program.h) checks the magic, the version, every opcode and payload size, every enumerated
//  field and every tensor's extent against the memory size before anything runs.
#pragma once

#include <cstdint>
#include <type_traits>

namespace openbpu::simulator::isa {

// Bumped when an instruction's encoding or meaning changes; new opcodes and new values of an
// enumerated field also bump it. Changes are appended only, so a program of an older version
// still decodes and runs unchanged; a program may use only what its own version defines (the
// decoder refuses a version-1 program that names ReduceOp::kArgMax).
//   1: the first release (kPreprocess joined version 1 before any release)
//   2: ReduceOp::kArgMax (int32 indices)
//   3: Opcode::kSoftmax
//   4: ElementwiseOp::kMax, kMin
//   5: ReduceOp::kArgMin
//   6: ElementwiseOp::kEqual, kGreater, kLess; Opcode::kSelect, kGatherElements
//   7: Opcode::kLutProduct
inline constexpr uint32_t kIsaVersion = 7;
// Oldest version this simulator decodes.
inline constexpr uint32_t kOldestIsaVersion = 1;
// "OBPU" read as a little-endian uint32.
inline constexpr uint32_t kProgramMagic = 0x5550424Fu;
// The most device memory one program may address (ProgramHeader::memory_bytes): 512 MiB, over
// ten times what the largest model converted here needs (det at 640 x 640: 44.6 MB). The device
// allocates a program's memory when it loads it, so without this bound a model file of a few
// kilobytes could make the runtime allocate 4 GiB per BPU segment (found by tests/fuzz model_file).
inline constexpr uint32_t kMaxMemoryBytes = 512u << 20;
// The most device memory the programs of one model may address together (the sum of their
// memory_bytes), also 512 MiB: each program's memory is allocated when the model loads, so
// without this bound a model file of a few megabytes could claim terabytes through thousands of
// segments. The runtime checks it before loading any program.
inline constexpr uint64_t kMaxModelMemoryBytes = kMaxMemoryBytes;
// Largest tensor rank a descriptor holds.
inline constexpr uint32_t kMaxRank = 6;
// An address field that names nothing (optional operands: bias, residual tables, ...).
inline constexpr uint32_t kNoAddress = 0xFFFFFFFFu;

// Element types of device tensors.
enum class ElementType : uint32_t {
  kInt8 = 1,
  kInt16 = 2,
  kInt32 = 3,
  kUint8 = 4,  // image bytes (the source of kPreprocess only)
};

// Bytes of one element of `type` (0 for an unknown value).
constexpr uint32_t element_bytes(ElementType type) {
  switch (type) {
    case ElementType::kInt8: return 1;
    case ElementType::kInt16: return 2;
    case ElementType::kInt32: return 4;
    case ElementType::kUint8: return 1;
  }
  return 0;
}

// A tensor in device memory.
struct TensorDesc {
  uint32_t address;           // byte address of element [0, 0, ...]
  ElementType type;           // element type
  uint32_t rank;              // number of axes in use, 0..kMaxRank; rank 0 = "no tensor"
                              // where an operand is optional
  uint32_t dims[kMaxRank];    // extent of each axis (ONNX axis order); entries >= rank are 1
  int32_t strides[kMaxRank];  // bytes between consecutive indices of each axis; may be
                              // negative (reversed slices) or 0 (broadcast, inputs only);
                              // entries >= rank are 0
};

// One fixed-point multiplier as stored in constant memory: two int32 words.
struct MultiplierEntry {
  int32_t multiplier;  // in [2^30, 2^31) or 0
  int32_t shift;       // in [0, 93]
};

// How the compiler cut a layer for the on-chip SRAM (timing model only).
struct Tiling {
  uint32_t rows;      // output rows (H, or the second-to-last axis) per tile; 0 = whole layer
  uint32_t channels;  // output channels per tile; 0 = all
};

enum class Opcode : uint32_t {
  kFunctionBegin = 1,    // FunctionBegin
  kConv = 2,             // ConvInstruction
  kConvTranspose = 3,    // ConvInstruction
  kMatMul = 4,           // MatMulInstruction
  kElementwise = 5,      // ElementwiseInstruction
  kLut = 6,              // LutInstruction
  kRequantize = 7,       // RequantizeInstruction
  kReduce = 8,           // ReduceInstruction
  kAveragePool = 9,      // PoolInstruction
  kMaxPool = 10,         // PoolInstruction
  kResize = 11,          // ResizeInstruction
  kCopy = 12,            // CopyInstruction
  kFill = 13,            // FillInstruction
  kClamp = 14,           // ClampInstruction
  kPreprocess = 15,      // PreprocessInstruction
  kSoftmax = 16,         // SoftmaxInstruction (ISA version 3)
  kSelect = 17,          // SelectInstruction (ISA version 6)
  kGatherElements = 18,  // GatherElementsInstruction (ISA version 6)
  kLutProduct = 19,      // LutProductInstruction (ISA version 7)
};

// ------------------------------------------------------------------------------ program header

struct ProgramHeader {
  uint32_t magic;              // kProgramMagic
  uint32_t isa_version;        // kIsaVersion of the encoder
  uint32_t memory_bytes;       // size of the device memory the program addresses
  uint32_t constant_bytes;     // size of the weights blob, loaded at address 0
  uint32_t input_count;        // segment inputs (Bindings that follow, in segment order)
  uint32_t output_count;       // segment outputs (Bindings after the inputs)
  uint32_t instruction_count;  // instructions after the bindings
  uint32_t instruction_bytes;  // bytes of the instruction stream (headers included)
};

// Where a segment input is written before the program runs, or an output read after it.
struct Binding {
  TensorDesc tensor;
};

// Scheduling hints of an instruction, set by the compiler for the timing model (they never
// change a result): where the operands live and whether DMA overlaps compute.
enum HintBits : uint32_t {
  kHintInputOnChip = 1u << 0,     // the first input is the previous instruction's output, still
                                  // in SRAM: not loaded from DDR
  kHintOutputOnChip = 1u << 1,    // the output stays in SRAM for the next instruction: not
                                  // stored to DDR
  kHintDoubleBuffered = 1u << 2,  // tiles are double-buffered: DMA overlaps compute
};
inline constexpr uint32_t kKnownHints = kHintInputOnChip | kHintOutputOnChip | kHintDoubleBuffered;

struct InstructionHeader {
  Opcode opcode;
  uint32_t bytes;  // payload bytes that follow: sizeof(the opcode's struct)
  uint32_t hints;  // HintBits
};

// ------------------------------------------------------------------------------ instructions

// kFunctionBegin: a function-call boundary. No effect on memory; the instructions up to the
// next boundary form one function call, the unit of preemption and of max_time_per_fc.
struct FunctionBegin {
  uint32_t index;  // 0, 1, ... in program order
};

// kConv / kConvTranspose: 2-D convolution of int8/int16 x with int8 weights, int32 bias,
// optional residual, per-channel requantization and a clamp.
//   x: [N, C, H, W] int8/int16; y: [N, M, OH, OW] int8/int16/int32; r: rank 0 or y's dims,
//   int8/int16. Cg = C / group, Mg = M / group.
//   weights: int8, packed [M][KH][KW][Cg] (dense, channel innermost).
//   bias: int32[M] or kNoAddress (zeros). requant: MultiplierEntry[M] (unused for int32 y).
//   residual_requant: MultiplierEntry[M] when r is given.
// Semantics:
//   for n, m, oh, ow:
//     g = m / Mg; acc = bias ? bias[m] : 0
//     for kh < KH, kw < KW, c < Cg:
//       kConv:          ih = oh*stride_h - pad_top + kh*dilation_h   (same for w)
//                       valid when 0 <= ih < H and 0 <= iw < W
//       kConvTranspose: t = oh + pad_top - kh*dilation_h; ih = t / stride_h
//                       valid when t >= 0, t % stride_h == 0 and ih < H (same for w)
//       if valid: acc += x[n, g*Cg + c, ih, iw] * weights[m][kh][kw][c]
//     if r: acc += apply_multiplier(r[n, m, oh, ow], residual_requant[m])
//     v = y is int32 ? sat<int32>(acc) : sat<T>(apply_multiplier(acc, requant[m]))
//     y[n, m, oh, ow] = min(max(v, clip_min), clip_max)
struct ConvInstruction {
  TensorDesc input;
  TensorDesc output;
  TensorDesc residual;         // rank 0: none (always none for kConvTranspose)
  uint32_t weights;            // address of the packed int8 weights
  uint32_t bias;               // address of int32[M], or kNoAddress
  uint32_t requant;            // address of MultiplierEntry[M], kNoAddress for int32 output
  uint32_t residual_requant;   // address of MultiplierEntry[M], kNoAddress without residual
  uint32_t kernel_h, kernel_w;
  uint32_t stride_h, stride_w;
  uint32_t dilation_h, dilation_w;
  int32_t pad_top, pad_left;   // the bottom/right padding follows from the output dims
  uint32_t group;
  int32_t clip_min, clip_max;  // in the output type's range, clip_min <= clip_max
  Tiling tiling;
};

// kMatMul: batched matrix product of two feature maps.
//   a: [..., I, K], b: [..., K, J], y: [..., I, J], all of the same rank >= 2. A batch axis of
//   a or b has y's extent (stride 0 to broadcast) or extent 1 (index 0 is read for every batch
//   index). a, b int8/int16; y int8/int16/int32.
// Semantics:
//   for batch index β, i, j:
//     acc = Σ_k a[β, i, k] * b[β, k, j]
//     y[β, i, j] = y is int32 ? sat<int32>(acc) : sat<T>(apply_multiplier(acc, F{multiplier, shift}))
struct MatMulInstruction {
  TensorDesc a;
  TensorDesc b;
  TensorDesc output;
  int32_t multiplier, shift;  // unused for an int32 output
  Tiling tiling;
};

enum class ElementwiseOp : uint32_t {
  kAdd = 0, kSub = 1, kMul = 2, kMax = 3, kMin = 4, kEqual = 5, kGreater = 6, kLess = 7
};

constexpr bool is_comparison(ElementwiseOp op) {
  return op == ElementwiseOp::kEqual || op == ElementwiseOp::kGreater || op == ElementwiseOp::kLess;
}

// kElementwise: y = a op b with per-input rescaling. a, b, y have the same rank and dims
// (broadcast inputs have stride 0); a, b int8/int16 (may differ); y int8/int16.
// Semantics, for every index ι:
//   kAdd / kSub: ia = apply_multiplier(a[ι], F{multiplier_a, shift_a})
//                ib = apply_multiplier(b[ι], F{multiplier_b, shift_b})
//                v = sat<T>(round_shift_right(ia ± ib, intermediate_shift))
//   kMax / kMin (version 4): ia, ib as for kAdd;
//                v = sat<T>(round_shift_right(max(ia, ib) or min(ia, ib), intermediate_shift))
//   kEqual / kGreater / kLess (version 6): ia, ib as for kAdd; v = 1 if ia == ib / ia > ib /
//                ia < ib, else 0 (a mask: y int8)
//   kMul:        v = sat<T>(apply_multiplier(a[ι] * b[ι], F{multiplier_a, shift_a}))
//   y[ι] = min(max(v, clip_min), clip_max)
// How kAdd … kLess combine the rescaled operands ia, ib before the intermediate shift: a
// comparison gives 2^shift (true) or 0, which the shift turns into 1 or 0.
constexpr int64_t combine_rescaled(ElementwiseOp op, int64_t ia, int64_t ib, uint32_t shift) {
  const int64_t one = int64_t{1} << shift;
  switch (op) {
    case ElementwiseOp::kSub: return ia - ib;
    case ElementwiseOp::kMax: return ia > ib ? ia : ib;
    case ElementwiseOp::kMin: return ia < ib ? ia : ib;
    case ElementwiseOp::kEqual: return ia == ib ? one : 0;
    case ElementwiseOp::kGreater: return ia > ib ? one : 0;
    case ElementwiseOp::kLess: return ia < ib ? one : 0;
    default: return ia + ib;
  }
}

struct ElementwiseInstruction {
  ElementwiseOp op;
  TensorDesc a;
  TensorDesc b;
  TensorDesc output;
  int32_t multiplier_a, shift_a;
  int32_t multiplier_b, shift_b;  // all but kMul
  uint32_t intermediate_shift;    // all but kMul, in [0, 31]
  int32_t clip_min, clip_max;
};

// kSelect (ISA version 6): y = condition ? a : b with per-input rescaling. condition, a, b, y
// have the same rank and dims (broadcast inputs have stride 0); condition int8 (a mask: 0 is
// false, anything else true); a, b int8/int16 (may differ); y int8/int16. For every index ι:
//   v = condition[ι] != 0 ? apply_multiplier(a[ι], F{multiplier_a, shift_a})
//                         : apply_multiplier(b[ι], F{multiplier_b, shift_b})
//   y[ι] = sat<T>(round_shift_right(v, intermediate_shift))
struct SelectInstruction {
  TensorDesc condition;
  TensorDesc a;
  TensorDesc b;
  TensorDesc output;
  int32_t multiplier_a, shift_a;
  int32_t multiplier_b, shift_b;
  uint32_t intermediate_shift;  // in [0, 31]
};

// kGatherElements (ISA version 6): x and y have the same rank and type (int8/int16), y.dims[d] <=
// x.dims[d] for d != axis; table = int32[element count of y] in the constant region, each entry
// in [0, x.dims[axis]) (the verifier reads them). For every index ι of y, k its row-major position:
//   y[ι] = x[ι with ι[axis] = table[k]]
struct GatherElementsInstruction {
  TensorDesc input;
  TensorDesc output;
  uint32_t axis;
  uint32_t table;  // address of int32[count]
};

// kLut: table lookup. x and y have the same dims and type.
//   int8:  table = int8[256];  y[ι] = table[x[ι] + 128]
//   int16: table = int32[257] knots; y[ι] = LutInt16{knots}.lookup(x[ι])
struct LutInstruction {
  TensorDesc input;
  TensorDesc output;
  uint32_t table;  // address of the table
};

// kLutProduct (ISA version 7): an input times a table function of it in one pass (swish
// x·σ(x), hardswish x·hardsigmoid(x)); the same values as the kRequantize, kLut and kMul
// (kElementwise) instructions it replaces. x, y int8/int16 of the same dims; n and h (not stored)
// have the type `table_type` (int8: table = int8[256], int16: int32[257] knots, as kLut):
//   n = rescale ? sat<table_type>(apply_multiplier(x[ι], F{rescale_multiplier, rescale_shift}))
//               : x[ι]                                        (rescale 0: x has table_type)
//   h = the kLut of n
//   y[ι] = clamp(sat<T>(apply_multiplier(x[ι] · h, F{multiplier, shift})), clip_min, clip_max)
struct LutProductInstruction {
  TensorDesc input;
  TensorDesc output;
  uint32_t table;          // address of the table
  ElementType table_type;  // kInt8 or kInt16
  uint32_t rescale;        // 0 or 1
  int32_t rescale_multiplier, rescale_shift;
  int32_t multiplier, shift;
  int32_t clip_min, clip_max;
};

// kRequantize: y[ι] = sat<T>(apply_multiplier(x[ι], table[count == 1 ? 0 : ι[axis]])).
//   x int8/int16/int32, y int8/int16, same dims. table = MultiplierEntry[count], count is 1 or
//   dims[axis].
struct RequantizeInstruction {
  TensorDesc input;
  TensorDesc output;
  uint32_t table;  // address of MultiplierEntry[count]
  uint32_t count;  // 1 (per tensor) or the extent of `axis`
  uint32_t axis;   // per-channel axis (ignored when count == 1)
};

enum class ReduceOp : uint32_t {
  kMean = 0,    // y = sat<T>(apply_multiplier(Σ x, F{multiplier, shift}))
  kMax = 1,     // y = max x
  kArgMax = 2,  // y = index of the first maximum along the one reduced axis (ISA version 2)
  kArgMin = 3,  // y = index of the first minimum along the one reduced axis (ISA version 5)
};

// The index reductions: int32 output along one axis.
inline constexpr bool is_index_reduce(ReduceOp op) { return op == ReduceOp::kArgMax || op == ReduceOp::kArgMin; }

// kReduce over the axes in `axes_mask` (bit d = axis d). x and y have the same rank; y's
// reduced axes have extent 1. kMean / kMax: x, y int8/int16 of the same type.
//   for every output index ι: S = { x[κ] : κ[d] = ι[d] for d not reduced }
//   y[ι] = kMean ? sat<T>(apply_multiplier(Σ S, F)) : max S
// kArgMax (version 2): x int8/int16, y int32, axes_mask names exactly one axis a:
//   for every output index ι:
//     best = 0
//     for k in 1 .. dims[a]-1:                    (ι with axis a set to k: ι_k)
//       if x[ι_k] > x[ι_best]: best = k           (strictly greater: ties keep the lowest index)
//     y[ι] = best
//   The argmax of a per-tensor quantized x is the argmax of its real values (a positive scale
//   keeps the order; equal real values are equal integers), so no multiplier is involved.
// kArgMin (version 5): as kArgMax with x[ι_k] < x[ι_best] (strictly less: ties keep the lowest
//   index).
struct ReduceInstruction {
  ReduceOp op;
  TensorDesc input;
  TensorDesc output;
  uint32_t axes_mask;
  int32_t multiplier, shift;  // kMean only (0 otherwise)
};

// kSoftmax (ISA version 3) along one axis: x and y have the same dims, each int8 or int16 (the
// probabilities may be wider than the logits); y may be x when the types agree. With F = SoftmaxMultipliers{{exponent_multiplier, exponent_shift},
// {output_multiplier, output_shift}} (integer_arithmetic.h, which writes out the arithmetic):
//   for every index ι of x with ι[axis] = 0:      (ι with axis set to k: ι_k, n = dims[axis])
//     m = max_k x[ι_k]
//     e_k = softmax_exp2_q30(apply_multiplier(m - x[ι_k], F.exponent))     Q30, e = 2^30 at m
//     S = Σ_k e_k;  R = floor(2^62 / S)
//     y[ι_k] = sat<T>(apply_multiplier(round_shift_right(e_k * R, 32), F.output))
struct SoftmaxInstruction {
  TensorDesc input;
  TensorDesc output;
  uint32_t axis;
  int32_t exponent_multiplier, exponent_shift;  // ≈ in_scale · log2(e) · 2^16
  int32_t output_multiplier, output_shift;      // ≈ 2^-30 / out_scale
};

// kAveragePool / kMaxPool on x [N, C, H, W] → y [N, C, OH, OW], int8/int16, same type.
//   window(oh, ow) = { (ih, iw) = (oh*stride_h - pad_top + kh*dilation_h, ow*stride_w - pad_left
//                      + kw*dilation_w) : kh < kernel_h, kw < kernel_w, 0 <= ih < H, 0 <= iw < W }
//   kMaxPool:     y = max over window (an empty window gives the type's minimum)
//   kAveragePool: d = row_counts[oh] * col_counts[ow]   (the divisor, ONNX's rule, computed by
//                 the compiler: int32 tables of OH and OW entries)
//                 y = d == 0 ? 0 : sat<T>(apply_multiplier(Σ window, table[d - 1]))
//                 table = MultiplierEntry[kernel_h * kernel_w]
struct PoolInstruction {
  TensorDesc input;
  TensorDesc output;
  uint32_t kernel_h, kernel_w;
  uint32_t stride_h, stride_w;
  uint32_t dilation_h, dilation_w;
  int32_t pad_top, pad_left;
  uint32_t row_counts;  // kAveragePool: address of int32[OH]
  uint32_t col_counts;  // kAveragePool: address of int32[OW]
  uint32_t table;       // kAveragePool: address of MultiplierEntry[kernel_h * kernel_w]
  Tiling tiling;
};

enum class ResizeMode : uint32_t { kNearest = 0, kLinear = 1 };

// kResize on x [N, C, H, W] → y [N, C, OH, OW], same type. The source coordinates are tables
// the compiler computed (the coordinate transformation is the compiler's business):
//   row_table: OH entries, col_table: OW entries, each three int32 {i0, i1, f}, f in [0, 1024]
//   kNearest: y[n, c, oh, ow] = x[n, c, row[oh].i0, col[ow].i0]
//   kLinear:  y = sat<T>(round_shift_right(
//               x[i0, j0]·(1024-fy)·(1024-fx) + x[i0, j1]·(1024-fy)·fx
//             + x[i1, j0]·fy·(1024-fx)       + x[i1, j1]·fy·fx, 20))
//             with i = row[oh], j = col[ow], fy = row[oh].f, fx = col[ow].f
struct ResizeInstruction {
  ResizeMode mode;
  TensorDesc input;
  TensorDesc output;
  uint32_t row_table;  // address of {i0, i1, f}[OH]
  uint32_t col_table;  // address of {i0, i1, f}[OW]
};

// kCopy: strided DMA. src and dst have the same rank, dims and element type, and their byte
// ranges do not overlap (the decoder refuses a copy whose ranges do).
//   y[ι] = x[ι] for every index ι
// (transpose = permuted source strides, slice = offset address and scaled strides, concat =
// one copy per input into a window of the output, reshape of a padded layout = copy into a
// dense one.)
struct CopyInstruction {
  TensorDesc source;
  TensorDesc destination;
};

// kFill: y[ι] = value (saturated to y's type) for every index ι (padding, zero init).
struct FillInstruction {
  TensorDesc destination;
  int32_t value;
};

// kClamp: y[ι] = min(max(x[ι], lo), hi); x and y of the same dims and type (integer Relu/Clip).
struct ClampInstruction {
  TensorDesc input;
  TensorDesc output;
  int32_t lo, hi;
};

enum class ImageFormat : uint32_t {
  kNv12 = 0,    // Y plane (H rows of W bytes), then interleaved U,V (H/2 rows of W/2 pairs)
  kPacked = 1,  // one byte per channel: interleaved (NHWC) or planar, per the source strides
};

// kPreprocess: an image as the camera / pyramid delivers it → the model's int8 input (the
// intermediate type yuv444_128: value − 128, see docs/quantized_ops.md HzPreprocess). Mean,
// scale and the colour matrix are not here: the quantizer folds them into the first
// convolution (HZ_PREPROCESS_FOR_<input>).
//   kNv12: source uint8 [N, H·3/2, W] (dense rows), output int8 [N, 3, H, W], H and W even:
//     y[n, 0, h, w] = source[n, h, w] − 128
//     y[n, 1, h, w] = source[n, H + h/2, 2·(w/2)] − 128       (U: 2x2 blocks share it)
//     y[n, 2, h, w] = source[n, H + h/2, 2·(w/2) + 1] − 128   (V)
//   kPacked (rgb / bgr / yuv444 / gray): source uint8 with the output's rank and dims, in the
//     output's axis order (the strides say where each byte is: an interleaved NHWC image seen
//     as N, C, H, W, or planar), output int8:  y[ι] = source[ι] − 128
struct PreprocessInstruction {
  ImageFormat format;
  TensorDesc source;
  TensorDesc output;
};

// The encoding of every struct is its bytes: only 32-bit fields, no padding.
#define OPENBPU_ISA_CHECK(T)                                                          \
  static_assert(std::is_trivially_copyable_v<T> && std::is_standard_layout_v<T> &&   \
                    sizeof(T) % 4 == 0 && alignof(T) == 4,                            \
                #T " must be a packed sequence of 32-bit words")
OPENBPU_ISA_CHECK(TensorDesc);
OPENBPU_ISA_CHECK(MultiplierEntry);
OPENBPU_ISA_CHECK(ProgramHeader);
OPENBPU_ISA_CHECK(Binding);
OPENBPU_ISA_CHECK(InstructionHeader);
OPENBPU_ISA_CHECK(FunctionBegin);
OPENBPU_ISA_CHECK(ConvInstruction);
OPENBPU_ISA_CHECK(MatMulInstruction);
OPENBPU_ISA_CHECK(ElementwiseInstruction);
OPENBPU_ISA_CHECK(LutInstruction);
OPENBPU_ISA_CHECK(RequantizeInstruction);
OPENBPU_ISA_CHECK(ReduceInstruction);
OPENBPU_ISA_CHECK(PoolInstruction);
OPENBPU_ISA_CHECK(ResizeInstruction);
OPENBPU_ISA_CHECK(CopyInstruction);
OPENBPU_ISA_CHECK(FillInstruction);
OPENBPU_ISA_CHECK(ClampInstruction);
OPENBPU_ISA_CHECK(PreprocessInstruction);
OPENBPU_ISA_CHECK(SoftmaxInstruction);
OPENBPU_ISA_CHECK(SelectInstruction);
OPENBPU_ISA_CHECK(GatherElementsInstruction);
OPENBPU_ISA_CHECK(LutProductInstruction);
#undef OPENBPU_ISA_CHECK
static_assert(sizeof(TensorDesc) == 15 * 4);

}  // namespace openbpu::simulator::isa
