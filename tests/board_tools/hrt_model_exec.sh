#!/usr/bin/env bash
# hrt_model_exec on the converted PP-OCR cls model:
#   hrt_model_exec.sh CASE HRT_MODEL_EXEC HB_MAPPER CONVERSION_DIR DATASET_DIR
# CASE: model_info | infer | dump_intermediate | perf | profile | errors.
#   model_info  the reference layout's lines (§3.3 of the toolchain facts)
#   infer       one held-out .npy through --enable_dump: the .bin dump equals, byte for byte, the
#               raw data of the .npy `hb_mapper infer` writes for the quantized model
#   perf        --frame_count=20 --thread_num=2: the final block and the simulated latency and
#               throughput lines
#   dump_intermediate  --dump_intermediate=1: per-layer .bin files (input, BPU, CPU layers); the
#               last one equals the --enable_dump output; =2 (infer) and =3 (perf): the same .bin
#               files, each with a .txt holding its values (float and int8 ones checked)
#   profile     perf --profile_path: profiler.log (two JSON objects separated by `***`, the perf
#               figures in the first, BPU and CPU layers in the second) and profiler.csv; an
#               unwritable folder is one line on stderr, not a failure
#   errors      bad flags, a missing file, a wrong input size: non-zero exit and a message
#   roi_infer   the resizer conversion of cls (cls_resizer): --roi_infer on an RGB .npy at the
#               model's size with the whole-image ROI gives the outputs plain infer gives on the
#               resized input it dumps; the same image pasted into a larger canvas and cut out by
#               its exact ROI (ROI file) gives the same bytes as roi 0, a 2x-down ROI as roi 1;
#               perf --roi_infer; ROI errors
set -euo pipefail
case_name=${1:?usage: hrt_model_exec.sh CASE HRT_MODEL_EXEC HB_MAPPER CONVERSION_DIR DATASET_DIR}
exe=$(readlink -f "${2:?}") mapper=$(readlink -f "${3:?}")
conversion=$(readlink -f "${4:?}") data=$(readlink -f "${5:?}")
dir=$conversion/cls/model_output
bin=$dir/cls.bin onnx=$dir/cls_quantized_model.onnx
for f in "$bin" "$onnx"; do
  [ -f "$f" ] || { echo "hrt_model_exec.sh: $f is missing (conversion_accuracy_cls did not run)" >&2; exit 1; }
