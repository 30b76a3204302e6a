#!/usr/bin/env bash
# Installs the Debian packages tfc builds with, only those that are missing.
set -euo pipefail
# Open MPI (libopenmpi-dev: mpi.h; openmpi-bin: mpirun) for data-parallel
# training: compiled models load it at run time, and only under mpirun.
packages=(cmake ninja-build g++ ccache lld libmlir-19-dev mlir-19-tools llvm-19-dev llvm-19-tools
          libfmt-dev libgtest-dev nlohmann-json3-dev libcli11-dev python3
          libopenmpi-dev openmpi-bin)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "tfc: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
