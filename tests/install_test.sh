#!/usr/bin/env bash
# Installs the build into a temporary prefix, then builds and runs an outside
# project against it with find_package(opsnn).
set -euo pipefail
build_dir=$1
src_dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build_dir" --prefix "$tmp/prefix" > /dev/null
test -x "$tmp/prefix/bin/opsnn"
test -f "$tmp/prefix/include/opsnn/opsnn.h"
cmake -S "$src_dir/tests/cmake_consumer" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" > /dev/null
cmake --build "$tmp/build" > /dev/null
"$tmp/build/consumer"
"$tmp/build/consumer_static"
"$tmp/prefix/bin/opsnn" ops | sed -n 1p
