// Model file: round trip, on-disk layout, determinism, atomic save and load.
#include "openbpu/format/model_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "openbpu/format/crc32c.h"
#include "sample_package.h"

namespace openbpu::format {
namespace {

using test_support::sample_package;
using test_support::serialize_or_die;

uint32_t le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

TEST(ModelFile, RoundTripReadsBackEveryField) {
  const PackageInfo original = sample_package();
  const std::vector<uint8_t> file = serialize_or_die(original);
  PackageView view;
  const Status verified = verify_package(file, &view);
  ASSERT_TRUE(verified.ok()) << verified.message;
  ASSERT_TRUE(view.valid());
  PackageInfo read;
  const Status unpacked = unpack_package(view, &read);
  ASSERT_TRUE(unpacked.ok()) << unpacked.message;

  // Field by field for readable failures, then the whole structure.
  EXPECT_EQ(read.toolchain_name, "openbpu");
  EXPECT_EQ(read.toolchain_version, "0.1.0");
  ASSERT_EQ(read.models.size(), 2u);
  for (size_t m = 0; m < 2; ++m) {
    const ModelInfo& a = original.models[m];
    const ModelInfo& b = read.models[m];
    SCOPED_TRACE(a.name);
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.march, a.march);
    EXPECT_EQ(b.inputs, a.inputs);
    EXPECT_EQ(b.outputs, a.outputs);
    EXPECT_EQ(b.tensors, a.tensors);
    ASSERT_EQ(b.segments.size(), a.segments.size());
    for (size_t s = 0; s < a.segments.size(); ++s) {
      EXPECT_EQ(b.segments[s].name, a.segments[s].name);
      EXPECT_EQ(b.segments[s].body.index(), a.segments[s].body.index());
      EXPECT_TRUE(b.segments[s] == a.segments[s]) << a.segments[s].name;
    }
    EXPECT_EQ(b.compile_parameters, a.compile_parameters);
    EXPECT_EQ(b.deps_info, a.deps_info);
    EXPECT_EQ(b.deleted_nodes, a.deleted_nodes);
    EXPECT_EQ(b.debug_map, a.debug_map);
  }
  EXPECT_TRUE(read == original);

  // A few values checked against literals, so that a symmetric writer/reader bug cannot hide.
  const TensorInfo& data = read.models[0].inputs[0];
  EXPECT_EQ(data.tensor_type, TensorType::IMG_TYPE_NV12);
  EXPECT_EQ(static_cast<int>(data.tensor_type), 1);
  EXPECT_EQ(static_cast<int>(data.layout), 2);  // HB_DNN_LAYOUT_NCHW
  EXPECT_EQ(data.valid_shape, (std::vector<int64_t>{1, 3, 222, 222}));
  EXPECT_EQ(data.aligned_shape, (std::vector<int64_t>{1, 3, 222, 224}));
  EXPECT_EQ(data.aligned_byte_size, 74592u);
  EXPECT_EQ(data.stride, (std::vector<int64_t>{0, 0, 0, 0}));
  const TensorInfo& logits_int = read.models[0].tensors[0];
  EXPECT_EQ(static_cast<int>(logits_int.quanti_type), 2);  // SCALE
  ASSERT_EQ(logits_int.scale.size(), 10u);
  EXPECT_EQ(logits_int.scale[7], 3.5f);
  EXPECT_EQ(logits_int.zero_point[9], 5);
  EXPECT_EQ(logits_int.quantize_axis, 3);
  const auto& cpu = std::get<CpuSegmentInfo>(read.models[0].segments[1].body);
  EXPECT_EQ(cpu.ops[0].inputs[2], TensorRefInfo::absent());
  EXPECT_EQ(cpu.ops[1].attributes[2].s, std::string("exact\0bytes", 11));
  EXPECT_EQ(cpu.ops[1].attributes[3].ints[3], int64_t{1} << 40);
  ASSERT_TRUE(cpu.ops[1].attributes[6].t.has_value());
  EXPECT_EQ(cpu.ops[1].attributes[6].t->data, (std::vector<uint8_t>{0x21, 0x03}));
  EXPECT_EQ(read.models[1].outputs[0].shift, (std::vector<uint8_t>{3, 4, 5, 6}));
  EXPECT_EQ(read.models[0].debug_map[1].onnx_node, "Relu_1");

