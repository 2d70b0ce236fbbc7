#!/usr/bin/env bash
# hb_model_verifier end to end on the converted PP-OCR models.
#   run.sh host VERIFIER CONVERSION_DIR DATA_DIR
#     every converted case (featuremap, RGB and NV12 inputs): quantized ONNX and simulator PASSED
#     at 5 digits on a held-out input and on random data; a mismatching pair (cls_load's quantized
#     model against cls.bin) gives the report and exit 1; wrong pairings and bad input files
#     give one ERROR line and exit 2.
#   run.sh board VERIFIER CONVERSION_DIR DATA_DIR BOARD_ENV CASE...
#     the three pairs PASSED against the board described by BOARD_ENV (scripts/board.sh), on a
#     held-out input of each CASE (the .png page for the image-input cases, NAME_rgb / NAME_nv12),
#     the board's outputs bit-identical to the simulator's, and no work folder left on the board.
#   run.sh two_inputs VERIFIER HB_MAPPER WORK_DIR [BOARD_ENV]
#     a two-input, two-output model (two_inputs.txtpb, converted with makertbin --fast-perf):
#     every output PASSED on the host and, given BOARD_ENV, on the board, fed two .bin files.
#   run.sh faults VERIFIER CONVERSION_DIR DATA_DIR REPO AARCH64_BUILD_DIR BOARD_DIR
#     on a board of its own (scripts/board.sh, name vfault9): wrong key, unknown / changed host
#     key (also with the default known_hosts), pinned fingerprint (right and wrong), no
#     hrt_model_exec, a failing and a hanging remote command, outputs of the wrong size (short,
#     long), a connection closed mid-download, a board that freezes during the upload, an upload
#     cut by the board going down, a model corrupted in transit, and the board down: each exits
#     2 with its own ERROR line within 30 s, writing nothing here; names with spaces, quotes, ;,
#     $(), backquotes and a newline pass without running anything; no log holds the private key.
set -euo pipefail
mode=$1 verifier=$2 conversion=$3 data=$4
shift 4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
# The modes that run a board need root (scripts/board.sh); elsewhere ctest reports them skipped.
if [ "$(id -u)" -ne 0 ] && { [ "$mode" = board ] || [ "$mode" = faults ] || [ "$mode" = two_inputs ]; }; then
  echo "hb_model_verifier $mode: skipped: the emulated board needs root" >&2
  exit 77
fi

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
      run_expect 0 "$work/$c.log" $(models "$c") -i "$(held_out $c)"
      [ "$(passed_lines "$work/$c.log")" -eq 1 ] || fail "$c: expected one PASSED line"
      grep -q "Quanti onnx and Simulator result Strict check PASSED" "$work/$c.log" || fail "$c: no PASSED line"
      echo "$c: held-out input PASSED"
    done
    for c in cls cls_rgb det_nv12; do
      # shellcheck disable=SC2046
      run_expect 0 "$work/$c-random.log" $(models "$c")
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
      input=(-i "$(held_out "$c")")
      case $c in *_*) input=(-i "$data/evaluation/${c%_*}/image/000.png") ;; esac  # cls_rgb, det_nv12: the image
      # shellcheck disable=SC2046
      run_expect 0 "$work/$c.log" $(models "$c") "${input[@]}" -a "$BOARD_HOST:$BOARD_PORT" \
        -u "$BOARD_USER" -k "$BOARD_KEY" --known_hosts "$BOARD_KNOWN_HOSTS"
      cat "$work/$c.log"
      for pair in "Quanti onnx and Simulator" "Quanti onnx and Arm" "Simulator and Arm"; do
        grep -q "$pair result Strict check PASSED" "$work/$c.log" || fail "$c: no '$pair ... PASSED' line"
      done
      grep -q "Simulator and Arm result Strict check PASSED (bit-identical)" "$work/$c.log" || fail "$c: board output not bit-identical to the simulator's"
    done
    if compgen -G "$BOARD_ROOTFS/userdata/hb_model_verifier.*" >/dev/null; then
      fail "work folders left on the board: $(echo "$BOARD_ROOTFS"/userdata/hb_model_verifier.*)"
    fi
    ;;
  two_inputs)
    mapper=$conversion out=$data board_env=${1:-}  # this mode's 3rd and 4th arguments
    here=$(cd "$(dirname "$0")" && pwd)
    rm -rf "$out" && mkdir -p "$out"
    protoc --encode=onnx.ModelProto -I/usr/include onnx/onnx.proto <"$here/two_inputs.txtpb" >"$out/two_inputs.onnx"
    (cd "$out" && "$mapper" makertbin --fast-perf --march bayes-e --model two_inputs.onnx >makertbin.out 2>&1) ||
      { tail -20 "$out/makertbin.out" >&2; fail "makertbin of two_inputs.onnx"; }
    # The fast-perf model takes int8 featuremaps: 768 and 512 bytes.
    python3 -c "
