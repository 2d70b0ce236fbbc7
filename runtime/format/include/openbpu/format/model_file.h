// The OpenBPU model file (.bin / .hbm): writing, verifying and reading it.
//
// The BPU compiler describes a package of compiled models as a PackageInfo (plain C++ values)
// and turns it into file bytes with serialize_package(); save_model_file() puts them on disk
// atomically. The runtime loads the bytes (ModelFile::load, or verify_package() over a buffer
// it owns) and reads the verified flatbuffer in place through PackageView; tools that edit or
// print a model unpack it back into a PackageInfo with unpack_package().
//
// ------------------------------------------------------------------------------------------
// On-disk layout (all integers little-endian)
//
//   offset      size  content
//   0           N     flatbuffer, root table openbpu.format.Package
//                     (runtime/format/schema/openbpu_model.fbs); bytes 4..7 hold the file
//                     identifier "OBPU". N is a multiple of the largest alignment inside
//                     (64 when BPU weights exist).
//   N           4     uint32  N, the flatbuffer's size in bytes
//   N + 4       4     uint32  CRC-32C (Castagnoli: reflected polynomial 0x82F63B78, initial
//                             value 0xFFFFFFFF, final XOR 0xFFFFFFFF) of bytes [0, N + 4),
//                             i.e. of everything before it
//   N + 8       8     footer magic "OBPU_END"
//   file size = N + 16 (kFooterSize).
//
// The checksum sits outside the flatbuffer so that it covers every byte of it; any single
// changed bit anywhere in the file is detected (by the checksum, or by the size or magic
// check when it falls in the footer). Inside the flatbuffer, BPU weights are 64-byte and BPU
// programs and operator constants 16-byte aligned relative to offset 0, so they are aligned
// in memory when the file is loaded at a 64-byte aligned address (ModelFile does that).
//
// ------------------------------------------------------------------------------------------
// Version policy
//
// Package.format_version = major * 1000 + minor (kFormatVersion; this library writes
// kFormatVersionMajor.kFormatVersionMinor). A minor version appends fields or enum values
// only: files of any minor version of a supported major are read, unknown fields ignored. A
// new major version means old readers would misread the file: a file whose major version is
// newer than kFormatVersionMajor is rejected (kUnsupportedFormatVersion) with the message
//   "model file format X.Y needs a runtime that reads format ≥ X.Y; this runtime reads up
//    to A.B".
// The version is read (from field 0 of the root table, which never moves) before the rest
// of the flatbuffer is verified, so a newer file gets that message rather than a structural
// error. A segment of a kind this runtime does not know (added by a newer minor version) is
// rejected with kUnknownSegmentKind.
//
// ------------------------------------------------------------------------------------------
// What verify_package() checks, in this order, before handing out anything. The first
// failing check decides the StatusCode; the message names the model / segment / operator /
// tensor and states the rule.
//
//   container  buffer at least kMinFileSize bytes (kFileTooSmall) and 8-byte aligned in
//              memory (kMisalignedBuffer); footer magic (kBadFooterMagic); footer size ==
//              file size - 16 (kSizeMismatch); CRC-32C (kChecksumMismatch); flatbuffer
//              identifier "OBPU" (kBadFileIdentifier); flatbuffer below 2 GiB
//              (kPackageTooLarge); format version (kUnsupportedFormatVersion);
//              flatbuffers::Verifier over the whole buffer, depth <= 32, <= 4,000,000 tables,
//              then the 8-byte alignment of every vector of 64-bit integers, which that
//              Verifier (2.0.8) does not check (kInvalidFlatbuffer).
//   package    at least one model (kNoModels); model names non-empty and without a NUL byte
//              (kMissingName) and unique (kDuplicateModelName).
//   model      march non-empty (kMissingMarch); inputs and outputs non-empty
//              (kNoModelInputs, kNoModelOutputs); at least one segment (kNoSegments);
//              tensor names (inputs, outputs, intermediates) non-empty, without a NUL
//              byte and unique in the model (kMissingName, kDuplicateTensorName);
//              compile-parameter / deps-info keys and deleted-node names non-empty
//              (kMissingName).
//   tensor     layout, tensor_type, quanti_type are known enum values (kBadEnumValue);
//              rank(valid_shape) == rank(aligned_shape) (kRankMismatch), <= 8
//              (kRankTooLarge); no negative dimension (kNegativeDimension); every
//              valid_shape[i] <= aligned_shape[i] (kValidExceedsAligned); aligned_byte_size
//              == ceil(product(aligned_shape) x element_bits(tensor_type) / 8)
//              (kAlignedByteSizeMismatch), at most 2^31 - 1 bytes, what the C API's int32
//              alignedByteSize states (kTensorTooLarge); stride empty or one per dimension
//              (kStrideRankMismatch), no negative stride and, when any stride is non-zero,
//              the last byte addressed through validShape and stride lies inside
//              aligned_byte_size (kStrideOutOfBounds); quanti_type matches the parameters
//              present — NONE: no shift/scale/zero_point, SHIFT: shift and nothing else,
//              SCALE: scale, no shift (kQuantiTypeMismatch); shift/scale count 1 or
//              valid_shape[quantize_axis], zero_point count 0 or the scale count
//              (kQuantParamLength); per-axis parameters need 0 <= quantize_axis < rank
//              (kQuantizeAxisOutOfRange); every scale finite and > 0 (kBadScale);
//              input_source a known value, not DDR only on a model input whose tensor_type
//              is NV12, NV12_SEPARATE or Y (kBadEnumValue).
//   segments   names non-empty (kMissingName) and unique in the model
//              (kDuplicateSegmentName); body present (kMissingSegmentBody) and of a known
//              kind (kUnknownSegmentKind). BPU: program non-empty (kEmptyBpuProgram), at
//              least one output (kNoOutputs), program 16- and weights 64-byte aligned
//              (kMisalignedData). CPU: at least one op (kEmptyCpuSegment); op name and
//              op_type non-empty (kMissingName); at least one output (kNoOutputs);
//              attribute types known (kBadEnumValue), names non-empty and unique
//              (kMissingName, kDuplicateAttributeName), only the value matching the type
//              set and TENSOR attributes carry a tensor (kAttributeMismatch); constants of
//              a TENSOR_TYPE_* type (kBadConstantType), no negative dimension, data size ==
//              ceil(product(shape) x element bits / 8) (kConstantSizeMismatch), 16-byte
//              aligned (kMisalignedData).
//   data flow  walking segments (and ops) in execution order, every TensorRef: kind known
//              (kBadEnumValue); OP_CONSTANT / ABSENT only as op inputs, MODEL_INPUT never
//              as an output (kTensorRefKindNotAllowed); index in range, ABSENT index 0
//              (kTensorRefOutOfRange); an intermediate or model output is written at most
//              once (kTensorWrittenTwice) and read only after it was written
//              (kTensorReadBeforeWritten); every model output is written
//              (kModelOutputNotWritten).
//   debug map  segment_index names a BPU segment of the model (kDebugEntryOutOfRange).
//
// For the C API: kCannotOpenFile/kReadFailed map to HB_DNN_CAN_NOT_OPEN_FILE,
// kOutOfMemory to HB_DNN_OUT_OF_MEMORY, kUnsupportedFormatVersion and kUnknownSegmentKind
// to HB_DNN_INCOMPATIBLE_MODEL, every other failure to HB_DNN_INVALID_MODEL.
//
// ------------------------------------------------------------------------------------------
// Conventions: no function here throws; each returns a Status (std::bad_alloc becomes
// kOutOfMemory). Output parameters are written only on success. Serialization is
// deterministic: the same PackageInfo gives the same bytes (no timestamps, no addresses,
// fields and vectors written in a fixed order, no string sharing). Absent and empty are the
// same: empty strings and vectors are not stored and read back as empty. A float attribute
// or field equal to its default (0.0) is not stored, so -0.0 reads back as +0.0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "openbpu/format/openbpu_model_generated.h"  // flatc output of openbpu_model.fbs

