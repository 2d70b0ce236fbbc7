#!/usr/bin/env bash
# Runs a table of broken conversion configs through the real command lines and checks that each
# one fails the right way.
#
#   run_yaml_mistakes.sh HB_MAPPER HB_COMPILE MODEL OUT_DIR [CASE_NAME_SUBSTRING]
#
# MODEL is the PP-OCR cls model (ch_ppocr_mobile_v2.0_cls_infer.onnx, input 'x', float32
# [?,3,?,?]). OUT_DIR is wiped and rebuilt. The optional last argument runs only the cases whose
# file name contains it.
#
# Cases: cases/NN_short_name.yaml, one broken config each, with a comment saying what the
# mistake is. Placeholders, replaced before the run:
#   @MODEL@  the absolute path of MODEL
#   @CAL@    a calibration data root made by this script, holding
#              cls_f32/          2 samples of float32 [1,3,48,192] (correct for the model)
#              wrong_shape_f32/  2 samples of float32 [1,3,32,100]
#              empty_f32/        no files
# Relative paths in a case are relative to the case's own (fresh, empty) run directory.
#
# Table: expected.tsv, one line per case (lines starting with '#' and blank lines are skipped),
# fields separated by TABs:
#   FILE  TOOL  PARSE_FAILED  FRAGMENT [FRAGMENT ...]
# FILE          a file name in cases/; every case file must have exactly one line.
# TOOL          makertbin-onnx   hb_mapper makertbin --config FILE --model-type onnx
#               makertbin-caffe  hb_mapper makertbin --config FILE --model-type caffe
#               hb_compile       hb_compile --config FILE
# PARSE_FAILED  yes: the run must print "yaml file parse failed. Please double check your input"
#               (a config problem); no: it must not (a data/file problem found later).
# FRAGMENT      an exact substring that must appear on an ERROR line, both on the console and in
#               the log file. A fragment starting with '!' must appear on NO ERROR line (a
#               misleading extra message).
#
# Each case passes when: the exit code is 1 (not 0, not a timeout, not a signal); every fragment
# rule holds; the parse-failed line appears exactly when PARSE_FAILED is yes; an ERROR line
# "exception in command: ..." appears; the log file (hb_mapper_makertbin.log / hb_compile.log)
# exists; no *.onnx / *.bin file exists anywhere under the run directory, and the tool left
# nothing behind in it but its log (in particular working_dir is not created).
set -u

if [ $# -lt 4 ]; then
  echo "usage: run_yaml_mistakes.sh HB_MAPPER HB_COMPILE MODEL OUT_DIR [CASE_NAME_SUBSTRING]" >&2
  exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
abs() { case "$1" in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$PWD/$1" ;; esac; }
hb_mapper=$(abs "$1")
hb_compile=$(abs "$2")
model=$(abs "$3")
out=$(abs "$4")
only=${5:-}
cases_dir=$here/cases
table=$here/expected.tsv
parse_failed_line='yaml file parse failed. Please double check your input'
timeout_s=120

for f in "$hb_mapper" "$hb_compile"; do
  [ -x "$f" ] || { echo "run_yaml_mistakes: not an executable: $f" >&2; exit 2; }
done
[ -f "$model" ] || { echo "run_yaml_mistakes: model not found: $model" >&2; exit 2; }
[ -f "$table" ] || { echo "run_yaml_mistakes: table not found: $table" >&2; exit 2; }

rm -rf "$out" && mkdir -p "$out/runs" || exit 2

# Calibration data: npy v1.0 files, float32 little-endian, written with the standard library
# only (no numpy needed).
cal=$out/calibration
/usr/bin/python3 - "$cal" <<'PY' || { echo "run_yaml_mistakes: making calibration data failed" >&2; exit 2; }
import os, random, struct, sys, zlib
root = sys.argv[1]
def save(path, shape):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else ""))
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * (pad % 64) + "\n"
    count = 1
    for d in shape:
        count *= d
    rng = random.Random(zlib.crc32(os.path.basename(path).encode()) + len(shape) * shape[-1])
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%df" % count, *(rng.uniform(0.0, 255.0) for _ in range(count))))
for name, shape in (("cls_f32", (1, 3, 48, 192)), ("wrong_shape_f32", (1, 3, 32, 100))):
    os.makedirs(os.path.join(root, name))
    for i in range(2):
        save(os.path.join(root, name, "sample_%d.npy" % i), shape)
os.makedirs(os.path.join(root, "empty_f32"))
PY

# ERROR lines of a console capture or log: "YYYY-MM-DD HH:MM:SS,mmm ERROR message".
error_lines() {
  grep -E '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2},[0-9]{3} ERROR ' "$1" 2>/dev/null
}

declare -A seen=()
total=0
passed=0
failed_names=()
table_errors=0

