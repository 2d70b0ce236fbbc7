#!/usr/bin/env bash
# docs/runtime_ucp.md's complete program, as the page shows it: extracted, compiled as C against
# the public headers and libdnn.so, and run on a model file; it must print the model's JSON
# description and its outputs and exit 0. FLAGS: the build's linker flags (a sanitizer build's
# libdnn.so needs its runtime in the program too).
#   ucp_doc_example.sh SOURCE_DIR LIBDNN_DIR WORK_DIR MODEL_FILE [FLAGS]
set -euo pipefail
src=${1:?usage: ucp_doc_example.sh SOURCE_DIR LIBDNN_DIR WORK_DIR MODEL_FILE [FLAGS]} lib=${2:?} work=${3:?} model=${4:?}
read -r -a flags <<< "${5:-}"
mkdir -p "$work"
awk '/^```c$/ {on = 1; next} /^```$/ {if (on) exit} on' "$src/docs/runtime_ucp.md" > "$work/example.c"
[ -s "$work/example.c" ] || { echo "ucp_doc_example: no C block in docs/runtime_ucp.md" >&2; exit 1; }
cc -std=c11 -Wall -Wextra -Werror "${flags[@]}" -o "$work/example" "$work/example.c" -I"$src/runtime/include" -L"$lib" -ldnn -lpthread \
  -Wl,-rpath,"$lib"
out=$("$work/example" "$model")
echo "$out"
grep -q '"MARCH": "' <<< "$out" || { echo "ucp_doc_example: no description printed" >&2; exit 1; }
grep -q '^output 0: ' <<< "$out" || { echo "ucp_doc_example: no output printed" >&2; exit 1; }
