#!/usr/bin/env bash
# hmct-debugger on the converted PP-OCR rec model (bayes-e) and 2 calibration samples: every
# subcommand's files in the reference's folders, the tables checked against each other and
# against an independent NumPy computation, the figures decoded (PNG size, SVG root), the
# reference's short options, and the errors.
#   run.sh HMCT_DEBUGGER CONVERSION_DIR OCR_DATA_DIR WORK_DIR
set -euo pipefail
tool=$1 conversion=$2 data=$3 work=$4
model=$conversion/rec/model_output/rec_calibrated_model.onnx
quantized_model=$conversion/rec/model_output/rec_quantized_model.onnx
cal=$data/calibration/rec/input
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
figure() {  # figure STEM: the PNG decodes at 1200x700 and the SVG is an <svg> document
  /usr/bin/python3 -c "
import sys; from PIL import Image; import xml.etree.ElementTree as ET
im = Image.open(sys.argv[1] + '.png'); im.load()
assert im.size == (1200, 700), im.size
assert len(im.getcolors(1 << 20) or range(99)) > 3, 'blank figure'
assert ET.parse(sys.argv[1] + '.svg').getroot().tag.endswith('svg')
" "$1" || fail "figure $1"
}

# get-sensitivity-of-nodes: every metric, sorted by the first.
"$tool" get-sensitivity-of-nodes "$model" "$cal" -d 2 -m cosine-similarity mse mre sqnr chebyshev \
  -s sens > sens.out
head -1 sens/node_sensitivity.txt | grep -q $'node\ttype\tcosine-similarity\tmse\tmre\tsqnr\tchebyshev' ||
  fail "sensitivity header: $(head -1 sens/node_sensitivity.txt)"
rows=$(($(wc -l < sens/node_sensitivity.txt) - 1))
[ "$rows" -gt 100 ] || fail "only $rows quantized nodes ranked"
tail -n +2 sens/node_sensitivity.txt | awk -F'\t' 'NR > 1 && $3 < prev { exit 1 } { prev = $3 }' ||
  fail "not sorted by cosine"
figure sens/node_sensitivity
# Sorted by mse (descending: the worst first), and one weight / activation at a time.
"$tool" get-sensitivity-of-nodes "$model" "$cal" -d 2 -m mse -s by_mse > /dev/null
tail -n +2 by_mse/node_sensitivity.txt | awk -F'\t' 'NR > 1 && $3 > prev { exit 1 } { prev = $3 }' ||
  fail "not sorted by mse"
"$tool" get-sensitivity-of-nodes "$model" "$cal" -d 2 -n weight -s weights > /dev/null
tail -n +2 weights/node_sensitivity.txt | awk -F'\t' '$2 != "weight" || $1 !~ /_HzCalibration$/ { exit 1 }' ||
  fail "weight rows"
# -i: the two named candidates only, with the cosines of the full ranking.
first=$(sed -n 2p sens/node_sensitivity.txt | cut -f1) second=$(sed -n 3p sens/node_sensitivity.txt | cut -f1)
"$tool" get-sensitivity-of-nodes "$model" "$cal" -d 2 -i "$second" "$first" -s some > /dev/null
[ "$(tail -n +2 some/node_sensitivity.txt | cut -f1,3)" = "$(sed -n 2,3p sens/node_sensitivity.txt | cut -f1,3)" ] ||
  fail "-i rows differ from the full ranking"

# plot-acc-error: the default curves, and the reference's -nq.
"$tool" plot-acc-error "$model" "$cal" -d 2 -s acc > /dev/null
head -1 acc/accumulate_error.txt | grep -q $'quantize all\tquantize weights\tquantize activations' ||
  fail "acc-error header"
figure acc/accumulate_error
"$tool" plot-acc-error "$model" "$cal" -d 2 -nq "$first" -s acc_nq > /dev/null
head -1 acc_nq/accumulate_error.txt | grep -q $'quantize all\tquantize all but '"$first" || fail "-nq"
# The last node's "quantize all" cosine is its output's cosine with everything quantized, as
# sensitivity-analysis -o that node reports at k = 0.
last=$(tail -1 acc/accumulate_error.txt | cut -f2)
"$tool" sensitivity-analysis "$model" "$cal" -d 2 -p 2 -c 2 -o "$last" -s ana > /dev/null
all=$(tail -1 acc/accumulate_error.txt | cut -f3) k0=$(sed -n 2p ana/sensitivity_analysis.txt | cut -f3)
[ "$all" = "$k0" ] || fail "quantize-all output cosine $all != sensitivity-analysis k=0 $k0"
[ "$(wc -l < ana/sensitivity_analysis.txt)" -eq 4 ] || fail "sensitivity-analysis rows"
figure ana/sensitivity_analysis

# plot-distribution / channelwise: a weight against NumPy, an activation, the model input.
weight=$(tail -n +2 weights/node_sensitivity.txt | head -1 | cut -f1)
"$tool" plot-distribution "$model" "$cal" -d 2 -n "$weight" x -s dis > dis.out
figure "dis/$weight"
figure dis/x
"$tool" get-channelwise-data-distribution "$model" "$cal" -d 2 -n "$weight" -s cw > /dev/null
figure "cw/${weight}_channelwise"
/usr/bin/python3 - "$model" "${weight%_HzCalibration}" "cw/${weight}_channelwise.txt" <<'PY' || fail "channelwise != numpy"
import sys, numpy as np, onnx
from onnx import numpy_helper
m = onnx.load(sys.argv[1])
w = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}[sys.argv[2]]
rows = [l.split('\t') for l in open(sys.argv[3]).read().splitlines()[1:]]
assert len(rows) == w.shape[0], (len(rows), w.shape)
for c, row in enumerate(rows):
    v = w[c].ravel().astype(np.float64)
    assert abs(float(row[1]) - v.min()) < 1e-5 and abs(float(row[5]) - v.max()) < 1e-5, (c, row)
    s = np.sort(v); med = s[int(0.5 * (len(s) - 1) + 0.5)]
    assert abs(float(row[3]) - med) < 1e-5, (c, row, med)
PY

# runall: the five folders.
"$tool" runall "$model" "$cal" -dn 1 -s all > /dev/null
for d in node_sensitivity accumulate_error data_distribution channelwise_distribution sensitivity_analysis; do
  [ -n "$(ls all/$d/*.png 2>/dev/null)" ] || fail "runall: no figure in $d"
done

# Errors: exit 1 with the rule, nothing crashes.
expect_error() {  # expect_error PATTERN ARGS...
  local pattern=$1; shift
  if "$tool" "$@" > err.out 2>&1; then fail "accepted: $*"; fi
  grep -q -- "$pattern" err.out || fail "'$*' said: $(cat err.out)"
}
expect_error "no HzCalibration node" get-sensitivity-of-nodes "$quantized_model" "$cal"
expect_error "metric 'l2'" get-sensitivity-of-nodes "$model" "$cal" -m l2
expect_error "not a directory" plot-acc-error "$model" "$work/none"
expect_error "no calibration node, calibrated tensor or node named 'nope'" plot-distribution "$model" "$cal" -n nope
expect_error "node type 'layer'" get-sensitivity-of-nodes "$model" "$cal" -n layer
mkdir bad && head -c 100 /dev/zero > bad/0.bin
expect_error "100 bytes" plot-acc-error "$model" bad
echo "hmct-debugger: all checks passed"
