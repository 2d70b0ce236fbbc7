#!/usr/bin/env bash
# Where a scripts/test.sh run spent its time, as the Markdown tables of docs/testing.md:
#   scripts/test_timing.sh [BUILD_DIR] [COUNT]
# BUILD_DIR (default build/) holds the presets' folders. Per build: the objects compiled, the
# wall time of the last `ninja` run and its summed job time (jobs run 4 at a time on 2 cores,
# so the sum is not CPU time), and its slowest translation units. Per ctest label and the
# COUNT (default 20) slowest tests of the release build's last ctest run (Testing/Temporary).
# Read it right after a cold run: the ninja logs of an incremental build only hold what it
# rebuilt.
set -euo pipefail
build=${1:-build}
count=${2:-20}
[ -d "$build" ] || { echo "test_timing.sh: no folder $build" >&2; exit 2; }

echo "| build | objects | wall s | summed job s | slowest translation units (s) |"
echo "|---|---|---|---|---|"
for preset in release aarch64 asan tsan; do
  log=$build/$preset/.ninja_log
  [ -f "$log" ] || continue
  # .ninja_log v5: start_ms end_ms mtime output hash, times from the start of that build.
  awk -v p="$preset" '
    NR > 1 && $4 ~ /\.o$/ { n++; d = ($2 - $1) / 1000; sum += d; times[$4] = d }
    NR > 1 { if ($2 > wall) wall = $2 }
    END {
      k = 0
      for (f in times) order[++k] = f
      for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++)
        if (times[order[j]] > times[order[i]]) { t = order[i]; order[i] = order[j]; order[j] = t }
      top = ""
      for (i = 1; i <= 3 && i <= k; i++) {
        f = order[i]; sub(/.*\/src\//, "", f); sub(/.*CMakeFiles\//, "", f); sub(/\.o$/, "", f)
        top = top (i > 1 ? ", " : "") sprintf("%s %.0f", f, times[order[i]])
      }
      printf "| %s | %d | %.0f | %.0f | %s |\n", p, n, wall / 1000, sum, top
    }' "$log"
done

tests=$build/release/Testing/Temporary
if [ -f "$tests/LastTest.log" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  echo
  awk '/^[0-9]+\/[0-9]+ Test: / { name = $3 } /^Test time = / { print name, $4 }' \
    "$tests/LastTest.log" >"$tmp/times"
  echo "| ctest label (release) | tests | summed test s |"
  echo "|---|---|---|"
  for label in $(ctest --test-dir "$build/release" --print-labels | sed -n 's/^  //p'); do
    ctest --test-dir "$build/release" -N -L "^$label\$" | sed -n 's/^ *Test *#[0-9]*: //p' >"$tmp/names"
    awk -v l="$label" 'NR == FNR { want[$1] = 1; next } ($1 in want) { n++; s += $2 }
      END { printf "| %s | %d | %.0f |\n", l, n, s }' "$tmp/names" "$tmp/times"
  done
  awk '{ n++; s += $2 } END { printf "| all | %d | %.0f |\n", n, s }' "$tmp/times"
  echo
  echo "| slowest tests (release) | s |"
  echo "|---|---|"
  sort -k2 -rn "$tmp/times" | head -"$count" | awk '{ printf "| %s | %.1f |\n", $1, $2 }'
fi