while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in '' | '#'*) continue ;; esac
  IFS=$'\t' read -r -a fields <<<"$line"
  if [ "${#fields[@]}" -lt 4 ]; then
    echo "TABLE ERROR: fewer than 4 fields: $line"
    table_errors=$((table_errors + 1)); continue
  fi
  file=${fields[0]}; tool=${fields[1]}; parse=${fields[2]}
  fragments=("${fields[@]:3}")
  if [ -n "${seen[$file]:-}" ]; then
    echo "TABLE ERROR: $file is listed twice"
    table_errors=$((table_errors + 1)); continue
  fi
  seen[$file]=1
  [ -n "$only" ] && [[ "$file" != *"$only"* ]] && continue
  total=$((total + 1))
  name=${file%.yaml}
  reasons=()
  if [ ! -f "$cases_dir/$file" ]; then
    echo "FAIL $name: no such case file cases/$file"
    failed_names+=("$name"); continue
  fi
  case "$parse" in yes | no) ;; *)
    echo "FAIL $name: PARSE_FAILED must be yes or no, got '$parse'"
    failed_names+=("$name"); continue ;;
  esac

  dir=$out/runs/$name
  rm -rf "$dir" && mkdir -p "$dir"
  config=$dir/$file
  text=$(cat "$cases_dir/$file"; printf x)
  text=${text%x}
  text=${text//@MODEL@/"$model"}
  text=${text//@CAL@/"$cal"}
  printf '%s' "$text" >"$config"
  if grep -qE '@[A-Z_]+@' "$config"; then
    reasons+=("unknown placeholder: $(grep -oE '@[A-Z_]+@' "$config" | sort -u | tr '\n' ' ')")
  fi

  case "$tool" in
    makertbin-onnx) cmd=("$hb_mapper" makertbin --config "$file" --model-type onnx); log=hb_mapper_makertbin.log ;;
    makertbin-caffe) cmd=("$hb_mapper" makertbin --config "$file" --model-type caffe); log=hb_mapper_makertbin.log ;;
    hb_compile) cmd=("$hb_compile" --config "$file"); log=hb_compile.log ;;
    *) echo "FAIL $name: unknown TOOL '$tool'"; failed_names+=("$name"); continue ;;
  esac
  console=$out/runs/$name.console.txt
  (cd "$dir" && exec timeout "$timeout_s" "${cmd[@]}" </dev/null >"$console" 2>&1)
  rc=$?

  if [ "$rc" -eq 124 ]; then reasons+=("timed out after ${timeout_s}s")
  elif [ "$rc" -eq 126 ] || [ "$rc" -eq 127 ]; then reasons+=("could not run the tool (exit $rc)")
  elif [ "$rc" -ge 128 ]; then reasons+=("killed by signal $((rc - 128)) (exit $rc)")
  elif [ "$rc" -eq 0 ]; then reasons+=("exit code 0: the broken config was accepted")
  elif [ "$rc" -ne 1 ]; then reasons+=("exit code $rc, expected 1")
  fi

  con_err=$out/runs/$name.console_errors.txt
  log_err=$out/runs/$name.log_errors.txt
  error_lines "$console" >"$con_err"
  if [ -f "$dir/$log" ]; then
    error_lines "$dir/$log" >"$log_err"
  else
    reasons+=("no log file $log")
    : >"$log_err"
  fi

  for frag in "${fragments[@]}"; do
    [ -z "$frag" ] && continue
    if [ "${frag:0:1}" = '!' ]; then
      bad=${frag:1}
      grep -qF -- "$bad" "$con_err" && reasons+=("ERROR line must not contain: $bad")
    else
      if ! grep -qF -- "$frag" "$con_err"; then
        reasons+=("no ERROR line on the console contains: $frag")
      elif ! grep -qF -- "$frag" "$log_err"; then
        reasons+=("no ERROR line in $log contains: $frag")
      fi
    fi
  done

  n_con=$(grep -cF -- "$parse_failed_line" "$con_err")
  n_log=$(grep -cF -- "$parse_failed_line" "$log_err")
  if [ "$parse" = yes ]; then
    [ "$n_con" -ge 1 ] || reasons+=("missing ERROR '$parse_failed_line' on the console")
    [ "$n_log" -ge 1 ] || [ ! -f "$dir/$log" ] || reasons+=("missing ERROR '$parse_failed_line' in $log")
  else
    [ "$n_con" -eq 0 ] && [ "$n_log" -eq 0 ] ||
      reasons+=("unexpected '$parse_failed_line' (not a config problem)")
  fi
  grep -qF 'exception in command:' "$con_err" || reasons+=("no ERROR 'exception in command: ...' on the console")

  models=$(cd "$dir" && find . -type f \( -name '*.onnx' -o -name '*.bin' \) | sort | tr '\n' ' ')
  [ -n "$models" ] && reasons+=("model files left behind: $models")
  extra=$(cd "$dir" && find . -mindepth 1 -maxdepth 1 ! -name "$file" ! -name "$log" | sort | tr '\n' ' ')
  [ -n "$extra" ] && reasons+=("the tool left files behind: $extra")

  if [ "${#reasons[@]}" -eq 0 ]; then
    echo "PASS $name ($tool)"
    passed=$((passed + 1))
  else
    echo "FAIL $name ($tool)"
    for r in "${reasons[@]}"; do echo "    - $r"; done
    echo "    command: (cd $dir && ${cmd[*]})  -> exit $rc"
    echo "    ERROR lines:"
    sed 's/^/      /' "$con_err"
    failed_names+=("$name")
  fi
done <"$table"

# Every case file must be in the table.
for f in "$cases_dir"/*.yaml; do
  b=$(basename "$f")
  if [ -z "${seen[$b]:-}" ]; then
    echo "TABLE ERROR: cases/$b has no line in expected.tsv"
    table_errors=$((table_errors + 1))
  fi
done

echo "yaml_mistakes: $total cases, $passed passed, ${#failed_names[@]} failed, $table_errors table errors"
[ "${#failed_names[@]}" -gt 0 ] && echo "failed: ${failed_names[*]}"
[ "${#failed_names[@]}" -eq 0 ] && [ "$table_errors" -eq 0 ] && [ "$total" -gt 0 ]
