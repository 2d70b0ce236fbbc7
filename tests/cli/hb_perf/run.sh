#!/usr/bin/env bash
# hb_perf on the converted PP-OCR det and rec models (issue 24's bar): the report's files, its
# pages opened in headless Chromium (no console error, the picture shown: check_page.py), each
# subgraph JSON's latency and DDR bytes equal to makertbin's subgraph line, the subgraphs' sum
# equal to hrt_model_exec perf's simulated latency; a packed file per model with -m; errors.
# With compiler_parameters.debug: True (cls): the per-instruction rows, the JSON equal to makertbin's.
#   run.sh HB_PERF HB_PACK HRT_MODEL_EXEC HB_MAPPER CHROMIUM CONVERSION_DIR WORK_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
hb_perf=$1 pack=$2 hrt=$3 hb_mapper=$4 chromium=$5 conv=$6 work=$7
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "FAIL: $*"; exit 1; }

for m in det rec; do
  "$hb_perf" "$conv/$m/model_output/$m.bin" > "$m.out" 2>&1 || { cat "$m.out"; fail "hb_perf $m"; }
  grep -qx "WARNING bpu model don't have per-layer perf info." "$m.out" || fail "$m: no per-layer warning"
  d=hb_perf_result/$m
  for f in $m.html $m.png ${m}_subgraph_0.html ${m}_subgraph_0.json; do [ -s "$d/$f" ] || fail "$d/$f missing"; done
  [ "$(head -c 8 "$d/$m.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$m.png is not a PNG"
  /usr/bin/python3 "$here/check_page.py" "$chromium" "$d/$m.html" | tee page.out
  grep -qx "check_page: 1 image(s) shown" page.out || fail "$m.html: the picture is not shown"
  /usr/bin/python3 "$here/check_page.py" "$chromium" "$d/${m}_subgraph_0.html" > /dev/null
  # Each subgraph: the JSON against makertbin's line "FPS=…, latency = <us> us, DDR = <bytes> bytes   (see <name>.html)".
  total=0
  for json in "$d"/${m}_subgraph_*.json; do
    name=$(basename "$json" .json)
    line=$(grep "(see $name.html)" "$conv/$m/hb_mapper_makertbin.log") || fail "makertbin logged no line for $name"
    read -r us bytes < <(/usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]
assert s["BPU OPs per frame (working)"] >= s["BPU OPs per frame (effective)"] > 0, s
print("%.1f %d" % (s["latency (us)"], s["DDR bytes per frame"]))' "$json")
    [[ "$line" == *"latency = $us us, DDR = $bytes bytes"* ]] || fail "$name: hb_perf $us us / $bytes bytes, makertbin: $line"
    total=$(/usr/bin/python3 -c "print('%.1f' % ($total + $us))")
  done
  sim=$("$hrt" perf --model_file="$conv/$m/model_output/$m.bin" --frame_count=1 2>&1 |
        sed -n 's/^Simulated BPU latency (.*): \([0-9.]*\) us per frame.*/\1/p')
  /usr/bin/python3 -c "import sys; sys.exit(abs($sim - $total) > 0.05 * $(ls "$d"/${m}_subgraph_*.json | wc -l))" ||
    fail "$m: hrt_model_exec perf simulates $sim us, the subgraphs sum to $total us"
done

# cls converted with compiler_parameters.debug: True: per-instruction rows, and hb_perf's subgraph
# JSON is makertbin's, byte for byte (calibration_type max: the fastest conversion).
sed -e "s|working_dir: .*|working_dir: 'debug'|" -e "s|calibration_type: .*|calibration_type: 'max'|" \
  "$conv/cls/cls.yaml" > debug.yaml && printf "  debug: True\n" >> debug.yaml
"$hb_mapper" makertbin --config debug.yaml --model-type onnx > debug.out 2>&1 ||
  { tail -20 debug.out; fail "makertbin with debug: True"; }
rm -rf hb_perf_result && "$hb_perf" debug/cls.bin > debug_perf.out
! grep -q "WARNING bpu model" debug_perf.out || fail "per-layer warning with a debug map"
cmp debug/cls_subgraph_0.json hb_perf_result/cls/cls_subgraph_0.json || fail "debug JSON differs from makertbin's"
/usr/bin/python3 -c 'import json,sys; rows=json.load(open(sys.argv[1]))["layer details"]
assert len(rows) > 50 and sum(bool(r["layer"]) for r in rows) > 50, rows[:3]' hb_perf_result/cls/cls_subgraph_0.json ||
  fail "layer details"

# A packed file: every model, or the one -m names.
"$pack" "$conv/det/model_output/det.bin" "$conv/cls/model_output/cls.bin" -o comb.bin > /dev/null
rm -rf hb_perf_result && "$hb_perf" -m cls comb.bin > pack.out
[ "$(ls hb_perf_result)" = cls ] || fail "-m cls wrote $(ls hb_perf_result)"
code=0; "$hb_perf" -m nope comb.bin > /dev/null 2> err.txt || code=$?
[ "$code" = 1 ] && grep -q "comb.bin has no model named 'nope' (it has: det, cls)" err.txt || fail "-m nope: $code $(cat err.txt)"
head -c 100 comb.bin > broken.bin
code=0; "$hb_perf" broken.bin > /dev/null 2> err.txt || code=$?
[ "$code" = 1 ] && grep -q "^ERROR .*broken.bin" err.txt || fail "broken file: $code $(cat err.txt)"
echo "hb_perf: all checks passed"
