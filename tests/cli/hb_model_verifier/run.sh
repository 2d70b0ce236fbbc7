#!/usr/bin/env bash
# hb_model_verifier end to end on the converted PP-OCR models.
#   run.sh host VERIFIER CONVERSION_DIR DATA_DIR
#     every converted case (featuremap, RGB and NV12 inputs): quantized ONNX and simulator PASSED
#     at 5 digits on a held-out input and on random data; a mismatching pair (cls_load's quantized
#     model against cls.bin) gives the report and exit 1; wrong pairings and bad input files
#     give one ERROR line and exit 2.
#   run.sh board VERIFIER CONVERSION_DIR DATA_DIR BOARD_ENV CASE...
#     the three pairs PASSED against the board described by BOARD_ENV (scripts/board.sh), on a
#     held-out input of each CASE, and no work folder left on the board.
set -euo pipefail
mode=$1 verifier=$2 conversion=$3 data=$4
shift 4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# run_expect STATUS LOG ARGS...: runs the verifier, requires exit status STATUS.
run_expect() {
  local want=$1 log=$2
  shift 2
  local status=0
  "$verifier" "$@" >"$log" 2>&1 || status=$?
  if [ "$status" -ne "$want" ]; then
    cat "$log" >&2
    fail "hb_model_verifier $* exited $status, expected $want"
  fi
}

held_out() {  # first held-out input of a model kind
  local files=("$data/evaluation/$1/input/"*.npy)
  echo "${files[0]}"
}

models() {  # -q and -b of a converted case
  echo "-q $conversion/$1/model_output/$1_quantized_model.onnx -b $conversion/$1/model_output/$1.bin"
}

passed_lines() { grep -c "Strict check PASSED" "$1" || true; }

case $mode in
  host)
    for c in det cls rec; do
      # shellcheck disable=SC2046
      run_expect 0 "$work/$c.log" $(models $c) -i "$(held_out $c)"
      [ "$(passed_lines "$work/$c.log")" -eq 1 ] || fail "$c: expected one PASSED line"
      grep -q "Quanti onnx and Simulator result Strict check PASSED" "$work/$c.log" || fail "$c: no PASSED line"
      echo "$c: held-out input PASSED"
    done
    for c in cls cls_rgb det_nv12; do
      # shellcheck disable=SC2046
      run_expect 0 "$work/$c-random.log" $(models $c)
      grep -q "random" "$work/$c-random.log" || fail "$c: the input was not random"
      echo "$c: random input PASSED"
    done
    # A different quantization of the same network (calibration loaded from ONNX Runtime's QDQ
    # peer model, when the peer models are there): the comparison must fail, with the report.
    load=$conversion/cls_load/model_output/cls_load_quantized_model.onnx
    if [ -f "$load" ]; then
      run_expect 1 "$work/mismatch.log" -q "$load" -b "$conversion/cls/model_output/cls.bin" -d 5
      for line in "Strict check FAILED" "INFO mismatch line num: " "INFO mismatch.line_diff num: " \
                  "INFO mismatch.line_miss num: 0" "INFO mismatch.line_nan num: 0" "INFO total line num: 2" "INFO mismatch rate: "; do
        grep -qF "$line" "$work/mismatch.log" || { cat "$work/mismatch.log" >&2; fail "mismatch report lacks '$line'"; }
      done
      echo "mismatch: reported, exit 1"
    else
      echo "mismatch: not checked ($load is missing: no peer models)"
    fi
    # Models that do not belong together, an input of the wrong size, a missing flag.
    run_expect 2 "$work/pairing.log" -q "$conversion/det/model_output/det_quantized_model.onnx" \
      -b "$conversion/cls/model_output/cls.bin"
    grep -q "^ERROR .*det_quantized_model.onnx: input 'x': .*do the two models belong together" "$work/pairing.log" ||
      { cat "$work/pairing.log" >&2; fail "pairing error"; }
    # shellcheck disable=SC2046
    run_expect 2 "$work/input.log" $(models cls) -i "$(held_out det)"
    grep -q "^ERROR input 'x': " "$work/input.log" || { cat "$work/input.log" >&2; fail "input size error"; }
    run_expect 2 "$work/flag.log" -b "$conversion/cls/model_output/cls.bin"
    grep -q "quanti_model" "$work/flag.log" || { cat "$work/flag.log" >&2; fail "missing -q not named"; }
    echo "errors: one line each, exit 2"
    ;;
  board)
    board_env=$1
    shift
    # shellcheck disable=SC1090
    . "$board_env"
    for c in "$@"; do
      # shellcheck disable=SC2046
      run_expect 0 "$work/$c.log" $(models $c) -i "$(held_out ${c%_*})" -a "$BOARD_HOST:$BOARD_PORT" \
        -u "$BOARD_USER" -k "$BOARD_KEY" --known_hosts "$BOARD_KNOWN_HOSTS"
      cat "$work/$c.log"
      for pair in "Quanti onnx and Simulator" "Quanti onnx and Arm" "Simulator and Arm"; do
        grep -q "$pair result Strict check PASSED" "$work/$c.log" || fail "$c: no '$pair ... PASSED' line"
      done
    done
    if compgen -G "$BOARD_ROOTFS/userdata/hb_model_verifier.*" >/dev/null; then
      fail "work folders left on the board: $(echo "$BOARD_ROOTFS"/userdata/hb_model_verifier.*)"
    fi
    ;;
  *) fail "unknown mode $mode" ;;
esac