  // The view reads the same values in place.
  const Package& package = view.package();
  EXPECT_EQ(view.format_version(), kFormatVersion);
  EXPECT_EQ(package.models()->Get(1)->name()->str(), "tiny");
  const auto* seg = package.models()->Get(0)->segments()->Get(0);
  ASSERT_EQ(seg->body_type(), SegmentBody::BpuSegment);
  EXPECT_EQ(seg->body_as_BpuSegment()->weights()->size(), 300u);
  EXPECT_EQ(view.flatbuffer().size() + kFooterSize, file.size());
}

TEST(ModelFile, EnumValuesAreTheCApiValues) {
  // hbDNNTensorLayout, hbDNNDataType, hbDNNQuantiType numbering (reference §1.3).
  EXPECT_EQ(static_cast<int>(TensorLayout::NHWC), 0);
  EXPECT_EQ(static_cast<int>(TensorLayout::NCHW), 2);
  EXPECT_EQ(static_cast<int>(TensorLayout::NONE), 255);
  EXPECT_EQ(static_cast<int>(TensorType::IMG_TYPE_Y), 0);
  EXPECT_EQ(static_cast<int>(TensorType::IMG_TYPE_NV12_SEPARATE), 2);
  EXPECT_EQ(static_cast<int>(TensorType::IMG_TYPE_BGR), 5);
  EXPECT_EQ(static_cast<int>(TensorType::TENSOR_TYPE_S4), 6);
  EXPECT_EQ(static_cast<int>(TensorType::TENSOR_TYPE_U8), 9);
  EXPECT_EQ(static_cast<int>(TensorType::TENSOR_TYPE_F32), 13);
  EXPECT_EQ(static_cast<int>(TensorType::TENSOR_TYPE_U64), 18);
  EXPECT_EQ(static_cast<int>(QuantiType::NONE), 0);
  EXPECT_EQ(static_cast<int>(QuantiType::SHIFT), 1);
  EXPECT_EQ(static_cast<int>(QuantiType::SCALE), 2);
  EXPECT_EQ(element_bits(TensorType::TENSOR_TYPE_S4), 4u);
  EXPECT_EQ(element_bits(TensorType::IMG_TYPE_NV12), 4u);
  EXPECT_EQ(element_bits(TensorType::IMG_TYPE_RGB), 8u);
  EXPECT_EQ(element_bits(TensorType::TENSOR_TYPE_F16), 16u);
  EXPECT_EQ(element_bits(TensorType::TENSOR_TYPE_S32), 32u);
  EXPECT_EQ(element_bits(TensorType::TENSOR_TYPE_F64), 64u);
  EXPECT_EQ(element_bits(static_cast<TensorType>(19)), 0u);
}

TEST(ModelFile, OnDiskLayoutIsFlatbufferThenFooter) {
  const std::vector<uint8_t> file = serialize_or_die(sample_package());
  ASSERT_GE(file.size(), kMinFileSize);
  const size_t n = file.size() - kFooterSize;
  EXPECT_EQ(n % 64, 0u) << "BPU weights force a 64-byte aligned flatbuffer size";
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(file.data()) + 4, 4), "OBPU");
  EXPECT_STREQ(PackageIdentifier(), kFileIdentifier);
  EXPECT_EQ(le32(file.data() + n), n);
  EXPECT_EQ(le32(file.data() + n + 4), crc32c(std::span<const uint8_t>(file.data(), n + 4)));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(file.data()) + n + 8, 8), "OBPU_END");

  // Aligned payloads relative to the file start.
  PackageView view;
  ASSERT_TRUE(verify_package(file, &view).ok());
  const auto* bpu = view.package().models()->Get(0)->segments()->Get(0)->body_as_BpuSegment();
  EXPECT_EQ((bpu->weights()->data() - file.data()) % 64, 0);
  EXPECT_EQ((bpu->program()->data() - file.data()) % 16, 0);
  const auto* op = view.package().models()->Get(0)->segments()->Get(1)->body_as_CpuSegment()->ops()->Get(0);
  EXPECT_EQ((op->constants()->Get(0)->data()->data() - file.data()) % 16, 0);
}

