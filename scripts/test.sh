#!/usr/bin/env bash
# The test command (CI's: .ci/run runs it). Installs dependencies, builds (release; the aarch64
# cross build that the qemu and emulated-board tests run; the ASan+UBSan build of the unit
# tests; the ThreadSanitizer build of the runtime's stress test), runs every ctest test of the
# release build but the slow tier (the emulated-board tests need root), the unit and
# conformance tests under ASan+UBSan, and the stress test under TSan on the models the release
# tests converted. Prints each stage's wall time at the end, also when something failed. Exit
# status is non-zero if anything fails. docs/testing.md: what runs where, and the time budgets.
#
#   scripts/test.sh           everything (CI)
#   scripts/test.sh --quick   the daily loop: incremental release build, then the unit,
#                             conformance and model tests and the fast integration tests
#                             (label quick): no sanitizer, aarch64 or full-size accuracy runs
#   scripts/test.sh --slow    the slow tier (label slow, not in CI): full-size runs whose fast
#                             twins are in CI; builds release and aarch64 incrementally
set -uo pipefail
cd "$(dirname "$0")/.."

mode=full
case "${1:-}" in
  "") ;;
  --quick) mode=quick ;;
  --slow) mode=slow ;;
  -h | --help) sed -n '2,15p' "$0" | cut -c3-; exit 0 ;;
  *) echo "test.sh: unknown argument '$1' (use --quick or --slow, or nothing for the full run)" >&2; exit 2 ;;
esac

status=0
names=() seconds=() results=()
# stage NAME COMMAND...: runs the command, records its wall time and result; a failure makes
# the exit status non-zero but later stages still run (their own failures are reported too).
stage() {
  local name=$1 start=$SECONDS rc=0
  shift
  echo "== $name"
  "$@" || rc=$?
  names+=("$name") seconds+=($((SECONDS - start)))
  if [ $rc -eq 0 ]; then results+=(ok); else results+=("FAILED ($rc)"); status=1; fi
  return $rc
}
summary() {
  echo
  echo "== timing summary (wall time per stage)"
  local i
  for i in "${!names[@]}"; do
    printf '%-64s %5d s  %s\n' "${names[$i]}" "${seconds[$i]}" "${results[$i]}"
  done
  printf '%-64s %5d s  (%d min %02d s)  %s\n' "total" "$SECONDS" $((SECONDS / 60)) $((SECONDS % 60)) \
    "$([ $status -eq 0 ] && echo ok || echo FAILED)"
}
trap summary EXIT

stage "install dependencies" scripts/install_deps.sh || exit 1

if [ $mode = quick ]; then
  stage "release build (incremental)" bash -c 'cmake --preset release >/dev/null && cmake --build --preset release' || exit 1
  stage "unit, conformance, model and quick integration tests (release)" \
    ctest --preset release -L 'unit|conformance|models|quick'
  exit $status
fi
if [ $mode = slow ]; then
  stage "release build (incremental)" bash -c 'cmake --preset release >/dev/null && cmake --build --preset release' || exit 1
  stage "aarch64 cross build (incremental)" \
    bash -c 'cmake --preset aarch64 >/dev/null && cmake --build --preset aarch64' || exit 1
  stage "the slow tier (label slow)" ctest --preset slow
  exit $status
fi

# A build failure stops the run: later stages would fail on missing programs.
stage "release build" bash -c 'cmake --preset release && cmake --build --preset release' || exit 1
stage "aarch64 cross build (libdnn, hrt_model_exec)" \
  bash -c 'cmake --preset aarch64 && cmake --build --preset aarch64' || exit 1
stage "ASan+UBSan build of the unit and conformance tests" \
  bash -c 'cmake --preset asan && cmake --build --preset asan' || exit 1
stage "TSan build of the runtime's stress test (libdnn + dnn_stress)" \
  bash -c 'cmake --preset tsan && cmake --build --preset tsan --target dnn_stress' || exit 1

stage "unit and conformance tests under ASan+UBSan" ctest --preset asan
stage "all tests (release)" ctest --preset release

# 8 threads x 2 models x 500 inferences on the small models, then on small + chain (preemption),
# the latter also through the UCP API (300 iterations);
# the converted cls and cls_rgb take ~0.5 s per inference under TSan, so 8 threads x 2 models x 4.
tsan_stress() {
  local stress=build/release/tests/runtime/stress conversion=build/release/tests/accuracy/conversion
  local bin=build/tsan/tests/runtime/dnn_stress rc=0
  export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
  $bin threads --model $stress/small.bin --model $stress/small_16x16.bin --threads 8 --inferences 500 || rc=1
  $bin threads --model $stress/small.bin --model $stress/chain.bin --threads 8 --inferences 500 || rc=1
  $bin ucp --model $stress/small.bin --model $stress/chain.bin --threads 8 --inferences 300 || rc=1
  $bin threads --model $conversion/cls/model_output/cls.bin \
    --model $conversion/cls_rgb/model_output/cls_rgb.bin --threads 8 --inferences 4 || rc=1
  return $rc
}
stage "runtime stress test under TSan (models of the release tests)" tsan_stress
exit $status
