#!/usr/bin/env bash
# Installs what Morula needs from Debian 12's archive (a no-op when everything is there already).
# Kokkos 3.4.01 and Kokkos Kernels come from the Trilinos packages (Serial backend); see docs/building.md
# for Kokkos 4.x with CUDA, HIP or OpenMP. clang-14 and its runtimes (libclang-rt-14-dev: libFuzzer and the
# sanitizers) build the fuzz targets of tests/fuzz (docs/robustness.md).
set -euo pipefail
packages=(
  cmake ninja-build g++ make pkg-config
  libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev
  libhdf5-dev libsbml5-dev libsundials-dev libgtest-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev libcairo2-dev
  libopenmpi-dev openmpi-bin
  python3 python3-matplotlib python3-numpy python3-pytest python3-pybind11 pybind11-dev libdlpack-dev
  clang-14 libclang-rt-14-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-debian: all ${#packages[@]} packages present"
  exit 0
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup-debian: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
echo "setup-debian: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