TEST(ModelFile, SerializationIsDeterministic) {
  const PackageInfo package = sample_package();
  const std::vector<uint8_t> first = serialize_or_die(package);
  const std::vector<uint8_t> second = serialize_or_die(package);
  EXPECT_EQ(first, second);
  // An equal package built separately (other addresses, other capacities) gives the same bytes.
  PackageInfo copy = sample_package();
  copy.models[0].inputs.reserve(100);
  copy.toolchain_name.reserve(1000);
  EXPECT_EQ(serialize_or_die(copy), first);
  // Reading a file back and writing it again reproduces it byte for byte.
  PackageView view;
  ASSERT_TRUE(verify_package(first, &view).ok());
  PackageInfo read;
  ASSERT_TRUE(unpack_package(view, &read).ok());
  EXPECT_EQ(serialize_or_die(read), first);
  // And a different package gives different bytes.
  copy.models[1].march = "bayes";
  EXPECT_NE(serialize_or_die(copy), first);
}

TEST(ModelFile, CheckedSerializationRejectsInvalidPackageAndLeavesOutputAlone) {
  PackageInfo package = sample_package();
  package.models[1].outputs[0].aligned_byte_size = 255;
  std::vector<uint8_t> file = {1, 2, 3};
  const Status status = serialize_package(package, &file);
  EXPECT_EQ(status.code, StatusCode::kAlignedByteSizeMismatch) << status.message;
  EXPECT_EQ(file, (std::vector<uint8_t>{1, 2, 3}));
  std::vector<uint8_t> unchecked;
  EXPECT_TRUE(serialize_package_unchecked(package, &unchecked).ok());
  EXPECT_FALSE(unchecked.empty());
}

TEST(ModelFile, VerifyRequiresAlignedBufferAndFromBytesCopies) {
  const std::vector<uint8_t> file = serialize_or_die(sample_package());
  std::vector<uint8_t> shifted(file.size() + 8);
  std::memcpy(shifted.data() + 1, file.data(), file.size());
  const std::span<const uint8_t> misaligned(shifted.data() + 1, file.size());
  const Status status = verify_package(misaligned, nullptr);
  EXPECT_EQ(status.code, StatusCode::kMisalignedBuffer) << status.message;
  EXPECT_NE(status.message.find("ModelFile::from_bytes"), std::string::npos);

  ModelFile model;
  const Status copied = ModelFile::from_bytes(misaligned, &model);
  ASSERT_TRUE(copied.ok()) << copied.message;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(model.view().file().data()) % kModelFileAlignment, 0u);
  const auto* bpu = model.package().models()->Get(0)->segments()->Get(0)->body_as_BpuSegment();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(bpu->weights()->data()) % 64, 0u);
  EXPECT_TRUE(std::equal(file.begin(), file.end(), model.view().file().begin()));

  // Moving keeps the view valid (the storage does not move).
  ModelFile moved = std::move(model);
  EXPECT_TRUE(moved.view().valid());
  EXPECT_EQ(moved.package().models()->size(), 2u);
}

class ModelFileOnDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("openbpu_format_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  std::filesystem::path dir_;
};

TEST_F(ModelFileOnDisk, SaveThenLoad) {
  const std::vector<uint8_t> file = serialize_or_die(sample_package());
  const std::string path = (dir_ / "model.bin").string();
  const Status saved = save_model_file(path, file);
  ASSERT_TRUE(saved.ok()) << saved.message;
  EXPECT_EQ(entries(), (std::vector<std::string>{"model.bin"})) << "no temporary file is left";

  ModelFile model;
  const Status loaded = ModelFile::load(path, &model);
  ASSERT_TRUE(loaded.ok()) << loaded.message;
  EXPECT_TRUE(std::equal(file.begin(), file.end(), model.view().file().begin(),
                         model.view().file().end()));
  PackageInfo read;
  ASSERT_TRUE(unpack_package(model.view(), &read).ok());
  EXPECT_TRUE(read == sample_package());
}

TEST_F(ModelFileOnDisk, SaveReplacesAnExistingFileWhole) {
  const std::string path = (dir_ / "model.bin").string();
  { std::ofstream(path) << std::string(100000, 'x'); }
  const std::vector<uint8_t> file = serialize_or_die(sample_package());
  ASSERT_TRUE(save_model_file(path, file).ok());
  std::ifstream in(path, std::ios::binary);
  const std::vector<uint8_t> on_disk((std::istreambuf_iterator<char>(in)),
                                     std::istreambuf_iterator<char>());
  EXPECT_EQ(on_disk, file);
  EXPECT_EQ(entries(), (std::vector<std::string>{"model.bin"}));
}

