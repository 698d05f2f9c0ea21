#!/usr/bin/env bash
# Installs the Python packages the `ops_nn` package builds and tests with
# (into the `python3` on PATH), when missing. torch is optional: its tests
# skip without it (it is a large CUDA build; `pip install torch` to run them).
set -euo pipefail
PY=${PYTHON:-python3}
pkgs=(numpy ml_dtypes pytest nanobind scikit-build-core)
mods=(numpy ml_dtypes pytest nanobind scikit_build_core)
missing=()
for i in "${!pkgs[@]}"; do
  "$PY" -c "import ${mods[$i]}" >/dev/null 2>&1 || missing+=("${pkgs[$i]}")
done
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