namespace openbpu::format {

// ---- constants -----------------------------------------------------------------------------

inline constexpr uint32_t kFormatVersionMajor = 1;
// 1.1: CpuOp.opset; 1.2: TensorDesc.input_source; 1.3: CPU control flow (CpuGraph attributes,
// CpuOp.implicit_inputs); 1.4: DeletedNode.attributes
inline constexpr uint32_t kFormatVersionMinor = 4;
inline constexpr uint32_t kFormatVersion = kFormatVersionMajor * 1000 + kFormatVersionMinor;
inline constexpr uint32_t kFormatVersionOldestMajor = 1;  // oldest major version still read

inline constexpr size_t kFooterSize = 16;
inline constexpr char kFooterMagic[8] = {'O', 'B', 'P', 'U', '_', 'E', 'N', 'D'};
inline constexpr char kFileIdentifier[5] = "OBPU";  // == PackageIdentifier()
// Smallest possible file: an 8-byte flatbuffer (root offset + identifier) and the footer.
inline constexpr size_t kMinFileSize = 8 + kFooterSize;
// Alignment verify_package() requires of the buffer's address (largest scalar in the file).
inline constexpr size_t kRequiredBufferAlignment = 8;
// Alignment ModelFile gives its copy (that of BPU weights, the largest in the file).
inline constexpr size_t kModelFileAlignment = 64;
inline constexpr size_t kMaxTensorRank = 8;  // HB_DNN_TENSOR_MAX_DIMENSIONS

// ---- status --------------------------------------------------------------------------------

// Numeric values are stable (tools may print them); new codes are appended in their group.
enum class StatusCode : int32_t {
  kOk = 0,
  // I/O and resources
  kCannotOpenFile = 1,  // the file does not exist or cannot be opened / created
  kReadFailed = 2,      // reading an opened file failed
  kWriteFailed = 3,     // writing, syncing or renaming the file failed
  kOutOfMemory = 4,     // an allocation failed
  kInternalError = 5,   // a bug in this library (an unexpected exception)
  // container
  kFileTooSmall = 10,               // fewer than kMinFileSize bytes
  kMisalignedBuffer = 11,           // buffer address not a multiple of 8
  kBadFooterMagic = 12,             // last 8 bytes are not "OBPU_END": not a model / truncated
  kSizeMismatch = 13,               // footer's flatbuffer size != file size - 16
  kChecksumMismatch = 14,           // CRC-32C differs: the file is corrupted
  kBadFileIdentifier = 15,          // flatbuffer identifier is not "OBPU"
  kPackageTooLarge = 16,            // flatbuffer would exceed the 2 GiB flatbuffers limit
  kUnsupportedFormatVersion = 17,   // format major version newer (or older) than supported
  kInvalidFlatbuffer = 18,          // flatbuffers::Verifier rejected the buffer
  // package and model structure
  kNoModels = 30,
  kMissingName = 31,                // a required name / key / op_type is empty
  kDuplicateModelName = 32,
  kMissingMarch = 33,
  kNoModelInputs = 34,
  kNoModelOutputs = 35,
  kNoSegments = 36,
  kDuplicateSegmentName = 37,
  kDuplicateTensorName = 38,
  kBadEnumValue = 39,               // layout / tensor type / quanti type / ref kind / attr type
  // tensor properties
  kRankMismatch = 40,               // rank(valid_shape) != rank(aligned_shape)
  kRankTooLarge = 41,               // rank > kMaxTensorRank
  kNegativeDimension = 42,
  kValidExceedsAligned = 43,
  kAlignedByteSizeMismatch = 44,
  kStrideRankMismatch = 45,
  kStrideOutOfBounds = 46,          // negative stride, or strided extent > aligned_byte_size
  kQuantiTypeMismatch = 47,         // quanti_type disagrees with the shift/scale present
  kQuantParamLength = 48,           // shift/scale/zero_point count not 1 / channel count
  kQuantizeAxisOutOfRange = 49,
  kBadScale = 50,                   // a scale is not finite or not > 0
  kTensorTooLarge = 51,             // aligned_byte_size > base::kMaxTensorBytes (2 GiB)
  // segments, operators, data flow
  kMissingSegmentBody = 60,
  kUnknownSegmentKind = 61,
  kEmptyBpuProgram = 62,
  kEmptyCpuSegment = 63,
  kNoOutputs = 64,                  // a BPU segment or CPU op without outputs
  kTensorRefKindNotAllowed = 65,
  kTensorRefOutOfRange = 66,
  kTensorWrittenTwice = 67,
  kTensorReadBeforeWritten = 68,
  kModelOutputNotWritten = 69,
  kMisalignedData = 70,             // program / weights / constant data not aligned in file
  kBadConstantType = 71,            // a constant of an image type
  kConstantSizeMismatch = 72,
  kAttributeMismatch = 73,          // attribute value fields disagree with its type
  kDuplicateAttributeName = 74,
  kDebugEntryOutOfRange = 75,       // debug entry names no BPU segment of the model
  kGraphTooDeep = 76,               // CPU graph attributes nested deeper than kMaxGraphDepth
};

// How deep CPU graph attributes (If inside a Loop body inside ...) may nest.
inline constexpr int kMaxGraphDepth = 8;

// "kChecksumMismatch" etc.; "unknown" for a value not in the enum.
const char* status_code_name(StatusCode code) noexcept;

struct [[nodiscard]] Status {
  StatusCode code = StatusCode::kOk;
  std::string message;  // empty when ok; otherwise one line naming the element and the rule

