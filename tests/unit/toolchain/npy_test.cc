#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"
#include "openbpu/common/npy.h"

namespace openbpu {
namespace {

using kernels::DataType;
using kernels::Tensor;

TEST(Npy, RoundTripsEveryType) {
  for (DataType t : {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kInt8,
                     DataType::kUint8, DataType::kInt16, DataType::kUint16, DataType::kInt32,
                     DataType::kUint32, DataType::kInt64, DataType::kUint64, DataType::kBool}) {
    Tensor x(t, {2, 3});
    auto* bytes = static_cast<uint8_t*>(x.raw_data());
    for (size_t i = 0; i < x.byte_size(); ++i) bytes[i] = static_cast<uint8_t>(t == DataType::kBool ? i % 2 : i * 7);
    const Tensor y = parse_npy(to_npy(x), "mem");
    EXPECT_EQ(y.dtype(), t);
    EXPECT_EQ(y.shape(), x.shape());
    EXPECT_EQ(0, std::memcmp(x.raw_data(), y.raw_data(), x.byte_size()));
  }
  const Tensor s = parse_npy(to_npy(Tensor::scalar(2.5f)), "mem");
  EXPECT_TRUE(s.shape().empty());
  EXPECT_EQ(s.float_at(0), 2.5);
}

TEST(Npy, HeaderIsAlignedTo64Bytes) {
  const std::string bytes = to_npy(Tensor(DataType::kFloat32, {1, 3, 48, 320}));
  EXPECT_EQ((bytes.size() - 4 * 3 * 48 * 320) % 64, 0u);
}

TEST(Npy, ReadsFortranOrder) {
  std::string header = "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }";
  header.append(128 - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes.push_back(static_cast<char>(header.size()));
  bytes.push_back(0);
  bytes += header;
  const int32_t column_major[] = {1, 4, 2, 5, 3, 6};  // [[1,2,3],[4,5,6]]
  bytes.append(reinterpret_cast<const char*>(column_major), sizeof column_major);
  const Tensor t = parse_npy(bytes, "f.npy");
  EXPECT_EQ(t.to_int64_vector(), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
}

TEST(Npy, RejectsBadFilesWithTheirName) {
  const std::string good = to_npy(Tensor(DataType::kFloat32, {4}));
  auto message = [](const std::string& bytes) {
    try {
      parse_npy(bytes, "in.npy");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("hello").find("in.npy: not a .npy file"), std::string::npos);
  EXPECT_NE(message(good.substr(0, good.size() - 3)).find("truncated"), std::string::npos);
  EXPECT_NE(message(good.substr(0, 20)).find("truncated"), std::string::npos);
  std::string bad_type = good;
  bad_type.replace(bad_type.find("<f4"), 3, "<c8");
  EXPECT_NE(message(bad_type).find("unsupported .npy element type '<c8'"), std::string::npos);
}

TEST(AtomicFile, LeavesNoTemporaryBehind) {
  const auto dir = std::filesystem::temp_directory_path() / "openbpu_atomic_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  write_file_atomically(dir / "a.bin", "hello");
  write_file_atomically(dir / "a.bin", "world");
  EXPECT_EQ(read_file(dir / "a.bin"), "world");
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
  EXPECT_THROW(write_file_atomically(dir / "missing" / "a.bin", "x"), Error);
  EXPECT_THROW(read_file(dir / "nope"), Error);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace openbpu
