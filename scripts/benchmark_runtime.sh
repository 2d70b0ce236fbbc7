#!/usr/bin/env bash
# Times the runtime (hbDNNInfer + hbDNNWaitTaskDone on the converted PP-OCR .bin models, bayes-e,
# BPU segments on the virtual BPU simulator) against onnxruntime-node on the float models (fp32)
# and on ONNX Runtime's int8 QDQ peer models (../shared/peer-models): same input file, same
# thread count, one run. Then the one-operator model's round trip and `hrt_model_exec perf` FPS
# at --thread_num 1 and 2 with the timing model's simulated BPU latency. docs/benchmarks.md.
#
#   scripts/benchmark_runtime.sh [google benchmark flags for dnn_benchmark]
# Environment: OPENBPU_CONVERSION_DIR (default build/release/tests/accuracy/conversion: converted
# here by the conversion_accuracy_{det,rec,cls} ctests when a .bin is missing),
# OPENBPU_DATASET_DIR (default build/release/tests/accuracy/dataset/data, rendered by those
# ctests' fixture), OPENBPU_PEER_MODELS_DIR (default ../shared/peer-models),
# PERF_FRAMES_DET / _REC / _CLS / _ONE_OP (hrt_model_exec perf --frame_count; 20 / 100 / 200 / 2000).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
conv=${OPENBPU_CONVERSION_DIR:-build/release/tests/accuracy/conversion}
data=${OPENBPU_DATASET_DIR:-build/release/tests/accuracy/dataset/data}
peers=${OPENBPU_PEER_MODELS_DIR:-$repo/../shared/peer-models}
bench_dir=build/release/tests/benchmarks

cmake --preset release >/dev/null
missing=0
for c in det rec cls; do
  [ -f "$conv/$c/model_output/$c.bin" ] && [ -f "$data/evaluation/$c/input/000.npy" ] || missing=1
done
if [ "$missing" = 1 ]; then
  # The conversion ctests build nothing: their tools first (ctest adds the dataset fixture).
  cmake --build --preset release --target hb_mapper ocr_accuracy dnn_benchmark hrt_model_exec
  ctest --preset release -R '^conversion_accuracy_(det|rec|cls)$'
else
  cmake --build --preset release --target dnn_benchmark hrt_model_exec
fi
for f in "$peers"/ppocrv4_det_704x960.ort-qdq-int8.onnx "$peers"/ppocrv4_rec_48x320.ort-qdq-int8.onnx \
         "$peers"/ppocr_cls_48x192.ort-qdq-int8.onnx; do
  [ -f "$f" ] || { echo "benchmark_runtime: $f is missing (OPENBPU_PEER_MODELS_DIR)" >&2; exit 1; }
done
float_models=$(scripts/fetch_npm_packages.sh)
export NODE_PATH=${OPENBPU_CACHE:-$HOME/.cache/openbpu}/npm/node_modules

echo "== $(date -u '+%F %T UTC'), load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
for t in 1 2; do
  "$bench_dir/dnn_benchmark" --conversion-dir="$conv" --inputs-dir="$data/evaluation" \
    --float-models-dir="$float_models" --peer-models-dir="$peers" --threads="$t" "$@"
done

"$bench_dir/dnn_benchmark" --write-one-op="$bench_dir/one_op.bin"
echo
echo "hrt_model_exec perf (wall clock of this machine; simulated = virtual BPU timing model):"
printf '| model | thread_num | frames | FPS | average latency (ms) | simulated BPU latency (us/frame) |\n|---|---|---|---|---|---|\n'
perf_row() {  # label model input frames threads
  local out
  out=$(build/release/board_tools/hrt_model_exec/hrt_model_exec perf --model_file="$2" ${3:+--input_file="$3"} \
          --frame_count="$4" --thread_num="$5")
  local fps avg sim
  fps=$(sed -n 's/.*Frame *rate *is: \([0-9.]*\) FPS.*/\1/p' <<<"$out")
  avg=$(sed -n 's/.*Average *latency *is: \([0-9.]*\) ms.*/\1/p' <<<"$out")
  sim=$(sed -n 's/^Simulated BPU latency.*: \([0-9.]*\) us per frame.*/\1/p' <<<"$out")
  printf '| %s | %s | %s | %.2f | %.2f | %s |\n' "$1" "$5" "$4" "$fps" "$avg" "$sim"
}
for t in 1 2; do
  perf_row ppocrv4_det_704x960 "$conv/det/model_output/det.bin" "$data/evaluation/det/input/000.npy" "${PERF_FRAMES_DET:-20}" "$t"
  perf_row ppocrv4_rec_48x320 "$conv/rec/model_output/rec.bin" "$data/evaluation/rec/input/000.npy" "${PERF_FRAMES_REC:-100}" "$t"
  perf_row ppocr_cls_48x192 "$conv/cls/model_output/cls.bin" "$data/evaluation/cls/input/000.npy" "${PERF_FRAMES_CLS:-200}" "$t"
  perf_row one_op_1x8x8x8 "$bench_dir/one_op.bin" "" "${PERF_FRAMES_ONE_OP:-2000}" "$t"
done
echo "== done $(date -u '+%F %T UTC'), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
