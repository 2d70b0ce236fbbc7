#!/usr/bin/env bash
# The model zoo end to end (docs/conversion.md "Model zoo"): builds the models (build_zoo.py),
# then for each: hb_mapper checker (BPU subgraphs and CPU nodes), makertbin on bayes-e with
# calibration default on its samples, hb_model_verifier on a held-out input (the .bin on the
# simulator bit for bit against the quantized model), and the float and quantized models on
# every held-out input (evaluate.py). Bars: every model converts, is bit-exact, has the expected
# number of BPU subgraphs, and its output cosine averaged over the held-out inputs is >= 0.99.
# The lowest cosine and the classifiers' top-1 agreement are measured and reported, not
# asserted: by default the heads are at initialisation, their top two logits nearly tied (the
# table gives the median gap), and a top-1 flip says little. --fit-heads first gives each
# classifier a trained-like head (fit_head.py, on 64 training inputs of its own); with it, the
# top-1 agreement and the cosine measure the input-dependent part of the output, and neither
# the issue's top-1 bar (>= 98%) nor the cosine bar holds for every model yet (docs). Writes
# WORK/results.tsv (the table of docs/conversion.md).
#   run_zoo.sh HB_MAPPER HB_MODEL_VERIFIER WORK_DIR [--fit-heads] [build_zoo.py options: --full, --only a,b, ...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
hb_mapper=$(readlink -f "${1:?}") verifier=$(readlink -f "${2:?}")
mkdir -p "${3:?}"
work=$(readlink -f "$3")
shift 3
fit_heads=0
[ "${1:-}" = --fit-heads ] && { fit_heads=1; shift; set -- --train 64 "$@"; }
rm -rf "${work:?}"/*
/usr/bin/python3 "$here/build_zoo.py" "$work" "$@" > /dev/null

failures=0
# The held-out inputs run through the openbpu package's Session when it imports (PYTHONPATH, as
# ctest sets; run_set.py), else through hb_mapper infer once per input.
session=no
/usr/bin/python3 -c "import openbpu" > /dev/null 2>&1 && session=yes
printf 'model\tnodes\tBPU nodes\tCPU nodes\tBPU subgraphs\tcosine (mean)\tcosine (min)\ttop-1 agree %%\ttop-1 gap / std\tconversion s\n' > "$work/results.tsv"
while IFS=$'\t' read -r name kind inputs subgraphs _; do
  d=$work/$name
  cd "$d"
  bad() { echo "zoo $name: $1"; [ -f "${2:-}" ] && tail -15 "$2"; failures=$((failures + 1)); }
  if [ "$fit_heads" = 1 ] && [ "$kind" = classifier ]; then  # before anything reads the model
    /usr/bin/python3 "$here/fit_head.py" "$hb_mapper" "$d" "$name" > fit_head.out 2>&1 || { bad "fit_head failed" fit_head.out; continue; }
  fi
  "$hb_mapper" checker --model-type onnx --march bayes-e --model "$name.onnx" > checker.out 2>&1 || { bad "checker failed" checker.out; continue; }
  dirs=$(sed "s|[^;]*|cal/&|g" <<< "$inputs")
  each() { sed "s|[^;]*|$1|g" <<< "$inputs"; }  # one value per input
  cat > "$name.yaml" <<YAML
model_parameters:
  onnx_model: '$name.onnx'
  march: 'bayes-e'
  working_dir: 'out'
  output_model_file_prefix: '$name'
input_parameters:
  input_name: '$inputs'
  input_type_train: '$(each featuremap)'
  input_type_rt: '$(each featuremap)'
  input_layout_train: '$(each NCHW)'
  norm_type: '$(each no_preprocess)'
calibration_parameters:
  calibration_type: 'default'
  cal_data_dir: '$dirs'
compiler_parameters:
  optimize_level: 'O3'
YAML
  start=$(date +%s.%N)
  "$hb_mapper" makertbin --config "$name.yaml" --model-type onnx > convert.out 2>&1 || { bad "makertbin failed" convert.out; continue; }
  seconds=$(echo "$(date +%s.%N) - $start" | bc)
  split=$(grep -oE "The model has [0-9]+ nodes: [0-9]+ on the BPU in [0-9]+ subgraphs?, [0-9]+ on the CPU" convert.out)
  read -r nodes bpu found cpu <<< "$(grep -oE '[0-9]+' <<< "$split" | tr '\n' ' ')"
  [ "$found" = "$subgraphs" ] || bad "$found BPU subgraphs, expected $subgraphs" convert.out
  feeds=() ; for i in ${inputs//;/ }; do feeds+=("-i" "test/0/$i.npy"); done
  inputs_csv=$(IFS=,; echo "${feeds[*]}" | sed 's/-i,//g')
  "$verifier" -q "out/${name}_quantized_model.onnx" -b "out/$name.bin" -i "$inputs_csv" > verify.out 2>&1 || bad "hb_model_verifier failed" verify.out
  [ "$(grep -c 'Strict check PASSED' verify.out)" = "$(grep -c '^output\[' verify.out)" ] || bad "not bit-exact" verify.out
  reference=$name.onnx
  [ -f reference.onnx ] && reference=reference.onnx  # an export form: the float32 model it came from
  if [ "$session" = yes ]; then  # one process per model and set (the openbpu package's Session)
    /usr/bin/python3 "$here/run_set.py" "$reference" test float > float.out 2>&1 || bad "float runs failed" float.out
    /usr/bin/python3 "$here/run_set.py" "out/${name}_quantized_model.onnx" test quant > quant.out 2>&1 ||
      bad "quantized runs failed" quant.out
  else
    for t in test/*; do
      i=${t#test/}
      args=()
      for inp in ${inputs//;/ }; do args+=(--input "$inp=$t/$inp.npy"); done
      "$hb_mapper" infer --model-file "$reference" "${args[@]}" --output-dir "float/$i" > /dev/null 2>&1 || bad "float run $i failed"
      "$hb_mapper" infer --model-file "out/${name}_quantized_model.onnx" "${args[@]}" --output-dir "quant/$i" > /dev/null 2>&1 ||
        bad "quantized run $i failed"
    done
  fi
  [ -d float ] && [ -d quant ] || { bad "no outputs to compare"; continue; }
  metrics=$(/usr/bin/python3 "$here/evaluate.py" "$kind" float quant)
  value() { grep -oP "(^| )$1=\K[0-9.-]+" <<< "$metrics"; }
  mean=$(value mean_cosine)
  awk -v c="$mean" 'BEGIN {exit !(c >= 0.99)}' || bad "mean output cosine $mean < 0.99"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\n' "$name" "$nodes" "$bpu" "$cpu" "$found" "$mean" "$(value cosine)" \
    "$(value top1)" "$(value gap)" "$seconds" >> "$work/results.tsv"
  printf 'zoo %s: %s; %s; %.1f s\n' "$name" "$split" "$metrics" "$seconds"
done < "$work/models.tsv"
column -t -s $'\t' "$work/results.tsv"
[ "$failures" = 0 ] || { echo "zoo: $failures failure(s)"; exit 1; }
echo "zoo: OK"
