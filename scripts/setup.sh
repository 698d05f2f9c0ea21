#!/usr/bin/env bash
# Installs the Debian packages ops-nn builds and tests with, when missing.
set -euo pipefail
pkgs=(cmake ninja-build g++ make libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev
  python3-dev python3-pip libprotobuf-dev protobuf-compiler python3-onnx libonnx-testdata python3-venv
  ccache)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -ne 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# The Python package's build and test dependencies (numpy, ml_dtypes, pytest, nanobind, ...).
bash "$(dirname "$0")/setup_python.sh"

# Python packages of the graph tests (tests/onnx_node_tests.py, gpt2_block_test.py):
# a venv at build/pyenv (CMake's OPSNN_PYTHON), from PyPI, pinned.
cd "$(dirname "$0")/.."
PYENV=build/pyenv
PYPKGS=(numpy==2.4.6 onnx==1.23.2 onnxruntime==1.32.0)
if ! "$PYENV/bin/python" -c "import numpy, onnx, onnxruntime" >/dev/null 2>&1; then
  echo "setup: creating $PYENV with ${PYPKGS[*]}"
  mkdir -p build
  /usr/bin/python3 -m venv "$PYENV"
  "$PYENV/bin/pip" install -q "${PYPKGS[@]}"
fi
