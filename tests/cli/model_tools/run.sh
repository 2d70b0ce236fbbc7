#!/usr/bin/env bash
# hb_pack and hb_model_modifier on the converted PP-OCR models (issue 24's bars):
#  - hb_pack det+cls+rec: hb_model_info -m and hrt_model_exec --model_name see each model, and
#    each model's output from the pack is byte-identical to its own file's; packing the pack,
#    one file, or a name twice fails with the reference's lines and leaves no file;
#  - hb_model_modifier: the candidates listed; cls's output Softmax, Reshape and Dequantize
#    removed in turn, the int32 output x its scale (hb_model_info prints it) equals the float
#    logits exactly, and rec's (6625 channels x 40) likewise; det's output Dequantize removed: int8 x scale equals det's float output;
#    cls's input Quantize removed: the caller's own quantization gives the original output;
#    the refusals (not at an edge, unknown node, a packed file) exit 1 and write nothing.
#   run.sh HB_PACK HB_MODEL_MODIFIER HB_MODEL_INFO HRT_MODEL_EXEC CONVERSION_DIR DATA_DIR WORK_DIR
set -euo pipefail
pack=$1 modifier=$2 info=$3 hrt=$4 conv=$5 data=$6 work=$7
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
model() { echo "$conv/$1/model_output/$1.bin"; }
x_cls=$data/evaluation/cls/input/000.npy x_det=$data/evaluation/det/input/000.npy
# infer MODEL INPUT DIR [hrt flags...]: dumps the outputs (raw bytes) into DIR.
infer() {
  local m=$1 x=$2 d=$3; shift 3
  mkdir -p "$d"
  "$hrt" infer --model_file="$m" --input_file="$x" --enable_dump --dump_path="$d" "$@" > "$d.out" 2>&1 ||
    { cat "$d.out"; fail "hrt_model_exec infer $m"; }
}
# expect_error CMD...: exit 1 and the ERROR lines in err.txt.
expect_error() {
  local code=0
  "$@" > out.txt 2> err.txt || code=$?
  [ "$code" = 1 ] || { cat out.txt err.txt; fail "exit $code, expected 1: $*"; }
}

