#!/usr/bin/env bash
# The test command: installs dependencies, builds (release), runs every test with ctest, then
# builds the unit tests with ASan+UBSan and runs them. Exit status is non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh

echo "== release build"
cmake --preset release
cmake --build --preset release

echo "== aarch64 cross build of the board-side libraries (kernels)"
cmake --preset aarch64
cmake --build --preset aarch64

echo "== sanitizer build (ASan+UBSan) of the unit tests"
cmake --preset asan
cmake --build --preset asan

status=0
echo "== sanitizer unit tests"
ctest --preset asan || status=1
echo "== all tests (release)"
ctest --preset release || status=1
exit $status