import random, sys
random.seed(5)
open(sys.argv[1], 'wb').write(bytes(random.randrange(256) for _ in range(768)))
open(sys.argv[2], 'wb').write(bytes(random.randrange(256) for _ in range(512)))" "$out/a.bin" "$out/b.bin"
    args=(-q "$out/model_output/two_inputs_quantized_model.onnx" -b "$out/model_output/two_inputs.bin"
          -i "$out/a.bin,$out/b.bin")
    pairs=("Quanti onnx and Simulator")
    if [ -n "$board_env" ]; then
      # shellcheck disable=SC1090
      . "$board_env"
      args+=(-a "$BOARD_HOST:$BOARD_PORT" -u "$BOARD_USER" -k "$BOARD_KEY" --known_hosts "$BOARD_KNOWN_HOSTS")
      pairs+=("Quanti onnx and Arm" "Simulator and Arm")
    fi
    run_expect 0 "$work/two_inputs.log" "${args[@]}"
    cat "$work/two_inputs.log"
    grep -q "2 input(s), 2 output(s)" "$work/two_inputs.log" || fail "not a two-input, two-output model"
    for i in 0 1; do
      for pair in "${pairs[@]}"; do
        grep -q "^output\[$i\] .*$pair result Strict check PASSED" "$work/two_inputs.log" || fail "output $i: no '$pair ... PASSED'"
      done
    done
    ;;
  faults)
    repo=$1 aarch64=$2 board_dir=$3
    export BOARD_NAME=vfault9 BOARD_NETNS=1
    board=$repo/scripts/board.sh
    trap '"$board" --dir "$board_dir" stop >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
    "$board" --dir "$board_dir" setup >/dev/null
    "$board" --dir "$board_dir" start >/dev/null
    # shellcheck disable=SC1091
    . "$board_dir/board.env"
    "$repo/scripts/deploy_board.sh" --env "$board_dir/board.env" "$aarch64" >/dev/null
    # The board folder outlives the test: drop the work folders that the frozen and cut uploads
    # of an earlier run could not remove (wait_for_upload would take them for the current one).
    rm -rf "$BOARD_ROOTFS"/userdata/hb_model_verifier.*
    m=$conversion/rec/model_output
    base=(-q "$m/rec_quantized_model.onnx" -b "$m/rec.bin" -a "$BOARD_HOST:$BOARD_PORT" -u "$BOARD_USER")
    bin_bytes=$(stat -c %s "$m/rec.bin")
    good=("${base[@]}" -k "$BOARD_KEY" --known_hosts "$BOARD_KNOWN_HOSTS")

    # expect_error NAME PATTERN ARGS...: exit 2, an ERROR line matching PATTERN, within 30 s.
    expect_error() {
      local name=$1 pattern=$2
      shift 2
      local t0=$SECONDS
      run_expect 2 "$work/$name.log" "$@"
      grep -Eq "^ERROR .*$pattern" "$work/$name.log" || { cat "$work/$name.log" >&2; fail "$name: no ERROR line matching '$pattern'"; }
      [ $((SECONDS - t0)) -le 30 ] || fail "$name: took $((SECONDS - t0)) s"
      echo "$name: $(grep "^ERROR" "$work/$name.log" | cut -c1-160)"
      grep "^WARNING" "$work/$name.log" || true
    }

    run_expect 0 "$work/pinned.log" "${base[@]}" -k "$BOARD_KEY" \
      --host-key-fingerprint "$(ssh-keygen -lf "$BOARD_HOST_KEY_PUB" | awk '{print $2}')"
    grep -q "Simulator and Arm result Strict check PASSED" "$work/pinned.log" || fail "pinned fingerprint: no PASSED"
    echo "pinned fingerprint: PASSED"

    ssh-keygen -q -t ed25519 -N '' -f "$work/stranger" -C stranger
    expect_error wrong_key "authentication refused for user 'root'" "${base[@]}" -k "$work/stranger" \
      --known_hosts "$BOARD_KNOWN_HOSTS"
    : >"$work/empty_known_hosts"
    expect_error unknown_host_key "unknown host key" "${base[@]}" -k "$BOARD_KEY" --known_hosts "$work/empty_known_hosts"
    echo "$BOARD_HOST $(cut -d' ' -f1,2 "$work/stranger.pub")" >"$work/changed_known_hosts"
    expect_error changed_host_key "HOST KEY CHANGED" "${base[@]}" -k "$BOARD_KEY" --known_hosts "$work/changed_known_hosts"
    expect_error wrong_fingerprint "HOST KEY MISMATCH" "${base[@]}" -k "$BOARD_KEY" \
      --host-key-fingerprint "$(ssh-keygen -lf "$work/stranger.pub" | awk '{print $2}')"

    mv "$BOARD_ROOTFS/app/hrt_model_exec" "$work/hrt_model_exec.aside"
    expect_error no_tool "has no hrt_model_exec" "${good[@]}"
    mv "$work/hrt_model_exec.aside" "$BOARD_ROOTFS/app/hrt_model_exec"

    printf '#!/bin/sh\necho "hrt_model_exec: BPU core 0 is offline" >&2\nexit 5\n' >"$BOARD_ROOTFS/userdata/failing_tool"
    printf '#!/bin/sh\nsleep 60\n' >"$BOARD_ROOTFS/userdata/hanging_tool"
    chmod 755 "$BOARD_ROOTFS/userdata/failing_tool" "$BOARD_ROOTFS/userdata/hanging_tool"
    expect_error remote_failure "hrt_model_exec failed \(exit status 5\): hrt_model_exec: BPU core 0 is offline" \
      "${good[@]}" --board-tool /userdata/failing_tool
    expect_error remote_timeout "did not finish within 3 s" "${good[@]}" --board-tool /userdata/hanging_tool --timeout 3
    rm -f "$BOARD_ROOTFS/userdata/failing_tool" "$BOARD_ROOTFS/userdata/hanging_tool"

    # The board's host key is checked by default too: without --known_hosts, ~/.ssh/known_hosts.
    mkdir -p "$work/home/.ssh"
    HOME=$work/home expect_error default_known_hosts "unknown host key \(not in $work/home/.ssh/known_hosts\)" \
      "${base[@]}" -k "$BOARD_KEY"

    # Names with spaces, quotes, ;, $(), backquotes and (on the board) a newline: the model, the
    # quantized model and the input here; --board-dir and --board-tool there. The run passes,
    # bit-identical, and nothing in them runs: no pwned_* file appears, here or on the board. The
    # board folder's first line is a folder of its own (a path cut at the newline would name
    # it): it must survive the run.
    q="'" dq='"' bt='`' nl=$'\n' tag=$$
    here_dir="$work/a b;${q}c${dq}\$(touch /tmp/pwned_$tag)${bt}touch /tmp/pwned2_$tag${bt}"
    mkdir -p "$here_dir"
    cp "$m/rec.bin" "$here_dir/m ${q}1${q};\$(touch pwned3_$tag).bin"
    cp "$m/rec_quantized_model.onnx" "$here_dir/q ${dq}1${dq};${bt}touch pwned4_$tag${bt}.onnx"
    cp "$(held_out rec)" "$here_dir/in put;\$(touch pwned5_$tag).npy"
    board_side="/userdata/w d;${q}e${dq}\$(touch /userdata/pwned_$tag)${bt}touch /userdata/pwned2_$tag${bt}${nl}x"
    first_line=${board_side%%"$nl"*}
    tool="./hrt ${q}tool${q};\$(touch pwned6_$tag)"
    mkdir -p "$BOARD_ROOTFS$board_side" "$BOARD_ROOTFS$first_line"
    echo canary >"$BOARD_ROOTFS$first_line/canary"
    ln -s /app/hrt_model_exec "$BOARD_ROOTFS$board_side/${tool#./}"
    run_expect 0 "$work/names.log" -q "$here_dir/q ${dq}1${dq};${bt}touch pwned4_$tag${bt}.onnx" \
      -b "$here_dir/m ${q}1${q};\$(touch pwned3_$tag).bin" -i "$here_dir/in put;\$(touch pwned5_$tag).npy" \
      -a "$BOARD_HOST:$BOARD_PORT" -u "$BOARD_USER" -k "$BOARD_KEY" --known_hosts "$BOARD_KNOWN_HOSTS" \
      --board-dir "$board_side" --board-tool "$tool"
    grep -q "Simulator and Arm result Strict check PASSED (bit-identical)" "$work/names.log" ||
      { cat "$work/names.log" >&2; fail "names: the board's output is not the simulator's"; }
    # find exits 1 when a file of a concurrent test vanishes under /tmp while it walks; what it
    # found is printed all the same.
    pwned=$(find /tmp "$PWD" "$BOARD_ROOTFS/userdata" "$BOARD_ROOTFS/root" "$BOARD_ROOTFS/app" -maxdepth 6 -name "pwned*_$tag" 2>/dev/null || true)
    [ -z "$pwned" ] || fail "names: a name ran as a command: $pwned"
    [ -f "$BOARD_ROOTFS$first_line/canary" ] || fail "names: the run removed $first_line (the board folder cut at its newline)"
    ! compgen -G "$BOARD_ROOTFS$board_side/hb_model_verifier.*" >/dev/null || fail "names: the work folder was left on the board"
    rm -rf "$BOARD_ROOTFS/userdata/w d;"*
    echo "names: PASSED (bit-identical) with spaces, quotes, ;, \$(), backquotes and a newline; nothing ran, nothing else removed"

    # Outputs of the wrong size: each an ERROR naming the file and the rule, exit 2, and nothing
    # written here (the verifier runs in an empty folder, which stays empty). The tools run the
    # real one, then cut its dump to 100 bytes or add 4 bytes to it.
    for kind in short long; do
      case $kind in
        short) change='head -c 100 "$f" >"$f.part" && mv "$f.part" "$f"' ;;
        long) change='printf more >>"$f"' ;;
      esac
      printf '#!/bin/sh\n/app/hrt_model_exec "$@" || exit $?\nfor a in "$@"; do case $a in --dump_path=*) d=${a#--dump_path=} ;; esac; done\nfor f in "$d"/model_infer_output_*.bin; do %s; done\n' \
        "$change" >"$BOARD_ROOTFS/userdata/${kind}_tool"
      chmod 755 "$BOARD_ROOTFS/userdata/${kind}_tool"
    done
    mkdir -p "$work/cwd"
    out_rule="\.bin holds %s bytes; output 0 '[^']+' is HB_DNN_TENSOR_TYPE_[A-Z0-9]+ of validShape \([0-9,]+\): hrt_model_exec dumps its valid elements, dense, [0-9]+ bytes"
    # shellcheck disable=SC2059
    (cd "$work/cwd" && expect_error short_output "/out/model_infer_output_0_[^ ]*$(printf "$out_rule" 100)" \
      "${good[@]}" --board-tool /userdata/short_tool)
    # shellcheck disable=SC2059
    (cd "$work/cwd" && expect_error long_output "/out/model_infer_output_0_[^ ]*$(printf "$out_rule" "more than [0-9]+")" \
      "${good[@]}" --board-tool /userdata/long_tool)
    [ -z "$(ls -A "$work/cwd")" ] || fail "files written here: $(ls -A "$work/cwd")"
    rm -f "$BOARD_ROOTFS"/userdata/{short,long}_tool

    # Slow the link to the board both ways (4 Mbit/s: rec.bin takes ~6 s, rec's output ~2 s) so a
    # transfer can be hit midway.
    tc qdisc add dev "vb${BOARD_NAME}h" root tbf rate 4mbit burst 32kbit latency 400ms
    ip netns exec "$BOARD_NAME" tc qdisc add dev "vb${BOARD_NAME}b" root tbf rate 4mbit burst 32kbit latency 400ms
    # wait_for_upload: until the board holds more than 64 KiB of the model; prints its path.
    wait_for_upload() {
      local f
      for _ in $(seq 200); do
        for f in "$BOARD_ROOTFS"/userdata/hb_model_verifier.*/model.bin; do
          if [ -f "$f" ] && [ "$(stat -c %s "$f")" -gt 65536 ]; then echo "$f"; return 0; fi
        done
        sleep 0.05
      done
      return 1
    }
    # The board closes the connection in the middle of a download: once its SFTP server (an sshd
    # process of the session) has the output dump open, the session's processes are killed
    # (the board's sshd keeps listening). An ERROR naming the file, nothing written here.
    descendants() {  # every process below $1
      local c
      for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do echo "$c"; descendants "$c"; done
    }
    cut_download() {
      local l sshd p
      l=$(cat "$board_dir/state/launcher.pid")
      sshd=$(cat "/proc/$l/task/$l/children")
      sshd=${sshd%% *}  # the board's sshd (the list ends with a space)
      for _ in $(seq 600); do
        for p in $(descendants "$sshd"); do
          if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = sshd ] &&
            [[ "$(ls -l "/proc/$p/fd" 2>/dev/null)" == */out/model_infer_output_0_* ]]; then
            # shellcheck disable=SC2046
            kill -KILL $(descendants "$sshd") 2>/dev/null || true
            return 0
          fi
        done
        sleep 0.05
      done
      return 1
    }
    cut_download &
    cutter=$!
    (cd "$work/cwd" && expect_error download_cut \
      "download of .*/out/model_infer_output_0_[^ ]*\.bin interrupted after [0-9]+ bytes \(of at most [0-9]+\)" "${good[@]}")
    wait "$cutter" || fail "download_cut: the download was not seen"
    [ -z "$(ls -A "$work/cwd")" ] || fail "files written here: $(ls -A "$work/cwd")"
    rm -rf "$BOARD_ROOTFS"/userdata/hb_model_verifier.*  # its work folder: the board could not remove it

    # The board freezes (every process of it stopped) in the middle of the upload: libssh would
    # wait forever; the verifier gives up after --connect-timeout without a reply.
    ( wait_for_upload >/dev/null && ip netns pids "$BOARD_NAME" | xargs -r kill -STOP ) &
    expect_error frozen "upload of .*/model.bin interrupted after [0-9]+ of $bin_bytes bytes: the board stopped answering" \
      "${good[@]}" --connect-timeout 5
    wait
    ip netns pids "$BOARD_NAME" | xargs -r kill -CONT
    rm -rf "$BOARD_ROOTFS"/userdata/hb_model_verifier.*  # its work folder: the board could not remove it

    # A byte of the model flipped on the board while it arrives.
    ( f=$(wait_for_upload) && printf '\x5a\xa5' | dd of="$f" bs=1 seek=1000 conv=notrunc status=none ) &
    expect_error corrupted "the model arrived corrupted" "${good[@]}"
    wait

    # The board goes down in the middle of the upload.
    ( wait_for_upload >/dev/null && "$board" --dir "$board_dir" stop >/dev/null 2>&1 ) &
    expect_error upload_cut "(upload of .*/model.bin interrupted after [0-9]+ of $bin_bytes bytes|connection lost)" "${good[@]}"
    wait
    expect_error board_down "is unreachable" "${good[@]}" --connect-timeout 5
    # No secret in any output: no line of the private key appears in a log.
    if grep -v -e '^-----' "$BOARD_KEY" | grep -F -f - "$work"/*.log >&2; then fail "the private key appears in a log"; fi
    ;;
  *) fail "unknown mode $mode" ;;
esac