  bool ok() const noexcept { return code == StatusCode::kOk; }
};

// ---- plain description of a package (what the compiler fills) -----------------------------
// The enums are the schema's own (generated into this namespace): TensorLayout, TensorType,
// QuantiType, TensorRefKind, AttributeType.

struct TensorRefInfo {
  TensorRefKind kind = TensorRefKind::INTERMEDIATE;
  uint32_t index = 0;

  static TensorRefInfo model_input(uint32_t i) { return {TensorRefKind::MODEL_INPUT, i}; }
  static TensorRefInfo model_output(uint32_t i) { return {TensorRefKind::MODEL_OUTPUT, i}; }
  static TensorRefInfo intermediate(uint32_t i) { return {TensorRefKind::INTERMEDIATE, i}; }
  static TensorRefInfo op_constant(uint32_t i) { return {TensorRefKind::OP_CONSTANT, i}; }
  static TensorRefInfo absent() { return {TensorRefKind::ABSENT, 0}; }
  bool operator==(const TensorRefInfo&) const = default;
};

// hbDNNTensorProperties of one tensor; see TensorDesc in the schema for each field.
struct TensorInfo {
  std::string name;
  std::vector<int64_t> valid_shape;
  std::vector<int64_t> aligned_shape;
  TensorLayout layout = TensorLayout::NONE;
  TensorType tensor_type = TensorType::TENSOR_TYPE_F32;
  QuantiType quanti_type = QuantiType::NONE;
  std::vector<uint8_t> shift;
  std::vector<float> scale;
  std::vector<int32_t> zero_point;
  int32_t quantize_axis = -1;
  uint64_t aligned_byte_size = 0;
  std::vector<int64_t> stride;  // bytes; empty or one per dimension
  InputSource input_source = InputSource::DDR;  // model inputs only
  bool operator==(const TensorInfo&) const = default;
};

struct ConstTensorInfo {
  std::string name;
  TensorType data_type = TensorType::TENSOR_TYPE_F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // ceil(product(shape) x element_bits / 8) bytes
  bool operator==(const ConstTensorInfo&) const = default;
};

struct CpuGraphInfo;

// An operator attribute: set `type` and the one matching value field.
struct AttributeInfo {
  std::string name;
  AttributeType type = AttributeType::UNDEFINED;
  int64_t i = 0;                       // INT
  float f = 0.0f;                      // FLOAT
  std::string s;                       // STRING (bytes)
  std::vector<int64_t> ints;           // INTS
  std::vector<float> floats;           // FLOATS
  std::vector<std::string> strings;    // STRINGS
  std::optional<ConstTensorInfo> t;    // TENSOR
  std::vector<CpuGraphInfo> g;         // GRAPH: exactly one
  // Every field compared (in unpack.cc: a defaulted == through the recursion AttributeInfo →
  // CpuGraphInfo → CpuOpInfo → AttributeInfo crashes clang 14, which the fuzz preset uses).
  bool operator==(const AttributeInfo&) const;
};

struct CpuOpInfo {
  std::string name;     // as users see it, e.g. "<model>_HzDequantize"
  std::string op_type;  // e.g. "Dequantize"
  std::string domain;   // "" = ai.onnx
  std::vector<TensorRefInfo> inputs;   // may use OP_CONSTANT (into `constants`) and ABSENT
  std::vector<TensorRefInfo> outputs;
  std::vector<AttributeInfo> attributes;
  std::vector<ConstTensorInfo> constants;
  uint32_t opset = 0;  // the model's opset version of `domain`
  uint32_t implicit_inputs = 0;  // the last inputs: what its graph attributes read from outside
  bool operator==(const CpuOpInfo&) const = default;
};

// See CpuGraph in the schema: a local tensor table of inputs, outer values, then op outputs.
struct CpuGraphInfo {
  std::string name;
  uint32_t input_count = 0;
  uint32_t outer_count = 0;
  uint32_t tensor_count = 0;
  std::vector<CpuOpInfo> ops;
  std::vector<TensorRefInfo> outputs;  // INTERMEDIATE (local), OP_CONSTANT not allowed
  bool operator==(const CpuGraphInfo&) const = default;
};

struct CpuSegmentInfo {
  std::vector<CpuOpInfo> ops;  // in execution order
  bool operator==(const CpuSegmentInfo&) const = default;
};

struct BpuSegmentInfo {
  uint32_t isa_version = 0;
  std::vector<uint8_t> program;  // opaque instruction stream
  std::vector<uint8_t> weights;
  std::vector<TensorRefInfo> inputs;
  std::vector<TensorRefInfo> outputs;
  bool operator==(const BpuSegmentInfo&) const = default;
};

struct SegmentInfo {
  std::string name;  // e.g. "BPU_<model>_subgraph_0"; unique in the model
  std::variant<BpuSegmentInfo, CpuSegmentInfo> body;
  bool operator==(const SegmentInfo&) const = default;
};

struct DeletedNodeInfo {
  std::string name;
  std::string op_type;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<AttributeInfo> attributes;  // format 1.4; no GRAPH attributes
  bool operator==(const DeletedNodeInfo&) const = default;
};

struct DebugEntryInfo {
  uint32_t segment_index = 0;
  uint32_t instruction_index = 0;
  std::string onnx_node;
  bool operator==(const DebugEntryInfo&) const = default;
};

using KeyValueList = std::vector<std::pair<std::string, std::string>>;  // ordered

struct ModelInfo {
  std::string name;
  std::string march;  // e.g. "bayes-e"
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  std::vector<TensorInfo> tensors;      // intermediates, referenced by TensorRefKind::INTERMEDIATE
  std::vector<SegmentInfo> segments;    // in execution order
  KeyValueList compile_parameters;
  KeyValueList deps_info;               // the "model deps info" block
  std::vector<DeletedNodeInfo> deleted_nodes;
  std::vector<DebugEntryInfo> debug_map;
  bool operator==(const ModelInfo&) const = default;
};

struct PackageInfo {
  std::string toolchain_name;     // e.g. "openbpu"
  std::string toolchain_version;  // e.g. "0.1.0"
  std::vector<ModelInfo> models;
  bool operator==(const PackageInfo&) const = default;
};

// ---- element sizes -------------------------------------------------------------------------

// Bits one element of `type` occupies in memory: 4 for S4/U4; 8 for Y/YUV444/RGB/BGR/S8/U8;
// 4 for NV12 and NV12_SEPARATE (12 bits per pixel spread over the 3 channels of the shape,
// e.g. aligned_shape (1,3,224,224) -> 75264 bytes); 16/32/64 for the wider types. 0 for a
// value outside the enum.
uint32_t element_bits(TensorType type) noexcept;

// ---- writing -------------------------------------------------------------------------------

// Builds the model file bytes (flatbuffer + footer) for `package` at format kFormatVersion,
// then runs verify_package() on them: a package the runtime would reject is never returned
// (the Status is the reader's). On success `*file` holds the bytes.
Status serialize_package(const PackageInfo& package, std::vector<uint8_t>* file) noexcept;

// As serialize_package() but without the semantic checks: for tests and tools that need to
// produce invalid files. Fails only with kPackageTooLarge / kOutOfMemory.
Status serialize_package_unchecked(const PackageInfo& package,
                                   std::vector<uint8_t>* file) noexcept;

// Appends the 16-byte footer (size, CRC-32C, magic) to a finished flatbuffer. For tools
// (and tests) that build or patch the flatbuffer themselves. Fails with kPackageTooLarge if
// the flatbuffer is 2 GiB or more.
Status seal_flatbuffer(std::span<const uint8_t> flatbuffer, std::vector<uint8_t>* file) noexcept;

// Writes `bytes` to `path` atomically and durably (design invariant 5, base::
// write_file_atomically): an unnamed file in the same directory is written, fsync'ed and linked
// as `path` (renamed over it from a temporary name if `path` exists), then the directory is
// fsync'ed; a process killed meanwhile leaves nothing. On failure `path` is untouched (unless
// only that last fsync failed), nothing is left behind, and the error (kCannotOpenFile /
// kWriteFailed) names `what` (e.g. "model file"), the path and the step that failed. Safe to
// call from several threads, also for the same path (the last rename wins).
Status write_file_atomically(const std::string& path, std::span<const uint8_t> bytes,
                             const char* what = "file") noexcept;

// write_file_atomically() of a finished model file. Does not check the bytes.
Status save_model_file(const std::string& path, std::span<const uint8_t> file) noexcept;

// ---- reading -------------------------------------------------------------------------------

// A package that passed verify_package(). Non-owning: it points into the buffer given to
// verify_package() and is valid while that buffer is alive and unchanged. Cheap to copy.
class PackageView {
 public:
  PackageView() = default;

