#!/usr/bin/env bash
# hb_eval_preprocess: every model name on a PNG and a BMP of odd sizes (landscape and portrait)
# against an independent NumPy implementation, byte for byte (reference.py; the recipes' modes
# and colours as --help lists them); -v; the errors.
#   run.sh HB_EVAL_PREPROCESS WORK_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tool=$1 work=$2
rm -rf "$work" && mkdir -p "$work/images" && cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
/usr/bin/python3 - <<'PY'
import numpy as np
from PIL import Image
y, x = np.mgrid[0:157, 0:301]
Image.fromarray(np.stack([(7 * x + 3 * y) % 256, (x * y) % 251, (200 + 5 * y - x) % 256], -1).astype(np.uint8)).save("images/landscape.png")
y, x = np.mgrid[0:230, 0:90]
Image.fromarray(np.stack([(x * x + y) % 256, (13 * y) % 256, (3 * x + 11 * y) % 253], -1).astype(np.uint8)).save("images/portrait.bmp")
PY
"$tool" --help > help.txt
names=0
while read -r name family size mode; do
  read -r H W <<< "$(tr x ' ' <<< "$size")"
  colour=$(awk '{print $(NF-1)}' <<< "$mode") layout=$(awk '{print $NF}' <<< "$mode")
  case "$mode" in
    resize*) m=resize extra=() ;;
    "short side"*) m=crop extra=(256 0) ;;
    letterbox*) m=letterbox extra=(0 114) ;;
    "height, pad right"*) m=padright extra=(0 0) ;;
    *) fail "unknown mode in --help: $mode" ;;
  esac
  "$tool" -m "$name" -i images -o "out_$name" > "$name.out" || fail "$name: $(cat "$name.out")"
  grep -q "INFO 2 images preprocessed for $name" "$name.out" || fail "$name: $(cat "$name.out")"
  for image in images/landscape.png images/portrait.bmp; do
    /usr/bin/python3 "$here/reference.py" "out_$name" "$image" "$name" "$H" "$W" "$m" "$colour" "$layout" "${extra[@]}"
  done
  names=$((names + 1))
done < <(sed -n 's/^  \([a-z0-9_]*\) (\([a-z]*\)): \([0-9x]*\) \(.*\)$/\1 \2 \3 \4/p' help.txt)
[ "$names" -ge 13 ] || fail "only $names model names in --help"

# -v: only the listed images (first word of a line: ImageNet's "name label" lists work).
printf 'portrait.bmp 65\n\n' > val.txt
"$tool" -m resnet18 -i images -o out_val -v val.txt > /dev/null
[ "$(ls out_val)" = portrait.bin ] || fail "-v wrote $(ls out_val)"

# Errors: exit 1, a line naming the value and the rule.
expect_error() {
  local code=0; "$tool" "$@" > /dev/null 2> err.txt || code=$?
  [ "$code" = 1 ] || fail "exit $code for: $*"
}
expect_error -m resnet19 -i images -o bad
grep -q "^ERROR -m resnet19: not a supported model name" err.txt || fail "unknown name: $(cat err.txt)"
expect_error -m resnet18 -i nowhere -o bad
grep -q "^ERROR -i nowhere: not a folder" err.txt || fail "missing folder: $(cat err.txt)"
printf 'missing.jpg\n' > bad_val.txt
expect_error -m resnet18 -i images -o bad -v bad_val.txt
grep -q "bad_val.txt line 1: images/missing.jpg does not exist" err.txt || fail "-v missing: $(cat err.txt)"
mkdir broken && echo "not an image" > broken/a.jpg
expect_error -m resnet18 -i broken -o bad
grep -q "broken/a.jpg: cannot decode the image" err.txt || fail "undecodable: $(cat err.txt)"
[ ! -e bad/a.bin ] || fail "a failed image left bad/a.bin"
echo "hb_eval_preprocess: all checks passed"
