#!/usr/bin/env bash
# The test command: installs dependencies, builds (release, and the aarch64 cross build that the
# qemu and emulated-board tests run), runs every test with ctest (the emulated-board tests need
# root), builds the unit tests with ASan+UBSan and runs them, and the runtime's stress test
# (dnn_stress) with ThreadSanitizer, run on the converted models of the release tests.
# Exit status is non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh

echo "== release build"
cmake --preset release
cmake --build --preset release

echo "== aarch64 cross build (libdnn, hrt_model_exec: run under qemu and on the emulated board by the tests)"
cmake --preset aarch64
cmake --build --preset aarch64

echo "== sanitizer build (ASan+UBSan) of the unit tests"
cmake --preset asan
cmake --build --preset asan

echo "== ThreadSanitizer build of the runtime's stress test (libdnn + dnn_stress only)"
cmake --preset tsan
cmake --build --preset tsan --target dnn_stress

status=0
echo "== sanitizer unit tests"
ctest --preset asan || status=1
echo "== all tests (release)"
ctest --preset release || status=1
echo "== runtime stress test under ThreadSanitizer (model files written by the release tests)"
# 8 threads x 2 models x 500 inferences on the small models, then on small + chain (preemption;
# ~20 s each); the converted cls and cls_rgb take ~0.5 s per inference under TSan, so they run
# 8 threads x 2 models x 4 (~40 s).
stress=build/release/tests/runtime/stress conversion=build/release/tests/accuracy/conversion
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
build/tsan/tests/runtime/dnn_stress threads --model $stress/small.bin --model $stress/small_16x16.bin \
  --threads 8 --inferences 500 || status=1
build/tsan/tests/runtime/dnn_stress threads --model $stress/small.bin --model $stress/chain.bin \
  --threads 8 --inferences 500 || status=1
build/tsan/tests/runtime/dnn_stress threads --model $conversion/cls/model_output/cls.bin \
  --model $conversion/cls_rgb/model_output/cls_rgb.bin --threads 8 --inferences 4 || status=1
exit $status
