#!/usr/bin/env bash
# Slow tier: the Debian packages (scripts/package.sh --lintian: lintian without errors) of the
# host build (amd64) and of the aarch64 build (arm64), each set unpacked with dpkg -x into a
# fresh root and checked there as sdk_install.sh / sdk_install_aarch64.sh check a cmake
# --install: the sample built against usr/ (CMake, pkg-config; cross-compiled for arm64 and run
# under qemu-user), its top-5 equal to hrt_model_exec's; samples/ocr_pipeline as sdk_ocr_pipeline
# and sdk_ocr_pipeline_aarch64 check it (OCR_ARGS: their CONVERSION_DIR DATASET_DIR REFERENCE_TOOL).
#   debian_packages.sh SOURCE_DIR BUILD_DIR AARCH64_BUILD_DIR WORK_DIR FIXTURE_DIR SMALL_MODELS_DIR X86_HRT_MODEL_EXEC
#                      CONVERSION_DIR DATASET_DIR OCR_REFERENCE_TOOL
set -euo pipefail
usage="usage: debian_packages.sh SOURCE_DIR BUILD_DIR AARCH64_BUILD_DIR WORK_DIR FIXTURE_DIR SMALL_MODELS_DIR X86_HRT_MODEL_EXEC CONVERSION_DIR DATASET_DIR OCR_REFERENCE_TOOL"
source_dir=$(readlink -f "${1:?$usage}")
build=$(readlink -f "${2:?$usage}")
aarch64_build=$(readlink -f "${3:?$usage}")
mkdir -p "${4:?$usage}"
work=$(readlink -f "$4")
fixture=$(readlink -f "${5:?$usage}")
small_models=$(readlink -f "${6:?$usage}")
x86_hrt=$(readlink -f "${7:?$usage}")
ocr_args=("$(readlink -f "${8:?$usage}")" "$(readlink -f "${9:?$usage}")" "$(readlink -f "${10:?$usage}")")
rm -rf "${work:?}"/*
unpack() {
  for deb in "$1"/*.deb; do
    dpkg-deb --info "$deb" | sed -nE 's/^ (Package|Version|Architecture|Depends|Installed-Size): /  &/p'
    dpkg -x "$deb" "$2"
  done
}
"$source_dir/scripts/package.sh" --build-dir "$build" --out "$work/amd64" --lintian
unpack "$work/amd64" "$work/root_amd64"
"$source_dir/tests/sdk/sdk_install.sh" --prefix "$work/root_amd64/usr" "$source_dir" "$work/check_amd64" "$fixture" "$small_models"
"$source_dir/tests/sdk/ocr_pipeline.sh" --prefix "$work/root_amd64/usr" "$source_dir" "$work/ocr_amd64" "${ocr_args[@]}" 005 70 5
"$source_dir/scripts/package.sh" --board --build-dir "$aarch64_build" --out "$work/arm64" --lintian
unpack "$work/arm64" "$work/root_arm64"
"$source_dir/tests/sdk/sdk_install_aarch64.sh" --prefix "$work/root_arm64/usr" "$source_dir" "$work/check_arm64" \
  "$fixture" "$small_models" "$x86_hrt"
"$source_dir/tests/sdk/ocr_pipeline_aarch64.sh" --prefix --qemu "$work/root_arm64/usr" "$source_dir" "$work/ocr_arm64" \
  "${ocr_args[@]}" 005 turned 352
rm -rf "$work/root_amd64" "$work/root_arm64"  # passed (set -e): the packages stay, the unpacked trees go