done
# The first held-out input, by glob (not `ls | head -1`: once head exits, ls can die of SIGPIPE
# while the listing is longer than a pipe write, and pipefail would end the script silently).
inputs=("$data"/evaluation/cls/input/*.npy)
npy=${inputs[0]}
[ -f "$npy" ] || { echo "hrt_model_exec.sh: no .npy under $data/evaluation/cls/input" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

expect() {  # expect FILE LINE: LINE is a whole line of FILE
  grep -qxF -- "$2" "$1" || { echo "missing line: '$2'" >&2; cat "$1" >&2; exit 1; }
}
expect_fail() {  # expect_fail TEXT ARGS...: non-zero exit and TEXT on stderr
  local text=$1; shift
  if "$exe" "$@" >"$work/out" 2>"$work/err"; then echo "expected failure: $*" >&2; exit 1; fi
  grep -qF -- "$text" "$work/err" || { echo "'$text' not in the error of: $*" >&2; cat "$work/err" >&2; exit 1; }
}

case "$case_name" in
  model_info)
    "$exe" model_info --model_file="$bin" >"$work/out"
    for line in "This model file has 1 model:" "[model name]: cls" "input[0]: " "name: x" \
        "input source: HB_DNN_INPUT_FROM_DDR" "valid shape: (1,3,48,192,)" "aligned shape: (1,3,48,192,)" \
        "aligned byte size: 110592" "tensor type: HB_DNN_TENSOR_TYPE_F32" "tensor layout: HB_DNN_LAYOUT_NCHW" \
        "quanti type: NONE" "stride: (110592,36864,768,4,)" "output[0]: " "name: softmax_0.tmp_0" \
        "valid shape: (1,2,)" "---------------------------------------------------------------------"; do
      expect "$work/out" "$line"
    done
    ;;
  infer)
    "$exe" infer --model_file "$bin" --input_file "$npy" --enable_dump --dump_path="$work/dump" >"$work/out"
    expect "$work/out" "infer success"
    dump=$work/dump/model_infer_output_0_softmax_0.tmp_0.bin
    "$mapper" infer --model-file "$onnx" --input "x=$npy" --output-dir "$work/ref" >/dev/null
    ref=$work/ref/softmax_0.tmp_0.npy
    # The .npy's raw data: everything after its header (magic 6, version 2, length 2, header).
    header=$(( 10 + $(od -An -tu2 -j8 -N2 "$ref" | tr -d ' ') ))
    tail -c +$((header + 1)) "$ref" >"$work/ref.raw"
    cmp "$dump" "$work/ref.raw" || { echo "the dump differs from hb_mapper infer's output" >&2; exit 1; }
    echo "bit-identical: $(stat -c %s "$dump") bytes"
    ;;
  dump_intermediate)
    # Every layer's outputs: the model input (layer 000), at least one BPU segment, and the last
    # layer's output file holds exactly the bytes --enable_dump writes for the model output.
    "$exe" infer --model_file "$bin" --input_file "$npy" --enable_dump --dump_intermediate=1 --dump_path="$work/dump" >"$work/out"
    expect "$work/out" "infer success"
    ls "$work/dump" >"$work/files"
    grep -qE '^cls_000_input_input_x\.bin$' "$work/files" || { echo "no model-input dump" >&2; cat "$work/files" >&2; exit 1; }
    grep -qE '^cls_[0-9]{3}_BPU_.*\.bin$' "$work/files" || { echo "no BPU-segment dump" >&2; cat "$work/files" >&2; exit 1; }
    last=$(grep -E '_softmax_0\.tmp_0\.bin$' "$work/files" | grep -v '^model_infer_output' | sort | tail -n 1)
    [ -n "$last" ] || { echo "no layer dump of the model output" >&2; cat "$work/files" >&2; exit 1; }
    cmp "$work/dump/$last" "$work/dump/model_infer_output_0_softmax_0.tmp_0.bin"
    # The input dump is the .npy's data (the float input, dense).
    in_dump=$work/dump/cls_000_input_input_x.bin
    [ "$(stat -c %s "$in_dump")" -eq 110592 ] || { echo "the input dump is not 110592 bytes" >&2; exit 1; }
    cmp <(tail -c 110592 "$npy") "$in_dump"
    echo "$(wc -l <"$work/files") files; the last layer ($last) equals the model output dump"
    # Levels 2 and 3 (infer and perf): the same .bin files, each with a .txt beside it holding
    # its values (BPU outputs valid-shape at every level, docs/hrt_model_exec.md).
    "$exe" infer --model_file "$bin" --input_file "$npy" --dump_intermediate=2 --dump_path="$work/dump2" >"$work/out"
    "$exe" perf --model_file "$bin" --frame_count=1 --dump_intermediate=3 --dump_path="$work/dump3" >"$work/out"
    for level in 2 3; do
      for f in "$work/dump"/cls_*.bin; do
        [ -f "$work/dump$level/${f##*/}" ] || { echo "level $level: no ${f##*/}" >&2; exit 1; }
      done
      /usr/bin/python3 - "$work/dump$level" <<'PY'
import os, re, struct, sys
folder = sys.argv[1]
names = sorted(os.listdir(folder))
bins = [n for n in names if n.endswith(".bin")]
txts = [n for n in names if n.endswith(".txt")]
assert bins and [n[:-4] for n in bins] == [n[:-4] for n in txts], f"not one .txt per .bin: {names}"
codes = {"float32": "f", "float64": "d", "float16": "e", "int8": "b", "uint8": "B", "int16": "h", "uint16": "H",
         "int32": "i", "uint32": "I", "int64": "q", "uint64": "Q", "bool": "?"}
seen = set()
for b in bins:
    lines = open(os.path.join(folder, b[:-4] + ".txt")).read().splitlines()
    m = re.fullmatch(r"# ([a-z0-9]+)\[([0-9,]*)\]", lines[0])
    assert m and m.group(1) in codes, f"{b[:-4]}.txt: header {lines[0]!r}"
    dtype, dims = m.group(1), [int(d) for d in m.group(2).split(",") if d]
    code = codes[dtype]
    raw = open(os.path.join(folder, b), "rb").read()
    count = len(raw) // struct.calcsize(code)
    want = struct.unpack(f"<{count}{code}", raw)
    expected = 1
    for d in dims: expected *= d
    assert count == expected, f"{b}: {count} values, the txt header says {lines[0]}"
    text = " ".join(lines[1:]).split()
    assert len(text) == count, f"{b}: {len(text)} values in the txt, {count} in the bin"
    if dims:
        assert len(lines) - 1 == count // dims[-1], f"{b}: {len(lines) - 1} lines, not one per innermost row"
    if code in "fde":  # the text round-trips to the stored float
        got = struct.unpack(f"<{count}{code}", struct.pack(f"<{count}{code}", *map(float, text)))
    else:
        got = tuple(int(v) for v in text)
        if code == "?": want = tuple(int(v) for v in want)
    bad = next((i for i in range(count) if got[i] != want[i]), None)
    assert bad is None, f"{b}: value {bad}: txt {text[bad]}, bin {want[bad]}"
    seen.add(dtype)
assert "float32" in seen and seen & {"int8", "int16"}, f"expected float32 and integer layer dumps, got {sorted(seen)}"
print(f"{folder}: {len(bins)} .bin + .txt pairs agree ({', '.join(sorted(seen))})")
PY
    done
    for f in "$work/dump"/cls_*.bin; do cmp "$f" "$work/dump2/${f##*/}"; done
    ;;
  perf)
    "$exe" perf --model_file="$bin" --frame_count=20 --thread_num=2 >"$work/out"
    for line in "Running condition:" "  Thread number is: 2" "  Frame count   is: 20" "Perf result:"; do
      expect "$work/out" "$line"
    done
    for pattern in '^Frame count: 20,  Thread Average: [0-9.]+ ms,  thread max latency: [0-9.]+ ms,  thread min latency: [0-9.]+ ms,  FPS: [0-9.]+$' \
        '^  Average    latency    is: [0-9.]+ ms$' \
        '^Simulated BPU latency \(virtual BPU timing model, bayes-e\): [0-9.]+ us per frame \(1 BPU segment\(s\)\)$' \
        '^Simulated BPU throughput \(virtual BPU timing model, bayes-e, 2 threads on 1 core\): [0-9.]+ FPS, average queue wait [0-9.]+ us per frame$'; do
      grep -qE -- "$pattern" "$work/out" || { echo "no line matches: $pattern" >&2; cat "$work/out" >&2; exit 1; }
    done
    ;;
  profile)
    mkdir "$work/existing"
    "$exe" perf --model_file="$bin" --frame_count=12 --thread_num=2 --profile_path="$work/existing" >"$work/out"
    expect "$work/out" "profile_path: $work/existing exsit!"
    expect "$work/out" "  Frame count   is: 12"
    for f in profiler.log profiler.csv; do
      [ -f "$work/existing/$f" ] || { echo "no $f in the profile folder" >&2; ls -l "$work/existing" >&2; exit 1; }
    done
    /usr/bin/python3 - "$work/existing/profiler.log" "$work/out" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
