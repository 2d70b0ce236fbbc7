# Sourced by the tests/sdk scripts: top-5 lists as "rank class score" lines, and their comparison.
# The caller defines bad() (records a failure).

# top5_of_dump DUMP_TXT: the top-5 of hrt_model_exec's text dump of an output
# (--dump_format txt --hybrid_dequantize_process true).
top5_of_dump() {
  /usr/bin/python3 - "$1" <<'PY'
import sys
values = [float(v) for line in open(sys.argv[1]) if not line.startswith("#") for v in line.split()]
order = sorted(range(len(values)), key=lambda i: (-values[i], i))[:5]
for k, i in enumerate(order):
    print(f"{k + 1} {i} {values[i]!r}")
PY
}

# hrt_top5 DUMP HRT MODEL INPUT [RUNNER...]: hrt_model_exec HRT's top-5 of output 0 on INPUT
# (dequantized, dumped as text into DUMP/), run through RUNNER (e.g. qemu) if given; non-zero,
# its output shown, if the inference fails.
hrt_top5() {
  local dump=$1 hrt=$2 model=$3 input=$4
  shift 4
  "$@" "$hrt" infer --model_file "$model" --input_file "$input" --enable_dump true \
    --dump_format txt --hybrid_dequantize_process true --dump_path "$dump" > "$dump.out" 2>&1 ||
    { cat "$dump.out"; return 1; }
  top5_of_dump "$dump"/model_infer_output_0_*.txt
}

# sample_top5 < OUTPUT: the classification sample's lines ("  1: class 17 score 0.123").
sample_top5() { sed -nE 's/^  ([0-9]+): class ([0-9]+) score (.*)$/\1 \2 \3/p'; }

# compare_top5 OURS REF WHAT: five entries, the same classes in the same order and the same
# float32 scores (both sides print enough digits to give the float back).
compare_top5() {
  /usr/bin/python3 - "$1" "$2" "$3" <<'PY' || bad "$3: the sample's top-5 differs from hrt_model_exec's"
import sys
import numpy as np
ours, ref, what = open(sys.argv[1]).read().split("\n"), open(sys.argv[2]).read().split("\n"), sys.argv[3]
ours = [l.split() for l in ours if l.strip()]
ref = [l.split() for l in ref if l.strip()]
ok = len(ours) == 5 and len(ref) == 5
for o, r in zip(ours, ref):
    ok = ok and o[1] == r[1] and np.float32(o[2]) == np.float32(r[2])
print(f"{what}: top-5 {'matches' if ok else 'DIFFERS'}: sample {[(o[1], o[2]) for o in ours]} hrt_model_exec {[(r[1], r[2]) for r in ref]}")
sys.exit(0 if ok else 1)
PY
}

# async_top5 MODEL < OUTPUT: the async_multi_model sample's lines of MODEL ("  small 1: index 6
# value 1.4") as "rank index value".
async_top5() { sed -nE "s/^  $1 ([0-9]+): index ([0-9]+) value (.*)\$/\\1 \\2 \\3/p"; }

# compare_async_models HRT WORK WHAT MODEL...: each model's top-5 in WORK/async.out (the
# async_multi_model sample's output) against hrt_model_exec HRT's on the sample's fixed inputs
# (write_async_inputs WORK/async_inputs).
compare_async_models() {
  local hrt=$1 work=$2 what=$3 m name
  shift 3
  for m in "$@"; do
    name=$(basename "$m" .bin)
    hrt_top5 "$work/hrt_async_$name" "$hrt" "$m" "$work/async_inputs/$name.bin" > "$work/ref_async_$name.txt" ||
      { bad "hrt_model_exec infer of $name failed"; continue; }
    async_top5 "$name" < "$work/async.out" > "$work/async_$name.txt"
    compare_top5 "$work/async_$name.txt" "$work/ref_async_$name.txt" "$what $name"
  done
}

# write_async_inputs DIR: the fixed inputs async_multi_model feeds, as files hrt_model_exec
# reads: the NV12 classifier's mid-grey 64x64 image (6144 bytes of 128) and the zero float
# inputs of the small models (tests/runtime/small_model.h: small 1x3x8x8, chain 1x16x16x16).
write_async_inputs() {
  mkdir -p "$1"
  head -c 6144 /dev/zero | tr '\0' '\200' > "$1/mobilenet_v1_nv12.bin"
  head -c 768 /dev/zero > "$1/small.bin"
  head -c 16384 /dev/zero > "$1/chain.bin"
}
