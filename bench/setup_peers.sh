#!/bin/sh
# Installs the peer libraries of bench/bench_matmul_peers.cc (Debian packages).
set -e
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends libopenblas-dev libdnnl-dev