parts = text.split("\n***\n")
assert len(parts) == 2, f"expected two objects separated by a '***' line, got {len(parts)} part(s):\n{text}"
first, second = json.loads(parts[0]), json.loads(parts[1])
assert set(first) == {"perf_result", "running_condition"}, first.keys()
assert set(first["perf_result"]) == {"FPS", "average_latency"}, first
rc = first["running_condition"]
assert set(rc) == {"core_id", "frame_count", "model_name", "run_time", "thread_num"}, rc
assert rc["frame_count"] == 12 and rc["thread_num"] == 2 and rc["model_name"] == "cls" and rc["core_id"] == 0, rc
out = open(sys.argv[2]).read()
printed = {k: float(re.search(p, out).group(1)) for k, p in [
    ("run_time", r"Program run time: ([0-9.]+) ms"), ("average_latency", r"Average    latency    is: ([0-9.]+) ms"),
    ("FPS", r"Frame      rate       is: ([0-9.]+) FPS")]}
assert abs(rc["run_time"] - printed["run_time"]) < 1e-3, (rc, printed)
for k in ("average_latency", "FPS"):
    assert abs(first["perf_result"][k] - printed[k]) < 1e-3, (first, printed)
assert set(second) == {"chip_latency", "model_latency", "task_latency"}, second.keys()
assert set(second["chip_latency"]) == {"BPU_inference_time_cost", "CPU_inference_time_cost"}, second
assert set(second["task_latency"]) == {"TaskPendingTime", "TaskRunningTime"}, second
layers = second["model_latency"]
bpu = [k for k in layers if k.startswith("BPU_cls_subgraph_")]
cpu = [k for k in layers if not k.startswith("BPU_") and not k.endswith("_layout_convert")]
assert bpu and cpu, f"need a BPU_ and a CPU operator key: {sorted(layers)}"
for name, t in list(layers.items()) + list(second["chip_latency"].items()) + list(second["task_latency"].items()):
    assert set(t) == {"avg_time", "max_time", "min_time"}, (name, t)
    assert 0 <= t["min_time"] <= t["avg_time"] + 1e-6 <= t["max_time"] + 2e-6, (name, t)
