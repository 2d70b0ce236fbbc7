#!/usr/bin/env bash
# Fetches four trained TensorFlow.js classifiers and the photographs @vladmandic/human ships
# (pinned by version) into $OPENBPU_CACHE/npm/human-<version> (default cache ~/.cache/openbpu),
# verified against scripts/face_models.sha256, and TensorFlow.js itself (core, CPU backend,
# converter; the reference the converted models are checked against) into
# $OPENBPU_CACHE/npm/tfjs-<version>. Reuses both when already there. Only the package tarballs
# are fetched (npm checks each against the registry's integrity field). Prints the models' folder.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${OPENBPU_CACHE:-$HOME/.cache/openbpu}
version=3.3.6
tfjs=4.22.0
dir="$cache/npm/human-$version"
tfjs_dir="$cache/npm/tfjs-$tfjs"
files=(models/emotion.json models/emotion.bin models/antispoof.json models/antispoof.bin models/liveness.json
       models/liveness.bin models/faceres.json models/faceres.bin assets/samples.jpg assets/screenshot-facedetect.jpg
       assets/screenshot-faceid.jpg assets/screenshot-facematch.jpg assets/screenshot-vrm.jpg)

verify() { [ -d "$dir" ] && (cd "$dir" && sha256sum --quiet -c "$here/face_models.sha256") >/dev/null 2>&1; }

if ! verify; then
  echo "fetch_face_models: fetching @vladmandic/human@$version into $dir" >&2
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  tarball=$(cd "$tmp" && npm pack --silent --loglevel=error "@vladmandic/human@$version")
  tar -xzf "$tmp/$tarball" -C "$tmp" "${files[@]/#/package/}"
  mkdir -p "$dir.tmp"
  for f in "${files[@]}"; do mv "$tmp/package/$f" "$dir.tmp/"; done
  rm -rf "$dir" && mv "$dir.tmp" "$dir"
  if ! verify; then
    echo "fetch_face_models: files in $dir do not match scripts/face_models.sha256" >&2
    (cd "$dir" && sha256sum -c "$here/face_models.sha256") >&2 || true
    exit 1
  fi
fi
if ! grep -qs "\"version\": \"$tfjs\"" "$tfjs_dir/node_modules/@tensorflow/tfjs-converter/package.json"; then
  echo "fetch_face_models: installing TensorFlow.js $tfjs into $tfjs_dir" >&2
  mkdir -p "$tfjs_dir"
  echo '{"name":"openbpu-tfjs","private":true}' > "$tfjs_dir/package.json"
  (cd "$tfjs_dir" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error \
     "@tensorflow/tfjs-core@$tfjs" "@tensorflow/tfjs-backend-cpu@$tfjs" "@tensorflow/tfjs-converter@$tfjs" >&2)
fi
echo "$dir"
