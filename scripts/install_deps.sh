#!/usr/bin/env bash
# Installs every build and test dependency of OpenBPU on Debian 12 (idempotent, no prompts):
# apt packages for the build, the tests and the data scripts, and the npm packages used as the
# reference runtime and the model source, into the cache folder ($OPENBPU_CACHE, default
# ~/.cache/openbpu). Run as root or with passwordless sudo.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

APT_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git g++-aarch64-linux-gnu qemu-user-static
  protobuf-compiler libprotobuf-dev libonnx-dev libonnx-testdata
  libyaml-cpp-dev libflatbuffers-dev flatbuffers-compiler libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev libssh-dev libssl-dev libstb-dev
  openssh-server openssh-client binfmt-support iproute2 util-linux
  python3 python3-numpy python3-onnx python3-pil fonts-dejavu-core fonts-noto-cjk espeak-ng
  python3-dev pybind11-dev python3-pytest  # the openbpu Python package (python/) and its tests
  libgraphviz-dev chromium libplplot-dev plplot-driver-cairo libeigen3-dev
  file lintian  # the Debian packages: CPack's DEB generator, and their check (scripts/package.sh)
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js runs the reference runtime. Machines that already have node and npm (e.g. from
# NodeSource, whose nodejs package conflicts with Debian's npm) keep theirs.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  echo "install_deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

"$here/fetch_npm_packages.sh"
"$here/fetch_vad_models.sh"
