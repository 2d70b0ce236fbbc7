#!/usr/bin/env bash
# The timing model against the published board latencies (docs/bpu_isa.md, "The timing model"):
# builds the published classifiers' architectures at 224x224 with ImageNet's 1000-class head
# (build_zoo.py; weights do not matter for timing), converts each for its board as a user would
# (rgb -> nv12 input, O3, calibration_type max on one sample), and checks
#   - the estimate of makertbin's per-subgraph line is within 20% of the published BPU latency;
#   - hrt_model_exec perf's simulated BPU latency is the same figure.
# Prints one row per case: model, march, estimate, published, error. Exit 1 when a bar fails.
#   board_latency.sh HB_MAPPER HRT_MODEL_EXEC WORK_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
hb_mapper=$(readlink -f "${1:?}") hrt=$(readlink -f "${2:?}")
mkdir -p "${3:?}"
work=$(readlink -f "$3")
rm -rf "${work:?}"/*
/usr/bin/python3 "$here/build_zoo.py" "$work" --full --only mobilenet_v1,mobilenet_v2,resnet18 --classes 1000 \
  --calibration 1 --tests 0 > /dev/null

# model  march  published single-thread latencies (ms; X3's BPU latency and whole-frame average,
# which the BPU estimate is held to as well)  source
cases="mobilenet_v1 bernoulli2 3.43,4.00 RDK X3, issue 24 (BPU, whole frame)
mobilenet_v1 bayes-e 1.27 RDK X5, rdk_model_zoo classification README
mobilenet_v2 bayes-e 1.42 RDK X5, rdk_model_zoo classification README
resnet18 bayes-e 2.95 RDK X5, rdk_model_zoo classification README"

failures=0
printf '%-13s %-11s %9s %9s %7s\n' model march "estimate" published error
while read -r name march published source; do
  d=$work/$name/$march
  mkdir -p "$d"
  cat > "$d/$name.yaml" <<YAML
model_parameters:
  onnx_model: '../$name.onnx'
  march: '$march'
  working_dir: 'out'
  output_model_file_prefix: '$name'
input_parameters:
  input_name: 'input'
  input_type_train: 'rgb'
  input_type_rt: 'nv12'
  input_layout_train: 'NCHW'
  norm_type: 'no_preprocess'
calibration_parameters:
  calibration_type: 'max'
  cal_data_dir: '../cal/input'
compiler_parameters:
  optimize_level: 'O3'
YAML
  (cd "$d" && "$hb_mapper" makertbin --config "$name.yaml" --model-type onnx > convert.out 2>&1) ||
    { echo "$name $march: makertbin failed"; tail -15 "$d/convert.out"; failures=$((failures + 1)); continue; }
  # One BPU subgraph: its line is the model's estimate.
  [ "$(grep -c 'FPS=.*latency = ' "$d/convert.out")" = 1 ] ||
    { echo "$name $march: expected one BPU subgraph line"; failures=$((failures + 1)); continue; }
  estimate=$(grep -oP 'latency = \K[0-9.]+(?= us)' "$d/convert.out")
  "$hrt" perf --model_file "$d/out/$name.bin" --frame_count 1 > "$d/perf.out" 2>&1 ||
    { echo "$name $march: hrt_model_exec perf failed"; tail -15 "$d/perf.out"; failures=$((failures + 1)); continue; }
  simulated=$(grep -oP 'Simulated BPU latency \(virtual BPU timing model, [^)]*\): \K[0-9.]+(?= us)' "$d/perf.out")
  [ "$simulated" = "$estimate" ] ||
    { echo "$name $march: hrt_model_exec perf says $simulated us, makertbin $estimate us"; failures=$((failures + 1)); }
  for figure in ${published//,/ }; do
    error=$(awk -v e="$estimate" -v p="$figure" 'BEGIN {printf "%+.1f%%", 100 * (e / 1000 / p - 1)}')
    printf '%-13s %-11s %6.2f ms %6.2f ms %7s   %s\n' "$name" "$march" "$(awk -v e="$estimate" 'BEGIN {print e / 1000}')" \
      "$figure" "$error" "$source"
    awk -v e="$estimate" -v p="$figure" 'BEGIN {r = e / 1000 / p; exit !(r >= 0.8 && r <= 1.2)}' ||
      { echo "$name $march: estimate $estimate us is not within 20% of the published $figure ms"; failures=$((failures + 1)); }
  done
done <<< "$cases"
[ "$failures" = 0 ] || { echo "board_latency: $failures failure(s)"; exit 1; }
echo "board_latency: OK"
