// Corrupted files: truncation, bit flips, wrong identifier, future versions, malformed
// flatbuffers behind a valid checksum. Each must be rejected with a code and a message,
// never a crash (these tests also run under ASan/UBSan).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "openbpu/format/model_file.h"
#include "sample_package.h"

namespace openbpu::format {
namespace {

using test_support::flatbuffer_of;
using test_support::sample_package;
using test_support::seal;
using test_support::serialize_or_die;
using test_support::verify;

constexpr uint32_t kSeed = 20240611u;  // printed with every failure

TEST(Corruption, TruncationAtTwentyOffsetsIsRejected) {
  const std::vector<uint8_t> file = serialize_or_die(sample_package());
  const size_t size = file.size();
  const size_t n = size - kFooterSize;  // start of the footer
  const std::set<size_t> offsets = {0,         1,         4,         7,         8,
                                    16,        23,        24,        100,       size / 4,
                                    size / 2,  3 * size / 4, n - 1,  n,         n + 1,
                                    n + 4,     n + 7,     n + 8,     n + 12,    size - 1};
  ASSERT_EQ(offsets.size(), 20u);
  for (size_t length : offsets) {
    ASSERT_LT(length, size);
    const std::vector<uint8_t> truncated(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(length));
    const Status status = verify(truncated);
    EXPECT_FALSE(status.ok()) << "truncated to " << length << " of " << size << " bytes";
    EXPECT_FALSE(status.message.empty()) << length;
    if (length < kMinFileSize) {
      EXPECT_EQ(status.code, StatusCode::kFileTooSmall) << length << ": " << status.message;
    } else {
      EXPECT_TRUE(status.code == StatusCode::kBadFooterMagic ||
                  status.code == StatusCode::kSizeMismatch ||
                  status.code == StatusCode::kChecksumMismatch)
          << length << ": " << status_code_name(status.code) << ": " << status.message;
    }
  }
}

TEST(Corruption, EmptyAndExtendedFilesAreRejected) {
  EXPECT_EQ(verify({}).code, StatusCode::kFileTooSmall);
  EXPECT_EQ(verify_package(std::span<const uint8_t>(), nullptr).code, StatusCode::kFileTooSmall);

  std::vector<uint8_t> file = serialize_or_die(sample_package());
  file.push_back(0);
  EXPECT_EQ(verify(file).code, StatusCode::kBadFooterMagic);

  // A whole valid footer appended to a valid file: the size field no longer matches.
  std::vector<uint8_t> twice = serialize_or_die(sample_package());
  const std::vector<uint8_t> footer(twice.end() - kFooterSize, twice.end());
  twice.insert(twice.end(), footer.begin(), footer.end());
  const Status status = verify(twice);
  EXPECT_EQ(status.code, StatusCode::kSizeMismatch) << status.message;
  EXPECT_NE(status.message.find("truncated or extended"), std::string::npos);
}

// Every single-bit flip is caught by the footer: CRC-32C detects all 1-bit errors.
TEST(Corruption, TwoHundredRandomBitFlipsAreRejected) {
  const std::vector<uint8_t> file = serialize_or_die(sample_package());
  const size_t n = file.size() - kFooterSize;
  std::mt19937 rng(kSeed);
  std::uniform_int_distribution<size_t> byte_of(0, file.size() - 1);
  std::uniform_int_distribution<int> bit_of(0, 7);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t offset = byte_of(rng);
    const int bit = bit_of(rng);
    std::vector<uint8_t> flipped = file;
    flipped[offset] ^= static_cast<uint8_t>(1u << bit);
    const Status status = verify(flipped);
    // Where the flip lands decides which check fires first.
    const StatusCode expected = offset < n       ? StatusCode::kChecksumMismatch
                                : offset < n + 4 ? StatusCode::kSizeMismatch
                                : offset < n + 8 ? StatusCode::kChecksumMismatch
                                                 : StatusCode::kBadFooterMagic;
    EXPECT_EQ(status.code, expected)
        << "seed " << kSeed << " trial " << trial << ": bit " << bit << " of byte " << offset
        << " (file " << file.size() << " bytes): " << status.message;
    EXPECT_FALSE(status.message.empty());
  }
}

TEST(Corruption, ChecksumMessageNamesBothValues) {
  std::vector<uint8_t> file = serialize_or_die(sample_package());
  file[10] ^= 0x01;
  const Status status = verify(file);
  ASSERT_EQ(status.code, StatusCode::kChecksumMismatch);
  EXPECT_NE(status.message.find("stored CRC-32C 0x"), std::string::npos) << status.message;
  EXPECT_NE(status.message.find("computed 0x"), std::string::npos) << status.message;
}

TEST(Corruption, WrongFileIdentifierWithValidChecksum) {
  std::vector<uint8_t> flat = flatbuffer_of(serialize_or_die(sample_package()));
  flat[4] = 'H';
  flat[5] = 'B';
  flat[6] = 'M';
  flat[7] = '1';
  const Status status = verify(seal(flat));
  EXPECT_EQ(status.code, StatusCode::kBadFileIdentifier) << status.message;
  EXPECT_NE(status.message.find("'HBM1'"), std::string::npos) << status.message;
  EXPECT_NE(status.message.find("'OBPU'"), std::string::npos) << status.message;
}

std::vector<uint8_t> with_version(uint32_t version) {
  std::vector<uint8_t> flat = flatbuffer_of(serialize_or_die(sample_package()));
  EXPECT_TRUE(GetMutablePackage(flat.data())->mutate_format_version(version));
  return flat;
}

TEST(Corruption, OlderMinorVersionIsRead) {
  // A 1.0 file (before CpuOp.opset) passes verification; the runtime decides what it can run.
  const Status status = verify(seal(with_version(1000)));
  EXPECT_TRUE(status.ok()) << status.message;
}

TEST(Corruption, FutureMajorVersionNeedsANewerRuntime) {
  const Status status = verify(seal(with_version(2000)));
  EXPECT_EQ(status.code, StatusCode::kUnsupportedFormatVersion);
  EXPECT_EQ(status.message,
            "model file format 2.0 needs a runtime that reads format ≥ 2.0; this runtime reads "
            "up to 1.4");
  const Status minor = verify(seal(with_version(3007)));
  EXPECT_EQ(minor.code, StatusCode::kUnsupportedFormatVersion);
  EXPECT_NE(minor.message.find("format 3.7 needs a runtime that reads format ≥ 3.7"),
            std::string::npos)
      << minor.message;
}

TEST(Corruption, NewerMinorVersionIsRead) {
  PackageView view;
  const std::vector<uint8_t> file = seal(with_version(kFormatVersion + 5));
  const Status status = verify_package(file, &view);
  ASSERT_TRUE(status.ok()) << status.message;
  EXPECT_EQ(view.format_version(), kFormatVersion + 5);
}

TEST(Corruption, MissingOrOldVersionIsRejected) {
  const Status status = verify(seal(with_version(999)));
  EXPECT_EQ(status.code, StatusCode::kUnsupportedFormatVersion);
  EXPECT_NE(status.message.find("format 0.999 is older than"), std::string::npos)
      << status.message;
}

// The version is read before the rest is verified: a newer file whose body this runtime's
// verifier would reject still gets the version message.
TEST(Corruption, VersionIsCheckedBeforeTheFlatbufferVerifier) {
  for (uint32_t version : {kFormatVersion, 2000u}) {
    std::vector<uint8_t> flat = with_version(version);
    const auto* models = GetPackage(flat.data())->models();
    const size_t length_at = static_cast<size_t>(reinterpret_cast<const uint8_t*>(models) - flat.data());
    flat[length_at + 3] = 0x10;  // models vector length far beyond the buffer
    const Status status = verify(seal(flat));
    EXPECT_EQ(status.code, version == kFormatVersion ? StatusCode::kInvalidFlatbuffer
                                                     : StatusCode::kUnsupportedFormatVersion)
        << version << ": " << status.message;
  }
}

TEST(Corruption, GarbageBehindAValidChecksumIsRejected) {
  std::mt19937 rng(kSeed);
  for (size_t size : {8u, 16u, 64u, 1000u}) {
    std::vector<uint8_t> flat(size);
    for (auto& b : flat) b = static_cast<uint8_t>(rng());
    flat[4] = 'O';
    flat[5] = 'B';
    flat[6] = 'P';
    flat[7] = 'U';
    const Status status = verify(seal(flat));
    EXPECT_FALSE(status.ok()) << size;
    EXPECT_TRUE(status.code == StatusCode::kInvalidFlatbuffer ||
                status.code == StatusCode::kUnsupportedFormatVersion)
        << size << ": " << status_code_name(status.code) << " " << status.message;
  }
  std::vector<uint8_t> zeros(64, 0);
  EXPECT_EQ(verify(seal(zeros)).code, StatusCode::kBadFileIdentifier);
}

// Fuzz the verifier: bit flips and overwritten byte ranges inside the flatbuffer, re-sealed so
// that the checksum passes. Any outcome is fine except a crash, an internal error or a
// silent message; the sanitizer build checks for undefined behaviour.
TEST(Corruption, ResealedCorruptionNeverCrashes) {
  const std::vector<uint8_t> flat = flatbuffer_of(serialize_or_die(sample_package()));
  std::mt19937 rng(kSeed);
  std::uniform_int_distribution<size_t> byte_of(0, flat.size() - 1);
  int rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> mutated = flat;
    if (trial % 3 == 2) {
      const size_t start = byte_of(rng);
      const size_t length = 1 + rng() % 8;
      for (size_t i = start; i < start + length && i < mutated.size(); ++i) {
        mutated[i] = static_cast<uint8_t>(rng());
      }
    } else {
      mutated[byte_of(rng)] ^= static_cast<uint8_t>(1u << (rng() % 8));
    }
    const std::vector<uint8_t> file = seal(mutated);
    PackageView view;
    const Status status = verify_package(file, &view);
    if (status.ok()) {
      // Still a valid package: it must unpack.
      PackageInfo info;
      EXPECT_TRUE(unpack_package(view, &info).ok()) << "seed " << kSeed << " trial " << trial;
      continue;
    }
    ++rejected;
    EXPECT_NE(status.code, StatusCode::kInternalError) << trial << ": " << status.message;
    EXPECT_FALSE(status.message.empty()) << "seed " << kSeed << " trial " << trial;
    EXPECT_FALSE(view.valid());
  }
  EXPECT_GT(rejected, 300) << "most structural corruption should be caught";
}

}  // namespace
}  // namespace openbpu::format
