#!/usr/bin/env bash
# Installs exasim's build dependencies from Debian packages, only when some are missing.
set -euo pipefail
packages=(cmake g++ make pkg-config libsimgrid-dev libeigen3-dev nlohmann-json3-dev libyaml-cpp-dev
          libcli11-dev libboost-graph-dev doctest-dev libbenchmark-dev
          libopenmpi-dev openmpi-bin)
# `install-deps.sh fuzz` (make fuzz): clang and its libFuzzer runtime too, needed only there.
[ "${1:-}" = fuzz ] && packages+=(clang libclang-rt-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
$sudo_cmd apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
