#!/usr/bin/env bash
# Builds the libFuzzer targets (preset `fuzz`: clang, ASan+UBSan, build/fuzz; not part of CI's
# builds) and runs each for a while on its corpus (tests/fuzz/corpus/<target>) and dictionary
# (tests/fuzz/dict/<target>.dict). New inputs go to build/fuzz/corpus/<target>, findings to
# build/fuzz/findings/<target>/ (crash-*, leak-*, timeout-*, oom-*). Prints a table last:
# target, executions, seconds, coverage (edges, features), corpus size, findings.
# docs/testing.md, "Fuzzing": the targets and how CI replays the corpora.
#
#   scripts/fuzz.sh [--seconds N] [--runs N] [--merge] [TARGET...]
#     --seconds N  run each target at most N seconds (default 60)
#     --runs N     stop a target after N executions (whichever of --seconds and --runs comes
#                  first; issue 28's bar: --runs 1000000 --seconds 1800)
#     --merge      afterwards, minimise each target's repository corpus with what the run found
#                  (libFuzzer -merge=1: the inputs that add coverage, new ones up to a size per
#                  target, and every regression_*)
#     TARGET       model_file onnx_import caffe_import config_yaml quant_config tensor_files
#                  image_decode hrt_flags bpu_program (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."

all_targets=(model_file onnx_import caffe_import config_yaml quant_config tensor_files image_decode hrt_flags bpu_program)
seconds=60 runs=-1 merge=0 targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --merge) merge=1; shift ;;
    -h | --help) sed -n '2,18p' "$0" | cut -c3-; exit 0 ;;
    -*) echo "fuzz.sh: unknown option '$1'" >&2; exit 2 ;;
    *)
      if [[ ! " ${all_targets[*]} " =~ " $1 " ]]; then
        echo "fuzz.sh: unknown target '$1' (one of: ${all_targets[*]})" >&2; exit 2
      fi
      targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target "${targets[@]/#/fuzz_}"

build=build/fuzz
summary=()
status=0
for t in "${targets[@]}"; do
  work=$build/corpus/$t findings=$build/findings/$t log=$build/logs/$t.log
  mkdir -p "$work" "$findings" "$(dirname "$log")"
  dict=()
  [ -f tests/fuzz/dict/$t.dict ] && dict=(-dict=tests/fuzz/dict/$t.dict)
  echo "== $t: $seconds s$([ "$runs" -lt 0 ] || echo " or $runs executions")"
  # -timeout: 25 s, as OSS-Fuzz; image_decode 100 s (a small file claiming the largest picture
  # read, 64 megapixels, decodes to its end as zeros: ~60 s instrumented; a whole 64-megapixel
  # JPEG takes 4 s and 400 MB in a release build's hb_eval_preprocess, loaded machine);
  # -rss_limit_mb / -malloc_limit_mb: an input needing more than 2 GiB is a finding.
  rc=0 started=$SECONDS timeout=25
  [ "$t" != image_decode ] || timeout=100
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    $build/tests/fuzz/fuzz_$t -max_total_time="$seconds" -runs="$runs" -timeout="$timeout" -rss_limit_mb=2048 \
    -malloc_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$findings/" "${dict[@]}" \
    "$work" tests/fuzz/corpus/$t >"$log" 2>&1 || rc=$?
  [ $rc -eq 0 ] || status=1
  elapsed=$((SECONDS - started))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  done_line=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$done_line")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$done_line")
  corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$done_line")
  found=$(find "$findings" -type f | wc -l)
  summary+=("$(printf '%-14s %12s %8s %8s %8s %8s %9s' "$t" "${execs:-?}" "$elapsed" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$found")")
  if [ $rc -ne 0 ]; then
    echo "   FINDING (exit $rc): $(grep -m1 -E 'ERROR|fuzz target|Sanitizer|timeout|out-of-memory' "$log" || true)"
    echo "   log: $log; inputs: $findings/"
  fi
  if [ $merge -eq 1 ]; then
    # New inputs above a size per target are left out, so that each corpus stays under ~1 MB.
    case $t in
      onnx_import | caffe_import) max_kb=2 ;;
      model_file) max_kb=6 ;;
      bpu_program) max_kb=4 ;;
      *) max_kb=64 ;;
    esac
    fresh=$build/merged/$t small=$build/merge_candidates/$t
    rm -rf "$fresh" "$small" && mkdir -p "$fresh" "$small"
    find "$work" -type f -size -${max_kb}k -exec cp {} "$small"/ \;
    $build/tests/fuzz/fuzz_$t -merge=1 "$fresh" tests/fuzz/corpus/$t "$small" >>"$log" 2>&1
    # regression_* inputs (each reproduced a fixed finding) stay whatever their coverage.
    find tests/fuzz/corpus/$t -type f ! -name 'regression_*' -delete
    cp "$fresh"/* tests/fuzz/corpus/$t/
    for r in tests/fuzz/corpus/$t/regression_*; do  # merge output names inputs by SHA-1
      if [ -f "$r" ]; then rm -f "tests/fuzz/corpus/$t/$(sha1sum <"$r" | cut -d' ' -f1)"; fi
    done
    echo "   merged: $(ls tests/fuzz/corpus/$t | wc -l) inputs, $(du -sb tests/fuzz/corpus/$t | cut -f1) bytes"
  fi
done

echo
printf '%-14s %12s %8s %8s %8s %8s %9s\n' target executions seconds cov ft corpus findings
printf '%s\n' "${summary[@]}"
exit $status
