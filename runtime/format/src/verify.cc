// verify_package(): the container checks (size, footer, CRC, identifier, version), the
// flatbuffers Verifier, then the semantic checks of model_checks.cc.

#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include "internal.h"
#include "openbpu/format/crc32c.h"
#include "openbpu/format/model_file.h"

namespace openbpu::format {

namespace {

using internal::make_error;

std::string hex32(uint32_t v) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out = "0x";
  for (int shift = 28; shift >= 0; shift -= 4) out += kDigits[(v >> shift) & 0xFu];
  return out;
}

// Reads Package.format_version (field 0 of the root table) with a verifier that looks at the
// root table's vtable and that one field only.
Status read_format_version(std::span<const uint8_t> flatbuffer, uint32_t* version) {
  flatbuffers::Verifier verifier(flatbuffer.data(), flatbuffer.size(), /*max_depth=*/4,
                                 /*max_tables=*/4);
  const flatbuffers::uoffset_t root = verifier.VerifyOffset(0);
  if (root == 0) {
    return make_error(StatusCode::kInvalidFlatbuffer,
                      "model file flatbuffer is malformed: the root table offset points outside "
                      "the buffer");
  }
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(flatbuffer.data() + root);
  if (!table->VerifyTableStart(verifier) ||
      !table->VerifyField<uint32_t>(verifier, Package::VT_FORMAT_VERSION, sizeof(uint32_t))) {
    return make_error(StatusCode::kInvalidFlatbuffer,
                      "model file flatbuffer is malformed: cannot read the format version of the "
                      "root table");
  }
  *version = table->GetField<uint32_t>(Package::VT_FORMAT_VERSION, 0);
  return {};
}

Status check_format_version(uint32_t version) {
  const uint32_t major = version / 1000;
  const std::string ours = format_version_string(kFormatVersion);
  if (major > kFormatVersionMajor) {
    const std::string theirs = format_version_string(version);
    return make_error(StatusCode::kUnsupportedFormatVersion, "model file format ", theirs,
                      " needs a runtime that reads format ≥ ", theirs,
                      "; this runtime reads up to ", ours);
  }
  if (major < kFormatVersionOldestMajor) {
    return make_error(StatusCode::kUnsupportedFormatVersion, "model file format ",
                      format_version_string(version),
                      version == 0 ? " (format_version missing)" : "",
                      " is older than the oldest format this runtime reads (",
                      kFormatVersionOldestMajor, ".0); recompile the model");
  }
  return {};
}

Status verify(std::span<const uint8_t> file, const Package** verified) {
  if (file.data() == nullptr || file.size() < kMinFileSize) {
    return make_error(StatusCode::kFileTooSmall, "model file is ", file.size(),
                      " bytes; a model file has at least ", kMinFileSize, " (a flatbuffer and a ",
                      kFooterSize, "-byte footer)");
  }
  if (reinterpret_cast<uintptr_t>(file.data()) % kRequiredBufferAlignment != 0) {
    return make_error(StatusCode::kMisalignedBuffer, "model file buffer is not ",
                      kRequiredBufferAlignment,
                      "-byte aligned in memory; copy it with ModelFile::from_bytes");
  }
  const size_t flat_size = file.size() - kFooterSize;
  const uint8_t* footer = file.data() + flat_size;
  if (std::memcmp(footer + 8, kFooterMagic, sizeof kFooterMagic) != 0) {
    return make_error(StatusCode::kBadFooterMagic,
                      "not an OpenBPU model file, or a truncated one: the last 8 bytes are not "
                      "the footer magic \"OBPU_END\"");
  }
  const uint32_t stored_size = internal::load_le32(footer);
  if (stored_size != flat_size) {
    return make_error(StatusCode::kSizeMismatch, "model file footer records a ", stored_size,
                      "-byte flatbuffer but ", flat_size,
                      " bytes precede the footer: the file was truncated or extended");
  }
  const uint32_t stored_crc = internal::load_le32(footer + 4);
  const uint32_t computed_crc = crc32c(file.first(flat_size + 4));
  if (stored_crc != computed_crc) {
    return make_error(StatusCode::kChecksumMismatch,
                      "model file checksum mismatch (stored "
                      "CRC-32C ",
                      hex32(stored_crc), ", computed ", hex32(computed_crc),
                      "): the file is corrupted");
  }
  const auto flatbuffer = file.first(flat_size);
  if (!flatbuffers::BufferHasIdentifier(flatbuffer.data(), PackageIdentifier())) {
    return make_error(
        StatusCode::kBadFileIdentifier, "flatbuffer file identifier is ",
        internal::quote(std::string_view(reinterpret_cast<const char*>(flatbuffer.data()) + 4, 4)),
        ", expected 'OBPU': not an OpenBPU model file");
  }
  if (flat_size >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    return make_error(StatusCode::kPackageTooLarge, "model file flatbuffer is ", flat_size,
                      " bytes; flatbuffers are limited to ", FLATBUFFERS_MAX_BUFFER_SIZE - 1);
  }
  uint32_t version = 0;
  if (Status s = read_format_version(flatbuffer, &version); !s.ok()) return s;
  if (Status s = check_format_version(version); !s.ok()) return s;

  flatbuffers::Verifier::Options options;
  options.max_depth = 32;
  options.max_tables = 4000000;
  options.check_alignment = true;
  flatbuffers::Verifier verifier(flatbuffer.data(), flatbuffer.size(), options);
  if (!VerifyPackageBuffer(verifier)) {
    return make_error(StatusCode::kInvalidFlatbuffer,
                      "model file flatbuffer is malformed (flatbuffers::Verifier rejected it): "
                      "written by a broken or incompatible tool");
  }
  const Package* package = GetPackage(flatbuffer.data());
  if (Status s = internal::check_package(*package, flatbuffer); !s.ok()) return s;
  *verified = package;
  return {};
}

}  // namespace

Status verify_package(std::span<const uint8_t> file, PackageView* view) noexcept {
  return internal::guarded([&]() -> Status {
    const Package* package = nullptr;
    Status status = verify(file, &package);
    if (status.ok() && view != nullptr) {
      view->file_ = file;
      view->package_ = package;
    }
    return status;
  });
}

}  // namespace openbpu::format