print(f"profiler.log: {len(layers)} layers ({', '.join(bpu)}; {len(cpu)} CPU operators, e.g. {cpu[0]})")
PY
    csv=$work/existing/profiler.csv
    for line in running_condition thread_num,2 core_id,0 frame_count,12 model_name,cls perf_result chip_latency         model_latency task_latency name,avg_time,max_time,min_time; do
      grep -qE "^$line(,|\$)" "$csv" || { echo "profiler.csv: no line '$line'" >&2; cat "$csv" >&2; exit 1; }
    done
    grep -qE '^BPU_cls_subgraph_0,[0-9.]+,[0-9.]+,[0-9.]+$' "$csv" || { echo "profiler.csv: no BPU row" >&2; cat "$csv" >&2; exit 1; }
    # A folder that does not exist is created; one that cannot be written is one stderr line.
    "$exe" perf --model_file="$bin" --frame_count=2 --profile_path="$work/new/sub" >"$work/out"
    [ -f "$work/new/sub/profiler.log" ] || { echo "the missing profile folder was not created" >&2; exit 1; }
    grep -q "exsit" "$work/out" && { echo "'exsit' printed for a folder that did not exist" >&2; exit 1; }
    : >"$work/a_file"
    "$exe" perf --model_file="$bin" --frame_count=2 --profile_path="$work/a_file" >"$work/out" 2>"$work/err" \
      || { echo "an unwritable profile folder failed the run" >&2; cat "$work/err" >&2; exit 1; }
    [ "$(grep -c 'profiler' "$work/err")" -eq 1 ] || { echo "expected one profiler line on stderr" >&2; cat "$work/err" >&2; exit 1; }
    grep -q "$work/a_file/profiler.log" "$work/err" || { echo "the stderr line does not name the file" >&2; cat "$work/err" >&2; exit 1; }
    ;;
  errors)
    expect_fail "unknown flag '--bogus'" model_info --model_file="$bin" --bogus=1
    expect_fail "flag '--thread_num'" perf --model_file="$bin" --thread_num=0
    expect_fail "flag '--dump_format': must be bin or txt" infer --model_file="$bin" --dump_format=csv
    expect_fail "is not a bool" infer --model_file="$bin" --enable_dump=maybe
    expect_fail "unknown subcommand 'run'" run --model_file="$bin"
    expect_fail "cannot open model file" model_info --model_file="$work/missing.bin"
    expect_fail "cannot be opened" infer --model_file="$bin" --input_file="$work/missing.npy"
    head -c 100 /dev/zero >"$work/short.bin"
    expect_fail "holds 100 bytes; the input takes 110592" infer --model_file="$bin" --input_file="$work/short.bin"
    expect_fail "flag '--dump_intermediate': must be 0, 1, 2 or 3" infer --model_file="$bin" --input_file="$npy" --dump_intermediate=4
    HB_DNN_DUMP_PATH="$work/env_dump" HB_DNN_DUMP_FORMAT=xml \
      expect_fail "HB_DNN_DUMP_FORMAT 'xml' is not one of bin, txt, bin,txt" infer --model_file="$bin" --input_file="$npy"
    : >"$work/not_a_dir"
    expect_fail "HB_DNN_DUMP_PATH '$work/not_a_dir' is not a directory" infer --model_file="$bin" --input_file="$npy" \
      --dump_intermediate=1 --dump_path="$work/not_a_dir"
    expect_fail "flag '--roi_infer': model 'cls' has no resizer input" infer --model_file="$bin" --input_file="$npy" \
      --roi_infer --roi=0,0,15,15
    ;;
  roi_infer)
    rbin=$conversion/cls_resizer/model_output/cls_resizer.bin
    [ -f "$rbin" ] || { echo "hrt_model_exec.sh: $rbin is missing (conversion_accuracy_cls_resizer did not run)" >&2; exit 1; }
    rgbs=("$data"/evaluation/cls/rgb_uint8/*.npy)
    rgb=${rgbs[0]}  # uint8 (1, 3, 48, 192)
    "$exe" model_info --model_file="$rbin" >"$work/out"
    expect "$work/out" "input source: HB_DNN_INPUT_FROM_RESIZER"
    # The whole 192x48 image as the ROI: the resizer copies it; plain infer on the model input it
    # dumped gives the same outputs.
    "$exe" infer --model_file="$rbin" --input_file="$rgb" --roi_infer --roi=0,0,191,47 --enable_dump \
      --dump_intermediate=1 --dump_path="$work/roi" >"$work/out"
    expect "$work/out" "infer success"
    out=model_infer_output_0_softmax_0.tmp_0.bin
    in_dump=$work/roi/cls_resizer_000_input_input_x.bin
    [ "$(stat -c %s "$in_dump")" -eq 13824 ] || { echo "the resized input dump is not 192x48 NV12" >&2; exit 1; }
    "$exe" infer --model_file="$rbin" --input_file="$in_dump" --enable_dump --dump_path="$work/plain" >"$work/out"
    cmp "$work/roi/$out" "$work/plain/$out"
    # The image pasted into an 800x160 canvas at (100, 32), as (H, W, 3): its exact ROI is the
    # same NV12 (even offsets keep the 2x2 chroma blocks), so the same outputs; roi 1 is a 384x96
    # ROI at half scale. ROIs from a ROI file after the input file.
    /usr/bin/python3 - "$rgb" "$work/canvas.npy" <<'PY'
import sys
import numpy as np
image = np.load(sys.argv[1])[0].transpose(1, 2, 0)
canvas = np.full((160, 800, 3), 37, np.uint8)
canvas[::7, ::5] = 200
canvas[32:80, 100:292] = image
np.save(sys.argv[2], canvas)
PY
    printf '100 32 291 79\n0 0 383 95\n' >"$work/roi.txt"
    "$exe" infer --model_file="$rbin" --input_file="$work/canvas.npy,$work/roi.txt" --roi_infer --enable_dump \
      --dump_path="$work/canvas" --enable_cls_post_process >"$work/out"
    grep -q "^output\[0\]: roi 1, name: softmax_0.tmp_0" "$work/out" || { echo "no roi 1 output line" >&2; cat "$work/out" >&2; exit 1; }
    expect "$work/out" "cls post process, roi 0, top 5 of output 'softmax_0.tmp_0':"
    cmp "$work/canvas/model_infer_output_0_softmax_0.tmp_0_roi0.bin" "$work/roi/$out"
    [ -f "$work/canvas/model_infer_output_0_softmax_0.tmp_0_roi1.bin" ] || { echo "no roi 1 dump" >&2; exit 1; }
    "$exe" perf --model_file="$rbin" --input_file="$work/canvas.npy" --roi_infer --roi="100,32,291,79;0,0,383,95" \
      --frame_count=4 >"$work/out"
    expect "$work/out" "  Frame count   is: 4"
    expect_fail "must have even left and top" infer --model_file="$rbin" --input_file="$work/canvas.npy" --roi_infer --roi=1,0,192,47
    expect_fail "flag '--roi_infer' needs ROIs" infer --model_file="$rbin" --input_file="$work/canvas.npy" --roi_infer
    expect_fail "both give ROIs" infer --model_file="$rbin" --input_file="$work/canvas.npy,$work/roi.txt" --roi_infer --roi=0,0,191,47
    expect_fail ".bin and .txt carry no size" infer --model_file="$rbin" --input_file="$in_dump" --roi_infer --roi=0,0,191,47
    expect_fail "flag '--roi': ROI 0 '0 0 191' is not four integers" infer --model_file="$rbin" --input_file="$rgb" --roi_infer \
      --roi=0,0,191
    ;;
  *) echo "hrt_model_exec.sh: unknown case '$case_name'" >&2; exit 2 ;;
esac
echo "hrt_model_exec $case_name: ok"
