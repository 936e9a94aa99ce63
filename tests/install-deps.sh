#!/usr/bin/env bash
# Installs, from Debian's packages, whatever dgemm-dist needs to build and
# test that is missing.  Safe to run repeatedly: with everything present it
# does nothing.  Needs root (or sudo) only when something is missing.
set -euo pipefail
pkgs=(build-essential cmake pkg-config python3
      openmpi-bin libopenmpi-dev
      libhdf5-dev libhdf5-openmpi-dev hdf5-tools
      libopenblas-dev libscalapack-openmpi-dev
      scalapack-mpi-test scalapack-test-common  # ScaLAPACK's own testers (tests/scalapack)
      python3-dev python3-venv python3-pip python3-setuptools  # python/: pip install ./python
      python3-numpy python3-mpi4py python3-h5py python3-pytest  # tests/python
      lmod  # tests/python's EasyBuild test: module load
      slurm-wlm munge gnuplot-nox file
      iproute2 util-linux)  # the two-node test: ip netns, veth, unshare, nsenter
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
    exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
