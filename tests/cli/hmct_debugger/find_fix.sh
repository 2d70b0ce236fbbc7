#!/usr/bin/env bash
# hmct-debugger find-fix on the PP-OCR cls model (bayes-e): the as-given conversion when it
# already meets the target; a metric command whose value is known for every candidate (the
# number of node_info settings in the candidate's yaml), so that the search's doubling and
# bisection must end at the smallest prefix reaching the target; the final files in the
# yaml's working_dir equal a plain conversion of find_fix.yaml (the stage models; the .bin
# records its working_dir); the errors.
#   find_fix.sh HMCT_DEBUGGER HB_MAPPER CONVERSION_DIR WORK_DIR
set -euo pipefail
tool=$1 hb_mapper=$2 conversion=$3 work=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
sed "s/working_dir: .*/working_dir: 'out'/" "$conversion/cls/cls.yaml" > cls.yaml

# Target already met: exit 0, one row, no node_info, the models in out/.
"$tool" find-fix --config cls.yaml --target 0 -d 2 > met.out || fail "target 0: $(tail -3 met.out)"
[ "$(wc -l < out/find_fix_report.txt)" -eq 3 ] || fail "report rows: $(cat out/find_fix_report.txt)"
[ ! -s out/find_fix.diff ] || fail "a diff for a met target"
[ -f out/cls.bin ] && [ -f out/cls_quantized_model.onnx ] || fail "no final model"
[ ! -e out/find_fix_candidates ] || fail "candidates left behind"

# A metric that counts the candidate yaml's node_info settings: every prefix of k nodes has a
# known value, so the smallest k reaching 7 is the answer (found by doubling, then bisection).
cat > count.sh <<'SH'
#!/bin/sh
grep -c -E "(InputType|OutputType|ON): " "$(dirname "$1")/candidate.yaml" || true
SH
chmod +x count.sh
rm -rf out
status=0
"$tool" find-fix --config cls.yaml --target 7 -d 2 --metric-command "$work/count.sh" > count.out || status=$?
[ $status -eq 0 ] || fail "count target 7: exit $status: $(tail -3 count.out)"
grep -q "^Target reached: " count.out || fail "$(tail -5 count.out)"
# Every tried prefix below the kept one stayed under 7, k - 1 among them; the kept row reaches it.
awk -F'\t' 'NR > 2 && $1 ~ /^[0-9]+$/ {
  split($2, w, " "); k = w[2] + 0
  if ($5 == "yes") { kept = k; kept_metric = $3 }
  tried[k] = $3
} END {
  if (kept_metric < 7) exit 1
  for (k in tried) if (k + 0 < kept && tried[k] >= 7) exit 1
  if (kept > 1 && !((kept - 1) in tried)) exit 1
}' out/find_fix_report.txt || fail "not the smallest prefix: $(cat out/find_fix_report.txt)"
grep -q "^+ node_info\['" out/find_fix.diff || fail "no diff"
# The final files are a plain conversion of find_fix.yaml.
sed "s|working_dir: .*|working_dir: again|" out/find_fix.yaml > again.yaml
"$hb_mapper" makertbin --config again.yaml --model-type onnx > again.out 2>&1 || fail "find_fix.yaml does not convert"
for f in cls_calibrated_model.onnx cls_quantized_model.onnx; do
  cmp "out/$f" "again/$f" || fail "$f differs from find_fix.yaml's conversion"
done

# Errors: exit 1 with the rule.
expect_error() {  # expect_error PATTERN ARGS...
  local pattern=$1; shift
  if "$tool" "$@" > err.out 2>&1; then fail "accepted: $*"; fi
  grep -q -- "$pattern" err.out || fail "'$*' said: $(cat err.out)"
}
expect_error "latency-budget 12ms" find-fix --config cls.yaml --target 1 --latency-budget 12ms
expect_error "is not a number" find-fix --config cls.yaml --target 2 --metric-command "echo hello"
expect_error "exited with status 3" find-fix --config cls.yaml --target 2 --metric-command "sh -c 'exit 3'"
expect_error "no-such.yaml" find-fix --config no-such.yaml --target 1
echo "find-fix: all checks passed"