# ---- hb_pack
"$pack" "$(model det)" "$(model cls)" "$(model rec)" -o comb.bin > pack.out
grep -q "INFO packed 3 models (det, cls, rec) into comb.bin" pack.out || fail "hb_pack's line: $(cat pack.out)"
"$info" comb.bin > info.out && [ "$(grep -c '^\*\*\*\*\*\*\*\* .* info \*' info.out)" = 3 ] || fail "hb_model_info comb.bin"
"$info" -m rec comb.bin | grep -q '^\*\*\*\*\*\*\*\* rec info' || fail "hb_model_info -m rec"
expect_error "$info" -m nope comb.bin
grep -q "has no model named 'nope' (it has: det, cls, rec)" err.txt || fail "-m nope: $(cat err.txt)"
for m in det cls rec; do
  x=$data/evaluation/$m/input/000.npy
  infer "$(model $m)" "$x" "alone_$m"
  infer comb.bin "$x" "packed_$m" --model_name=$m
  for f in alone_$m/*.bin; do cmp "$f" "packed_$m/$(basename "$f")" || fail "packed $m output differs"; done
done
expect_error "$pack" comb.bin "$(model cls)" -o again.bin
[ "$(cat err.txt)" = "ERROR exception in command: pack
ERROR model: comb.bin is a packed model, it can not be packed again!" ] || fail "pack of a pack: $(cat err.txt)"
[ ! -e again.bin ] || fail "again.bin written"
expect_error "$pack" "$(model cls)" "$(model cls)" -o twice.bin
grep -q "model name 'cls' is in both" err.txt || fail "duplicate names: $(cat err.txt)"
expect_error "$pack" "$(model cls)" -o one.bin
grep -q "needs at least two model files" err.txt || fail "one file: $(cat err.txt)"
[ -z "$(ls twice.bin one.bin 2>/dev/null)" ] || fail "a refused pack left a file"

# ---- hb_model_modifier
"$modifier" "$(model cls)" > list.out
grep -qx "INFO Nodes that can be deleted: \['x_HzQuantize', 'p2o.Softmax.0'\]" list.out || fail "candidates: $(cat list.out)"
"$modifier" "$(model cls)" -r p2o.Softmax.0 -r p2o.Add.87 -o cls_logits.bin > logits.out
"$modifier" cls_logits.bin -a Dequantize -o cls_int.bin > int.out
grep -q "INFO Node 'p2o.Add.87.conv_HzDequantize' is removed" int.out || fail "Dequantize not removed: $(cat int.out)"
grep -q "INFO modified model saved as cls_int.bin" int.out || fail "saved line"
grep -q "op_type: Dequantize; inputs: \['p2o.Add.87.conv'\]" hb_model_modifier.log || fail "log: $(cat hb_model_modifier.log)"
"$info" cls_int.bin > info_int.out
scales=$(sed -n "s/^deleted nodes: p2o.Add.87.conv_HzDequantize  (.*scales: \[\([^]]*\)\].*/\1/p" info_int.out)
[ -n "$scales" ] || fail "hb_model_info shows no Dequantize scale: $(tail -5 info_int.out)"
[ "$(wc -l < deleted_nodes_info.txt)" = 3 ] || fail "deleted_nodes_info.txt: $(cat deleted_nodes_info.txt)"
infer cls_logits.bin "$x_cls" logits
infer cls_int.bin "$x_cls" int
/usr/bin/python3 - "$scales" alone_cls/*.bin logits/*.bin int/*.bin <<'PY'
import sys, numpy as np
scales = np.array([float(s) for s in sys.argv[1].split(",")], np.float32)
probs, logits, ints = (np.fromfile(sys.argv[2], np.float32), np.fromfile(sys.argv[3], np.float32),
                       np.fromfile(sys.argv[4], np.int32))
assert ints.size == 2 and logits.size == 2, (ints, logits)
assert np.array_equal(ints.astype(np.float32) * scales, logits), (ints, scales, logits)
e = np.exp(logits - logits.max())
assert np.allclose(e / e.sum(), probs, atol=1e-6), (probs, logits)
PY
# rec's int32 head (6625 channels x 40 positions): per-channel scales in the logical layout.
"$modifier" "$(model rec)" -r p2o.Softmax.2 -r p2o.Add.277 -r p2o.Add.277.channels -o rec_logits.bin > /dev/null
"$modifier" rec_logits.bin -r p2o.Add.277.channels.conv_HzDequantize -o rec_int.bin > /dev/null
scales=$("$info" rec_int.bin | sed -n "s/^deleted nodes: p2o.Add.277.channels.conv_HzDequantize  (.*scales: \[\([^]]*\)\].*/\1/p")
infer rec_logits.bin "$data/evaluation/rec/input/000.npy" rec_logits
infer rec_int.bin "$data/evaluation/rec/input/000.npy" rec_int
/usr/bin/python3 - "$scales" rec_logits/*.bin rec_int/*.bin <<'PY'
import sys, numpy as np
scales = np.array([float(s) for s in sys.argv[1].split(",")], np.float32)
f, q = np.fromfile(sys.argv[2], np.float32), np.fromfile(sys.argv[3], np.int32)
assert scales.size == 6625 and f.size == q.size == 6625 * 40, (scales.size, f.size, q.size)
assert np.array_equal(q.reshape(6625, 40).astype(np.float32) * scales[:, None], f.reshape(6625, 40))
PY
"$modifier" "$(model det)" -r sigmoid_0.tmp_0_HzDequantize -o det_int.bin > /dev/null
scale=$("$info" det_int.bin | sed -n "s/^deleted nodes: .*scales: \[\([^]]*\)\].*/\1/p")
infer det_int.bin "$x_det" det_int
/usr/bin/python3 - "$scale" alone_det/*.bin det_int/*.bin <<'PY'
import sys, numpy as np
f, q = np.fromfile(sys.argv[2], np.float32), np.fromfile(sys.argv[3], np.int8)
assert f.size == q.size == 704 * 960, (f.size, q.size)
assert np.array_equal(q.astype(np.float32) * np.float32(sys.argv[1]), f)
PY
# The input side: the caller quantizes (round half to even, as the runtime's Quantize).
"$modifier" "$(model cls)" -r x_HzQuantize -o cls_qin.bin > qin.out
qscale=$("$info" cls_qin.bin | sed -n "s/^deleted nodes: .*scale: \([^;)]*\).*/\1/p")
qbits=$("$info" cls_qin.bin | sed -n "s/^deleted nodes: .*bits: \([0-9]*\).*/\1/p")
/usr/bin/python3 - "$qscale" "$x_cls" "$qbits" <<'PY'
import sys, numpy as np
x = np.load(sys.argv[2]).astype(np.float64)
bits = int(sys.argv[3])  # the input's type: int8, or int16 when the conversion widened it
top = 2 ** (bits - 1) - 1
q = np.clip(np.rint(x / np.float64(np.float32(sys.argv[1]))), -top - 1, top)
np.save("x_quantized.npy", q.astype(np.int8 if bits == 8 else np.int16))
PY
infer cls_qin.bin x_quantized.npy qin
cmp alone_cls/*.bin qin/*.bin || fail "cls with the caller's quantization differs"
# Refusals: nothing written.
expect_error "$modifier" "$(model cls)" -r p2o.Add.87 -o bad.bin
grep -q "node 'p2o.Add.87' (Reshape) cannot be removed: it neither reads a model input nor writes a model output" err.txt ||
  fail "inner node: $(cat err.txt)"
expect_error "$modifier" "$(model cls)" -r nope -o bad.bin
grep -q "has no CPU node named 'nope'" err.txt || fail "unknown node: $(cat err.txt)"
expect_error "$modifier" comb.bin -r x_HzQuantize -o bad.bin
grep -q "ERROR pack model is not supported" err.txt || fail "packed: $(cat err.txt)"
[ ! -e bad.bin ] || fail "a refused modification left bad.bin"
echo "model tools: all checks passed"
