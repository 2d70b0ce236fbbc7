#!/usr/bin/env bash
# Slow tier: the Debian packages of the host build (scripts/package.sh --lintian: lintian
# without errors), unpacked with dpkg -x into a fresh root, and the checks of sdk_install.sh
# on that tree (the sample built against usr/ with CMake and pkg-config, its top-5 equal to
# the packaged hrt_model_exec's).
#   debian_packages.sh SOURCE_DIR BUILD_DIR WORK_DIR FIXTURE_DIR
set -euo pipefail
source_dir=$(readlink -f "${1:?usage: debian_packages.sh SOURCE_DIR BUILD_DIR WORK_DIR FIXTURE_DIR}")
build=$(readlink -f "${2:?}")
mkdir -p "${3:?}"
work=$(readlink -f "$3")
fixture=$(readlink -f "${4:?}")
rm -rf "${work:?}"/*
"$source_dir/scripts/package.sh" --build-dir "$build" --out "$work/packages" --lintian
for deb in "$work"/packages/*.deb; do
  dpkg-deb --info "$deb" | sed -nE 's/^ (Package|Version|Architecture|Depends|Installed-Size): /  &/p'
  dpkg -x "$deb" "$work/root"
done
"$source_dir/tests/sdk/sdk_install.sh" --prefix "$work/root/usr" "$source_dir" "$work/check" "$fixture"