TEST_F(ModelFileOnDisk, SaveIntoMissingDirectoryFailsAndCreatesNothing) {
  const std::string path = (dir_ / "missing" / "model.bin").string();
  const Status status = save_model_file(path, serialize_or_die(sample_package()));
  EXPECT_EQ(status.code, StatusCode::kCannotOpenFile);
  EXPECT_NE(status.message.find("model.bin"), std::string::npos) << status.message;
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(entries().empty());
}

TEST_F(ModelFileOnDisk, LoadReportsMissingFileDirectoryAndCorruption) {
  ModelFile model;
  const std::string missing = (dir_ / "nope.bin").string();
  Status status = ModelFile::load(missing, &model);
  EXPECT_EQ(status.code, StatusCode::kCannotOpenFile);
  EXPECT_NE(status.message.find("nope.bin"), std::string::npos) << status.message;

  status = ModelFile::load(dir_.string(), &model);
  EXPECT_EQ(status.code, StatusCode::kCannotOpenFile) << status.message;

  std::vector<uint8_t> file = serialize_or_die(sample_package());
  file[file.size() / 2] ^= 0x10;
  const std::string corrupt = (dir_ / "corrupt.bin").string();
  ASSERT_TRUE(save_model_file(corrupt, file).ok());
  status = ModelFile::load(corrupt, &model);
  EXPECT_EQ(status.code, StatusCode::kChecksumMismatch);
  EXPECT_EQ(status.message.rfind(corrupt + ": model file checksum mismatch", 0), 0u) << status.message;
  EXPECT_FALSE(model.view().valid());
}

TEST(ModelFile, StatusCodeNamesAreDistinct) {
  const StatusCode codes[] = {
      StatusCode::kOk, StatusCode::kCannotOpenFile, StatusCode::kReadFailed,
      StatusCode::kWriteFailed, StatusCode::kOutOfMemory, StatusCode::kInternalError,
      StatusCode::kFileTooSmall, StatusCode::kMisalignedBuffer, StatusCode::kBadFooterMagic,
      StatusCode::kSizeMismatch, StatusCode::kChecksumMismatch, StatusCode::kBadFileIdentifier,
      StatusCode::kPackageTooLarge, StatusCode::kUnsupportedFormatVersion,
      StatusCode::kInvalidFlatbuffer, StatusCode::kNoModels, StatusCode::kMissingName,
      StatusCode::kDuplicateModelName, StatusCode::kMissingMarch, StatusCode::kNoModelInputs,
      StatusCode::kNoModelOutputs, StatusCode::kNoSegments, StatusCode::kDuplicateSegmentName,
      StatusCode::kDuplicateTensorName, StatusCode::kBadEnumValue, StatusCode::kRankMismatch,
      StatusCode::kRankTooLarge, StatusCode::kNegativeDimension,
      StatusCode::kValidExceedsAligned, StatusCode::kAlignedByteSizeMismatch,
      StatusCode::kStrideRankMismatch, StatusCode::kStrideOutOfBounds,
      StatusCode::kQuantiTypeMismatch, StatusCode::kQuantParamLength,
      StatusCode::kQuantizeAxisOutOfRange, StatusCode::kBadScale, StatusCode::kTensorTooLarge,
      StatusCode::kMissingSegmentBody, StatusCode::kUnknownSegmentKind,
      StatusCode::kEmptyBpuProgram, StatusCode::kEmptyCpuSegment, StatusCode::kNoOutputs,
      StatusCode::kTensorRefKindNotAllowed, StatusCode::kTensorRefOutOfRange,
      StatusCode::kTensorWrittenTwice, StatusCode::kTensorReadBeforeWritten,
      StatusCode::kModelOutputNotWritten, StatusCode::kMisalignedData,
      StatusCode::kBadConstantType, StatusCode::kConstantSizeMismatch,
      StatusCode::kAttributeMismatch, StatusCode::kDuplicateAttributeName,
      StatusCode::kDebugEntryOutOfRange};
  std::set<std::string> names;
  std::set<int32_t> values;
  for (StatusCode c : codes) {
    const std::string name = status_code_name(c);
    EXPECT_NE(name, "unknown") << static_cast<int>(c);
    EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_TRUE(values.insert(static_cast<int32_t>(c)).second) << name;
  }
  EXPECT_STREQ(status_code_name(static_cast<StatusCode>(9999)), "unknown");
  EXPECT_EQ(format_version_string(1000), "1.0");
  EXPECT_EQ(format_version_string(2013), "2.13");
}

}  // namespace
}  // namespace openbpu::format