  bool valid() const noexcept { return package_ != nullptr; }
  // The root table (generated flatbuffers accessors). Requires valid().
  const Package& package() const noexcept { return *package_; }
  // The whole file, footer included / the flatbuffer part (empty when not valid()).
  std::span<const uint8_t> file() const noexcept { return file_; }
  std::span<const uint8_t> flatbuffer() const noexcept {
    return valid() ? file_.first(file_.size() - kFooterSize) : std::span<const uint8_t>();
  }
  // Package.format_version, e.g. 1000 for 1.0. Requires valid().
  uint32_t format_version() const noexcept { return package_->format_version(); }

 private:
  friend Status verify_package(std::span<const uint8_t> file, PackageView* view) noexcept;
  std::span<const uint8_t> file_;
  const Package* package_ = nullptr;
};

// Runs every check listed at the top of this file over `file` (a whole model file, 8-byte
// aligned). On success sets `*view` (if non-null); the view borrows `file`.
Status verify_package(std::span<const uint8_t> file, PackageView* view) noexcept;

// Copies a verified package into plain values (e.g. for hb_model_info, hb_model_modifier,
// hb_pack). Requires view.valid().
Status unpack_package(const PackageView& view, PackageInfo* package) noexcept;

// Owns a model file's bytes in a kModelFileAlignment-aligned buffer and the verified view
// over them. Move-only; moving keeps the view valid (the buffer does not move).
class ModelFile {
 public:
  ModelFile() = default;
  ModelFile(ModelFile&&) noexcept = default;
  ModelFile& operator=(ModelFile&&) noexcept = default;
  ModelFile(const ModelFile&) = delete;
  ModelFile& operator=(const ModelFile&) = delete;

  // Reads `path` whole and verifies it. The status message names the path.
  static Status load(const std::string& path, ModelFile* out) noexcept;
  // Copies `bytes` (any alignment, e.g. a user's hbDNNInitializeFromDDR buffer) and verifies.
  static Status from_bytes(std::span<const uint8_t> bytes, ModelFile* out) noexcept;

  const PackageView& view() const noexcept { return view_; }
  const Package& package() const noexcept { return view_.package(); }

 private:
  struct AlignedDelete {
    void operator()(uint8_t* p) const noexcept;
  };
  std::unique_ptr<uint8_t[], AlignedDelete> storage_;
  size_t size_ = 0;
  PackageView view_;
};

// "X.Y" for a format_version value.
std::string format_version_string(uint32_t format_version);

}  // namespace openbpu::format
